"""Neural-network ONNX operators: convolutions, pooling, normalisations, Gemm and MatMul,
softmax family, Dropout, Flatten, depth/space rearrangements, Upsample and Resize.

Spatial operators take NCW / NCHW / NCDHW data (1-D, 2-D, 3-D). ONNX `pads` are
[x1_begin, x2_begin, ..., x1_end, x2_end], which is the order Relay's conv and pool
`padding` tuples use. `auto_pad` SAME_UPPER / SAME_LOWER needs static spatial sizes.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ....ir.builder import TupleGetItem
from ....op import make as op
from ..registry import converter

_CONV = {1: op.nn.conv1d, 2: op.nn.conv2d, 3: op.nn.conv3d}
_CONV_T = {1: op.nn.conv1d_transpose, 2: op.nn.conv2d_transpose, 3: op.nn.conv3d_transpose}
_MAX_POOL = {1: op.nn.max_pool1d, 2: op.nn.max_pool2d, 3: op.nn.max_pool3d}
_AVG_POOL = {1: op.nn.avg_pool1d, 2: op.nn.avg_pool2d, 3: op.nn.avg_pool3d}


# ---------------------------------------------------------------- helpers

def _rank(ctx: Any, node: Any, x: Any) -> int:
    return len(ctx.shape(x))


def _spatial_rank(ctx: Any, node: Any, x: Any) -> int:
    nd = _rank(ctx, node, x) - 2
    if nd not in (1, 2, 3):
        raise node.error(f"only 1-D, 2-D and 3-D data (rank 3 to 5) is supported, got rank "
                         f"{nd + 2}")
    return nd


def _ints(node: Any, name: str, nd: int, default: int) -> tuple[int, ...]:
    v = node.attr(name, None)
    if v is None or len(v) == 0:
        return (default,) * nd
    if len(v) != nd:
        raise node.error(f"attribute `{name}` has {len(v)} entries, expected {nd}")
    return tuple(int(i) for i in v)


def _static_spatial(ctx: Any, node: Any, x: Any, what: str) -> tuple[int, ...]:
    shape = ctx.shape(x)[2:]
    if not all(isinstance(d, int) for d in shape):
        raise node.error(f"{what} needs static spatial dims, got {tuple(ctx.shape(x))}")
    return tuple(int(d) for d in shape)


def _pads(ctx: Any, node: Any, x: Any, kernel: tuple[int, ...], strides: tuple[int, ...],
          dilations: tuple[int, ...]) -> tuple[int, ...]:
    """The 2*nd explicit pads of a conv / pool node (begin..., end...), auto_pad resolved."""
    nd = len(kernel)
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = node.attr("pads", None)
        if pads is None or len(pads) == 0:
            return (0,) * (2 * nd)
        if len(pads) != 2 * nd:
            raise node.error(f"attribute `pads` has {len(pads)} entries, expected {2 * nd}")
        if any(p < 0 for p in pads):
            raise node.error(f"negative pads {list(pads)} are not supported")
        return tuple(int(p) for p in pads)
    if auto_pad == "VALID":
        return (0,) * (2 * nd)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        sizes = _static_spatial(ctx, node, x, f"auto_pad={auto_pad}")
        begin, end = [], []
        for n, k, s, d in zip(sizes, kernel, strides, dilations):
            out = -(-n // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
            small, big = total // 2, total - total // 2
            if auto_pad == "SAME_UPPER":
                begin.append(small)
                end.append(big)
            else:
                begin.append(big)
                end.append(small)
        return tuple(begin + end)
    raise node.error(f"auto_pad={auto_pad!r} is not one of NOTSET, SAME_UPPER, SAME_LOWER, "
                     "VALID")


def _dim(ctx: Any, x: Any, i: int) -> int:
    """Spatial dim `i` of `x` (known to be static)."""
    return int(ctx.shape(x)[2 + i])


def _weight_shape(ctx: Any, node: Any, w: Any) -> tuple[int, ...]:
    shape = ctx.static_shape(w)
    if shape is None:
        raise node.error(f"the weight needs a static shape, got {tuple(ctx.shape(w))}")
    return shape


def _bias(out: Any, node: Any) -> Any:
    b = node.input(2)
    return out if b is None else op.nn.bias_add(out, b, axis=1)


def _only_first_output(node: Any, what: str) -> None:
    for k, name in enumerate(node.outputs[1:], start=1):
        if name:
            raise node.error(f"output {k} ({what}) is not supported")


# ---------------------------------------------------------------- convolution

@converter("Conv", since=1)
def conv(ctx: Any, node: Any) -> Any:
    x, w = node.inputs[0], node.inputs[1]
    nd = _spatial_rank(ctx, node, x)
    wshape = _weight_shape(ctx, node, w)
    if len(wshape) != nd + 2:
        raise node.error(f"weight rank {len(wshape)} does not match data rank {nd + 2}")
    kernel = tuple(int(k) for k in node.attr("kernel_shape", wshape[2:]))
    if kernel != tuple(wshape[2:]):
        raise node.error(f"kernel_shape {list(kernel)} differs from the weight's "
                         f"{list(wshape[2:])}")
    strides = _ints(node, "strides", nd, 1)
    dilations = _ints(node, "dilations", nd, 1)
    pads = _pads(ctx, node, x, kernel, strides, dilations)
    group = int(node.attr("group", 1))
    out = _CONV[nd](x, w, strides=strides, padding=pads, dilation=dilations, groups=group,
                    channels=int(wshape[0]), kernel_size=kernel)
    return _bias(out, node)


@converter("ConvTranspose", since=1)
def conv_transpose(ctx: Any, node: Any) -> Any:
    x, w = node.inputs[0], node.inputs[1]
    nd = _spatial_rank(ctx, node, x)
    wshape = _weight_shape(ctx, node, w)
    if len(wshape) != nd + 2:
        raise node.error(f"weight rank {len(wshape)} does not match data rank {nd + 2}")
    kernel = tuple(int(k) for k in node.attr("kernel_shape", wshape[2:]))
    if kernel != tuple(wshape[2:]):
        raise node.error(f"kernel_shape {list(kernel)} differs from the weight's "
                         f"{list(wshape[2:])}")
    group = int(node.attr("group", 1))
    strides = _ints(node, "strides", nd, 1)
    dilations = _ints(node, "dilations", nd, 1)
    out_pad = list(_ints(node, "output_padding", nd, 0))
    auto_pad = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape", None)
    if output_shape is not None and len(output_shape) > 0:
        output_shape = [int(v) for v in output_shape]
        if len(output_shape) == nd + 2:
            output_shape = output_shape[2:]
        if len(output_shape) != nd:
            raise node.error(f"output_shape {output_shape} does not have {nd} spatial dims")
    else:
        output_shape = None
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        sizes = _static_spatial(ctx, node, x, "output_shape / auto_pad SAME")
        if output_shape is None:
            output_shape = [n * s for n, s in zip(sizes, strides)]
        begin, end = [], []
        for i in range(nd):
            total = (strides[i] * (sizes[i] - 1) + out_pad[i]
                     + (kernel[i] - 1) * dilations[i] + 1 - output_shape[i])
            if total < 0:
                # the output is longer than the full transposed convolution: the extra
                # entries (at the end) are what output_padding adds
                out_pad[i] -= total
                total = 0
            small, big = total // 2, total - total // 2
            if auto_pad == "SAME_UPPER":
                begin.append(small)
                end.append(big)
            else:
                begin.append(big)
                end.append(small)
        pads = tuple(begin + end)
    elif auto_pad in ("NOTSET", "", "VALID"):
        pads = (0,) * (2 * nd) if auto_pad == "VALID" else _pads(ctx, node, x, kernel, strides,
                                                                 dilations)
    else:
        raise node.error(f"auto_pad={auto_pad!r} is not one of NOTSET, SAME_UPPER, "
                         "SAME_LOWER, VALID")
    for i in range(nd):
        if out_pad[i] >= max(strides[i], dilations[i]):
            raise node.error(f"output_padding {out_pad[i]} on spatial axis {i} must be less "
                             "than the stride or the dilation")
    out = _CONV_T[nd](x, w, strides=strides, padding=pads, dilation=dilations, groups=group,
                      output_padding=tuple(out_pad), channels=int(wshape[1]) * group,
                      kernel_size=kernel)
    return _bias(out, node)


# ---------------------------------------------------------------- pooling

def _pool_geometry(ctx: Any, node: Any, x: Any, with_dilations: bool = True
                   ) -> tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...],
                              tuple[int, ...], bool]:
    nd = _spatial_rank(ctx, node, x)
    kernel = tuple(int(k) for k in node.attr("kernel_shape"))
    if len(kernel) != nd:
        raise node.error(f"kernel_shape {list(kernel)} does not have {nd} entries")
    strides = _ints(node, "strides", nd, 1)
    dilations = _ints(node, "dilations", nd, 1) if with_dilations else (1,) * nd
    pads = _pads(ctx, node, x, kernel, strides, dilations)
    ceil_mode = bool(node.attr("ceil_mode", 0))
    return nd, kernel, strides, dilations, pads, ceil_mode


def _pool_out_sizes(ctx: Any, node: Any, x: Any, kernel: tuple[int, ...],
                    strides: tuple[int, ...], dilations: tuple[int, ...],
                    pads: tuple[int, ...], ceil_mode: bool) -> list[int] | None:
    """ONNX's output size of each spatial axis under ceil_mode (None without it):
    ceil((n + pads - dk) / s) + 1, less a last window that starts in the end padding."""
    if not ceil_mode:
        return None
    nd = len(kernel)
    shape = ctx.shape(x)[2:]
    out = []
    for i in range(nd):
        n = shape[i]
        if not isinstance(n, int):
            raise node.error("ceil_mode=1 needs static spatial dims")
        dk = (kernel[i] - 1) * dilations[i] + 1
        size = -(-(n + pads[i] + pads[nd + i] - dk) // strides[i]) + 1
        if (size - 1) * strides[i] >= n + pads[i]:
            size -= 1
        out.append(size)
    return out


def _ceil_trim(ctx: Any, node: Any, out: Any, x: Any, kernel: tuple[int, ...],
               strides: tuple[int, ...], dilations: tuple[int, ...], pads: tuple[int, ...],
               ceil_mode: bool) -> Any:
    """Under ceil_mode ONNX drops a last window that starts in the end padding (or past
    the data); Relay keeps it: slice it off where that happens."""
    end = _pool_out_sizes(ctx, node, x, kernel, strides, dilations, pads, ceil_mode)
    if end is None:
        return out
    nd = len(kernel)
    relay = [-(-(n + pads[i] + pads[nd + i] - ((kernel[i] - 1) * dilations[i] + 1))
               // strides[i]) + 1 for i, n in enumerate(ctx.shape(x)[2:])]
    if relay == end:
        return out
    return op.strided_slice(out, begin=(0,) * nd, end=tuple(end), strides=(1,) * nd,
                            axes=tuple(range(2, 2 + nd)))


@converter("MaxPool", since=1)
def max_pool(ctx: Any, node: Any) -> Any:
    """The pooled values; with the Indices output (opset 8 on), 2-D pooling through
    nn.max_pool2d_with_argmax (flat indices, in storage_order)."""
    x = node.inputs[0]
    nd, kernel, strides, dilations, pads, ceil_mode = _pool_geometry(ctx, node, x)
    storage = int(node.attr("storage_order", 0))
    if storage not in (0, 1):
        raise node.error(f"storage_order must be 0 or 1, got {storage}")
    if len(node.outputs) > 1 and node.outputs[1]:
        if nd != 2:
            raise node.error(f"output 1 (Indices) is supported for 2-D pooling only, got "
                             f"{nd}-D")
        both = op.nn.max_pool2d_with_argmax(x, pool_size=kernel, strides=strides,
                                            dilation=dilations, padding=pads,
                                            ceil_mode=ceil_mode, storage_order=storage)
        return [_ceil_trim(ctx, node, TupleGetItem(both, k), x, kernel, strides, dilations,
                           pads, ceil_mode) for k in (0, 1)]
    out = _MAX_POOL[nd](x, pool_size=kernel, strides=strides, dilation=dilations,
                        padding=pads, ceil_mode=ceil_mode)
    return _ceil_trim(ctx, node, out, x, kernel, strides, dilations, pads, ceil_mode)


@converter("AveragePool", since=1)
def avg_pool(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    nd, kernel, strides, dilations, pads, ceil_mode = _pool_geometry(ctx, node, x)
    include = bool(node.attr("count_include_pad", 0))
    out = _AVG_POOL[nd](x, pool_size=kernel, strides=strides, dilation=dilations,
                        padding=pads, ceil_mode=ceil_mode, count_include_pad=include)
    return _ceil_trim(ctx, node, out, x, kernel, strides, dilations, pads, ceil_mode)


@converter("GlobalAveragePool", since=1)
def global_avg_pool(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    rank = _rank(ctx, node, x)
    if rank == 4:
        return op.nn.global_avg_pool2d(x)
    if rank < 3:
        raise node.error(f"expects data of rank >= 3, got rank {rank}")
    return op.mean(x, axis=tuple(range(2, rank)), keepdims=True)


@converter("GlobalMaxPool", since=1)
def global_max_pool(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    rank = _rank(ctx, node, x)
    if rank == 4:
        return op.nn.global_max_pool2d(x)
    if rank < 3:
        raise node.error(f"expects data of rank >= 3, got rank {rank}")
    return op.max(x, axis=tuple(range(2, rank)), keepdims=True)


def _abs_power(ctx: Any, x: Any, p: float) -> Any:
    """|x|^p (p 1 and 2 without `power`)."""
    a = op.abs(x)
    if p == 1:
        return a
    if p == 2:
        return op.multiply(a, a)
    return op.power(a, ctx.const(np.asarray(p, ctx.dtype(x))))


def _root(ctx: Any, summed: Any, p: float, dtype: str) -> Any:
    """summed^(1/p) (p 1 and 2 without `power`)."""
    if p == 1:
        return summed
    if p == 2:
        return op.sqrt(summed)
    return op.power(summed, ctx.const(np.asarray(1.0 / p, dtype)))


def _lp_pool(ctx: Any, node: Any, p: float) -> Any:
    """(sum over the window of |x|^p)^(1/p): |x|^p, a window sum as a depthwise
    convolution with a kernel of ones (zero padding adds |0|^p = 0), then ^(1/p)."""
    x = node.inputs[0]
    nd, kernel, strides, dilations, pads, ceil_mode = _pool_geometry(ctx, node, x)
    want = _pool_out_sizes(ctx, node, x, kernel, strides, dilations, pads, ceil_mode)
    if ceil_mode:
        # the ceil tail's windows run past the end padding: padding with more zeros adds
        # nothing to a sum of |x|^p, so pad the end to exactly the last window
        ends = list(pads[nd:])
        for i in range(nd):
            dk = (kernel[i] - 1) * dilations[i] + 1
            ends[i] = max(ends[i], (want[i] - 1) * strides[i] + dk - _dim(ctx, x, i)
                          - pads[i])
        pads = tuple(pads[:nd]) + tuple(ends)
    channels = ctx.shape(x)[1]
    if not isinstance(channels, int):
        raise node.error("needs a static channel dim")
    dtype = ctx.dtype(x)
    powered = _abs_power(ctx, x, p)
    ones = ctx.const(np.ones((channels, 1) + kernel, dtype))
    summed = _CONV[nd](powered, ones, strides=strides, padding=pads, dilation=dilations,
                       groups=channels, channels=channels, kernel_size=kernel)
    got = [(n + pads[i] + pads[nd + i] - ((kernel[i] - 1) * dilations[i] + 1)) // strides[i]
           + 1 for i, n in enumerate(ctx.shape(x)[2:])] if want is not None else None
    if want is not None and got != list(want):
        summed = op.strided_slice(summed, begin=(0,) * nd, end=tuple(want), strides=(1,) * nd,
                                  axes=tuple(range(2, 2 + nd)))
    return _root(ctx, summed, p, dtype)


@converter("LpPool", since=1)
def lp_pool_1(ctx: Any, node: Any) -> Any:
    return _lp_pool(ctx, node, float(node.attr("p", 2.0)))


@converter("LpPool", since=2)
def lp_pool_2(ctx: Any, node: Any) -> Any:
    return _lp_pool(ctx, node, int(node.attr("p", 2)))


def _global_lp_pool(ctx: Any, node: Any, p: float) -> Any:
    """(sum over the spatial dims of |x|^p)^(1/p), the spatial dims kept as 1s."""
    x = node.inputs[0]
    rank = _rank(ctx, node, x)
    if rank < 3:
        raise node.error(f"expects data of rank >= 3, got rank {rank}")
    dtype = ctx.dtype(x)
    powered = _abs_power(ctx, x, p)
    summed = op.sum(powered, axis=tuple(range(2, rank)), keepdims=True)
    return _root(ctx, summed, p, dtype)


@converter("GlobalLpPool", since=1)
def global_lp_pool_1(ctx: Any, node: Any) -> Any:
    return _global_lp_pool(ctx, node, float(node.attr("p", 2.0)))


@converter("GlobalLpPool", since=2)
def global_lp_pool_2(ctx: Any, node: Any) -> Any:
    return _global_lp_pool(ctx, node, int(node.attr("p", 2)))


# ---------------------------------------------------------------- Col2Im, CenterCropPad

def _const_ints(ctx: Any, node: Any, i: int, what: str) -> list[int]:
    v = ctx.constant(node.inputs[i], node, what)
    return [int(d) for d in np.asarray(v).reshape(-1)]


@converter("Col2Im", since=18)
def col2im(ctx: Any, node: Any) -> Any:
    """Sums the column blocks back into the image: for each kernel offset (in ONNX's
    order, the row-major order of block_shape) its (N, C, *blocks) slice is spread to the
    stride grid (zeros between), moved to its dilated offset in the padded image, and
    added; the padding is then cut off. The additions per pixel run in the same order as
    the reference's accumulation."""
    x = node.inputs[0]
    image = _const_ints(ctx, node, 1, "image_shape")
    block = _const_ints(ctx, node, 2, "block_shape")
    nd = len(image)
    if nd < 1 or len(block) != nd:
        raise node.error(f"image_shape {image} and block_shape {block} differ in length")
    shape = ctx.shape(x)
    if len(shape) != 3:
        raise node.error(f"input must be 3-D (N, C * prod(block_shape), L), got rank "
                         f"{len(shape)}")
    ck, nl = shape[1], shape[2]
    if not isinstance(ck, int) or not isinstance(nl, int):
        raise node.error("needs static dims 1 and 2 of the input")
    k_total = int(np.prod(block, dtype=np.int64))
    if k_total <= 0 or ck % k_total:
        raise node.error(f"dim 1 ({ck}) is not a multiple of prod(block_shape) {k_total}")
    c = ck // k_total
    strides = _ints(node, "strides", nd, 1)
    dilations = _ints(node, "dilations", nd, 1)
    pads_attr = node.attr("pads", None)
    pads = (tuple(int(v) for v in pads_attr) if pads_attr is not None and len(pads_attr)
            else (0,) * (2 * nd))
    if len(pads) != 2 * nd or any(v < 0 for v in pads):
        raise node.error(f"pads {list(pads)} must be {2 * nd} non-negative values")
    padded = [image[i] + pads[i] + pads[nd + i] for i in range(nd)]
    blocks = []
    for i in range(nd):
        dk = (block[i] - 1) * dilations[i] + 1
        nb = (padded[i] - dk) // strides[i] + 1
        if nb <= 0:
            raise node.error(f"the block does not fit spatial axis {i}")
        blocks.append(nb)
    if int(np.prod(blocks, dtype=np.int64)) != nl:
        raise node.error(f"the input has {nl} blocks, the geometry gives {blocks}")
    n = shape[0]
    lead = (n if isinstance(n, int) else -1,)
    cols = op.reshape(x, newshape=lead + (c, k_total) + tuple(blocks))
    dtype = ctx.dtype(x)
    zero = ctx.const(np.asarray(0, dtype))
    total: Any = None
    for k, offset in enumerate(np.ndindex(*block)):
        part = op.squeeze(op.strided_slice(cols, begin=(k,), end=(k + 1,), strides=(1,),
                                           axes=(2,)), axis=(2,))
        # spread each block position to the stride grid: (.., nb) -> (.., nb, s) with
        # s - 1 zeros after each value -> (.., nb * s)
        cur = list(blocks)
        for i in range(nd):
            s = strides[i]
            if s == 1:
                continue
            part = op.expand_dims(part, axis=3 + i)
            width = [(0, 0)] * (3 + nd)
            width[3 + i] = (0, s - 1)
            part = op.nn.pad(part, zero, pad_width=tuple(width))
            cur[i] *= s
            part = op.reshape(part, newshape=lead + (c,) + tuple(cur))
        # place at the offset inside the padded image
        width = [(0, 0), (0, 0)]
        for i in range(nd):
            begin = offset[i] * dilations[i]
            extent = blocks[i] * strides[i]
            end = padded[i] - begin - extent
            if end < 0:
                part = op.strided_slice(part, begin=(0,), end=(extent + end,), strides=(1,),
                                        axes=(2 + i,))
                end = 0
            width.append((begin, end))
        part = op.nn.pad(part, zero, pad_width=tuple(width))
        total = part if total is None else op.add(total, part)
    if any(pads):
        total = op.strided_slice(total, begin=tuple(pads[:nd]),
                                 end=tuple(pads[i] + image[i] for i in range(nd)),
                                 strides=(1,) * nd, axes=tuple(range(2, 2 + nd)))
    return total


