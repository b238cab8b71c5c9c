"""Type relations of the convolutions: nn.conv1d/2d/3d and their transposes.

Mirrors Conv1DRel/Conv2DRel/Conv3DRel and Conv*TransposeRel of TVM's
src/relay/op/nn/convolution.h: data and kernel layouts are any order of their
axes (NCHW or NHWC; OIHW, HWIO or HWOI), padding takes TVM's 1, n or 2n value
forms, `channels` and `kernel_size` must agree with the weight, and data
channels must equal the weight's input channels times `groups` (depthwise is
groups == channels). `conv_geometry` is shared with the kernels.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...ir.node import ANY
from ...ir.types import TensorType, Type
from ..layouts import axis_positions
from ..relation import TypeRelError, dim_str, shape_str, tensor
from ..shape_rules import (
    Dim,
    all_known,
    dim_add,
    dim_mul,
    expect_dim,
    expect_rank,
    is_int,
    out_dtype,
    padding_pairs,
    positive,
    spatial,
    window_out,
)

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
Rel = Callable[[list[Type], Any], Type | None]


@dataclass(frozen=True)
class ConvGeometry:
    """A convolution's attributes, normalised to one value per spatial axis."""

    data_pos: list[int]          # positions of N, C, spatial... in the data layout
    weight_pos: list[int]        # positions of O, I, spatial... in the kernel layout
    out_pos: list[int]           # positions of N, C, spatial... in the output layout
    strides: tuple[Dim, ...]
    dilation: tuple[Dim, ...]
    pads: list[tuple[Dim, Dim]]
    output_padding: tuple[Dim, ...]


def conv_geometry(attrs: Any, nd: int, transposed: bool = False) -> ConvGeometry:
    sp = SPATIAL[nd]
    strides = spatial(attrs.strides, nd, "strides")
    dilation = spatial(attrs.dilation, nd, "dilation")
    positive(strides, "strides")
    positive(dilation, "dilation")
    if attrs.groups < 1:
        raise TypeRelError(f"groups must be positive, got {attrs.groups}")
    extra = spatial(attrs.output_padding, nd, "output_padding") if transposed else (0,) * nd
    return ConvGeometry(
        axis_positions(attrs.data_layout, "NC" + sp, "data_layout", plain=True),
        axis_positions(attrs.kernel_layout, "OI" + sp, "kernel_layout", plain=True),
        axis_positions(attrs.out_layout or attrs.data_layout, "NC" + sp, "out_layout",
                       plain=True),
        strides, dilation, padding_pairs(attrs.padding, nd), extra)


def _check_kernel_size(attrs: Any, ksize: list[Dim], nd: int) -> None:
    if attrs.kernel_size is None:
        return
    given = spatial(attrs.kernel_size, nd, "kernel_size")
    for a, b in zip(ksize, given):
        expect_dim(a, b, f"kernel_size is {shape_str(given)} but the weight's kernel is "
                         f"{shape_str(ksize)}", arg=1)


def _layout_shape(pos: list[int], dims: list[Dim]) -> tuple[Dim, ...]:
    out: list[Dim] = [0] * len(pos)
    for p, d in zip(pos, dims):
        out[p] = d
    return tuple(out)


def _operands(args: list[Type], g: ConvGeometry, nd: int) -> tuple[TensorType, TensorType]:
    data, weight = tensor(args, 0, "data"), tensor(args, 1, "weight")
    expect_rank(data, nd + 2, "data", 0)
    expect_rank(weight, nd + 2, "weight", 1)
    return data, weight


def _spatial_out(data: TensorType, g: ConvGeometry, ksize: list[Dim], nd: int) -> list[Dim]:
    out = []
    for j in range(nd):
        size = data.shape[g.data_pos[2 + j]]
        pad = dim_add(*g.pads[j])
        o = window_out(size, pad, ksize[j], g.strides[j], g.dilation[j])
        if is_int(o) and o <= 0:
            raise TypeRelError(f"the input is too small: spatial axis {j} has size {size} "
                               f"(padded by {dim_str(pad)}) but the dilated kernel spans "
                               f"{(ksize[j] - 1) * g.dilation[j] + 1}", arg=0,
                               dim=g.data_pos[2 + j])
        out.append(o)
    return out


