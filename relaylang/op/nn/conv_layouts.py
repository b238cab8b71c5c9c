"""Blocked layouts of nn.conv1d / nn.conv2d / nn.conv3d, and TVM's depthwise weights
with a channel multiplier (`depthwise_multiplier`).

TVM's Conv2DRel takes any data, kernel and output layout convertible from NCHW / OIHW
(`tir::BijectiveLayout`): besides the orders of the plain axes (NHWC, HWIO...), blocked
ones such as `NCHW16c` data with an `OIHW16i16o` kernel, `NHWC2c` with `HWIO1i2o`, or
TVM's CUDA int8 `NCHW4c` with `OIHW4o4i`. A convolution in blocked layouts is the same
convolution in their plain forms (each layout's primal axes in order: NCHW16c -> NCHW,
OIHW16i16o -> OIHW) between layout transforms, and that is how the relation, the NumPy
kernel and the LLVM lowering treat it: the operands' primal sizes (a split axis is its
outer extent times its factor; the inner extent must be the factor), the plain
convolution, the result in the output layout (a split output axis must be divided
exactly by its factor: the result has no padding channels).

nn.contrib_conv2d_NCHWc is the op the layout passes produce for the NCHWc form (its
kernels are written for it); this module makes the general form legal and exact.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ..layouts import parse_layout, primal_sizes
from ..relation import TypeRelError


def plain_layout(layout: str) -> str:
    """The primal axes of `layout` in their order: NCHW16c -> NCHW."""
    return "".join(a for a, _ in parse_layout(layout) if a.isupper())


def is_blocked(attrs: Any) -> bool:
    """Whether any of the convolution's layouts splits an axis."""
    return any(any(ch.isdigit() for ch in str(layout or ""))
               for layout in (attrs.data_layout, attrs.kernel_layout, attrs.out_layout))


def plain_attrs(attrs: Any) -> Any:
    """`attrs` with each layout replaced by its plain form."""
    return dataclasses.replace(
        attrs, data_layout=plain_layout(attrs.data_layout),
        kernel_layout=plain_layout(attrs.kernel_layout),
        out_layout=plain_layout(attrs.out_layout) if attrs.out_layout else "")


def out_layout_of(attrs: Any) -> str:
    return attrs.out_layout or attrs.data_layout


def plain_shape(shape: tuple, layout: str, what: str, arg: int) -> tuple:
    """The shape of a tensor in `layout` as the plain layout holds it."""
    axes = parse_layout(layout, what)
    if len(axes) != len(shape):
        raise TypeRelError(f"{what} {layout!r} has {len(axes)} axes but the tensor has "
                           f"rank {len(shape)}", arg=arg)
    try:
        sizes = primal_sizes(tuple(shape), axes, what)
    except TypeRelError as err:
        raise TypeRelError(str(err), arg=arg) from None
    return tuple(sizes[a] for a, _ in axes if a.isupper())


def blocked_shape(shape: tuple, layout: str, what: str) -> tuple:
    """The shape in `layout` of a tensor whose plain form has `shape`; each split axis
    must be divided exactly by its factor."""
    axes = parse_layout(layout, what)
    sizes = dict(zip((a for a, _ in axes if a.isupper()), shape))
    out = []
    for a, f in axes:
        if f is None:
            d = sizes[a]
            inner = dict(axes).get(a.lower())
            if inner and isinstance(d, int):
                if d % inner:
                    raise TypeRelError(f"{what} {layout!r} splits axis {a} by {inner}, "
                                       f"which does not divide its {d}")
                d //= inner
            out.append(d)
        else:
            out.append(f)
    return tuple(out)


def transform_attrs(src: str, dst: str) -> Any:
    """Attributes for the layout_transform implementations."""
    from ..transform import LayoutTransformAttrs
    return LayoutTransformAttrs(src_layout=src, dst_layout=dst)


def numpy_relayout(x: Any, src: str, dst: str) -> Any:
    """`x` (an array in layout `src`) in layout `dst`: the layout_transform kernel."""
    if src == dst:
        return x
    from ..registry import implementation
    return implementation("layout_transform", "numpy")([x], transform_attrs(src, dst))


def lowered_relayout(b: Any, x: Any, src: str, dst: str, shape: tuple, dtype: str) -> Any:
    """The tensor handle `x` (layout `src`) in layout `dst` with `shape`: the
    layout_transform lowering."""
    if src == dst:
        return x
    from ...ir.types import TensorType
    from ..registry import implementation
    return implementation("layout_transform", "llvm")(
        b, [x], transform_attrs(src, dst), TensorType(tuple(shape), dtype))



def depthwise_multiplier(channels: Any, o: Any, i: Any, groups: int) -> int:
    """TVM's depthwise weight with a channel multiplier: when groups equals the data's
    channels and the weight's O axis (`Conv2DRel`'s `is_depthwise`), the weight is read
    as (channels, multiplier, k...) in OIHW terms, TFLite's HWOI (k..., C, M), and output
    channel c * M + m is input channel c by weight [c, m]: the multiplier M (`i`), else
    0 for the standard (C * M, 1, k...) form. The two hold the same values in the same
    order over (O, I): a reshape."""
    if (groups > 1 and isinstance(i, int) and i > 1 and isinstance(o, int)
            and o == groups and channels == groups):
        return i
    return 0
