"""Gradient rules of the tensor family (TVM's python/tvm/relay/op/_tensor_grad.py).

Each rule is `rule(orig, grad) -> [one gradient per input]` (TVM's FPrimalGradient),
registered with `@implement(name, target="gradient")` and called by the gradient
pass (relaylang/transform/gradient.py): `orig` is the forward call (its arguments
are typed variables bound to the forward values; `orig.checked_type` is the
output's type), `grad` the adjoint of the output. A rule may use `orig` itself for
the forward result: the pass puts the variable bound to it in its place, so
nothing is computed twice. Gradients of broadcasting operands are summed back to
the operand's shape (`collapse_sum_like`); inputs along which the function is
piecewise constant (comparisons, rounding, integer arithmetic) get zeros.
"""
from __future__ import annotations

import math
from typing import Any

from ...ir.builder import const
from .. import make
from ..registry import implement


def scalar(value: float, like: Any) -> Any:
    """A scalar constant of `like`'s dtype (an expression with a checked tensor type)."""
    return const(value, like.checked_type.dtype)


def _csl(g: Any, x: Any) -> Any:
    """`g` summed back to the shape of `x` (a broadcast operand)."""
    return make.collapse_sum_like(g, x)


def _zeros(orig: Any, grad: Any) -> list[Any]:
    return [make.zeros_like(a) for a in orig.args]


# ------------------------------------------------------------ zero gradients

implement("sign", "floor", "ceil", "round", "trunc", "zeros_like", "ones_like",
          "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "logical_and",
          "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
          "right_shift", "left_shift", "equal", "not_equal", "less", "less_equal",
          "greater", "greater_equal", "floor_divide", "trunc_divide", "reinterpret",
          target="gradient")(_zeros)


# ------------------------------------------------------------ unary


@implement("copy", target="gradient")
def copy_grad(orig: Any, grad: Any) -> list[Any]:
    return [grad]


@implement("negative", target="gradient")
def negative_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.negative(grad)]


@implement("exp", "fast_exp", target="gradient")
def exp_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.multiply(grad, orig)]


@implement("log", target="gradient")
def log_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.divide(grad, orig.args[0])]


@implement("log2", "log10", target="gradient")
def log_base_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    ln_base = math.log(2.0) if orig.op.name == "log2" else math.log(10.0)
    return [make.divide(grad, make.multiply(x, scalar(ln_base, x)))]


@implement("sqrt", target="gradient")
def sqrt_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.divide(make.multiply(grad, scalar(0.5, x)), orig)]


@implement("rsqrt", target="gradient")
def rsqrt_grad(orig: Any, grad: Any) -> list[Any]:
    # d x^-1/2 = -1/2 x^-3/2 = -1/2 rsqrt(x) / x
    x = orig.args[0]
    return [make.multiply(grad, make.divide(make.multiply(scalar(-0.5, x), orig), x))]


@implement("tanh", "fast_tanh", target="gradient")
def tanh_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.multiply(grad, make.subtract(scalar(1.0, x), make.multiply(orig, orig)))]


@implement("sigmoid", target="gradient")
def sigmoid_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.multiply(grad, make.multiply(orig, make.subtract(scalar(1.0, x), orig)))]


@implement("abs", target="gradient")
def abs_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.multiply(grad, make.sign(orig.args[0]))]


@implement("sin", target="gradient")
def sin_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.multiply(grad, make.cos(orig.args[0]))]


@implement("cos", target="gradient")
def cos_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.negative(make.multiply(grad, make.sin(orig.args[0])))]


@implement("tan", target="gradient")
def tan_grad(orig: Any, grad: Any) -> list[Any]:
    c = make.cos(orig.args[0])
    return [make.divide(grad, make.multiply(c, c))]


@implement("sinh", target="gradient")
def sinh_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.multiply(grad, make.cosh(orig.args[0]))]


@implement("cosh", target="gradient")
def cosh_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.multiply(grad, make.sinh(orig.args[0]))]


def _x2(x: Any) -> Any:
    return make.multiply(x, x)


@implement("asin", target="gradient")
def asin_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.multiply(grad, make.rsqrt(make.subtract(scalar(1.0, x), _x2(x))))]


@implement("acos", target="gradient")
def acos_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.negative(make.multiply(grad, make.rsqrt(make.subtract(scalar(1.0, x),
                                                                       _x2(x)))))]


@implement("atan", target="gradient")
def atan_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.divide(grad, make.add(scalar(1.0, x), _x2(x)))]


