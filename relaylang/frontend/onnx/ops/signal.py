"""Signal processing and linear algebra: DFT, STFT, HannWindow, HammingWindow,
BlackmanWindow, MelWeightMatrix and Det.

DFT and STFT are built around relaylang's `dft` (the transform along the last axis of
a signal given as its real and imaginary parts): the ONNX signal, whose trailing
dimension holds 1 (real) or 2 (real, imaginary) components, is split into the two
parts, the transformed axis moved last, padded with zeros or truncated to
`dft_length`, transformed, cut to the one-sided spectrum when asked, moved back, and
the parts stacked into a trailing dimension of 2. DFT's axis is an attribute until
opset 20 and an input from then on (default 1, then -2); either way it counts the
dimensions of the whole input, trailing one included, and may not name that one.
`onesided=1` keeps the first floor(n/2)+1 frequencies (of a complex signal too, as
onnxruntime and ONNX's reference do); with `inverse=1` it is the inverse real
transform (irfft): the one-sided spectrum of a real signal of `dft_length` samples
(default 2(m-1) for m frequencies) is completed by conjugate symmetry, transformed
back, and the real part returned (trailing dimension 1), as numpy.fft.irfft and ONNX's
reference (onnxruntime agrees when m = n//2 + 1 and for some other lengths, not all).

STFT cuts frames of `frame_length` samples (or the window's length) every
`frame_step` samples with one `take` (the frame indices are a constant), weights them
by the window (a tensor, possibly computed at run time) and transforms each frame;
`onesided` defaults to 1. The number of frames is 1 + (L - frame_length) // frame_step.

The window functions and MelWeightMatrix take their sizes as inputs, so they need
them at import: the result is then a constant, computed in float64 and rounded once
to `output_datatype` (integer types truncate, as onnxruntime's static_cast). The
windows are ONNX's formulas: Hann sin^2(pi n/N), Hamming 25/46 - 21/46 cos(2 pi n/N),
Blackman 0.42 - 0.5 cos(2 pi n/N) + 0.08 cos(4 pi n/N), N = size (periodic, the
default) or size - 1 (symmetric: a symmetric window of one sample is 0/0, NaN, as in
onnxruntime); the size must be positive. (onnxruntime's float64 windows are only
float32-accurate: float32 coefficients, pi to 9 digits.) MelWeightMatrix follows
onnxruntime: mel(f) = 2595 log10(1 + f/700), num_mel_bins + 2 points spaced evenly in
mel from lower_edge_hertz by (mel(upper) - mel(lower)) / (num_mel_bins + 2), each mapped
to the spectrogram bin floor((dft_length + 1) * hz / sample_rate), and triangles
between consecutive points; an edge outside the spectrogram is refused.

Det is relaylang's `det` (float inputs (..., n, n)).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....ir.expr import TupleGetItem
from ....op import make as op
from ..importer import elem_dtype
from ..registry import converter

_FLOATS = ("float16", "bfloat16", "float32", "float64")


# ---------------------------------------------------------------- helpers

def _scalar(ctx: Any, node: Any, i: int, what: str) -> Any:
    """The value of input `i` (one element) as a Python number, or None when omitted;
    an error when it is given but not known at import."""
    expr = node.input(i)
    if expr is None:
        return None
    value = np.asarray(ctx.constant(expr, node, what))
    if value.size != 1:
        raise node.error(f"{what} must be a scalar, got a tensor of shape {value.shape}")
    return value.reshape(()).item()


def _int_scalar(ctx: Any, node: Any, i: int, what: str) -> int | None:
    value = _scalar(ctx, node, i, what)
    if value is None:
        return None
    if isinstance(value, float) and not value.is_integer():
        raise node.error(f"{what} must be an integer, got {value}")
    return int(value)


def _float_input(ctx: Any, node: Any, x: Any, what: str = "the input") -> str:
    dtype = ctx.dtype(x)
    if dtype not in _FLOATS:
        raise node.error(f"{what} must be a float tensor, got {dtype}")
    return dtype


def _static_dim(node: Any, shape: tuple, axis: int, what: str) -> int:
    d = shape[axis]
    if not isinstance(d, int):
        raise node.error(f"{what} (axis {axis} of the input) must have a static length")
    return d


def _parts(ctx: Any, node: Any, x: Any, what: str = "the input") -> tuple[Any, Any, int]:
    """(real part, imaginary part, rank of the parts) of an ONNX signal whose trailing
    dimension is 1 (real) or 2 (real, imaginary)."""
    shape = ctx.shape(x)
    if len(shape) < 2:
        raise node.error(f"{what} must have rank >= 2 (a trailing dimension of 1 or 2 "
                         f"components), got shape {tuple(shape)}")
    last = len(shape) - 1
    comps = shape[last]
    if comps not in (1, 2):
        raise node.error(f"the last dimension of {what} must be 1 (real) or 2 (real, "
                         f"imaginary), got {comps}")
    re = op.take(x, ctx.const(0, "int64"), axis=last)
    im = op.take(x, ctx.const(1, "int64"), axis=last) if comps == 2 else op.zeros_like(re)
    return re, im, last


def _zero(ctx: Any, dtype: str) -> Any:
    if dtype == "bfloat16":          # NumPy has no bfloat16: a cast of a float32 zero
        return op.cast(ctx.const(0, "float32"), dtype=dtype)
    return ctx.const(0, dtype)


def _slice_last(x: Any, rank: int, begin: int, end: int) -> Any:
    return op.strided_slice(x, begin=[begin], end=[end], strides=[1], axes=[rank - 1])


def _fit_last(ctx: Any, x: Any, rank: int, have: int, want: int, dtype: str) -> Any:
    """`x` padded with zeros or truncated along its last axis from `have` to `want`."""
    if want < have:
        return _slice_last(x, rank, 0, want)
    if want > have:
        widths = [[0, 0]] * (rank - 1) + [[0, want - have]]
        return op.nn.pad(x, _zero(ctx, dtype), pad_width=widths)
    return x


def _move_last(x: Any, rank: int, axis: int) -> tuple[Any, list[int] | None]:
    """`x` with `axis` moved last, and the permutation that moves it back (None when
    it already is last)."""
    if axis == rank - 1:
        return x, None
    perm = [a for a in range(rank) if a != axis] + [axis]
    back = [perm.index(a) for a in range(rank)]
    return op.transpose(x, axes=perm), back


def _move_back(x: Any, back: list[int] | None) -> Any:
    return x if back is None else op.transpose(x, axes=back)


def _transform(re: Any, im: Any, inverse: bool) -> tuple[Any, Any]:
    out = op.dft(re, im, inverse=inverse)
    return TupleGetItem(out, 0), TupleGetItem(out, 1)


def _hermitian(re: Any, im: Any, rank: int, m: int, n: int, ctx: Any, dtype: str
               ) -> tuple[Any, Any]:
    """The full spectrum of n points of a real signal from its first m (one-sided)
    frequencies along the last axis: the first n//2 + 1 (zero-padded when m is fewer),
    then conj(X[n-k]) for k = n//2 + 1 .. n-1."""
    h = n // 2 + 1
    re_h = _fit_last(ctx, re, rank, m, h, dtype)
    im_h = _fit_last(ctx, im, rank, m, h, dtype)
    tail = (n - 1) // 2               # X[1 .. tail], reversed and conjugated
    if tail == 0:
        return re_h, im_h
    re_t = op.reverse(_slice_last(re_h, rank, 1, tail + 1), axis=rank - 1)
    im_t = op.negative(op.reverse(_slice_last(im_h, rank, 1, tail + 1), axis=rank - 1))
    return (op.concatenate([re_h, re_t], axis=rank - 1),
            op.concatenate([im_h, im_t], axis=rank - 1))


