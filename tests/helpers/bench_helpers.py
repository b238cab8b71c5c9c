"""Importing the scripts of benchmarks/ (model generators, benchmark drivers) in tests.

`benchmarks/` is not a package and must not go first on `sys.path`: it holds a
`lsp.py` that would shadow the `lsp` package. Each script is loaded from its
file once, under its own name, so a script that imports a sibling
(`from gen_models import ...`) finds the same module object.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """benchmarks/NAME.py as a module, executed on first use only."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
