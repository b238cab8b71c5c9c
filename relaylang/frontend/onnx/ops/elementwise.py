"""Elementwise ONNX operators: unary math, binary arithmetic with NumPy broadcasting
(ONNX's multidirectional broadcasting is NumPy's), comparisons and logic, activations.

Operators without a single relaylang op are composed of existing ops computing ONNX's
own formula (Selu, Celu, HardSigmoid, ...), with every constant in the input's dtype.
Points where relaylang's op differs from ONNX and the composition that keeps ONNX's
semantics:

- Round: relaylang's `round` rounds halves away from zero, ONNX's to even; a tie
  (`|x - trunc(x)| == 0.5`, exact in floating point) becomes `2 * round(x / 2)`
  (x / 2 is exact and never a tie), which is the even neighbour.
- Clip: ONNX gives `max` where min > max (`min(max(x, lo), hi)`); relaylang's `clip` is
  used only for constant bounds with lo <= hi on float tensors, else maximum/minimum.
- Mod: fmod=0 on integers is `floor_mod`, fmod=1 is C's fmod (`mod`); opset 28's fmod=0
  on floats is fmod corrected by the divisor (Python's float `%`), with ONNX's special
  cases (a zero result takes the divisor's sign).
- Pow with different base and exponent dtypes: computed in float64 (what C++'s
  std::pow of the two promotes to) and converted to the base's dtype.
- BitShift: shifts by a negative amount or >= the bit width give 0 (-1 for a right
  shift of a negative signed value), as opset 28 specifies, without a shift LLVM would
  leave undefined.
- Softplus: ln(exp(x) + 1), for x > 0 as x + ln(exp(-x) + 1) (the same value, without
  exp(x) overflowing to inf: onnxruntime's form); Mish uses it.
- Shrink: its attributes are floats, so integer and float16 tensors are computed in
  float32 (C++'s `T + float`) and converted back.
- Binary ops of opsets 1-6 (`broadcast`/`axis` attributes): B is aligned to A at
  `axis` (suffix matching without it) and NumPy broadcasting does the rest.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....op import make as op
from ..registry import converter

_FLOATS = ("float16", "float32", "float64", "bfloat16")
_FLT_MAX = float(np.finfo(np.float32).max)


def _is_float(dtype: str) -> bool:
    return dtype in _FLOATS


def _const(ctx: Any, value: Any, dtype: str) -> Any:
    """A scalar constant of `value` in `dtype` (bfloat16: a float32 constant rounded to
    bfloat16 by a cast, as ONNX converts a float attribute)."""
    if dtype == "bfloat16":
        return op.cast(ctx.const(np.asarray(value, dtype=np.float32)), dtype="bfloat16")
    return ctx.const(np.asarray(value, dtype=np.dtype(dtype)))


def _like(ctx: Any, value: Any, x: Any) -> Any:
    """A scalar constant of `value` in the dtype of `x`."""
    return _const(ctx, value, ctx.dtype(x))


def _unary(op_type: str, build: Any, since: int = 1) -> None:
    converter(op_type, since=since)(lambda ctx, node: build(node.inputs[0]))


def _binary(op_type: str, build: Any, since: int = 1) -> None:
    converter(op_type, since=since)(lambda ctx, node: build(node.inputs[0], node.inputs[1]))


def _legacy_operands(ctx: Any, node: Any) -> tuple[Any, Any]:
    """A and B of a binary op of opsets 1-6: with broadcast=1, B's dims are aligned to
    A's from `axis` (suffix matching when absent); without it the shapes must agree."""
    a, b = node.inputs[0], node.inputs[1]
    sa, sb = ctx.shape(a), ctx.shape(b)
    if not node.attr("broadcast", 0):
        if len(sa) != len(sb) or any(isinstance(x, int) and isinstance(y, int) and x != y
                                     for x, y in zip(sa, sb)):
            raise node.error(f"shapes {sa} and {sb} differ and broadcast=0")
        return a, b
    if len(sb) > len(sa):
        raise node.error(f"B of rank {len(sb)} cannot be broadcast to A of rank {len(sa)}")
    axis = node.attr("axis", None)
    if axis is None:
        return a, b
    axis = axis + len(sa) if axis < 0 else axis
    trailing = len(sa) - axis - len(sb)
    if axis < 0 or trailing < 0:
        raise node.error(f"axis {node.attr('axis')} does not fit B of shape {sb} in A of "
                         f"shape {sa}")
    if trailing:
        if not all(isinstance(d, int) for d in sb):
            raise node.error("legacy broadcasting with `axis` needs B's shape to be static")
        b = op.reshape(b, newshape=tuple(sb) + (1,) * trailing)
    return a, b


