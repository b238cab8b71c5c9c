"""Type relations of the convolutions: nn.conv1d/2d/3d and their transposes.

Mirrors Conv1DRel/Conv2DRel/Conv3DRel and Conv*TransposeRel of TVM's
src/relay/op/nn/convolution.h: data and kernel layouts are any order of their
axes (NCHW or NHWC; OIHW, HWIO or HWOI), or for the convolutions (not their
transposes) blocked forms of them (NCHW16c, OIHW16i16o: `conv_layouts`), padding takes TVM's 1, n or 2n value
forms, `channels` and `kernel_size` must agree with the weight, and data
channels must equal the weight's input channels times `groups` (depthwise is
groups == channels; TVM's depthwise weight with a channel multiplier, (C, M, k...) in
OIHW terms, is read as the (C * M, 1, k...) it reshapes to: `depthwise_multiplier`). `conv_geometry` is shared with the kernels.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...ir.node import ANY
from ...ir.types import TensorType, Type
from ..layouts import axis_positions
from .conv_layouts import (
    blocked_shape,
    depthwise_multiplier,
    is_blocked,
    out_layout_of,
    plain_attrs,
    plain_shape,
)
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


def _spatial_out(data: TensorType, g: Any, ksize: list[Dim], axes: list[int]) -> list[Dim]:
    """The output's spatial sizes: the windows of `ksize` (with `g`'s strides, dilation and
    padding) along the data's spatial `axes`, in order."""
    out = []
    for j, axis in enumerate(axes):
        size = data.shape[axis]
        pad = dim_add(*g.pads[j])
        o = window_out(size, pad, ksize[j], g.strides[j], g.dilation[j])
        if is_int(o) and o <= 0:
            raise TypeRelError(f"the input is too small: spatial axis {j} has size {size} "
                               f"(padded by {dim_str(pad)}) but the dilated kernel spans "
                               f"{(ksize[j] - 1) * g.dilation[j] + 1}", arg=0, dim=axis)
        out.append(o)
    return out


