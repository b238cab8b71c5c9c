"""`rl.runtime`: loading an exported library (TVM's `tvm.runtime.load_module`).

    lib = rl.runtime.load_module("model.rlib")      # written by lib.export_library(path)
    out = lib(x)

Loading reads the object code into MCJIT as it is: no parsing (except the Relay text of
functions that run on the interpreter: NumPy fallbacks, the control part of a mixed-mode
program; a graph or a natively compiled program (`lib.mode == "program"`) parses
nothing), no passes and no LLVM optimisation. A library built for a CPU whose features
this one lacks is refused (`LibraryLoadError`, a `ValueError`, with a one-line message).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .native.library import Library


def load_module(path: str) -> Library:
    from .native.library_file import load
    return load(str(path))


def __getattr__(name: str) -> object:
    if name == "LibraryLoadError":
        from .native.library_file import LibraryLoadError
        return LibraryLoadError
    if name == "Library":
        from .native.library import Library
        return Library
    raise AttributeError(f"module 'relaylang.backend.runtime' has no attribute {name!r}")