@converter("CenterCropPad", since=18)
def center_crop_pad(ctx: Any, node: Any) -> Any:
    """Per axis: a longer dim is cropped to the centred window (start rounded down), a
    shorter one padded with zeros (the odd pixel on the end side)."""
    x = node.inputs[0]
    shape = ctx.shape(x)
    rank = len(shape)
    target = _const_ints(ctx, node, 1, "shape")
    axes = node.attr("axes", None)
    axes = list(range(rank)) if axes is None else [int(a) for a in axes]
    if len(axes) != len(target):
        raise node.error(f"shape {target} and axes {axes} differ in length")
    if any(not -rank <= a < rank for a in axes):
        raise node.error(f"axes {axes} are out of range for rank {rank}")
    axes = [a % rank for a in axes]
    if len(set(axes)) != len(axes):
        raise node.error(f"axes {axes} repeat an axis")
    out = x
    width = [(0, 0)] * rank
    begins, ends, slice_axes = [], [], []
    for a, t in zip(axes, target):
        d = shape[a]
        if not isinstance(d, int):
            raise node.error(f"axis {a} must have a static size")
        if t < 0:
            raise node.error(f"negative target size {t}")
        if d > t:
            start = (d - t) // 2
            begins.append(start)
            ends.append(start + t)
            slice_axes.append(a)
        elif d < t:
            total = t - d
            width[a] = (total // 2, total - total // 2)
    if slice_axes:
        out = op.strided_slice(out, begin=tuple(begins), end=tuple(ends),
                               strides=(1,) * len(begins), axes=tuple(slice_axes))
    if any(w != (0, 0) for w in width):
        out = op.nn.pad(out, ctx.const(np.asarray(0, ctx.dtype(x))), pad_width=tuple(width))
    return out


# ---------------------------------------------------------------- normalisation

def _batch_norm(ctx: Any, node: Any) -> Any:
    x, scale, bias, mean, var = node.inputs[:5]
    dtype = ctx.dtype(x)
    for e, what in ((scale, "scale"), (bias, "B"), (mean, "mean"), (var, "var")):
        if ctx.dtype(e) != dtype:
            raise node.error(f"{what} has dtype {ctx.dtype(e)}, X has {dtype}: mixed "
                             "precision is not supported")
    if _rank(ctx, node, x) < 2:
        raise node.error("X must have rank >= 2")
    out = op.nn.batch_norm(x, scale, bias, mean, var, axis=1,
                           epsilon=float(node.attr("epsilon", 1e-5)))
    return TupleGetItem(out, 0)


@converter("BatchNormalization", since=1)
def batch_norm_1(ctx: Any, node: Any) -> Any:
    # opsets 1..8: is_test (1..6), spatial (1..8), consumed_inputs (1..5). Inference only:
    # the training-mode outputs (mean, var, saved mean/var) are refused.
    _only_first_output(node, "a training-mode statistic")
    if int(node.attr("spatial", 1)) != 1:
        raise node.error("spatial=0 (per-activation statistics) is not supported")
    return _batch_norm(ctx, node)


@converter("BatchNormalization", since=9)
def batch_norm_9(ctx: Any, node: Any) -> Any:
    _only_first_output(node, "a training-mode statistic")
    return _batch_norm(ctx, node)


@converter("BatchNormalization", since=14)
def batch_norm_14(ctx: Any, node: Any) -> Any:
    if int(node.attr("training_mode", 0)) != 0:
        return _batch_norm_training(ctx, node)
    _only_first_output(node, "running mean / var of training mode")
    return _batch_norm(ctx, node)


def _batch_norm_training(ctx: Any, node: Any) -> Any:
    """training_mode=1: normalised with the batch's own statistics (mean and population
    variance over every axis but 1), and the running statistics updated with `momentum`:
    running = input * momentum + batch * (1 - momentum)."""
    x, scale, bias, mean, var = node.inputs[:5]
    rank = _rank(ctx, node, x)
    if rank < 2:
        raise node.error("X must have rank >= 2")
    axes = (0,) + tuple(range(2, rank))
    batch_mean = op.mean(x, axis=axes)
    batch_var = op.variance(x, op.mean(x, axis=axes, keepdims=True), axis=axes)
    y = TupleGetItem(op.nn.batch_norm(x, op.cast(scale, dtype=ctx.dtype(x)),
                                      op.cast(bias, dtype=ctx.dtype(x)), batch_mean,
                                      batch_var, axis=1,
                                      epsilon=float(node.attr("epsilon", 1e-5))), 0)
    momentum = float(node.attr("momentum", 0.9))
    outs = [y]
    for running, batch in ((mean, batch_mean), (var, batch_var)):
        dtype = ctx.dtype(running)
        keep = ctx.const(np.asarray(momentum, dtype))
        take = ctx.const(np.asarray(1.0 - momentum, dtype))
        outs.append(op.add(op.multiply(running, keep),
                           op.multiply(op.cast(batch, dtype=dtype), take)))
    return outs


@converter("InstanceNormalization", since=1)
def instance_norm(ctx: Any, node: Any) -> Any:
    x, scale, bias = node.inputs[:3]
    if _rank(ctx, node, x) < 3:
        raise node.error("input must have rank >= 3")
    return op.nn.instance_norm(x, scale, bias, axis=1,
                               epsilon=float(node.attr("epsilon", 1e-5)))


@converter("LayerNormalization", since=17)
def layer_norm(ctx: Any, node: Any) -> Any:
    y = _layer_norm_y(ctx, node)
    if not any(node.outputs[1:3]):
        return y
    # Mean and InvStdDev as ONNX's function body defines them, over the normalised axes
    # (kept as 1s), computed in the stash type (float32):
    # Mean = ReduceMean(X), InvStdDev = 1 / Sqrt(ReduceMean((X - Mean)^2) + epsilon)
    x = node.inputs[0]
    rank = _rank(ctx, node, x)
    axis = int(node.attr("axis", -1)) % rank
    if int(node.attr("stash_type", 1)) != 1:
        raise node.error("stash_type other than 1 (float32) is not supported")
    xs = x if ctx.dtype(x) == "float32" else op.cast(x, dtype="float32")
    axes = tuple(range(axis, rank))
    mean = op.mean(xs, axis=axes, keepdims=True)
    var = op.variance(xs, mean, axis=axes, keepdims=True)
    eps = ctx.const(np.asarray(float(node.attr("epsilon", 1e-5)), np.float32))
    inv = op.divide(ctx.const(np.asarray(1.0, np.float32)), op.sqrt(op.add(var, eps)))
    return [y, mean, inv]


def _layer_norm_y(ctx: Any, node: Any) -> Any:
    x, scale, bias = node.inputs[0], node.inputs[1], node.input(2)
    shape = ctx.shape(x)
    rank = len(shape)
    axis = int(node.attr("axis", -1))
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    eps = float(node.attr("epsilon", 1e-5))
    dtype = ctx.dtype(x)
    if ctx.dtype(scale) != dtype or (bias is not None and ctx.dtype(bias) != dtype):
        raise node.error("Scale and B must have X's dtype")
    norm_shape = shape[axis:]
    if not all(isinstance(d, int) for d in norm_shape):
        raise node.error("the normalised dims must be static")
    norm_shape = tuple(int(d) for d in norm_shape)
    flat = int(np.prod(norm_shape, dtype=np.int64))

    def param(p: Any) -> Any:
        p_shape = ctx.shape(p)
        if tuple(p_shape) == (flat,) and len(norm_shape) == 1:
            return p
        if len(p_shape) > len(norm_shape):
            raise node.error(f"Scale/B of shape {tuple(p_shape)} must broadcast to the "
                             f"normalised shape {norm_shape}")
        if tuple(p_shape) != norm_shape:
            p = op.broadcast_to(p, shape=norm_shape)
        return op.reshape(p, newshape=(flat,))

    g = param(scale)
    b = param(bias) if bias is not None else ctx.const(np.zeros((flat,), dtype))
    if axis == rank - 1:
        return op.nn.layer_norm(x, g, b, axis=-1, epsilon=eps, center=bias is not None)
    lead = shape[:axis]
    known = all(isinstance(d, int) for d in lead)
    if known:
        y = op.reshape(x, newshape=tuple(int(d) for d in lead) + (flat,))
    else:
        y = op.reshape(x, newshape=(-1, flat))
    y = op.nn.layer_norm(y, g, b, axis=-1, epsilon=eps, center=bias is not None)
    return op.reshape_like(y, x)


def _group_norm(ctx: Any, node: Any, per_group: bool) -> Any:
    x, scale, bias = node.inputs[:3]
    shape = ctx.shape(x)
    if len(shape) < 3:
        raise node.error("input must have rank >= 3")
    groups = int(node.attr("num_groups"))
    channels = shape[1]
    if not isinstance(channels, int):
        raise node.error("needs a static channel dim")
    if groups <= 0 or channels % groups:
        raise node.error(f"num_groups {groups} does not divide the {channels} channels")
    eps = float(node.attr("epsilon", 1e-5))
    if per_group:
        # opset 18: one scale / bias per group, repeated to the group's channels
        reps = channels // groups
        if reps > 1:
            scale = op.repeat(scale, repeats=reps, axis=0)
            bias = op.repeat(bias, repeats=reps, axis=0)
    return op.nn.group_norm(x, scale, bias, num_groups=groups, axis=1, epsilon=eps)


@converter("GroupNormalization", since=18)
def group_norm_18(ctx: Any, node: Any) -> Any:
    return _group_norm(ctx, node, per_group=True)


@converter("GroupNormalization", since=21)
def group_norm_21(ctx: Any, node: Any) -> Any:
    if int(node.attr("stash_type", 1)) != 1:
        raise node.error("stash_type other than 1 (float32) is not supported")
    return _group_norm(ctx, node, per_group=False)


@converter("LRN", since=1)
def lrn(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    size = int(node.attr("size"))
    if size < 1:
        raise node.error("size must be >= 1")
    kw = {"size": size, "axis": 1, "alpha": float(node.attr("alpha", 1e-4)),
          "beta": float(node.attr("beta", 0.75)), "bias": float(node.attr("bias", 1.0))}
    if size % 2:
        return op.nn.lrn(x, **kw)
    # ONNX's window is [c - (size-1)//2, c + ceil((size-1)/2)], Relay's starts size//2
    # before c: the same window on the channel-reversed tensor
    return op.reverse(op.nn.lrn(op.reverse(x, axis=1), **kw), axis=1)


@converter("MeanVarianceNormalization", since=9)
def mean_variance_norm(ctx: Any, node: Any) -> Any:
    # ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9)
    x = node.inputs[0]
    rank = _rank(ctx, node, x)
    axes = tuple(sorted(int(a) % rank for a in node.attr("axes", [0, 2, 3])))
    m = op.mean(x, axis=axes, keepdims=True)
    ex2 = op.mean(op.multiply(x, x), axis=axes, keepdims=True)
    std = op.sqrt(op.subtract(ex2, op.multiply(m, m)))
    eps = ctx.const(np.asarray(1e-9, ctx.dtype(x)))
    return op.divide(op.subtract(x, m), op.add(std, eps))


_STASH = {1: "float32"}


@converter("RMSNormalization", since=23)
def rms_norm(ctx: Any, node: Any) -> Any:
    # ONNX's function body: XU = Cast<stash>(X), RMS = Sqrt(ReduceMean(XU * XU over
    # [axis, rank)) + epsilon), Y = Cast<T>(XU / RMS) * Scale
    x, scale = node.inputs[0], node.inputs[1]
    shape = ctx.shape(x)
    rank = len(shape)
    if rank == 0:
        raise node.error("X must have rank >= 1")
    axis = int(node.attr("axis", -1))
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    stash = int(node.attr("stash_type", 1))
    if stash not in _STASH:
        raise node.error(f"stash_type {stash} is not supported (only 1, float32)")
    dtype = ctx.dtype(x)
    if ctx.dtype(scale) != dtype:
        raise node.error(f"Scale has dtype {ctx.dtype(scale)}, X has {dtype}: mixed "
                         "precision is not supported")
    _unidirectional(ctx, node, scale, shape, "Scale")
    sdt = _STASH[stash]
    xs = x if dtype == sdt else op.cast(x, dtype=sdt)
    ms = op.mean(op.multiply(xs, xs), axis=tuple(range(axis, rank)), keepdims=True)
    eps = ctx.const(np.asarray(float(node.attr("epsilon", 1e-5)), np.float32).astype(sdt))
    normalized = op.divide(xs, op.sqrt(op.add(ms, eps)))
    if dtype != sdt:
        normalized = op.cast(normalized, dtype=dtype)
    return op.multiply(normalized, scale)


def _unidirectional(ctx: Any, node: Any, b: Any, shape: tuple, what: str) -> None:
    """`b` must broadcast to `shape` without growing it (ONNX unidirectional
    broadcasting); dims unknown at import are taken on trust."""
    b_shape = ctx.shape(b)
    if len(b_shape) > len(shape):
        raise node.error(f"{what} of rank {len(b_shape)} does not broadcast to rank "
                         f"{len(shape)}")
    for bd, d in zip(reversed(b_shape), reversed(shape)):
        if isinstance(bd, int) and isinstance(d, int) and bd not in (1, d):
            raise node.error(f"{what} of shape {tuple(b_shape)} does not broadcast to "
                             f"{tuple(shape)}")


def _lp_norm(ctx: Any, node: Any) -> Any:
    # Y = X / Lp_norm(X, axis) (p 1: sum |x|, p 2: sqrt(sum x^2)); 0 where the norm is 0
    x = node.inputs[0]
    rank = _rank(ctx, node, x)
    if rank == 0:
        raise node.error("input must have rank >= 1")
    axis = int(node.attr("axis", -1))
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    p = int(node.attr("p", 2))
    if p == 1:
        norm = op.sum(op.abs(x), axis=(axis,), keepdims=True)
    elif p == 2:
        norm = op.sqrt(op.sum(op.multiply(x, x), axis=(axis,), keepdims=True))
    else:
        raise node.error(f"p={p} is not 1 or 2")
    zero = ctx.const(np.asarray(0, ctx.dtype(x)))
    return op.where(op.equal(norm, zero), zero, op.divide(x, norm))


@converter("LpNormalization", since=1)      # opset 22 only widened the types
def lp_norm(ctx: Any, node: Any) -> Any:
    return _lp_norm(ctx, node)


@converter("Swish", since=24)
def swish(ctx: Any, node: Any) -> Any:
    # ONNX's function body: Y = X * Sigmoid(CastLike(alpha, X) * X)
    x = node.inputs[0]
    alpha = float(node.attr("alpha", 1.0))
    dtype = ctx.dtype(x)
    if alpha == 1.0:
        return op.multiply(x, op.sigmoid(x))      # 1 * x is x exactly
    scaled = op.multiply(ctx.const(np.asarray(alpha, np.float32).astype(dtype)), x)
    return op.multiply(x, op.sigmoid(scaled))


def _cumprod_along(x: Any, axis: int, exclusive: bool, reverse: bool) -> Any:
    if reverse:
        return op.reverse(op.cumprod(op.reverse(x, axis=axis), axis=axis,
                                     exclusive=exclusive), axis=axis)
    return op.cumprod(x, axis=axis, exclusive=exclusive)


@converter("CumProd", since=26)
def cumprod(ctx: Any, node: Any) -> Any:
    x, axis_in = node.inputs[0], node.inputs[1]
    rank = _rank(ctx, node, x)
    if rank == 0:
        raise node.error("x must have rank >= 1")
    exclusive = bool(node.attr("exclusive", 0))
    reverse = bool(node.attr("reverse", 0))
    axis_shape = ctx.shape(axis_in)
    if any(not isinstance(d, int) for d in axis_shape) or math.prod(axis_shape) != 1:
        raise node.error(f"axis must hold one element, got shape {tuple(axis_shape)}")
    axis_v = ctx.value(axis_in)
    if axis_v is not None:
        axis = int(np.asarray(axis_v).reshape(-1)[0])
        if not -rank <= axis < rank:
            raise node.error(f"axis {axis} is out of range for rank {rank}")
        return _cumprod_along(x, axis % rank, exclusive, reverse)
    if rank == 1:
        # the only valid axes of a 1-D input (0 and -1) are the same axis
        return _cumprod_along(x, 0, exclusive, reverse)
    # an axis known only at run time: the product along each axis, the one the value
    # names selected (each candidate is computed exactly as for a constant axis)
    a = op.cast(op.reshape(axis_in, newshape=()), dtype="int64")
    a = op.where(op.less(a, _i64_const(ctx, 0)), op.add(a, _i64_const(ctx, rank)), a)
    out = _cumprod_along(x, rank - 1, exclusive, reverse)
    for k in range(rank - 2, -1, -1):
        out = op.where(op.equal(a, _i64_const(ctx, k)),
                       _cumprod_along(x, k, exclusive, reverse), out)
    return out


# ---------------------------------------------------------------- Gemm, MatMul

def _gemm(ctx: Any, node: Any) -> Any:
    a, b, c = node.inputs[0], node.inputs[1], node.input(2)
    alpha = float(node.attr("alpha", 1.0))
    beta = float(node.attr("beta", 1.0))
    trans_a = int(node.attr("transA", 0))
    trans_b = int(node.attr("transB", 0))
    if len(ctx.shape(a)) != 2 or len(ctx.shape(b)) != 2:
        raise node.error("A and B must be 2-D")
    dtype = ctx.dtype(a)
    if trans_a:
        a = op.transpose(a, axes=(1, 0))
    if not trans_b:
        b = op.transpose(b, axes=(1, 0))
    n = ctx.shape(node.inputs[1])[0 if trans_b else 1]
    out = op.nn.dense(a, b, units=n if isinstance(n, int) else None)
    if alpha != 1.0:
        out = op.multiply(ctx.const(np.asarray(alpha, dtype)), out)
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = op.multiply(ctx.const(np.asarray(beta, dtype)), c)
        out = op.add(out, c)
    return out


@converter("Gemm", since=1)
def gemm(ctx: Any, node: Any) -> Any:
    return _gemm(ctx, node)


def _i64_const(ctx: Any, value: Any) -> Any:
    return ctx.const(np.asarray(value, np.int64))


def _shape_vector(ctx: Any, x: Any) -> Any:
    """The shape of `x` as a 1-D int64 tensor (a constant when static)."""
    static = ctx.static_shape(x)
    if static is not None:
        return _i64_const(ctx, np.asarray(static, np.int64).reshape(-1))
    return op.shape_of(x, dtype="int64")


def _vec_slice(vec: Any, begin: int, end: int) -> Any:
    return op.strided_slice(vec, begin=(begin,), end=(end,), strides=(1,))


def _matmul_dynamic(ctx: Any, node: Any, a: Any, b: Any, a_shape: tuple,
                    b_shape: tuple) -> Any:
    """numpy.matmul over dims unknown at import (as TVM's MatMul converter does for
    dynamic shapes): 1-D operands become matrices, the batch dims broadcast (run-time
    shape arithmetic: a dim of 1 takes the other's), each operand is broadcast to the
    batch and flattened to (prod(batch), rows, cols) with dyn.reshape, one batch_matmul,
    and the result reshaped to batch + (M,) + (N,) (M / N dropped for 1-D operands)."""
    ra, rb = len(a_shape), len(b_shape)
    if ra == 1:
        a = op.expand_dims(a, axis=0)
        a_shape = (1,) + a_shape
    if rb == 1:
        b = op.expand_dims(b, axis=1)
        b_shape = b_shape + (1,)
    ka, kb = a_shape[-1], b_shape[-2]
    if isinstance(ka, int) and isinstance(kb, int) and ka != kb:
        raise node.error(f"inner dims differ: {a_shape} x {b_shape}")
    nbatch = max(len(a_shape), len(b_shape)) - 2
    sa, sb = _shape_vector(ctx, a), _shape_vector(ctx, b)

    def batch_of(shape: tuple, vec: Any) -> Any:
        own = len(shape) - 2
        parts = []
        if own < nbatch:
            parts.append(_i64_const(ctx, np.ones(nbatch - own, np.int64)))
        if own:
            parts.append(_vec_slice(vec, 0, own))
        return parts[0] if len(parts) == 1 else op.concatenate(parts, axis=0)

    a_batch, b_batch = batch_of(a_shape, sa), batch_of(b_shape, sb)
    one = _i64_const(ctx, 1)
    batch = op.where(op.equal(a_batch, one), b_batch, a_batch)
    nb = op.prod(batch, axis=(0,), keepdims=True)
    a_bd = [d for d in a_shape[:-2]]
    b_bd = [d for d in b_shape[:-2]]

    def flatten(x: Any, shape: tuple, vec: Any, own_batch: list) -> Any:
        mats = _vec_slice(vec, len(shape) - 2, len(shape))
        if all(d == 1 for d in own_batch):
            # no batch of its own: batch_matmul broadcasts a batch of 1
            return op.dyn.reshape(x, op.concatenate([_i64_const(ctx, [1]), mats], axis=0),
                                  allowzero=True)
        if not (len(own_batch) == nbatch
                and all(isinstance(d, int) and d != 1 for d in own_batch)):
            x = op.dyn.broadcast_to(x, op.concatenate([batch, mats], axis=0))
        return op.dyn.reshape(x, op.concatenate([nb, mats], axis=0), allowzero=True)

    out = op.nn.batch_matmul(flatten(a, a_shape, sa, a_bd), flatten(b, b_shape, sb, b_bd),
                             transpose_a=False, transpose_b=False)
    parts = [batch]
    if ra != 1:
        parts.append(_vec_slice(sa, len(a_shape) - 2, len(a_shape) - 1))
    if rb != 1:
        parts.append(_vec_slice(sb, len(b_shape) - 1, len(b_shape)))
    # the result dims known at import: a static reshape keeps them in the type when at
    # most one is unknown (and none is 0, which would leave -1 undetermined)
    static = [_broadcast_dim(da, db) for da, db in
              zip(_padded(a_shape[:-2], nbatch), _padded(b_shape[:-2], nbatch))]
    if ra != 1:
        static.append(a_shape[-2])
    if rb != 1:
        static.append(b_shape[-1])
    unknown = [d for d in static if not isinstance(d, int)]
    if len(unknown) <= 1 and all(d != 0 for d in static):
        return op.reshape(out, newshape=tuple(d if isinstance(d, int) else -1
                                              for d in static))
    return op.dyn.reshape(out, op.concatenate(parts, axis=0), allowzero=True)


def _padded(dims: tuple, n: int) -> tuple:
    return (1,) * (n - len(dims)) + tuple(dims)


def _broadcast_dim(da: Any, db: Any) -> Any:
    """The broadcast of two batch dims when known at import (else None)."""
    if isinstance(da, int) and da != 1:
        return da
    if isinstance(db, int) and db != 1:
        return db
    if da == 1 and db == 1:
        return 1
    if da == 1:
        return db if isinstance(db, int) else None
    if db == 1:
        return da if isinstance(da, int) else None
    return None


def _matmul(ctx: Any, node: Any) -> Any:
    a, b = node.inputs[0], node.inputs[1]
    a_shape, b_shape = tuple(ctx.shape(a)), tuple(ctx.shape(b))
    ra, rb = len(a_shape), len(b_shape)
    if ra == 0 or rb == 0:
        raise node.error("MatMul operands must have rank >= 1")
    if ra <= 2 and rb <= 2:
        lhs = op.expand_dims(a, axis=0) if ra == 1 else a
        rhs = op.expand_dims(b, axis=1) if rb == 1 else b
        n = b_shape[-1] if rb == 2 else 1
        out = op.nn.dense(lhs, op.transpose(rhs, axes=(1, 0)),
                          units=n if isinstance(n, int) else None)
        squeeze = ([0] if ra == 1 else []) + ([1 if ra == 2 else 0] if rb == 1 else [])
        if ra == 1 and rb == 1:
            return op.reshape(out, newshape=())
        if squeeze:
            return op.squeeze(out, axis=tuple(squeeze))
        return out
    if rb == 2 and all(isinstance(d, int) for d in b_shape):
        # (..., M, K) x (K, N): one dense over the flattened rows
        k, n = b_shape
        rows = a_shape[:-1]
        out = op.nn.dense(op.reshape(a, newshape=(-1, k)), op.transpose(b, axes=(1, 0)),
                          units=n)
        if sum(1 for d in rows if not isinstance(d, int)) <= 1:
            return op.reshape(out, newshape=tuple(d if isinstance(d, int) else -1
                                                  for d in rows) + (n,))
        rows_t = op.strided_slice(_shape_vector(ctx, a), begin=(0,), end=(ra - 1,),
                                  strides=(1,))
        return op.dyn.reshape(out, op.concatenate([rows_t, _i64_const(ctx, [n])], axis=0),
                              allowzero=True)
    if not all(isinstance(d, int) for d in a_shape + b_shape):
        return _matmul_dynamic(ctx, node, a, b, a_shape, b_shape)
    # numpy semantics: 1-D operands become matrices, batch dims broadcast
    a_m = (1,) + a_shape if ra == 1 else a_shape
    b_m = b_shape + (1,) if rb == 1 else b_shape
    if ra == 1:
        a = op.reshape(a, newshape=a_m)
    if rb == 1:
        b = op.reshape(b, newshape=b_m)
    a_batch, b_batch = a_m[:-2], b_m[:-2]
    try:
        batch = tuple(int(d) for d in np.broadcast_shapes(a_batch, b_batch))
    except ValueError:
        raise node.error(f"batch dims {a_batch} and {b_batch} do not broadcast") from None
    if a_m[-1] != b_m[-2]:
        raise node.error(f"inner dims differ: {a_shape} x {b_shape}")
    m, k, n = a_m[-2], a_m[-1], b_m[-1]
    nb = int(np.prod(batch, dtype=np.int64))
    if a_batch != batch:
        a = op.broadcast_to(a, shape=batch + (m, k))
    if b_batch != batch:
        b = op.broadcast_to(b, shape=batch + (k, n))
    a3 = op.reshape(a, newshape=(nb, m, k)) if len(batch) != 1 else a
    b3 = op.reshape(b, newshape=(nb, k, n)) if len(batch) != 1 else b
    out = op.nn.batch_matmul(a3, b3, transpose_a=False, transpose_b=False)
    final = batch + ((m,) if ra != 1 else ()) + ((n,) if rb != 1 else ())
    return op.reshape(out, newshape=final)


@converter("MatMul", since=1)
def matmul(ctx: Any, node: Any) -> Any:
    return _matmul(ctx, node)


# ---------------------------------------------------------------- softmax family

def _axis(ctx: Any, node: Any, x: Any, default: int) -> tuple[int, int]:
    rank = _rank(ctx, node, x)
    axis = int(node.attr("axis", default))
    if not -rank <= axis < max(rank, 1):
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    return axis % max(rank, 1), rank


def _hardmax_axis(ctx: Any, x: Any, axis: int, depth: Any, node: Any) -> Any:
    if not isinstance(depth, int):
        raise node.error("the reduced axis must be static")
    idx = op.argmax(x, axis=(axis,), keepdims=False)
    dtype = ctx.dtype(x)
    return op.one_hot(idx, ctx.const(np.asarray(1, dtype)), ctx.const(np.asarray(0, dtype)),
                      depth=depth, axis=axis, dtype=dtype)


def _coerced_2d(ctx: Any, node: Any, build: Any) -> Any:
    """opsets 1..12: the input as a 2-D matrix (dims before `axis`, dims from `axis`), the
    op along its rows, the result reshaped back."""
    x = node.inputs[0]
    axis, rank = _axis(ctx, node, x, 1)
    if rank == 0:
        raise node.error("expects rank >= 1")
    shape = ctx.shape(x)
    if axis == rank - 1:
        return build(x, rank - 1, shape[-1])
    before, after = shape[:axis], shape[axis:]
    cols: Any = None
    if all(isinstance(d, int) for d in after):
        cols = int(np.prod(after, dtype=np.int64))
        flat = op.reshape(x, newshape=(-1, cols))
    elif all(isinstance(d, int) for d in before):
        flat = op.reshape(x, newshape=(int(np.prod(before, dtype=np.int64)), -1))
    else:
        raise node.error("needs static dims on one side of the axis")
    y = build(flat, 1, cols)
    return op.reshape_like(y, x)


@converter("Softmax", since=1)
def softmax_1(ctx: Any, node: Any) -> Any:
    return _coerced_2d(ctx, node, lambda x, a, d: op.nn.softmax(x, axis=a))


@converter("Softmax", since=13)
def softmax_13(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    axis, _ = _axis(ctx, node, x, -1)
    return op.nn.softmax(x, axis=axis)


@converter("LogSoftmax", since=1)
def log_softmax_1(ctx: Any, node: Any) -> Any:
    return _coerced_2d(ctx, node, lambda x, a, d: op.nn.log_softmax(x, axis=a))


@converter("LogSoftmax", since=13)
def log_softmax_13(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    axis, _ = _axis(ctx, node, x, -1)
    return op.nn.log_softmax(x, axis=axis)


@converter("Hardmax", since=1)
def hardmax_1(ctx: Any, node: Any) -> Any:
    return _coerced_2d(ctx, node, lambda x, a, d: _hardmax_axis(ctx, x, a, d, node))


@converter("Hardmax", since=13)
def hardmax_13(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    axis, _ = _axis(ctx, node, x, -1)
    return _hardmax_axis(ctx, x, axis, ctx.shape(x)[axis], node)


# ---------------------------------------------------------------- Dropout, Flatten

def _dropout_mask(ctx: Any, node: Any, x: Any, dtype: str) -> Any:
    if len(node.outputs) < 2 or not node.outputs[1]:
        return [x]
    return [x, op.cast(op.ones_like(x), dtype=dtype)]


@converter("Dropout", since=1)
def dropout_1(ctx: Any, node: Any) -> Any:
    # inference: the identity (is_test is ignored: a training-mode dropout is random);
    # the mask (opsets 1..9) has the input's type, all ones
    x = node.inputs[0]
    return _dropout_mask(ctx, node, x, ctx.dtype(x))


@converter("Dropout", since=10)
def dropout_10(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    return _dropout_mask(ctx, node, x, "bool")


@converter("Dropout", since=12)
def dropout_12(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    training = node.input(2)
    if training is not None:
        value = ctx.constant(training, node, "training_mode")
        if bool(np.asarray(value).reshape(-1)[0]):
            ratio = ctx.constant(node.input(1), node, "ratio") \
                if node.input(1) is not None else 0.5
            if float(np.asarray(ratio).reshape(-1)[0]) != 0.0:
                raise node.error("training_mode=True (random dropout) is not supported")
    return _dropout_mask(ctx, node, x, "bool")


@converter("Flatten", since=1)
def flatten(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    shape = ctx.shape(x)
    rank = len(shape)
    axis = int(node.attr("axis", 1))
    if not -rank <= axis <= rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    if axis < 0:
        axis += rank
    before, after = shape[:axis], shape[axis:]
    if all(isinstance(d, int) for d in before):
        rows = int(np.prod(before, dtype=np.int64))
        if all(isinstance(d, int) for d in after):
            return op.reshape(x, newshape=(rows, int(np.prod(after, dtype=np.int64))))
        return op.reshape(x, newshape=(rows, -1))
    if all(isinstance(d, int) for d in after):
        return op.reshape(x, newshape=(-1, int(np.prod(after, dtype=np.int64))))
    raise node.error(f"needs static dims on one side of axis {axis}, got {tuple(shape)}")


# ---------------------------------------------------------------- depth / space

@converter("DepthToSpace", since=1)
def depth_to_space(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    if _rank(ctx, node, x) != 4:
        raise node.error("expects 4-D NCHW input")
    mode = node.attr("mode", "DCR") if ctx.opset >= 11 else "DCR"
    if mode not in ("DCR", "CRD"):
        raise node.error(f"mode {mode!r} is not DCR or CRD")
    return op.nn.depth_to_space(x, block_size=int(node.attr("blocksize")), mode=mode)


@converter("SpaceToDepth", since=1)
def space_to_depth(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    if _rank(ctx, node, x) != 4:
        raise node.error("expects 4-D NCHW input")
    return op.nn.space_to_depth(x, block_size=int(node.attr("blocksize")))


@converter("SpaceToDepth", since=28)
def space_to_depth_28(ctx: Any, node: Any) -> Any:
    # opset 28 adds `mode`: DCR (nn.space_to_depth) or CRD, output channel
    # (c * bs + by) * bs + bx, the inverse of CRD DepthToSpace: a reshape, a transpose
    # and a reshape (data movement only)
    mode = node.attr("mode", "DCR")
    if mode == "DCR":
        return space_to_depth(ctx, node)
    if mode != "CRD":
        raise node.error(f"mode {mode!r} is not DCR or CRD")
    x = node.inputs[0]
    if _rank(ctx, node, x) != 4:
        raise node.error("expects 4-D NCHW input")
    shape = ctx.static_shape(x)
    if shape is None:
        raise node.error("mode CRD needs a static input shape")
    n, c, h, w = shape
    bs = int(node.attr("blocksize"))
    if bs < 1 or h % bs or w % bs:
        raise node.error(f"blocksize {bs} does not divide H={h} and W={w}")
    v = op.reshape(x, newshape=(n, c, h // bs, bs, w // bs, bs))
    v = op.transpose(v, axes=(0, 1, 3, 5, 2, 4))
    return op.reshape(v, newshape=(n, c * bs * bs, h // bs, w // bs))


# ---------------------------------------------------------------- Upsample, Resize

_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_COORD_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                "tf_half_pixel_for_nn", "half_pixel_symmetric", "tf_crop_and_resize")


def _resize(ctx: Any, node: Any, x: Any, scales: Any, sizes: Any, mode: str, coord: str,
            nearest_mode: str, cubic_a: float = -0.75, exclude: int = 0,
            antialias: int = 0, roi: Any = None, extrapolation: float = 0.0,
            coord_scales: tuple[float, float] | None = None) -> Any:
    """image.resize2d over H, W of 4-D NCHW data; N and C must keep their size. Given
    scales, the output size is floor(in * scale) and coordinates map with the scale
    itself (resize2d's `scales`, relaylang's addition), as ONNX says; `coord_scales`
    are such scales for given sizes (keep_aspect_ratio_policy's one scale)."""
    shape = ctx.shape(x)
    if len(shape) != 4:
        raise node.error(f"only 4-D NCHW data is supported, got rank {len(shape)}")
    hw = shape[2:]
    if not all(isinstance(d, int) for d in hw):
        raise node.error("needs static H and W")
    if sizes is not None:
        sizes = [int(v) for v in np.asarray(sizes).reshape(-1)]
        if len(sizes) != 4:
            raise node.error(f"sizes must have 4 entries, got {sizes}")
        if any(isinstance(d, int) and s != d for s, d in zip(sizes[:2], shape[:2])):
            raise node.error("resizing N or C is not supported")
        out = tuple(sizes[2:])
        # ONNX maps coordinates with out/in in float64 (or keep_aspect_ratio's scale)
        given_scales = ((float(coord_scales[0]), float(coord_scales[1]))
                        if coord_scales is not None else
                        tuple(o / n for o, n in zip(out, hw)))
    else:
        sc = [float(v) for v in np.asarray(scales, np.float32).reshape(-1)]
        if len(sc) != 4:
            raise node.error(f"scales must have 4 entries, got {sc}")
        if sc[0] != 1.0 or sc[1] != 1.0:
            raise node.error("resizing N or C is not supported")
        if any(s <= 0 for s in sc[2:]):
            raise node.error(f"scales must be positive, got {sc}")
        out = tuple(math.floor(n * s) for n, s in zip(hw, sc[2:]))
        given_scales = (sc[2], sc[3])
    if any(o <= 0 for o in out):
        raise node.error(f"output size {out} must be positive")
    extra: dict[str, Any] = {"scales": given_scales}
    if coord == "tf_crop_and_resize":
        if roi is None:
            raise node.error("tf_crop_and_resize needs the roi input")
        r = [float(v) for v in np.asarray(roi).reshape(-1)]
        if len(r) != 8:
            raise node.error(f"roi must have 8 entries (starts and ends of 4 axes), got {r}")
        if r[0] != 0 or r[1] != 0 or r[4] != 1 or r[5] != 1:
            raise node.error("a roi cropping N or C is not supported")
        extra["roi"] = (r[2], r[3], r[6], r[7])
        extra["extrapolation_value"] = float(extrapolation)
    if mode == "nearest":
        if nearest_mode not in _NEAREST_MODES:
            raise node.error(f"nearest_mode {nearest_mode!r} is not supported")
        return op.image.resize2d(x, size=out, method="nearest_neighbor",
                                 coordinate_transformation_mode=coord,
                                 rounding_method=nearest_mode, **extra)
    if antialias:
        extra["antialias"] = True
    if mode == "linear":
        if coord == "tf_half_pixel_for_nn":
            raise node.error("coordinate mode tf_half_pixel_for_nn is for nearest only")
        return op.image.resize2d(x, size=out, method="linear",
                                 coordinate_transformation_mode=coord, **extra)
    if mode == "cubic":
        return op.image.resize2d(x, size=out, method="cubic",
                                 coordinate_transformation_mode=coord, cubic_alpha=cubic_a,
                                 cubic_exclude=int(exclude), **extra)
    raise node.error(f"mode {mode!r} is not supported")


def _keep_aspect_ratio(node: Any, shape: Sequence[Any], sizes: Sequence[int],
                       axes: Sequence[int], policy: str) -> tuple[list[int], list[float]]:
    """ONNX's keep_aspect_ratio_policy: one scale for the `axes` (the smallest or largest
    of sizes/in), the sizes it gives (rounded half up) and the per-axis scales."""
    if not all(isinstance(shape[a], int) for a in axes):
        raise node.error("keep_aspect_ratio_policy needs static dims on the resized axes")
    ratios = [sizes[a] / shape[a] for a in axes]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    out = list(sizes)
    scales = [1.0] * len(shape)
    for a in axes:
        out[a] = math.floor(scale * shape[a] + 0.5)
        scales[a] = scale
    return out, scales


def _upsample(ctx: Any, node: Any, scales: Any) -> Any:
    mode = node.attr("mode", "nearest")
    if mode == "bilinear":
        mode = "linear"
    if mode not in ("nearest", "linear"):
        raise node.error(f"mode {mode!r} is not nearest or linear")
    # Upsample's and Resize-10's coordinates: x_in = x_out / scale (asymmetric); nearest
    # takes floor(x_in) when upsampling an axis and ceil(x_in) when downsampling it (as
    # onnxruntime does); an axis whose x_in are all integers (1 / scale an integer) takes
    # either
    rounding = "floor"
    if mode == "nearest":
        sc = [float(v) for v in np.asarray(scales, np.float32).reshape(-1)][2:]
        wanted = set()
        for s in sc:
            if s > 1.0:
                wanted.add("floor")
            elif s < 1.0 and not float(1.0 / s).is_integer():
                wanted.add("ceil")
        if len(wanted) > 1:
            raise node.error(f"nearest with scales {sc} needs floor on one axis and ceil on "
                             "the other: not expressible with one rounding method")
        rounding = wanted.pop() if wanted else "floor"
    return _resize(ctx, node, node.inputs[0], scales, None, mode, "asymmetric", rounding)


@converter("Upsample", since=1)
def upsample_1(ctx: Any, node: Any) -> Any:
    scales = [1.0, 1.0, float(node.attr("height_scale")), float(node.attr("width_scale"))]
    return _upsample(ctx, node, scales)


@converter("Upsample", since=7)
def upsample_7(ctx: Any, node: Any) -> Any:
    return _upsample(ctx, node, node.attr("scales"))


@converter("Upsample", since=9)
def upsample_9(ctx: Any, node: Any) -> Any:
    scales = ctx.constant(node.inputs[1], node, "scales")
    return _upsample(ctx, node, scales)


@converter("Resize", since=10)
def resize_10(ctx: Any, node: Any) -> Any:
    scales = ctx.constant(node.inputs[1], node, "scales")
    return _upsample(ctx, node, scales)


@converter("Resize", since=11)
def resize_11(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    rank = _rank(ctx, node, x)
    scales_in, sizes_in = node.input(2), node.input(3)
    scales = ctx.constant(scales_in, node, "scales") if scales_in is not None else None
    sizes = ctx.constant(sizes_in, node, "sizes") if sizes_in is not None else None
    if scales is not None and np.asarray(scales).size == 0:
        scales = None
    if sizes is not None and np.asarray(sizes).size == 0:
        sizes = None
    if (scales is None) == (sizes is None):
        raise node.error("exactly one of scales and sizes must be given")
    axes = node.attr("axes", None)
    given_axes = [int(a) % rank for a in axes] if axes is not None else list(range(rank))
    if axes is not None:
        given = np.asarray(scales if scales is not None else sizes).reshape(-1).tolist()
        if len(given) != len(given_axes):
            raise node.error("scales/sizes and axes differ in length")
        shape = ctx.shape(x)
        full: list[Any] = ([1.0] * rank if scales is not None else list(shape))
        for a, v in zip(given_axes, given):
            full[a] = v
        if scales is not None:
            scales = np.asarray(full, np.float32)
        else:
            if not all(isinstance(d, int) for d in full):
                raise node.error("sizes with axes needs static dims")
            sizes = np.asarray(full, np.int64)
    policy = node.attr("keep_aspect_ratio_policy", "stretch")
    coord_scales = None
    if sizes is not None and policy != "stretch":
        if policy not in ("not_larger", "not_smaller"):
            raise node.error(f"keep_aspect_ratio_policy {policy!r} is not one of stretch, "
                             "not_larger, not_smaller")
        sizes, kept = _keep_aspect_ratio(node, ctx.shape(x), [int(v) for v in sizes],
                                         given_axes, policy)
        coord_scales = (kept[2], kept[3]) if rank == 4 else None   # map with the one scale
    coord = node.attr("coordinate_transformation_mode", "half_pixel")
    if coord not in _COORD_MODES:
        raise node.error(f"coordinate_transformation_mode {coord!r} is not supported")
    roi = None
    if coord == "tf_crop_and_resize" and node.input(1) is not None:
        roi = ctx.constant(node.inputs[1], node, "roi")
        roi = roi if np.asarray(roi).size else None
        if axes is not None:          # roi given for the listed axes only
            r = np.asarray(roi, np.float64).reshape(-1)
            k = len(given_axes)
            full_roi = [0.0] * rank + [1.0] * rank
            for j, a in enumerate(given_axes):
                full_roi[a], full_roi[rank + a] = r[j], r[k + j]
            roi = np.asarray(full_roi)
    mode = node.attr("mode", "nearest")
    return _resize(ctx, node, x, scales, sizes, mode, coord,
                   node.attr("nearest_mode", "round_prefer_floor"),
                   float(node.attr("cubic_coeff_a", -0.75)),
                   int(node.attr("exclude_outside", 0)), int(node.attr("antialias", 0)),
                   roi, float(node.attr("extrapolation_value", 0.0)), coord_scales)