def conv_rel(nd: int) -> Rel:
    """Conv{nd}DRel: NCHW-style output (N, channels, spatial...) in out_layout."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not all_known(args[:2]):
            return None
        g = conv_geometry(attrs, nd)
        data, weight = _operands(args, g, nd)
        channels = data.shape[g.data_pos[1]]
        o, i = weight.shape[g.weight_pos[0]], weight.shape[g.weight_pos[1]]
        ksize = [weight.shape[p] for p in g.weight_pos[2:]]
        groups = attrs.groups
        expect_dim(channels, dim_mul(i, groups),
                   f"data has {dim_str(channels)} channels (dimension {g.data_pos[1]}) but the "
                   f"weight takes {dim_str(i)} input channels (dimension {g.weight_pos[1]})"
                   + (f" x {groups} groups" if groups > 1 else ""), arg=1, dim=g.weight_pos[1])
        if is_int(o) and o % groups:
            raise TypeRelError(f"the weight has {o} output channels (dimension "
                               f"{g.weight_pos[0]}), which groups={groups} does not divide",
                               arg=1, dim=g.weight_pos[0])
        if attrs.channels is not None:
            expect_dim(o, attrs.channels, f"channels is {dim_str(attrs.channels)} but the weight "
                       f"has {dim_str(o)} output channels (dimension {g.weight_pos[0]})",
                       arg=1, dim=g.weight_pos[0])
        _check_kernel_size(attrs, ksize, nd)
        out = [data.shape[g.data_pos[0]], o if is_int(o) or attrs.channels is None
               else attrs.channels] + _spatial_out(data, g, ksize, nd)
        return TensorType(_layout_shape(g.out_pos, out), out_dtype(attrs.out_dtype, data.dtype))
    rel.__name__ = rel.__qualname__ = f"conv{nd}d_rel"
    return rel


def conv_transpose_rel(nd: int) -> Rel:
    """Conv{nd}DTransposeRel: the weight is (in channels, out channels / groups, k...) in
    kernel_layout (I and O read as in TVM's IOHW); spatial out = stride * (in - 1) +
    dilated kernel - padding + output_padding."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not all_known(args[:2]):
            return None
        g = conv_geometry(attrs, nd, transposed=True)
        data, weight = _operands(args, g, nd)
        channels = data.shape[g.data_pos[1]]
        # kernel_layout letters: O is the weight's per-group output axis, I its input axis.
        i, o = weight.shape[g.weight_pos[1]], weight.shape[g.weight_pos[0]]
        ksize = [weight.shape[p] for p in g.weight_pos[2:]]
        expect_dim(channels, i, f"data has {dim_str(channels)} channels (dimension "
                   f"{g.data_pos[1]}) but the weight takes {dim_str(i)} input channels "
                   f"(dimension {g.weight_pos[1]})", arg=1, dim=g.weight_pos[1])
        if is_int(channels) and channels % attrs.groups:
            raise TypeRelError(f"data has {channels} channels, which groups={attrs.groups} "
                               "does not divide", arg=0, dim=g.data_pos[1])
        out_channels = dim_mul(o, attrs.groups)
        if attrs.channels is not None:
            expect_dim(out_channels, attrs.channels, f"channels is {dim_str(attrs.channels)} but "
                       f"the weight makes {dim_str(out_channels)} output channels", arg=1,
                       dim=g.weight_pos[0])
        _check_kernel_size(attrs, ksize, nd)
        out = [data.shape[g.data_pos[0]], out_channels]
        for j in range(nd):
            out.append(_transposed_len(data.shape[g.data_pos[2 + j]], ksize[j], g, j))
        return TensorType(_layout_shape(g.out_pos, out), out_dtype(attrs.out_dtype, data.dtype))
    rel.__name__ = rel.__qualname__ = f"conv{nd}d_transpose_rel"
    return rel


def _transposed_len(size: Dim, k: Dim, g: ConvGeometry, j: int) -> Dim:
    s, d, extra = g.strides[j], g.dilation[j], g.output_padding[j]
    if is_int(extra) and is_int(s) and not 0 <= extra < s:
        raise TypeRelError(f"output_padding {list(g.output_padding)} must be smaller than "
                           f"strides {list(g.strides)}")
    vals = (size, k, s, d, extra, *g.pads[j])
    if not all(is_int(v) for v in vals):
        return ANY
    n = s * (size - 1) + (k - 1) * d + 1 - g.pads[j][0] - g.pads[j][1] + extra
    if n <= 0:
        raise TypeRelError(f"padding {g.pads[j]} leaves no output on spatial axis {j}", arg=0)
    return n