# ---------------------------------------------------------------- DFT

def _dft(ctx: Any, node: Any, axis: int) -> Any:
    x = node.inputs[0]
    dtype = _float_input(ctx, node, x)
    shape = ctx.shape(x)
    rank = len(shape)
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for an input of rank {rank}")
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        raise node.error(f"axis {axis} is the trailing dimension of (real, imaginary) "
                         f"components, not a signal axis")
    inverse = bool(node.attr("inverse", 0))
    onesided = bool(node.attr("onesided", 0))
    re, im, prank = _parts(ctx, node, x)
    have = _static_dim(node, shape, axis, "the transformed axis")
    length = _int_scalar(ctx, node, 1, "dft_length")
    irfft = inverse and onesided
    if length is None:
        length = 2 * (have - 1) if irfft else have
    if length <= 0:
        raise node.error(f"dft_length must be positive, got {length}"
                         + (f" (the default 2*({have}-1) of a one-sided inverse)"
                            if irfft and node.input(1) is None else ""))
    re, back = _move_last(re, prank, axis)
    im, _ = _move_last(im, prank, axis)
    if irfft:
        re, im = _hermitian(re, im, prank, have, length, ctx, dtype)
    else:
        re = _fit_last(ctx, re, prank, have, length, dtype)
        im = _fit_last(ctx, im, prank, have, length, dtype)
    out_re, out_im = _transform(re, im, inverse)
    if irfft:
        return op.expand_dims(_move_back(out_re, back), axis=prank)
    if onesided:
        bins = length // 2 + 1
        out_re = _slice_last(out_re, prank, 0, bins)
        out_im = _slice_last(out_im, prank, 0, bins)
    return op.stack([_move_back(out_re, back), _move_back(out_im, back)], axis=prank)


