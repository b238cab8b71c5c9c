"""What the pass tests share: concrete arguments for `@main`, and comparing results.

A pass must not change what a program computes; these tests run `@main` before
and after on the same arguments and compare with `same_value`.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from relaylang.ir.module import IRModule
from relaylang.ir.types import TensorType
from relaylang.testing.checks import value_difference
from relaylang.transform import InferType


def main_args(mod: IRModule, seed: int = 0, bools: str = "ones") -> list | None:
    """Arguments for `@main` from its parameter types: ints in [0, 6), floats in
    [0.5, 1.5) (keeps sqrt and log real), bools all true (`bools="ones"`) or random
    (`bools="random"`). None when a parameter is not a tensor of a static shape."""
    rng = np.random.default_rng(seed)
    args = []
    for p in InferType()(mod)["main"].params:
        ty = p.checked_type
        if not isinstance(ty, TensorType) or not all(type(d) is int for d in ty.shape):
            return None
        shape = tuple(int(d) for d in ty.shape)
        if ty.dtype == "bool":
            args.append(np.ones(shape, bool) if bools == "ones"
                        else np.array(rng.integers(0, 2, shape), dtype=bool))
        elif ty.dtype.startswith("int"):
            args.append(np.array(rng.integers(0, 6, shape), dtype=ty.dtype))
        else:
            args.append(rng.uniform(0.5, 1.5, shape).astype(ty.dtype))
    return args


def same_value(a: Any, b: Any, *, rtol: float = 1e-5, atol: float = 1e-6,
               equal_nan: bool = False) -> bool:
    """Interpreter results agree: tensors within tolerance (same shape and dtype), tuples
    and ADT values field by field, closures only by being closures."""
    return value_difference(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan) is None


@contextmanager
def registered_passes(*classes: type) -> Iterator[None]:
    """Test passes registered under their names while the block runs (so `get_pass`,
    `relay opt -p` and golden RUN lines find them), unregistered after."""
    from relaylang.transform.pass_infra import _PASSES, _load_passes, canonical_name
    _load_passes()
    for cls in classes:
        _PASSES[canonical_name(cls.name)] = cls
    try:
        yield
    finally:
        for cls in classes:
            _PASSES.pop(canonical_name(cls.name), None)
