"""Dimension arithmetic and argument checks shared by the transform, nn, pool and
image relations.

A dimension is an `int`, `ANY` (`?`) or a symbolic `MetaObject`. Arithmetic on
anything but two ints yields `?`, as TVM's relations yield `Any()`; copying a
dimension keeps it as it is. Mirrors the small helpers TVM's relations lean on:
`GetPaddingWidth`/`GetPaddingHeightWidth`/`GetPaddingDepthHeightWidth`
(src/relay/op/nn/nn.h, convolution.h) and `ToScalar` (src/relay/transforms/pattern_utils.h).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ir.node import ANY
from ..ir.types import TensorType, Type
from .relation import TypeRelError, dim_str, is_known, normalize_axis, shape_str

Dim = Any


# ------------------------------------------------------------------ dimensions

def is_int(d: Dim) -> bool:
    return isinstance(d, int) and not isinstance(d, bool)


def dim_mul(a: Dim, b: Dim) -> Dim:
    return a * b if is_int(a) and is_int(b) else ANY


def dim_prod(dims: Sequence[Dim]) -> Dim:
    out: Dim = 1
    for d in dims:
        out = dim_mul(out, d)
    return out


def dim_add(a: Dim, b: Dim) -> Dim:
    return a + b if is_int(a) and is_int(b) else ANY


def dim_div(a: Dim, b: Dim) -> Dim:
    """Floor division (TVM's indexdiv on shapes)."""
    return a // b if is_int(a) and is_int(b) and b != 0 else ANY


def all_known(args: Sequence[Type]) -> bool:
    return all(is_known(a) for a in args)


def expect_dim(actual: Dim, expected: Dim, message: str, arg: int, dim: int | None = None) -> None:
    """TypeRelError(message) when both dimensions are ints and differ; `?` passes."""
    if is_int(actual) and is_int(expected) and actual != expected:
        raise TypeRelError(message, arg=arg, dim=dim)


def expect_rank(t: TensorType, rank: int | Sequence[int], what: str, arg: int) -> None:
    ranks = (rank,) if isinstance(rank, int) else tuple(rank)
    if len(t.shape) not in ranks:
        wanted = " or ".join(str(r) for r in ranks)
        raise TypeRelError(f"{what} must have rank {wanted}, got rank {len(t.shape)} "
                           f"(shape {shape_str(t.shape)})", arg=arg)


def expect_scalar(t: TensorType, what: str, arg: int) -> None:
    if t.shape:
        raise TypeRelError(f"{what} must be a scalar, got a tensor of shape "
                           f"{shape_str(t.shape)}", arg=arg)


def axis_of(axis: int, rank: int, arg: int = 0, what: str = "axis") -> int:
    """`normalize_axis` with the attribute named in the message."""
    try:
        return normalize_axis(axis, rank, arg)
    except TypeRelError:
        raise TypeRelError(f"{what} {axis} is out of range for a tensor of rank {rank}",
                           arg=arg) from None


def int_dtype(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def expect_int_dtype(t: TensorType, what: str, arg: int) -> None:
    if not int_dtype(t.dtype):
        raise TypeRelError(f"{what} must be an integer tensor, got dtype {t.dtype}", arg=arg)


def out_dtype(attr_dtype: str, default: str) -> str:
    """An `out_dtype`/`dtype` attribute; "" (TVM's void dtype) means `default`."""
    return attr_dtype or default


def ints(value: Any, what: str) -> tuple[int, ...]:
    """An attribute that must be a list of known integers (None: empty)."""
    if value is None:
        return ()
    items = value if isinstance(value, tuple) else (value,)
    for v in items:
        if not is_int(v):
            raise TypeRelError(f"attribute {what} must be a list of integers, got {dim_str(v)}")
    return tuple(items)


# ------------------------------------------------------------------ padding

def padding_pairs(padding: Any, n: int, what: str = "padding") -> list[tuple[Dim, Dim]]:
    """TVM's padding forms for `n` spatial axes: one value for every side, `n` values
    (each axis padded equally on both sides), or `2n` values (all the heads, then all
    the tails: top, left, bottom, right for 2-d)."""
    pads = tuple(padding) if isinstance(padding, tuple) else (() if padding is None else (padding,))
    if len(pads) == 1:
        return [(pads[0], pads[0])] * n
    if len(pads) == n:
        return [(p, p) for p in pads]
    if len(pads) == 2 * n:
        return list(zip(pads[:n], pads[n:]))
    forms = ", ".join(sorted({"1", str(n), str(2 * n)}, key=int))
    raise TypeRelError(f"{what} must have {forms} values for {n} spatial "
                       f"ax{'is' if n == 1 else 'es'}, got {len(pads)}")


def spatial(value: Any, n: int, what: str) -> tuple[Dim, ...]:
    """A per-spatial-axis attribute (strides, dilation, kernel_size): `n` values, or one
    value for all axes."""
    vals = tuple(value) if isinstance(value, tuple) else (value,)
    if len(vals) == 1 and n > 1:
        vals = vals * n
    if len(vals) != n:
        raise TypeRelError(f"{what} must have {n} value{'s' if n > 1 else ''}, got {len(vals)}")
    return vals


def positive(values: Sequence[Dim], what: str) -> None:
    for v in values:
        if is_int(v) and v <= 0:
            raise TypeRelError(f"{what} must be positive, got {list(values)}")


def window_out(size: Dim, pad: Dim, kernel: Dim, stride: Dim, dilation: Dim,
               ceil_mode: bool = False) -> Dim:
    """Output length of a sliding window: (size + pad - dilated kernel [+ stride - 1]) //
    stride + 1; `?` when any operand is not an int."""
    if not all(is_int(v) for v in (size, pad, kernel, stride, dilation)):
        return ANY
    span = size + pad - ((kernel - 1) * dilation + 1)
    return (span + (stride - 1 if ceil_mode else 0)) // stride + 1


def scaled(d: Dim, scale: float) -> Dim:
    """round(d * scale); Python's round is half to even, as tvm::round folds constants."""
    return round(d * scale) if is_int(d) else ANY


def scalar_value(value: Any) -> float | None:
    """A number from an attribute that holds a number or a scalar `Constant` (TVM's
    ToScalar); None when it is not known before run time."""
    from ..ir.expr import Constant
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, Constant) and getattr(value.data, "size", 0) == 1:
        return value.data.reshape(()).item()
    return None
