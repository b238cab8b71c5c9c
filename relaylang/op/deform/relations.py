"""Type relation of the deform family: DeformableConv2DRel (src/relay/op/nn/convolution.cc),
with the mask of the modulated op checked the same way."""
from __future__ import annotations

from typing import Any

from ...ir.dtype import dtype_kind
from ...ir.types import TensorType, Type
from ..relation import TypeRelError, shape_str, tensor
from ..shape_rules import (
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


def deformable_conv2d_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args):
        return None
    data = tensor(args, 0, "data")
    offset = tensor(args, 1, "offset")
    weight = tensor(args, 2, "weight")
    if (attrs.data_layout, attrs.kernel_layout) != ("NCHW", "OIHW") or \
            attrs.out_layout not in ("", "NCHW"):
        raise TypeRelError("deformable_conv2d supports data_layout NCHW and kernel_layout "
                           f"OIHW only, got {attrs.data_layout} / {attrs.kernel_layout}")
    for t, what, i in ((data, "data", 0), (offset, "offset", 1), (weight, "weight", 2)):
        expect_rank(t, 4, what, i)
        if dtype_kind(t.dtype) != "float":
            raise TypeRelError(f"{what} must be a float tensor, got dtype {t.dtype}", arg=i)
    strides = spatial(attrs.strides, 2, "strides")
    dilation = spatial(attrs.dilation, 2, "dilation")
    positive(strides, "strides")
    positive(dilation, "dilation")
    pads = padding_pairs(attrs.padding, 2)
    groups, dgroups = int(attrs.groups), int(attrs.deformable_groups)
    if groups <= 0 or dgroups <= 0:
        raise TypeRelError(f"groups and deformable_groups must be positive, got {groups} and "
                           f"{dgroups}")
    n, c = data.shape[0], data.shape[1]
    o, ci, kh, kw = weight.shape
    if attrs.kernel_size is not None:
        ks = spatial(attrs.kernel_size, 2, "kernel_size")
        expect_dim(kh, ks[0], f"weight {shape_str(weight.shape)} does not have kernel_size "
                   f"{list(ks)}", 2, 2)
        expect_dim(kw, ks[1], f"weight {shape_str(weight.shape)} does not have kernel_size "
                   f"{list(ks)}", 2, 3)
    if attrs.channels is not None:
        expect_dim(o, attrs.channels, f"weight {shape_str(weight.shape)} does not have "
                   f"{attrs.channels} output channels", 2, 0)
    if is_int(c) and is_int(ci) and c != ci * groups:
        raise TypeRelError(f"data has {c} channels but weight {shape_str(weight.shape)} with "
                           f"groups={groups} takes {ci * groups}", arg=2, dim=1)
    if is_int(o) and o % groups:
        raise TypeRelError(f"{o} output channels do not divide into {groups} groups", arg=2)
    if is_int(c) and c % dgroups:
        raise TypeRelError(f"{c} channels do not divide into {dgroups} deformable groups",
                           arg=0)
    oh = window_out(data.shape[2], dim_add(*pads[0]), kh, strides[0], dilation[0], False)
    ow = window_out(data.shape[3], dim_add(*pads[1]), kw, strides[1], dilation[1], False)
    if (is_int(oh) and oh <= 0) or (is_int(ow) and ow <= 0):
        raise TypeRelError(f"the input {shape_str(data.shape)} is too small for the kernel",
                           arg=0)
    taps = dim_mul(dim_mul(kh, kw), dgroups)
    want = (n, dim_mul(taps, 2), oh, ow)
    for k in range(4):
        expect_dim(offset.shape[k], want[k], f"offset must be {shape_str(want)}, got "
                   f"{shape_str(offset.shape)}", 1, k)
    if len(args) > 3:
        mask = tensor(args, 3, "mask")
        expect_rank(mask, 4, "mask", 3)
        want_mask = (n, taps, oh, ow)
        for k in range(4):
            expect_dim(mask.shape[k], want_mask[k], f"mask must be {shape_str(want_mask)}, "
                       f"got {shape_str(mask.shape)}", 3, k)
    return TensorType((n, o, oh, ow), out_dtype(attrs.out_dtype, data.dtype))