def conv_rel(nd: int) -> Rel:
    """Conv{nd}DRel: NCHW-style output (N, channels, spatial...) in out_layout. Blocked
    layouts (NCHW16c, OIHW16i16o) are the plain convolution of the operands' primal
    shapes, its result split as out_layout says (`conv_layouts`)."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not all_known(args[:2]):
            return None
        if is_blocked(attrs):
            return _blocked_rel(rel, args, attrs)
        g = conv_geometry(attrs, nd)
        data, weight = _operands(args, g, nd)
        channels = data.shape[g.data_pos[1]]
        o, i = weight.shape[g.weight_pos[0]], weight.shape[g.weight_pos[1]]
        ksize = [weight.shape[p] for p in g.weight_pos[2:]]
        groups = attrs.groups
        multiplier = depthwise_multiplier(channels, o, i, groups)
        if multiplier:                  # TVM's (C, M, k...) depthwise weight
            o, i = o * multiplier, 1
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
               else attrs.channels] + _spatial_out(data, g, ksize, g.data_pos[2:2 + nd])
        return TensorType(_layout_shape(g.out_pos, out), out_dtype(attrs.out_dtype, data.dtype))
    rel.__name__ = rel.__qualname__ = f"conv{nd}d_rel"
    return rel


def _blocked_rel(plain: Rel, args: list[Type], attrs: Any) -> Type | None:
    """A convolution in blocked layouts: `plain`'s result on the operands' plain shapes,
    in the blocked output layout."""
    data, weight = tensor(args, 0, "data"), tensor(args, 1, "weight")
    pd = plain_shape(data.shape, attrs.data_layout, "data_layout", 0)
    pw = plain_shape(weight.shape, attrs.kernel_layout, "kernel_layout", 1)
    out = plain([TensorType(pd, data.dtype), TensorType(pw, weight.dtype)] + list(args[2:]),
                plain_attrs(attrs))
    if not isinstance(out, TensorType):
        return out
    return TensorType(blocked_shape(tuple(out.shape), out_layout_of(attrs), "out_layout"),
                      out.dtype)


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


# ------------------------------------------------------------- nn.contrib_conv2d_NCHWc

@dataclass(frozen=True)
class NCHWcGeometry:
    """A channel-blocked 2-D convolution: data (N, C / ic, H, W, ic), weight
    (O / oc, C / ic, KH, KW, ic, oc), output (N, O / oc, OH, OW, oc)."""

    ic: int                      # the data's (and the weight's input) channel block
    oc: int                      # the output's (and the weight's output) channel block
    strides: tuple[Dim, ...]
    dilation: tuple[Dim, ...]
    pads: list[tuple[Dim, Dim]]


def _block_of(layout: str, primal: str, what: str) -> int:
    """The factor of `layout` = primal + `<k><c>` (NCHW16c -> 16; OIHW16i16o: i then o)."""
    from ..layouts import parse_layout
    axes = parse_layout(layout, what)
    letters = "".join(a for a, _ in axes)
    want = primal + primal[1].lower()
    if letters != want or axes[-1][1] is None:
        raise TypeRelError(f"{what} {layout!r} is not supported: expected {primal} with its "
                           f"{primal[1]} axis blocked last, as in {primal}16{primal[1].lower()}")
    return int(axes[-1][1])


def _kernel_blocks(layout: str) -> tuple[int, int]:
    from ..layouts import parse_layout
    axes = parse_layout(layout, "kernel_layout")
    if "".join(a for a, _ in axes) != "OIHWio" or None in (axes[4][1], axes[5][1]):
        raise TypeRelError(f"kernel_layout {layout!r} is not supported: expected OIHW with "
                           "blocks of input then output channels last, as in OIHW16i16o")
    return int(axes[4][1]), int(axes[5][1])   # type: ignore[arg-type]


def nchwc_geometry(attrs: Any) -> NCHWcGeometry:
    strides = spatial(attrs.strides, 2, "strides")
    dilation = spatial(attrs.dilation, 2, "dilation")
    positive(strides, "strides")
    positive(dilation, "dilation")
    if attrs.groups != 1:
        raise TypeRelError(f"nn.contrib_conv2d_NCHWc takes groups=1, got {attrs.groups}")
    ic = _block_of(attrs.data_layout, "NCHW", "data_layout")
    oc = _block_of(attrs.out_layout or attrs.data_layout, "NCHW", "out_layout")
    ki, ko = _kernel_blocks(attrs.kernel_layout)
    if ki != ic:
        raise TypeRelError(f"kernel_layout {attrs.kernel_layout!r} blocks input channels by "
                           f"{ki} but data_layout {attrs.data_layout!r} by {ic}")
    if ko != oc:
        raise TypeRelError(f"kernel_layout {attrs.kernel_layout!r} blocks output channels by "
                           f"{ko} but the output layout "
                           f"{attrs.out_layout or attrs.data_layout!r} by {oc}")
    return NCHWcGeometry(ic, oc, strides, dilation, padding_pairs(attrs.padding, 2))


def _blocked_operands(args: list[Type], g: NCHWcGeometry, attrs: Any
                      ) -> tuple[TensorType, TensorType]:
    """Data (N, C/ic, H, W, ic) and a 6-D weight of a channel-blocked convolution."""
    data, weight = tensor(args, 0, "data"), tensor(args, 1, "weight")
    expect_rank(data, 5, "data", 0)
    expect_rank(weight, 6, "weight", 1)
    expect_dim(data.shape[4], g.ic, f"data_layout {attrs.data_layout!r} holds {g.ic} channels "
               f"in its last axis but data has {dim_str(data.shape[4])}", arg=0, dim=4)
    return data, weight


def conv2d_nchwc_rel(args: list[Type], attrs: Any) -> Type | None:
    """TVM's nn.contrib_conv2d_NCHWc (Conv2DWinogradRel over blocked layouts): data
    (N, C/ic, H, W, ic) in data_layout NCHW{ic}c, weight (O/oc, C/ic, KH, KW, ic, oc) in
    kernel_layout OIHW{ic}i{oc}o, the result (N, O/oc, OH, OW, oc) in out_layout
    NCHW{oc}c (empty: data_layout)."""
    if not all_known(args[:2]):
        return None
    g = nchwc_geometry(attrs)
    data, weight = _blocked_operands(args, g, attrs)
    expect_dim(weight.shape[4], g.ic, f"the weight's axis 4 must hold {g.ic} input channels "
               f"(kernel_layout {attrs.kernel_layout!r}), not {dim_str(weight.shape[4])}",
               arg=1, dim=4)
    expect_dim(weight.shape[5], g.oc, f"the weight's axis 5 must hold {g.oc} output channels "
               f"(kernel_layout {attrs.kernel_layout!r}), not {dim_str(weight.shape[5])}",
               arg=1, dim=5)
    expect_dim(data.shape[1], weight.shape[1],
               f"data has {dim_str(data.shape[1])} blocks of input channels (dimension 1) but "
               f"the weight takes {dim_str(weight.shape[1])} (dimension 1)", arg=1, dim=1)
    o = dim_mul(weight.shape[0], g.oc)
    if attrs.channels is not None:
        expect_dim(o, attrs.channels, f"channels is {dim_str(attrs.channels)} but the weight "
                   f"has {dim_str(o)} output channels", arg=1, dim=0)
    ksize = [weight.shape[2], weight.shape[3]]
    _check_kernel_size(attrs, ksize, 2)
    out = _spatial_out(data, g, ksize, [2, 3])
    return TensorType((data.shape[0], weight.shape[0], out[0], out[1], g.oc),
                      out_dtype(attrs.out_dtype, data.dtype))


# ---------------------------------------------------- nn.contrib_depthwise_conv2d_NCHWc

def _depthwise_kernel_block(layout: str) -> int:
    """The output block of a depthwise blocked kernel layout, OIHW1i{oc}o (TVM's x86
    AlterOpLayout: one input channel per group, so the `i` block is 1)."""
    from ..layouts import parse_layout
    axes = parse_layout(layout, "kernel_layout")
    if "".join(a for a, _ in axes) != "OIHWio" or axes[4][1] != 1 or axes[5][1] is None:
        raise TypeRelError(f"kernel_layout {layout!r} is not supported: expected OIHW with "
                           "a block of 1 input channel then output channels last, as in "
                           "OIHW1i16o")
    return int(axes[5][1])   # type: ignore[arg-type]


def depthwise_nchwc_geometry(attrs: Any) -> NCHWcGeometry:
    """The blocks, strides, dilation and padding of nn.contrib_depthwise_conv2d_NCHWc:
    data NCHW{c}c, kernel OIHW1i{c}o, output NCHW{c}c, one channel per group (a
    channel multiplier of 1), so the three blocks are equal."""
    strides = spatial(attrs.strides, 2, "strides")
    dilation = spatial(attrs.dilation, 2, "dilation")
    positive(strides, "strides")
    positive(dilation, "dilation")
    ic = _block_of(attrs.data_layout, "NCHW", "data_layout")
    oc = _block_of(attrs.out_layout or attrs.data_layout, "NCHW", "out_layout")
    ko = _depthwise_kernel_block(attrs.kernel_layout)
    if ko != oc:
        raise TypeRelError(f"kernel_layout {attrs.kernel_layout!r} blocks output channels by "
                           f"{ko} but the output layout "
                           f"{attrs.out_layout or attrs.data_layout!r} by {oc}")
    if ic != oc:
        raise TypeRelError(f"a depthwise convolution keeps its channel blocks: data_layout "
                           f"{attrs.data_layout!r} blocks channels by {ic} but the output "
                           f"layout {attrs.out_layout or attrs.data_layout!r} by {oc}")
    return NCHWcGeometry(ic, oc, strides, dilation, padding_pairs(attrs.padding, 2))


def depthwise_conv2d_nchwc_rel(args: list[Type], attrs: Any) -> Type | None:
    """TVM's nn.contrib_depthwise_conv2d_NCHWc (topi's depthwise_conv2d_NCHWc, channel
    multiplier 1): data (N, C/c, H, W, c) in data_layout NCHW{c}c, weight
    (C/c, 1, KH, KW, 1, c) in kernel_layout OIHW1i{c}o, groups = C, the result
    (N, C/c, OH, OW, c) in out_layout NCHW{c}c (empty: data_layout)."""
    if not all_known(args[:2]):
        return None
    g = depthwise_nchwc_geometry(attrs)
    data, weight = _blocked_operands(args, g, attrs)
    for axis in (1, 4):
        expect_dim(weight.shape[axis], 1, f"a depthwise weight has 1 input channel per "
                   f"group: its axis {axis} must be 1, not {dim_str(weight.shape[axis])}",
                   arg=1, dim=axis)
    expect_dim(weight.shape[5], g.oc, f"the weight's axis 5 must hold {g.oc} output channels "
               f"(kernel_layout {attrs.kernel_layout!r}), not {dim_str(weight.shape[5])}",
               arg=1, dim=5)
    expect_dim(data.shape[1], weight.shape[0],
               f"data has {dim_str(data.shape[1])} blocks of channels (dimension 1) but the "
               f"depthwise weight has {dim_str(weight.shape[0])} (dimension 0)", arg=1, dim=0)
    channels = dim_mul(data.shape[1], g.ic)
    if is_int(channels) and attrs.groups != channels:
        raise TypeRelError(f"a depthwise convolution has one group per channel: groups is "
                           f"{attrs.groups} but data has {channels} channels")
    if attrs.channels is not None:
        expect_dim(channels, attrs.channels, f"channels is {dim_str(attrs.channels)} but the "
                   f"data has {dim_str(channels)} channels", arg=1, dim=0)
    ksize = [weight.shape[2], weight.shape[3]]
    _check_kernel_size(attrs, ksize, 2)
    out = _spatial_out(data, g, ksize, [2, 3])
    return TensorType((data.shape[0], data.shape[1], out[0], out[1], g.oc),
                      out_dtype(attrs.out_dtype, data.dtype))
