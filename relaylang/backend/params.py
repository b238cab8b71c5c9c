"""Values for a run from outside the program: weight files, `NAME=...` inputs, random inputs.

What `relay run --params/--input/--random-inputs` reads (TVM's `tvmc run
--inputs`/`--fill-mode random`; TVM stores weights with `relay.save_param_dict`,
here they are NumPy `.npz` archives, one array per parameter name). Every
failure is an `InputSourceError` with a one-line message naming what was wrong.
"""
from __future__ import annotations

import ast
import json
import zipfile
from typing import Any

import numpy as np

from ..ir.dtype import CARRIED, dtype_kind
from ..ir.text import type_text
from ..ir.types import TensorType, Type


class InputSourceError(ValueError):
    """A file that cannot be read (`path` is set), or a `NAME=VALUE` that does not make a value."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(f"{path}: {message}" if path else message)
        self.message = message
        self.path = path


# What np.load raises on missing, truncated, pickled or foreign files.
_READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile)



def load_params(path: str) -> dict[str, np.ndarray]:
    """The arrays of an `.npz` archive by name (a `.npy` file is rejected: it has no names)."""
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.ndarray):
            with data:
                return {name: data[name] for name in data.files}
    except _READ_ERRORS as e:
        raise InputSourceError(f"cannot read arrays: {_reason(e)}", path) from e
    raise InputSourceError("one array without a name, not an .npz archive", path)


def load_array(path: str) -> np.ndarray:
    """The one array of a `.npy` file."""
    try:
        array = np.load(path, allow_pickle=False)
    except _READ_ERRORS as e:
        raise InputSourceError(f"cannot read array: {_reason(e)}", path) from e
    if not isinstance(array, np.ndarray):
        array.close()
        raise InputSourceError("an .npz archive, not one array (use --params)", path)
    return array


def _reason(e: Exception) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    if "pickled" in str(e):       # np.load's guess for any file without the NumPy magic
        return "not a NumPy file (or it holds Python objects)"
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def split_input(spec: str) -> tuple[str, str]:
    """`NAME=VALUE` as (NAME without a leading `%`, VALUE)."""
    name, eq, value = spec.partition("=")
    name = name.strip().lstrip("%")
    if not eq or not name:
        raise InputSourceError(f"--input {spec!r}: expected NAME=FILE.npy or NAME=LITERAL")
    return name, value.strip()


def input_value(name: str, text: str, ty: Type | None) -> np.ndarray:
    """The array for `--input NAME=TEXT`: a `.npy` file, else a literal in `ty`'s dtype."""
    if text.lower().endswith(".npy"):
        return load_array(text)
    if not isinstance(ty, TensorType):
        what = f"type {type_text(ty)}" if ty is not None else "an unknown type"
        raise InputSourceError(f"--input {name}: parameter %{name} has {what}; "
                               "only tensors can be given on the command line")
    return literal_array(name, text, ty.dtype)