@implement("asinh", target="gradient")
def asinh_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.multiply(grad, make.rsqrt(make.add(_x2(x), scalar(1.0, x))))]


@implement("acosh", target="gradient")
def acosh_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.multiply(grad, make.rsqrt(make.subtract(_x2(x), scalar(1.0, x))))]


@implement("atanh", target="gradient")
def atanh_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.divide(grad, make.subtract(scalar(1.0, x), _x2(x)))]


@implement("erf", "fast_erf", target="gradient")
def erf_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    slope = make.multiply(scalar(2.0 / math.sqrt(math.pi), x), make.exp(make.negative(_x2(x))))
    return [make.multiply(grad, slope)]


@implement("clip", target="gradient")
def clip_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    outside = make.logical_or(make.less(x, scalar(orig.attrs.a_min, x)),
                              make.greater(x, scalar(orig.attrs.a_max, x)))
    return [make.where(outside, make.zeros_like(grad), grad)]


@implement("cast", target="gradient")
def cast_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.cast_like(grad, orig.args[0])]


@implement("cast_like", target="gradient")
def cast_like_grad(orig: Any, grad: Any) -> list[Any]:
    x, like = orig.args
    return [make.cast_like(grad, x), make.zeros_like(like)]


# ------------------------------------------------------------ binary (broadcasting)


@implement("add", target="gradient")
def add_grad(orig: Any, grad: Any) -> list[Any]:
    x, y = orig.args
    return [_csl(grad, x), _csl(grad, y)]


@implement("subtract", target="gradient")
def subtract_grad(orig: Any, grad: Any) -> list[Any]:
    x, y = orig.args
    return [_csl(grad, x), _csl(make.negative(grad), y)]


@implement("multiply", target="gradient")
def multiply_grad(orig: Any, grad: Any) -> list[Any]:
    x, y = orig.args
    return [_csl(make.multiply(grad, y), x), _csl(make.multiply(grad, x), y)]


@implement("divide", target="gradient")
def divide_grad(orig: Any, grad: Any) -> list[Any]:
    x, y = orig.args
    if orig.checked_type.dtype.startswith(("int", "uint", "bool")):
        return _zeros(orig, grad)        # integer division truncates: piecewise constant
    gx = make.divide(grad, y)
    return [_csl(gx, x), _csl(make.negative(make.multiply(gx, orig)), y)]


@implement("power", target="gradient")
def power_grad(orig: Any, grad: Any) -> list[Any]:
    # d x^y / dx = y x^(y-1);  d x^y / dy = x^y log x
    x, y = orig.args
    dx = make.multiply(y, make.power(x, make.subtract(y, scalar(1.0, y))))
    dy = make.multiply(orig, make.log(x))
    return [_csl(make.multiply(grad, dx), x), _csl(make.multiply(grad, dy), y)]


@implement("maximum", target="gradient")
def maximum_grad(orig: Any, grad: Any) -> list[Any]:
    # ties go to the left operand (TVM's rule)
    x, y = orig.args
    zeros = make.zeros_like(grad)
    to_y = make.less(x, y)
    return [_csl(make.where(to_y, zeros, grad), x), _csl(make.where(to_y, grad, zeros), y)]


@implement("minimum", target="gradient")
def minimum_grad(orig: Any, grad: Any) -> list[Any]:
    x, y = orig.args
    zeros = make.zeros_like(grad)
    to_y = make.greater(x, y)
    return [_csl(make.where(to_y, zeros, grad), x), _csl(make.where(to_y, grad, zeros), y)]


@implement("mod", "trunc_mod", "floor_mod", target="gradient")
def mod_grad(orig: Any, grad: Any) -> list[Any]:
    # x mod y = x - q y with q = trunc(x / y) (floor for floor_mod): dx = 1, dy = -q
    x, y = orig.args
    if orig.checked_type.dtype.startswith(("int", "uint", "bool")):
        return _zeros(orig, grad)
    rounding = make.floor if orig.op.name == "floor_mod" else make.trunc
    q = rounding(make.divide(x, y))
    return [_csl(grad, x), _csl(make.negative(make.multiply(grad, q)), y)]


@implement("where", target="gradient")
def where_grad(orig: Any, grad: Any) -> list[Any]:
    cond, x, y = orig.args
    zeros = make.zeros_like(grad)
    return [make.zeros_like(cond), _csl(make.where(cond, grad, zeros), x),
            _csl(make.where(cond, zeros, grad), y)]