@converter("DFT", since=17)
def dft_17(ctx: Any, node: Any) -> Any:
    return _dft(ctx, node, int(node.attr("axis", 1)))


@converter("DFT", since=20)
def dft_20(ctx: Any, node: Any) -> Any:
    axis = _int_scalar(ctx, node, 2, "the axis input")
    return _dft(ctx, node, -2 if axis is None else axis)


# ---------------------------------------------------------------- STFT

@converter("STFT", since=17)
def stft(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    dtype = _float_input(ctx, node, x, "the signal")
    shape = ctx.shape(x)
    if len(shape) != 3:
        raise node.error(f"the signal must have shape [batch, length, 1 or 2], got shape "
                         f"{tuple(shape)}")
    length = _static_dim(node, shape, 1, "the signal length")
    step = _int_scalar(ctx, node, 1, "frame_step")
    if step is None:
        raise node.error("frame_step is required")
    if step <= 0:
        raise node.error(f"frame_step must be positive, got {step}")
    window = node.input(2)
    frame = _int_scalar(ctx, node, 3, "frame_length")
    if window is not None:
        wshape = ctx.shape(window)
        if len(wshape) != 1 or not isinstance(wshape[0], int):
            raise node.error(f"the window must be a 1-D tensor of static length, got shape "
                             f"{tuple(wshape)}")
        if frame is not None and frame != wshape[0]:
            raise node.error(f"frame_length {frame} differs from the window's length "
                             f"{wshape[0]}")
        frame = wshape[0]
        if ctx.dtype(window) != dtype:
            raise node.error(f"the window has dtype {ctx.dtype(window)}, the signal {dtype}")
    if frame is None:
        frame = length
    if not 0 < frame <= length:
        raise node.error(f"the frame length {frame} must be in [1, {length}] (the signal "
                         "length)")
    frames = 1 + (length - frame) // step
    starts = np.arange(frames, dtype=np.int64)[:, None] * step
    index = ctx.const(starts + np.arange(frame, dtype=np.int64)[None, :])
    cut = op.take(x, index, axis=1)              # [batch, frames, frame, 1 or 2]
    re, im, rank = _parts(ctx, node, cut, "the signal")
    if window is not None:
        re = op.multiply(re, window)
        im = op.multiply(im, window)
    out_re, out_im = _transform(re, im, False)
    if int(node.attr("onesided", 1)):
        bins = frame // 2 + 1
        out_re = _slice_last(out_re, rank, 0, bins)
        out_im = _slice_last(out_im, rank, 0, bins)
    return op.stack([out_re, out_im], axis=rank)


# ---------------------------------------------------------------- windows

def _output_dtype(node: Any, default: int = 1) -> str:
    return elem_dtype(int(node.attr("output_datatype", default)),
                      f"{node.describe()}: output_datatype")


def _emit(ctx: Any, node: Any, values: np.ndarray, dtype: str) -> Any:
    """A constant of float64 `values` rounded once to `dtype`."""
    if dtype == "bool" or not (dtype in _FLOATS or dtype.startswith(("int", "uint"))):
        raise node.error(f"output_datatype {dtype} is not supported")
    if dtype not in _FLOATS and not np.all(np.isfinite(values)):
        raise node.error(f"the result holds NaN or infinity, which {dtype} cannot hold")
    if dtype == "bfloat16":          # NumPy has no bfloat16: relaylang's cast rounds it
        return op.cast(ctx.const(values, "float32"), dtype="bfloat16")
    with np.errstate(invalid="ignore"):
        return ctx.const(values.astype(dtype))


def _window(ctx: Any, node: Any, formula: Any) -> Any:
    size = _int_scalar(ctx, node, 0, "the window size")
    if size <= 0:
        raise node.error(f"the window size must be positive, got {size}")
    periodic = int(node.attr("periodic", 1))
    n = np.arange(size, dtype=np.float64)
    denominator = float(size if periodic else size - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = formula(n, denominator)
    return _emit(ctx, node, values, _output_dtype(node))


@converter("HannWindow", since=17)
def hann_window(ctx: Any, node: Any) -> Any:
    return _window(ctx, node, lambda n, d: np.sin(np.pi * n / d) ** 2)


@converter("HammingWindow", since=17)
def hamming_window(ctx: Any, node: Any) -> Any:
    alpha = 25.0 / 46.0
    return _window(ctx, node, lambda n, d: alpha - (1.0 - alpha) * np.cos(2 * np.pi * n / d))


@converter("BlackmanWindow", since=17)
def blackman_window(ctx: Any, node: Any) -> Any:
    # summed as ONNX's reference sums it: the centre of an even periodic window is
    # then exactly 1 (0.42 + 0.5 + 0.08 in that order is one ulp below)
    return _window(ctx, node, lambda n, d: (-0.5 * np.cos(2 * np.pi * n / d)
                                            + 0.08 * np.cos(4 * np.pi * n / d)) + 0.42)


# ---------------------------------------------------------------- MelWeightMatrix

def mel_weight_matrix(num_mel_bins: int, dft_length: int, sample_rate: int, lower: float,
                      upper: float) -> np.ndarray:
    """The (dft_length//2 + 1, num_mel_bins) matrix of triangular mel filters, float64
    (onnxruntime's construction; ValueError when an edge falls outside the spectrogram)."""
    if num_mel_bins <= 0 or dft_length <= 0 or sample_rate <= 0:
        raise ValueError(f"num_mel_bins, dft_length and sample_rate must be positive, got "
                         f"{num_mel_bins}, {dft_length} and {sample_rate}")
    bins = dft_length // 2 + 1
    for what, hz in (("lower_edge_hertz", lower), ("upper_edge_hertz", upper)):
        index = np.floor((dft_length + 1) * hz / sample_rate)
        if not 0 <= index < bins:
            raise ValueError(f"{what} {hz} falls outside the {bins} spectrogram bins of "
                             f"dft_length {dft_length} at sample_rate {sample_rate}")
    low = 2595.0 * np.log10(1.0 + lower / 700.0)
    high = 2595.0 * np.log10(1.0 + upper / 700.0)
    points = num_mel_bins + 2
    step = (high - low) / points
    hz = 700.0 * (10.0 ** ((low + step * np.arange(points)) / 2595.0) - 1.0)
    index = np.floor((dft_length + 1) * hz / sample_rate).astype(np.int64)
    out = np.zeros((bins, num_mel_bins), np.float64)
    for i in range(num_mel_bins):
        left, center, right = (int(v) for v in index[i:i + 3])
        if not 0 <= left <= center <= right <= bins or center >= bins:
            raise ValueError(f"mel filter {i} spans bins {left}..{right}, outside the {bins} "
                             "spectrogram bins")
        if center == left:
            out[center, i] = 1.0
        else:
            j = np.arange(left, center + 1)
            out[j, i] = (j - left) / float(center - left)
        if right > center:
            j = np.arange(center, right)
            out[j, i] = (right - j) / float(right - center)
    return out


@converter("MelWeightMatrix", since=17)
def mel_weight_matrix_17(ctx: Any, node: Any) -> Any:
    names = ("num_mel_bins", "dft_length", "sample_rate")
    ints = [_int_scalar(ctx, node, i, name) for i, name in enumerate(names)]
    edges = [_scalar(ctx, node, 3 + i, name)
             for i, name in enumerate(("lower_edge_hertz", "upper_edge_hertz"))]
    if any(v is None for v in ints + edges):
        raise node.error("MelWeightMatrix needs all five inputs")
    lower, upper = (float(np.float32(e)) for e in edges)
    try:
        values = mel_weight_matrix(ints[0], ints[1], ints[2], lower, upper)
    except ValueError as e:
        raise node.error(str(e)) from None
    return _emit(ctx, node, values, _output_dtype(node))


# ---------------------------------------------------------------- Det

@converter("Det", since=11)
def det(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    _float_input(ctx, node, x)
    shape = ctx.shape(x)
    if len(shape) < 2:
        raise node.error(f"the input must have rank >= 2 (square matrices in its last two "
                         f"axes), got shape {tuple(shape)}")
    rows, cols = shape[-2:]
    if isinstance(rows, int) and isinstance(cols, int) and rows != cols:
        raise node.error(f"the input must hold square matrices, got shape {tuple(shape)}")
    return op.det(x)