def _legacy_binary(op_type: str, build: Any) -> None:
    def convert(ctx: Any, node: Any) -> Any:
        return build(*_legacy_operands(ctx, node))
    converter(op_type, since=1)(convert)


# ---------------------------------------------------------------- unary math

for _name, _build in {"Relu": op.nn.relu, "Exp": op.exp, "Log": op.log, "Sqrt": op.sqrt,
                      "Neg": op.negative, "Abs": op.abs, "Tanh": op.tanh,
                      "Sigmoid": op.sigmoid, "Floor": op.floor, "Ceil": op.ceil,
                      "Not": op.logical_not}.items():
    _unary(_name, _build)
for _name, _build in {"Sin": op.sin, "Cos": op.cos, "Tan": op.tan, "Asin": op.asin,
                      "Acos": op.acos, "Atan": op.atan}.items():
    _unary(_name, _build, since=7)
for _name, _build in {"Sinh": op.sinh, "Cosh": op.cosh, "Asinh": op.asinh,
                      "Acosh": op.acosh, "Atanh": op.atanh, "Sign": op.sign,
                      "Erf": op.erf, "IsNaN": op.isnan}.items():
    _unary(_name, _build, since=9)
_unary("BitwiseNot", op.bitwise_not, since=18)


@converter("Reciprocal", since=1)
def reciprocal(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    return op.divide(_like(ctx, 1, x), x)


@converter("Round", since=11)
def round_half_even(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    away = op.round(x)                                   # halves away from zero
    tie = op.equal(op.abs(op.subtract(x, op.trunc(x))), _like(ctx, 0.5, x))
    even = op.multiply(_like(ctx, 2, x), op.round(op.multiply(x, _like(ctx, 0.5, x))))
    return op.where(tie, even, away)


@converter("IsInf", since=10)
def isinf(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    positive, negative = node.attr("detect_positive", 1), node.attr("detect_negative", 1)
    if positive and negative:
        return op.isinf(x)
    if positive:
        return op.equal(x, _like(ctx, np.inf, x))
    if negative:
        return op.equal(x, _like(ctx, -np.inf, x))
    return op.logical_and(op.isinf(x), ctx.const(np.asarray(False)))


# ---------------------------------------------------------------- binary arithmetic

_ARITH = {"Add": op.add, "Sub": op.subtract, "Mul": op.multiply, "Div": op.divide}
for _name, _build in _ARITH.items():
    _legacy_binary(_name, _build)
    _binary(_name, _build, since=7)

_legacy_binary("Pow", op.power)


@converter("Pow", since=7)
def pow_7(ctx: Any, node: Any) -> Any:
    base, exponent = node.inputs[0], node.inputs[1]
    dtype = ctx.dtype(base)
    if ctx.dtype(exponent) == dtype:
        return op.power(base, exponent)
    # mixed dtypes (opset 12 on): std::pow of the two promotes to double
    wide = op.power(op.cast(base, dtype="float64"), op.cast(exponent, dtype="float64"))
    return op.cast(wide, dtype=dtype)


@converter("Mod", since=10)
def mod_10(ctx: Any, node: Any) -> Any:
    a, b = node.inputs[0], node.inputs[1]
    fmod = node.attr("fmod", 0)
    if fmod not in (0, 1):
        raise node.error(f"fmod must be 0 or 1, got {fmod}")
    if fmod == 1:
        return op.mod(a, b)                              # C's fmod: truncated quotient
    if _is_float(ctx.dtype(a)):
        if ctx.opset < 28:
            raise node.error("fmod=0 is not defined on floating-point tensors before "
                             "opset 28 (use fmod=1)")
        return _float_floor_mod(ctx, a, b)
    return op.floor_mod(a, b)


def _float_floor_mod(ctx: Any, a: Any, b: Any) -> Any:
    """`a - floor(a / b) * b` with opset 28's special cases, exactly: fmod (exact) moved
    into the divisor's sign; a zero result takes the divisor's sign."""
    zero = _like(ctx, 0, a)
    r = op.mod(a, b)
    differ = op.not_equal(op.less(r, zero), op.less(b, zero))
    moved = op.where(op.logical_and(op.not_equal(r, zero), differ), op.add(r, b), r)
    signed_zero = op.multiply(op.abs(moved), op.sign(b))
    return op.where(op.equal(moved, zero), signed_zero, moved)


# opset 28: fmod=0 on floats becomes defined (handled above); the rest is unchanged
converter("Mod", since=28)(mod_10)


@converter("BitShift", since=11)
def bitshift(ctx: Any, node: Any) -> Any:
    x, y = node.inputs[0], node.inputs[1]
    direction = node.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise node.error(f"direction must be LEFT or RIGHT, got {direction!r}")
    dtype = ctx.dtype(x)
    bits = np.dtype(dtype).itemsize * 8
    zero = _like(ctx, 0, y)
    valid = op.less(y, _like(ctx, bits, y))
    signed = np.dtype(dtype).kind == "i"
    if signed:
        valid = op.logical_and(valid, op.greater_equal(y, zero))
    amount = op.where(valid, y, zero)
    shifted = (op.left_shift if direction == "LEFT" else op.right_shift)(x, amount)
    fill = _like(ctx, 0, x)
    if signed and direction == "RIGHT":
        fill = op.where(op.less(x, fill), _like(ctx, -1, x), fill)
    return op.where(valid, shifted, fill)


# opset 28: signed types, and over-wide or negative shifts defined (handled above)
converter("BitShift", since=28)(bitshift)

for _name, _build in {"BitwiseAnd": op.bitwise_and, "BitwiseOr": op.bitwise_or,
                      "BitwiseXor": op.bitwise_xor}.items():
    _binary(_name, _build, since=18)


# ---------------------------------------------------------------- comparisons and logic

for _name, _build in {"Equal": op.equal, "Less": op.less, "Greater": op.greater,
                      "And": op.logical_and, "Or": op.logical_or,
                      "Xor": op.logical_xor}.items():
    _legacy_binary(_name, _build)
    _binary(_name, _build, since=7)
_binary("LessOrEqual", op.less_equal, since=12)
_binary("GreaterOrEqual", op.greater_equal, since=12)


# ---------------------------------------------------------------- variadic

def _fold(node: Any, build: Any) -> Any:
    inputs = [x for x in node.inputs if x is not None]
    if not inputs:
        raise node.error("needs at least one input")
    out = inputs[0]
    for x in inputs[1:]:
        out = build(out, x)
    return out


@converter("Sum", since=1)
def sum_(ctx: Any, node: Any) -> Any:
    return _fold(node, op.add)


@converter("Max", since=1)
def max_(ctx: Any, node: Any) -> Any:
    return _fold(node, op.maximum)


@converter("Min", since=1)
def min_(ctx: Any, node: Any) -> Any:
    return _fold(node, op.minimum)


@converter("Mean", since=1)
def mean(ctx: Any, node: Any) -> Any:
    total = _fold(node, op.add)
    n = len([x for x in node.inputs if x is not None])
    return total if n == 1 else op.divide(total, _like(ctx, n, node.inputs[0]))


# ---------------------------------------------------------------- selection and casts

@converter("Where", since=9)
def where(ctx: Any, node: Any) -> Any:
    return op.where(node.inputs[0], node.inputs[1], node.inputs[2])


def _cast_to(node: Any, code: int, ctx: Any = None) -> Any:
    from ..importer import OnnxImportError, elem_dtype
    try:
        dtype = elem_dtype(code, f"Cast to {code}")
    except OnnxImportError as e:
        raise node.error(str(e)) from None
    if ctx is not None and dtype in _LOWP_FLOATS:
        return _cast_lowp(ctx, node, node.inputs[0], dtype)
    return op.cast(node.inputs[0], dtype=dtype)


# The float8 formats ONNX's `saturate` (opset 19) clamps to their largest finite value
# (relaylang's cast does not saturate: ir/lowp.py), and float8e8m0's (opset 24).
_SATURATING = {"float8_e4m3fn": 448.0, "float8_e4m3fnuz": 240.0, "float8_e5m2": 57344.0,
               "float8_e5m2fnuz": 57344.0}
_LOWP_FLOATS = (*_SATURATING, "float8_e8m0fnu", "float4_e2m1fn")


def _cast_lowp(ctx: Any, node: Any, x: Any, dtype: str) -> Any:
    """Cast `x` to a float8/float4 dtype as ONNX defines it: `saturate` (default 1)
    clamps the float8 targets to their largest finite value (inf included, NaN kept:
    onnx.numpy_helper.saturate_cast) before rounding; float8e8m0 rounds the float32
    value's exponent by `round_mode` ("up", "down", "nearest"), bit by bit as ONNX's
    reference (`numpy_helper.to_float8e8m0`) does."""
    saturate = bool(node.attr("saturate", 1))
    source = ctx.dtype(x)
    if dtype == "float8_e8m0fnu":
        return _cast_e8m0(ctx, node, x, source, saturate)
    if saturate and dtype in _SATURATING:
        if source in _LOWP_FLOATS:                 # no kernel computes on them: widen
            x = op.cast(x, dtype="float32")
        m = _SATURATING[dtype]
        x = op.clip(x, a_min=-m, a_max=m)
    return op.cast(x, dtype=dtype)


def _cast_e8m0(ctx: Any, node: Any, x: Any, source: str, saturate: bool) -> Any:
    mode = node.attr("round_mode", "up")
    if isinstance(mode, bytes):
        mode = mode.decode()
    if mode not in ("up", "down", "nearest"):
        raise node.error(f"round_mode must be \"up\", \"down\" or \"nearest\", got {mode!r}")
    if source != "float32":
        x = op.cast(x, dtype="float32")

    def u32(v: int) -> Any:
        return ctx.const(np.uint32(v))

    def bit_set(bits: Any, mask: int) -> Any:
        return op.not_equal(op.bitwise_and(bits, u32(mask)), u32(0))

    bits = op.reinterpret(x, dtype="uint32")
    exponent = op.bitwise_and(op.right_shift(bits, u32(23)), u32(0xFF))
    normal = op.not_equal(exponent, u32(0xFF))      # NaN and inf keep 0xFF
    if mode == "down":
        code = exponent
    else:
        if mode == "up":
            up = bit_set(bits, 0x7FFFFF)
        else:   # guard bit and (round bit, sticky bits or an exponent above 0), as ONNX's
            up = op.logical_and(bit_set(bits, 0x400000), op.logical_or(
                op.logical_or(bit_set(bits, 0x200000), bit_set(bits, 0x1FFFFF)),
                op.greater(exponent, u32(0))))
        up = op.logical_and(up, normal)
        if saturate:
            up = op.logical_and(up, op.not_equal(exponent, u32(0xFE)))
        code = op.add(exponent, op.cast(up, dtype="uint32"))
    return op.reinterpret(op.cast(code, dtype="uint8"), dtype="float8_e8m0fnu")


@converter("Cast", since=1)
def cast_1(ctx: Any, node: Any) -> Any:
    import onnx
    to = node.attr("to")
    try:
        code = onnx.TensorProto.DataType.Value(str(to).upper())
    except ValueError:
        raise node.error(f"`to` names no ONNX element type: {to!r}") from None
    return _cast_to(node, code)


@converter("Cast", since=6)
def cast_6(ctx: Any, node: Any) -> Any:
    # opset 19's `saturate` and opset 24's `round_mode` concern float8 targets only
    return _cast_to(node, int(node.attr("to")), ctx)


@converter("CastLike", since=15)
def cast_like(ctx: Any, node: Any) -> Any:
    dtype = ctx.dtype(node.inputs[1])
    if dtype in _LOWP_FLOATS:
        return _cast_lowp(ctx, node, node.inputs[0], dtype)
    return op.cast_like(node.inputs[0], node.inputs[1])


def _clip(ctx: Any, node: Any, x: Any, lo: Any, hi: Any) -> Any:
    """ONNX's min(max(x, lo), hi); `lo`/`hi` are Python numbers, expressions or None."""
    dtype = ctx.dtype(x)
    lo_v = lo if isinstance(lo, (int, float)) or lo is None else ctx.value(lo)
    hi_v = hi if isinstance(hi, (int, float)) or hi is None else ctx.value(hi)
    if (lo is not None and hi is not None and lo_v is not None and hi_v is not None
            and _is_float(dtype) and dtype != "bfloat16"):
        a, b = float(np.asarray(lo_v).reshape(())), float(np.asarray(hi_v).reshape(()))
        if a <= b:                                   # no NaN, not the lo > hi case
            cast = np.asarray([a, b]).astype(dtype)
            if float(cast[0]) == a and float(cast[1]) == b:     # exact in the dtype
                return op.clip(x, a_min=a, a_max=b)
    out = x
    if lo is not None:
        out = op.maximum(out, _const(ctx, lo, dtype) if isinstance(lo, (int, float)) else lo)
    if hi is not None:
        out = op.minimum(out, _const(ctx, hi, dtype) if isinstance(hi, (int, float)) else hi)
    return out


def _limits(dtype: str) -> tuple[float | None, float | None]:
    """numeric_limits<T>::lowest() and ::max() as clip bounds (None: no bound needed,
    an integer's limits clip nothing)."""
    if dtype == "bfloat16":
        return -3.3895313892515355e38, 3.3895313892515355e38
    if _is_float(dtype):
        info = np.finfo(dtype)
        return float(info.min), float(info.max)
    return None, None


@converter("Clip", since=1)
def clip_1(ctx: Any, node: Any) -> Any:
    # missing bounds are numeric_limits<T>::lowest() and ::max()
    x = node.inputs[0]
    lowest, highest = _limits(ctx.dtype(x))
    return _clip(ctx, node, x, node.attr("min", lowest), node.attr("max", highest))


@converter("Clip", since=6)
def clip_6(ctx: Any, node: Any) -> Any:
    # the attributes' defaults are float's limits, whatever the tensor's dtype
    return _clip(ctx, node, node.inputs[0], float(node.attr("min", -_FLT_MAX)),
                 float(node.attr("max", _FLT_MAX)))


@converter("Clip", since=11)
def clip_11(ctx: Any, node: Any) -> Any:
    # missing bounds are numeric_limits<T>::lowest() and ::max(): infinities are clipped
    x = node.inputs[0]
    lowest, highest = _limits(ctx.dtype(x))
    lo, hi = node.input(1), node.input(2)
    return _clip(ctx, node, x, lowest if lo is None else lo, highest if hi is None else hi)


# ---------------------------------------------------------------- activations

@converter("LeakyRelu", since=1)
def leaky_relu(ctx: Any, node: Any) -> Any:
    return op.nn.leaky_relu(node.inputs[0], alpha=float(node.attr("alpha", 0.01)))


def _prelu(x: Any, slope: Any, ctx: Any) -> Any:
    zero = _like(ctx, 0, x)
    return op.where(op.less(x, zero), op.multiply(x, slope), x)


@converter("PRelu", since=1)
def prelu_1(ctx: Any, node: Any) -> Any:
    x, slope = node.inputs[0], node.inputs[1]
    sx, ss = ctx.static_shape(x), ctx.static_shape(slope)
    if ss is not None and sx is not None and len(ss) == 1 and len(sx) >= 2 \
            and ss[0] == sx[1] and ss[0] != 1 and ss != sx:
        # one slope per channel (axis 1), as the exporters of that time (PyTorch's
        # PReLU(num_parameters=C)) and their runtimes meant it (TVM's converter: nn.prelu
        # over axis 1)
        slope = op.reshape(slope, newshape=(ss[0],) + (1,) * (len(sx) - 2))
        return _prelu(x, slope, ctx)
    if ss is None or sx is None or not (int(np.prod(ss)) == 1 or ss == sx):
        raise node.error(f"slope of shape {ctx.shape(slope)} must have one element, X's "
                         f"channel count or X's shape {ctx.shape(x)} before opset 7")
    if int(np.prod(ss)) == 1 and len(ss) > len(sx):
        slope = op.reshape(slope, newshape=())
    return _prelu(x, slope, ctx)


@converter("PRelu", since=7)
def prelu_7(ctx: Any, node: Any) -> Any:
    x, slope = node.inputs[0], node.inputs[1]
    sx, ss = ctx.shape(x), ctx.shape(slope)
    # unidirectional: slope broadcasts to X, the result has X's shape
    if len(ss) > len(sx) or any(isinstance(s, int) and isinstance(d, int) and s not in (1, d)
                                for s, d in zip(reversed(ss), reversed(sx))):
        raise node.error(f"slope of shape {ss} does not broadcast to X's shape {sx}")
    return _prelu(x, slope, ctx)


@converter("Elu", since=1)
def elu(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    alpha = _like(ctx, node.attr("alpha", 1.0), x)
    neg = op.multiply(alpha, op.subtract(op.exp(x), _like(ctx, 1, x)))
    return op.where(op.less(x, _like(ctx, 0, x)), neg, x)


@converter("Selu", since=1)
def selu(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    alpha = _like(ctx, node.attr("alpha", 1.67326319217681884765625), x)
    gamma = _like(ctx, node.attr("gamma", 1.05070102214813232421875), x)
    neg = op.subtract(op.multiply(alpha, op.exp(x)), alpha)
    return op.multiply(gamma, op.where(op.greater(x, _like(ctx, 0, x)), x, neg))


@converter("Celu", since=12)
def celu(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    alpha = _like(ctx, node.attr("alpha", 1.0), x)
    zero = _like(ctx, 0, x)
    neg = op.multiply(alpha, op.subtract(op.exp(op.divide(x, alpha)), _like(ctx, 1, x)))
    return op.add(op.maximum(zero, x), op.minimum(zero, neg))


converter("Celu", since=28)(celu)            # opset 28: more float types


@converter("ThresholdedRelu", since=10)
def thresholded_relu(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    alpha = _like(ctx, node.attr("alpha", 1.0), x)
    return op.where(op.greater(x, alpha), x, _like(ctx, 0, x))


def _hard_sigmoid(ctx: Any, x: Any, alpha: float, beta: float) -> Any:
    lin = op.add(op.multiply(_like(ctx, alpha, x), x), _like(ctx, beta, x))
    return op.maximum(_like(ctx, 0, x), op.minimum(_like(ctx, 1, x), lin))


@converter("HardSigmoid", since=1)
def hard_sigmoid(ctx: Any, node: Any) -> Any:
    return _hard_sigmoid(ctx, node.inputs[0], node.attr("alpha", 0.2), node.attr("beta", 0.5))


@converter("HardSwish", since=14)
def hard_swish(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    return op.multiply(x, _hard_sigmoid(ctx, x, 1.0 / 6.0, 0.5))


def _softplus(ctx: Any, x: Any) -> Any:
    """ln(exp(x) + 1); for x > 0 as x + ln(exp(-x) + 1), the same value without exp(x)
    overflowing (onnxruntime's form)."""
    one, zero = _like(ctx, 1, x), _like(ctx, 0, x)
    direct = op.log(op.add(op.exp(x), one))
    shifted = op.add(x, op.log(op.add(op.exp(op.negative(x)), one)))
    return op.where(op.greater(x, zero), shifted, direct)


@converter("Softplus", since=1)
def softplus(ctx: Any, node: Any) -> Any:
    return _softplus(ctx, node.inputs[0])


@converter("Softsign", since=1)
def softsign(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    return op.divide(x, op.add(_like(ctx, 1, x), op.abs(x)))


@converter("Mish", since=18)
def mish(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    return op.multiply(x, op.tanh(_softplus(ctx, x)))


@converter("Gelu", since=20)
def gelu(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    approximate = node.attr("approximate", "none")
    half, one = _like(ctx, 0.5, x), _like(ctx, 1, x)
    if approximate == "none":
        inner = op.erf(op.divide(x, _like(ctx, np.sqrt(2.0), x)))
    elif approximate == "tanh":
        cube = op.multiply(op.multiply(x, x), x)
        arg = op.add(x, op.multiply(_like(ctx, 0.044715, x), cube))
        inner = op.tanh(op.multiply(_like(ctx, np.sqrt(2.0 / np.pi), x), arg))
    else:
        raise node.error(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return op.multiply(op.multiply(half, x), op.add(one, inner))


@converter("Shrink", since=9)
def shrink(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    dtype = ctx.dtype(x)
    lambd, bias = float(node.attr("lambd", 0.5)), float(node.attr("bias", 0.0))
    # the attributes are floats: other dtypes compute in float32 (C++'s T + float)
    xf = x if dtype in ("float32", "float64") else op.cast(x, dtype="float32")
    ft = "float64" if dtype == "float64" else "float32"
    low = op.add(xf, _const(ctx, bias, ft))
    high = op.subtract(xf, _const(ctx, bias, ft))
    out = op.where(op.less(xf, _const(ctx, -lambd, ft)), low,
                   op.where(op.greater(xf, _const(ctx, lambd, ft)), high, _const(ctx, 0, ft)))
    return out if dtype == ft else op.cast(out, dtype=dtype)
