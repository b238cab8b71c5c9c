"""The `blas` codegen: a partitioned function run with NumPy's matmul (the BLAS NumPy links).

What the target takes is declared in `relaylang/transform/byoc/targets/blas.py`:
`nn.dense`, `nn.matmul`, `nn.batch_matmul`, `nn.conv2d` (NCHW/OIHW, groups=1) and the
composites `blas.<op>_bias_relu`, `blas.<op>_bias_clip`, `blas.<op>_bias`. At codegen
time the function is walked once (`post_order`, an explicit stack) into a list of steps
over numbered slots; the closure returned runs the steps. Each step is prepared once:

* dense / matmul / batch_matmul: one `np.matmul` (a transposed operand is a view: BLAS
  takes the transpose flag, nothing is copied); N-d dense data is flattened to 2-d.
* conv2d: im2col. A 1x1 unpadded convolution is a GEMM over the input as it lies (or
  its strided view, copied once); otherwise each image is copied into a zero-bordered
  buffer made once (its border stays zero), and the columns (C, KH, KW, Ho, Wo), a buffer
  made once too, are filled with one strided copy per kernel offset (KH*KW slices of the
  padded input: four times faster than copying a `sliding_window_view` transposed), then
  multiplied by the weight (O, C*KH*KW); one image of the batch at a time, so the
  columns take one image's memory.
* a composite's epilogue (bias_add or an added constant, then relu or clip)
  runs in place on the product's fresh result.

Anything else in the function (an op the target does not claim, a `let`, an `if`, a
call of a global) is refused when the codegen runs, with a message naming the function.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...ir.expr import Call, Constant, Expr, Function, Op, Tuple, TupleGetItem, Var
from ...ir.traverse import post_order
from ...ir.types import TensorType, TupleType
from .registry import register_codegen

Kernel = Callable[..., Any]


class BlasCodegenError(ValueError):
    """The function holds something the blas codegen does not run."""


# ------------------------------------------------------------------ the walk

def dataflow_children(node: Expr) -> Sequence[Expr]:
    """The operands of a node of a partitioned function's dataflow graph (a composite's
    body is not entered: the composite is one step)."""
    if isinstance(node, Call):
        return node.args
    if isinstance(node, (Tuple, TupleGetItem)):
        return node.children()
    return ()


def describe(node: Expr) -> str:
    if isinstance(node, Call):
        op = node.op
        if isinstance(op, Op):
            return f"operator `{op.name}`"
        if isinstance(op, Function):
            comp = op.attrs.get("Composite") if op.attrs is not None else None
            return f"composite `{comp}`" if comp else "a call of a local function"
        return f"a call of `{getattr(op, 'name_hint', type(op).__name__)}`"
    return f"a `{type(node).__name__}` expression"


def compile_program(func: Function, symbol: str, target: str,
                    step_of: Callable[[Call], tuple[Kernel, list[Expr]]]) -> Callable[..., Any]:
    """The closure running `func`'s dataflow graph: `step_of(call)` gives the kernel of
    each call and the expressions it takes (the call's arguments, or for a composite the
    arguments and constants its kernel reads), raising for what the target does not run;
    variables, constants, tuples and projections are handled here."""
    params = list(func.params)
    slot: dict[int, int] = {}
    template: list[Any] = []
    steps: list[tuple[Kernel, tuple[int, ...], int]] = []

    def new_slot(node: Expr, value: Any = None) -> int:
        slot[id(node)] = len(template)
        template.append(value)
        return slot[id(node)]

    for p in params:
        new_slot(p)
    param_slots = tuple(range(len(params)))
    for node in post_order(func.body, dataflow_children):
        if id(node) in slot:
            continue
        if isinstance(node, Var):
            raise BlasCodegenError(f"{target} codegen: `@{symbol}` uses the free variable "
                                   f"`%{node.name_hint}`")
        if isinstance(node, Constant):
            new_slot(node, node.data)
        elif isinstance(node, Tuple):
            ins = tuple(slot[id(f)] for f in node.fields)
            steps.append((_make_tuple, ins, new_slot(node)))
        elif isinstance(node, TupleGetItem):
            ins = (slot[id(node.tuple_value)],)
            steps.append((_getter(node.index), ins, new_slot(node)))
        elif isinstance(node, Call):
            try:
                kernel, operands = step_of(node)
            except BlasCodegenError as e:
                raise BlasCodegenError(f"{target} codegen: `@{symbol}`: {e}") from None
            ins = tuple(slot[id(e)] if id(e) in slot else new_slot(e, e.data)
                        for e in operands)
            steps.append((kernel, ins, new_slot(node)))
        else:
            raise BlasCodegenError(f"{target} codegen: `@{symbol}` holds {describe(node)}, "
                                   f"which the {target} target does not run")
    result = slot[id(func.body)]
    checks = [_param_check(p) for p in params]
    n = len(params)
    param_types = [p.checked_type if p.checked_type is not None else p.type_annotation
                   for p in params]
    leaf_counts = [_leaf_count(t) for t in param_types]
    n_leaves = sum(leaf_counts)

    def regroup(args: tuple) -> tuple:
        """Arguments with a tuple parameter's tensors passed one by one (as executors
        pass them) grouped back into that parameter's (nested) tuple."""
        from ._onnx_export import nest_like
        out, k = [], 0
        for ty, count in zip(param_types, leaf_counts):
            out.append(args[k] if isinstance(ty, TensorType) else nest_like(
                list(args[k:k + count]), ty))
            k += count
        return tuple(out)

    def run(*args: Any) -> Any:
        if len(args) != n:
            if len(args) != n_leaves:
                raise ValueError(f"{target}: `@{symbol}` takes {n} arguments, "
                                 f"got {len(args)}")
            args = regroup(args)
        env = list(template)
        for i, (check, a) in enumerate(zip(checks, args)):
            env[param_slots[i]] = check(a)
        for kernel, ins, out in steps:
            env[out] = kernel(*[env[i] for i in ins])
        return env[result]
    run.__name__ = run.__qualname__ = f"{target}[{symbol}]"
    return run


