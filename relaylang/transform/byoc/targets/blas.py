"""`blas`: matrix products and convolutions run by the BLAS that NumPy links.

The IR half of the target (its codegen is `relaylang/backend/byoc/blas.py`). It takes

* `nn.dense`, `nn.matmul`, `nn.batch_matmul`: float32/float64 operands of static shape,
  `out_dtype` empty or the operands' dtype;
* `nn.conv2d`: the same dtypes, NCHW data, OIHW kernel, `groups=1` (im2col + GEMM);

and composites that fuse an epilogue into the product, in the manner of TVM's DNNL
table, for <op> in conv2d, dense, matmul, batch_matmul:

    blas.<op>_bias_relu    <op>, optionally a bias, then nn.relu
    blas.<op>_bias_clip    <op>, optionally a bias, then clip (ReLU6 and the like)
    blas.<op>_bias         <op>, then a bias

The bias is `nn.bias_add(x, b)` or `add(x, <constant>)` (either side) that keeps the
product's shape and dtype (the check rejects an add that broadcasts to a larger shape);
the codegen applies the bias and the activation in place on the product's result. The
patterns with an activation come first, so conv2d + bias + relu becomes one composite,
not a `conv2d_bias` followed by a relu left to the host.
"""
from __future__ import annotations

from typing import Any

from ....dataflow_pattern import DFPattern, is_constant, is_op, wildcard
from ..registry import register_pattern_table, register_target_op

DTYPES = ("float32", "float64")
PRODUCTS = ("nn.conv2d", "nn.dense", "nn.matmul", "nn.batch_matmul")
ACTIVATIONS = {"relu": "nn.relu", "clip": "clip"}


def _tensor_type(expr: Any) -> Any:
    from ....ir.types import TensorType
    ty = getattr(expr, "checked_type", None)
    return ty if isinstance(ty, TensorType) else None


def _static(ty: Any) -> bool:
    return ty is not None and all(isinstance(d, int) and not isinstance(d, bool)
                                  for d in ty.shape)


def _float_operands(call: Any) -> bool:
    """Every argument and the result: a float32/float64 tensor of static shape, one dtype."""
    types = [_tensor_type(a) for a in call.args] + [_tensor_type(call)]
    if not all(_static(t) for t in types):
        return False
    dtypes = {str(t.dtype) for t in types}
    return len(dtypes) == 1 and dtypes.pop() in DTYPES


def product_supported(call: Any) -> bool:
    """What the codegen's product kernels take (shared by the op predicates and the
    composites' checks)."""
    name = call.op.name
    if not _float_operands(call):
        return False
    attrs = call.attrs
    if name == "nn.conv2d":
        return (attrs.groups == 1 and attrs.data_layout == "NCHW"
                and attrs.kernel_layout == "OIHW" and attrs.out_layout in ("", "NCHW"))
    if name == "nn.batch_matmul":
        return len(_tensor_type(call.args[0]).shape) == 3 \
            and len(_tensor_type(call.args[1]).shape) == 3
    if name == "nn.matmul":
        # operands of rank >= 2 (a product of vectors is no array to fuse into);
        # transpose_b needs a 2-d operand
        ra, rb = len(_tensor_type(call.args[0]).shape), len(_tensor_type(call.args[1]).shape)
        return ra >= 2 and rb >= 2 and (not attrs.transpose_b or rb == 2)
    return name == "nn.dense" and len(_tensor_type(call.args[1]).shape) == 2


for _op in PRODUCTS:
    register_target_op("blas", _op, product_supported)


# ------------------------------------------------------------------ composites

def _product(op: str) -> DFPattern:
    return is_op(op)(wildcard(), wildcard())


def _with_bias(x: DFPattern) -> DFPattern:
    return (is_op("nn.bias_add")(x, wildcard()) | is_op("add")(x, is_constant())
            | is_op("add")(is_constant(), x))


def _with_act(x: DFPattern, act: str) -> DFPattern:
    return is_op(ACTIVATIONS[act])(x)


def composite_check(expr: Any) -> bool:
    """The composite's product is one the codegen takes and its epilogue keeps the
    product's shape and dtype: a bias_add's bias is a vector along its axis, an added
    constant broadcasts to the product's shape (never to a larger one)."""
    import numpy as np

    from ....ir.expr import Call, Constant, Op

    def op_name(e: Any) -> str:
        return e.op.name if isinstance(e, Call) and isinstance(e.op, Op) else ""

    node = expr
    if op_name(node) in ACTIVATIONS.values():
        node = node.args[0]
    name = op_name(node)
    if name == "nn.bias_add":
        prod, bias = node.args
        pty, bty = _tensor_type(prod), _tensor_type(bias)
        if not (_static(pty) and _static(bty)) or len(bty.shape) != 1:
            return False
        axis = node.attrs.axis + len(pty.shape) if node.attrs.axis < 0 else node.attrs.axis
        if not 0 <= axis < len(pty.shape) or bty.shape[0] != pty.shape[axis] \
                or bty.dtype != pty.dtype:
            return False
        node = prod
    elif name == "add":
        a, b = node.args
        prod, const = (a, b) if op_name(a) in PRODUCTS else (b, a)
        pty = _tensor_type(prod)
        if not isinstance(const, Constant) or not _static(pty) \
                or str(const.data.dtype) != str(pty.dtype):
            return False
        try:
            if tuple(np.broadcast_shapes(const.data.shape, tuple(pty.shape))) \
                    != tuple(pty.shape):
                return False
        except ValueError:
            return False
        node = prod
    return op_name(node) in PRODUCTS and product_supported(node)


def composite_names() -> list[tuple[str, str, bool, str | None]]:
    """(name, product op, bias required, activation) of every composite, in the table's
    order: with an activation first (the bias optional in them), then bias alone."""
    out = []
    for op in PRODUCTS:
        short = op.split(".")[-1]
        for act in ACTIVATIONS:
            out.append((f"blas.{short}_bias_{act}", op, False, act))
        out.append((f"blas.{short}_bias", op, True, None))
    return out


def composite_pattern(op: str, bias_required: bool, act: str | None) -> DFPattern:
    """The product, a bias (required, or optional when an activation follows), then the
    activation."""
    p = _product(op)
    biased = _with_bias(p)
    if act is None:
        return biased
    return _with_act(biased | p, act)


@register_pattern_table("blas")
def _table() -> list[tuple[str, DFPattern, Any]]:
    return [(name, composite_pattern(op, bias, act), composite_check)
            for name, op, bias, act in composite_names()]