def _literal(text: str) -> Any:
    """A Python literal (`3`, `2.5`, `[1, 2]`, `True`), a JSON one (`true`, `NaN`), or `nan`."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return float(text)           # `nan`, `inf`, `-inf`
    except ValueError:
        return None


def literal_array(name: str, text: str, dtype: str) -> np.ndarray:
    """`text` parsed as a literal and converted to `dtype`, refusing lossy conversions."""
    value = _literal(text)
    bad = f"--input {name}: {text!r} is not a literal of dtype {dtype}"
    if value is None or isinstance(value, (str, bytes, dict, set, complex)):
        raise InputSourceError(f"{bad} (expected a number, a boolean or a nested list)")
    try:
        raw = np.asarray(value)
        if raw.dtype.kind not in "biuf":
            raise ValueError("elements must be numbers or booleans")
        with np.errstate(all="ignore"):       # NaN -> int is caught below, not warned
            if dtype == "bfloat16":
                from ..op.numpy_support import to_bfloat16
                array = to_bfloat16(raw.astype(np.float32))
            elif dtype in CARRIED:   # ir/lowp.py's dtypes: floats rounded, integers must fit
                from ..ir.lowp import from_lowp, to_lowp

                carried = to_lowp(raw, dtype)
                if dtype_kind(dtype) != "float" and not np.array_equal(from_lowp(carried), raw):
                    raise ValueError(f"the value does not fit {dtype}")
                return carried
            else:
                array = raw.astype(dtype)
    except (TypeError, ValueError, OverflowError) as e:
        raise InputSourceError(f"{bad}: {_reason(e)}") from e
    # int <- 2.5, int8 <- 300, bool <- 2: the value would change, so it is not a literal of dtype.
    if dtype_kind(dtype) != "float" and not np.array_equal(array, raw):
        raise InputSourceError(f"{bad}: the value does not fit {dtype}")
    return array


# Op inputs that must be positive for a meaningful result: a random variance drawn
# negative makes batch_norm's sqrt(var + eps) NaN.
POSITIVE_INPUTS = frozenset({"moving_var"})


def _memory_bytes() -> int:
    import os
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 8 << 30


def _size_text(n: int) -> str:
    value, units = float(n), ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    unit = 0
    while value >= 1024 and unit + 1 < len(units):
        value, unit = value / 1024, unit + 1
    return f"{int(value)} bytes" if unit == 0 else f"{value:.2f} {units[unit]}"


def random_input(name: str, ty: Type | None, rng: np.random.Generator,
                 positive: bool = False, max_bytes: int | None = None) -> np.ndarray:
    """A random tensor of type `ty`: floats standard normal (`positive`: uniform in
    [0.5, 1.5), for variances), integers in [0, 10), bools fair. Made in `ty`'s dtype
    directly; a tensor larger than `max_bytes` (default: half the machine's memory) is
    refused with an InputSourceError saying its size."""
    if not isinstance(ty, TensorType):
        what = type_text(ty) if ty is not None else "_"
        raise InputSourceError(f"cannot make a random input for %{name} of type {what}: "
                               "not a tensor")
    if not all(isinstance(d, int) for d in ty.shape):
        raise InputSourceError(f"cannot make a random input for %{name} of type "
                               f"{type_text(ty)}: its shape is not fully known")
    shape = tuple(int(d) for d in ty.shape)
    elements = 1
    for d in shape:
        elements *= d
    from ..op.numpy_support import carrier_dtype, to_bfloat16
    nbytes = elements * carrier_dtype(ty.dtype).itemsize
    limit = _memory_bytes() // 2 if max_bytes is None else max_bytes
    if nbytes > limit:
        raise InputSourceError(f"cannot make a random input for %{name} of type "
                               f"{type_text(ty)}: it needs {_size_text(nbytes)}, more than "
                               f"the {_size_text(limit)} allowed (half the memory)")
    kind = dtype_kind(ty.dtype)
    if kind == "float":
        native = ty.dtype if ty.dtype in ("float32", "float64") else "float32"
        values = (rng.random(shape, dtype=native) + 0.5 if positive   # stays `native`
                  else rng.standard_normal(shape, dtype=native))
        if ty.dtype == "bfloat16":
            return to_bfloat16(values)
        if ty.dtype in CARRIED:                 # ir/lowp.py's float8/float4 dtypes
            from ..ir.lowp import to_lowp
            return to_lowp(values, ty.dtype)
        return values.astype(ty.dtype, copy=False)
    if kind == "bool":
        return rng.integers(0, 2, shape, dtype=np.int8).astype(bool)
    low = 1 if positive else 0
    if ty.dtype in CARRIED:                     # int4, uint4, int2, uint2
        from ..ir.lowp import to_lowp
        top = 4 if ty.dtype.endswith("2") else 8
        return to_lowp(rng.integers(low, top, shape), ty.dtype)
    return rng.integers(low, 10, shape, dtype=ty.dtype)