def _leaf_count(ty: Any) -> int:
    count, stack = 0, [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        else:
            count += 1
    return count


def _make_tuple(*fields: Any) -> tuple:
    return tuple(fields)


def _getter(index: int) -> Kernel:
    def get(t: Any) -> Any:
        return t[index]
    return get


def _param_check(p: Var) -> Callable[[Any], Any]:
    ty = p.checked_type if p.checked_type is not None else p.type_annotation
    if isinstance(ty, TensorType) and all(isinstance(d, int) for d in ty.shape):
        shape, dtype, name = tuple(ty.shape), np.dtype(str(ty.dtype)), p.name_hint

        def check(a: Any) -> Any:
            a = np.asarray(a)
            if a.shape != shape or a.dtype != dtype:
                raise ValueError(f"argument %{name}: expected Tensor[{shape}, {dtype}], "
                                 f"got Tensor[{a.shape}, {a.dtype}]")
            return a
        return check
    if isinstance(ty, (TensorType, TupleType)):
        return lambda a: a
    raise BlasCodegenError(f"parameter %{p.name_hint} has type {ty}, not a tensor")


def _static_shape(expr: Expr) -> tuple[int, ...]:
    ty = expr.checked_type
    if not isinstance(ty, TensorType) or not all(isinstance(d, int) for d in ty.shape):
        raise BlasCodegenError(f"expected a tensor of static shape, got {ty}")
    return tuple(int(d) for d in ty.shape)


# ------------------------------------------------------------------ products

def product_kernel(call: Call) -> Kernel:
    """The kernel of one product call; its result is a fresh C-contiguous array."""
    from ...transform.byoc.targets.blas import product_supported
    name = call.op.name
    if not product_supported(call):
        raise BlasCodegenError(f"`{name}` with these attributes and types is not taken by "
                               "the blas target")
    attrs = call.attrs
    if name == "nn.dense":
        k = _static_shape(call.args[1])[1]
        out_shape = _static_shape(call)

        def dense(x: np.ndarray, w: np.ndarray) -> np.ndarray:
            return np.matmul(x.reshape(-1, k), w.T).reshape(out_shape)
        return dense
    if name == "nn.matmul":
        ta, tb = bool(attrs.transpose_a), bool(attrs.transpose_b)

        def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return np.matmul(np.swapaxes(a, -1, -2) if ta else a, b.T if tb else b)
        return matmul
    if name == "nn.batch_matmul":
        ta, tb = bool(attrs.transpose_a), bool(attrs.transpose_b)

        def batch_matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
            return np.matmul(x.transpose(0, 2, 1) if ta else x, y.transpose(0, 2, 1) if tb else y)
        return batch_matmul
    return conv2d_kernel(call)


def conv2d_kernel(call: Call) -> Kernel:
    from ...op.shape_rules import padding_pairs, spatial
    attrs = call.attrs
    n, c, h, w = _static_shape(call.args[0])
    o, _, kh, kw = _static_shape(call.args[1])
    _, _, oh, ow = _static_shape(call)
    sh, sw = (int(s) for s in spatial(attrs.strides, 2, "strides"))
    dh, dw = (int(d) for d in spatial(attrs.dilation, 2, "dilation"))
    (pt, pb), (pl, pr) = ((int(a), int(b)) for a, b in padding_pairs(attrs.padding, 2))
    dtype = np.dtype(str(call.checked_type.dtype))
    ckk = c * kh * kw
    if kh == kw == 1 and sh == sw == 1 and not (pt or pb or pl or pr):
        def conv1x1(x: np.ndarray, wt: np.ndarray) -> np.ndarray:
            return np.matmul(wt.reshape(o, c), x.reshape(n, c, h * w)).reshape(n, o, oh, ow)
        return conv1x1
    if kh == kw == 1 and not (pt or pb or pl or pr):
        def conv1x1_strided(x: np.ndarray, wt: np.ndarray) -> np.ndarray:
            cols = x[:, :, ::sh, ::sw][:, :, :oh, :ow].reshape(n, c, oh * ow)
            return np.matmul(wt.reshape(o, c), cols).reshape(n, o, oh, ow)
        return conv1x1_strided
    hp, wp = h + pt + pb, w + pl + pr
    lock = threading.Lock()
    # one image at a time: the buffers hold one image's padded input and columns
    padded = np.zeros((c, hp, wp), dtype)          # its border stays zero
    cols = np.empty((c, kh, kw, oh, ow), dtype)
    windows = [(i, j, (slice(None),
                       slice(i * dh, i * dh + (oh - 1) * sh + 1, sh),
                       slice(j * dw, j * dw + (ow - 1) * sw + 1, sw)))
               for i in range(kh) for j in range(kw)]
    inner = (slice(None), slice(pt, pt + h), slice(pl, pl + w))

    def conv_im2col(x: np.ndarray, wt: np.ndarray) -> np.ndarray:
        w2 = wt.reshape(o, ckk)
        out = np.empty((n, o, oh * ow), dtype)
        mine = lock.acquire(blocking=False)        # a concurrent call gets buffers of its own
        try:
            xp = padded if mine else np.zeros((c, hp, wp), dtype)
            col = cols if mine else np.empty((c, kh, kw, oh, ow), dtype)
            flat = col.reshape(ckk, oh * ow)
            for b in range(n):
                xp[inner] = x[b]
                for i, j, window in windows:       # one strided copy per kernel offset
                    col[:, i, j] = xp[window]
                np.matmul(w2, flat, out=out[b])
        finally:
            if mine:
                lock.release()
        return out.reshape(n, o, oh, ow)
    return conv_im2col


# ------------------------------------------------------------------ epilogues

def _act_kernel(call: Call) -> Callable[[np.ndarray], None]:
    name = call.op.name
    if name == "nn.relu":
        def relu(y: np.ndarray) -> None:
            np.maximum(y, 0, out=y)
        return relu
    if name == "clip":
        lo, hi = float(call.attrs.a_min), float(call.attrs.a_max)

        def clip(y: np.ndarray) -> None:
            np.clip(y, lo, hi, out=y)
        return clip
    raise BlasCodegenError(f"`{name}` is no activation of the blas target")


def composite_kernel(call: Call, target: str = "blas") -> tuple[Kernel, list[Expr]]:
    """The fused kernel of a call of a `blas.*` composite, and the outer expressions its
    inputs are (the composite's parameters are bound to the call's arguments; constants
    inside the composite are captured)."""
    from ...transform.byoc.targets.blas import ACTIVATIONS, PRODUCTS
    fn = call.op
    name = fn.attrs.get("Composite")
    if not isinstance(name, str) or not name.startswith(f"{target}."):
        raise BlasCodegenError(f"composite `{name}` is not one of the {target} target's")
    bound: dict[int, Expr] = {id(p): a for p, a in zip(fn.params, call.args)}

    def op_name(e: Expr) -> str:
        return e.op.name if isinstance(e, Call) and isinstance(e.op, Op) else ""

    def refuse(e: Expr) -> BlasCodegenError:
        return BlasCodegenError(f"composite `{name}` holds {describe(e)}, which the "
                                f"{target} codegen does not fuse")

    node = fn.body
    act = None
    if op_name(node) in ACTIVATIONS.values():
        act, node = _act_kernel(node), node.args[0]
    bias: Callable[[np.ndarray, Any], None] | None = None
    bias_operand: Expr | None = None
    if op_name(node) == "nn.bias_add":
        prod, bias_operand = node.args
        rank = len(_static_shape(prod))
        axis = node.attrs.axis + rank if node.attrs.axis < 0 else node.attrs.axis
        view = tuple(-1 if i == axis else 1 for i in range(rank))

        def bias_add(y: np.ndarray, b: np.ndarray) -> None:
            np.add(y, b.reshape(view), out=y)
        bias, node = bias_add, prod
    elif op_name(node) == "add":
        a, b = node.args
        prod, bias_operand = (a, b) if op_name(a) in PRODUCTS else (b, a)
        if not isinstance(bias_operand, Constant):
            raise refuse(node)

        def add(y: np.ndarray, b: np.ndarray) -> None:
            np.add(y, b, out=y)
        bias, node = add, prod
    if op_name(node) not in PRODUCTS:
        raise refuse(node)
    product = product_kernel(node)
    operands: list[Expr] = list(node.args) + ([bias_operand] if bias_operand is not None else [])
    for e in operands:
        if not isinstance(e, (Var, Constant)) or (isinstance(e, Var) and id(e) not in bound):
            raise refuse(e)
    outer = [bound[id(e)] if isinstance(e, Var) else e for e in operands]

    if bias is None:
        def fused(x: np.ndarray, w: np.ndarray) -> np.ndarray:
            y = product(x, w)
            act(y)
            return y
    elif act is None:
        def fused(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:  # type: ignore[misc]
            y = product(x, w)
            bias(y, b)
            return y
    else:
        def fused(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:  # type: ignore[misc]
            y = product(x, w)
            bias(y, b)
            act(y)
            return y
    fused.__name__ = fused.__qualname__ = name
    return fused, outer


# ------------------------------------------------------------------ the codegen

@register_codegen("blas")
def blas_codegen(func: Function, symbol: str) -> Callable[..., Any]:
    """Compile one partitioned function of the `blas` target (see the module docstring)."""
    return compile_program(func, symbol, "blas", _blas_step)


def _blas_step(call: Call) -> tuple[Kernel, list[Expr]]:
    from ...transform.byoc.targets.blas import PRODUCTS
    if isinstance(call.op, Op) and call.op.name in PRODUCTS:
        return product_kernel(call), list(call.args)
    if isinstance(call.op, Function) and call.op.attrs is not None \
            and call.op.attrs.get("Composite"):
        return composite_kernel(call)
    raise BlasCodegenError(f"{describe(call)} is not run by the blas target")
