"""Codegens of external (BYOC) targets: the one place the backend asks.

Contract (TVM's `relay.ext.<name>` codegen, as Python):

    @rl.register_codegen("blas")
    def blas_codegen(func: Function, symbol: str) -> Callable[..., Any]:
        ...
        return run          # run(*arrays) -> array | tuple of arrays

- `func` is one partitioned global function: its attrs carry `Compiler="blas"` and
  `global_symbol=symbol` (`symbol` is the global's name, e.g. `"tvmgen_default_blas_main_0"`);
  it is type-checked (`func.checked_type`, each parameter's `checked_type`); its body may
  call `Composite="blas.dense_bias"` functions (MergeComposite's output) as well as plain
  operators, and its parameters are tensors (PartitionGraph bound the constants into the
  body unless `bind_constants=False`, then constant weights are parameters too).
- The codegen is called once per partitioned function, when the module is built (or
  when the interpreter first calls the function). It may raise: the build reports the
  error as a diagnostic naming the function and its span (the message is the
  exception's), never a traceback.
- The callable it returns is called on every run with NumPy arrays, one per tensor of
  `func`'s parameters in order (a tuple-typed parameter gives its tensors one by one,
  flattened), C-contiguous, of each tensor's dtype and static shape (0-d stays 0-d). The callee
  must not keep or modify them. It returns one NumPy array when func's return type is a
  tensor, a tuple of arrays (in order, nested the same way) when it is a tuple; each
  array of the declared dtype and shape (the executor checks and converts
  dtype/contiguity; a shape mismatch is reported as an error naming the function).
- `get_codegen(name)` returns the registered codegen or None. A target shipped with
  relaylang lives in `relaylang/backend/byoc/<name>.py` and registers itself when
  imported; that module is imported on the first lookup of `name` (so `import relaylang`
  loads none of them). A module whose library is optional (onnxruntime) must import
  without it and fail only when its codegen runs, with a message naming the extra
  (`pip install 'relaylang[onnxruntime]'`).
- Who calls it: `rl.build(mod, byoc=["name"])` / `relay build --byoc name` (a step of
  the graph executor or a native program, through a ctypes callback), and the
  interpreter (`rl.evaluate` of a partitioned module, mixed mode) when it first calls
  the function. A `Compiler=` function whose target has no codegen is not an error:
  its body runs as an ordinary function (interpreted).
- Registering a name again replaces the codegen; `unregister_codegen(name)` forgets it
  (tests register temporary targets).
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...ir.expr import Function

Codegen = Callable[["Function", str], Callable[..., Any]]

_CODEGENS: dict[str, Codegen] = {}
_TRIED: set[str] = set()


def register_codegen(name: str) -> Callable[[Codegen], Codegen]:
    """Decorator registering `fn(func, symbol) -> callable` as the codegen of target
    `name` (see the module's docstring for the contract)."""
    if not isinstance(name, str) or not name or name == "default":
        raise ValueError(f"register_codegen: bad target name {name!r}")

    def decorate(fn: Codegen) -> Codegen:
        if not callable(fn):
            raise TypeError(f"register_codegen({name!r}): {fn!r} is not callable")
        _CODEGENS[name] = fn
        return fn
    return decorate


def unregister_codegen(name: str) -> None:
    """Forget the codegen of `name` (a shipped target's module is not imported again)."""
    _CODEGENS.pop(name, None)


def get_codegen(name: str) -> Codegen | None:
    """The codegen registered for `name`, or None. The first lookup of a name imports
    `relaylang.backend.byoc.<name>` when that module exists (a shipped target)."""
    fn = _CODEGENS.get(name)
    if fn is None and name not in _TRIED:
        _TRIED.add(name)
        if _shipped_module(name) is not None:
            try:
                importlib.import_module(f"{__package__}.{name}")
            except BaseException:
                _TRIED.discard(name)         # asked again, it fails again (not None)
                raise
            fn = _CODEGENS.get(name)
    return fn


def registered_codegens() -> list[str]:
    """Every target with a codegen: those registered plus those shipped (not imported)."""
    return sorted(set(_CODEGENS) | set(_shipped_names()))


_NOT_TARGETS = frozenset({"registry", "runner"})


def _shipped_names() -> list[str]:
    from . import __path__ as pkg_path
    return [m.name for m in pkgutil.iter_modules(pkg_path)
            if not m.name.startswith("_") and m.name not in _NOT_TARGETS]


def _shipped_module(name: str) -> str | None:
    if not name.isidentifier() or name in _NOT_TARGETS or name.startswith("_"):
        return None
    return name if name in _shipped_names() else None
