"""`rl.evaluate` and `rl.create_executor`: run a module's entry function on Python values.

The module is type-checked once when the executor is made; each call checks its
arguments against the entry's parameter types (a clear `InputError` on a
mismatch), converts Python scalars to the declared dtype, and runs the
reference interpreter. `max_depth` bounds the calls pending at once (the
interpreter's `default_max_depth()` when None): an endless non-tail recursion
raises `RecursionTooDeep` at its call instead of filling the memory.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...ir.dtype import CARRIED
from ...ir.expr import Function
from ...ir.module import IRModule
from ...ir.node import AnyDim
from ...ir.text import type_text
from ...ir.types import FuncType, TensorType, TupleType, Type
from ...typing import infer_types
from .machine import Interpreter
from .values import ConstructorValue


class InputError(ValueError):
    """An argument that does not fit the entry function's parameter type."""



def convert_argument(value: Any, ty: Type | None, what: str) -> Any:
    """`value` as the interpreter's value for a parameter of type `ty` (checked)."""
    if isinstance(ty, TensorType):
        return _tensor_argument(value, ty, what)
    if isinstance(ty, TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(ty.fields):
            raise InputError(f"{what}: expected a tuple of {len(ty.fields)} values "
                             f"({type_text(ty)}), got {type(value).__name__}")
        return tuple(convert_argument(v, t, f"{what}[{i}]")
                     for i, (v, t) in enumerate(zip(value, ty.fields)))
    if isinstance(value, (int, float, bool)) and not isinstance(value, np.ndarray):
        return np.asarray(value)
    return value


_DTYPE_NAMES: dict[Any, str] = {}


def dtype_name(dtype: np.dtype) -> str:
    """The Relay dtype of a NumPy dtype (bfloat16's bit-pattern carrier included),
    remembered per dtype (NumPy computes a name anew each time, ~5 µs, which a native
    call of a small model would pay per argument)."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        from ...op.numpy_support import relay_dtype
        name = _DTYPE_NAMES[dtype] = relay_dtype(dtype)
    return name


def _tensor_argument(value: Any, ty: TensorType, what: str) -> np.ndarray:
    if isinstance(value, (ConstructorValue, tuple)) or callable(value):
        raise InputError(f"{what}: expected a tensor {type_text(ty)}, got {type(value).__name__}")
    if isinstance(value, np.ndarray):
        array = value
        if dtype_name(array.dtype) != ty.dtype:
            raise InputError(f"{what}: expected dtype {ty.dtype}, got an array of {array.dtype}")
    elif ty.dtype == "bfloat16":
        from ...op.numpy_support import to_bfloat16
        try:
            array = to_bfloat16(np.asarray(value, dtype=np.float32))
        except (TypeError, ValueError, OverflowError) as e:
            raise InputError(f"{what}: cannot make a {ty.dtype} tensor of {value!r}: {e}") from e
    elif ty.dtype in CARRIED:                  # ir/lowp.py's dtypes: converted by value
        from ...ir.lowp import to_lowp
        try:
            array = to_lowp(np.asarray(value), ty.dtype)
        except (TypeError, ValueError, OverflowError) as e:
            raise InputError(f"{what}: cannot make a {ty.dtype} tensor of {value!r}: {e}") from e
    else:
        try:
            array = np.asarray(value, dtype=ty.dtype)
        except (TypeError, ValueError, OverflowError) as e:
            raise InputError(f"{what}: cannot make a {ty.dtype} tensor of {value!r}: {e}") from e
        if isinstance(value, (int, float)) and not _same_number(array, value):
            raise InputError(f"{what}: {value!r} does not fit dtype {ty.dtype} "
                             f"(it would become {array.item()!r})")
    if array.ndim != len(ty.shape) or any(
            not isinstance(d, AnyDim) and isinstance(d, int) and d != n
            for d, n in zip(ty.shape, array.shape)):
        raise InputError(f"{what}: expected shape {_shape_text(ty)}, got "
                         f"{tuple(array.shape)}")
    return array


def _same_number(array: np.ndarray, value: int | float) -> bool:
    """Whether converting a Python number kept its value (NaN counts as kept)."""
    converted = array.item()
    if isinstance(value, float) and value != value:
        return converted != converted
    return converted == value or (isinstance(value, float) and array.dtype.kind == "f")


def _shape_text(ty: TensorType) -> str:
    return "(" + ", ".join("?" if isinstance(d, AnyDim) else str(d) for d in ty.shape) + ")"


def fully_typed(mod: IRModule) -> bool:
    """Whether InferType has already run on every function (types are set once, so a
    typed module needs no second inference)."""
    return all(gv.checked_type is not None and fn.checked_type is not None
               and fn.body.checked_type is not None for gv, fn in mod.functions.items())


class Executor:
    """A type-checked module ready to run; call it like its entry function."""

    def __init__(self, mod: IRModule, entry: str = "main", max_depth: int | None = None):
        self.mod = mod if fully_typed(mod) else infer_types(mod)
        self.entry = entry
        self.interpreter = Interpreter(self.mod, max_depth=max_depth)

    def __call__(self, *args: Any, entry: str | None = None) -> Any:
        name = entry or self.entry
        if name not in self.mod.functions and not any(
                gv.name_hint == name for gv in self.mod.functions):
            raise InputError(f"the module has no function @{name}")
        fn = self.mod[name]
        assert isinstance(fn, Function)
        if len(args) != len(fn.params):
            names = ", ".join("%" + p.name_hint for p in fn.params)
            raise InputError(f"@{name} takes {len(fn.params)} argument(s) ({names}), "
                             f"got {len(args)}")
        ft = self.mod.get_global_var(name).checked_type
        param_types = ft.arg_types if isinstance(ft, FuncType) else [None] * len(args)
        values = [convert_argument(a, t, f"argument %{p.name_hint} of @{name}")
                  for a, t, p in zip(args, param_types, fn.params)]
        return self.interpreter.apply(self.interpreter.global_closure(name), values)


def create_executor(mod: IRModule, entry: str = "main",
                    max_depth: int | None = None) -> Executor:
    return Executor(mod, entry, max_depth=max_depth)


def evaluate(mod: IRModule, *args: Any, entry: str = "main", max_depth: int | None = None) -> Any:
    """Run `@entry` of `mod` on `args` with the reference interpreter."""
    return Executor(mod, entry, max_depth=max_depth)(*args)
