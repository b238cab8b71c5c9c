"""QnnCanonicalize: TVM's qnn compute ops written with ordinary ops (TVM's
`relay.qnn.transform.CanonicalizeOps` / the `FTVMQnnCanonicalize` half of
`qnn.transform.Legalize`, src/relay/qnn/op/*.cc), so that the LLVM backend computes them
with the lowerings it has. `rl.build`'s pipeline runs it where relay.build runs qnn's
Legalize (after ToBasicBlockNormalForm, tvm_pipeline.py).

The forms compute exactly the values of the NumPy kernels (relaylang/op/qnn/
numpy_kernels.py; both follow relaylang/op/qnn/fixed_point.py):

    qnn.requantize    cast to int32, minus the input zero point; in int64, shifted left,
                      times the fixed-point significand, plus the rounding term, shifted
                      right (per-channel constants laid along `axis`); cast to int32, plus
                      the output zero point, clipped and cast to out_dtype. With
                      compute_dtype float32/float64: the same in floats, rounded with
                      floor (UPWARD) or half away from zero (TONEAREST), clamped, cast.
    qnn.conv2d        nn.conv2d(cast(data) - izp, cast(weight) - kzp) in out_dtype (TVM
    qnn.dense         writes four terms; the same value modulo 2^bits, which is what the
                      out_dtype keeps), nn.dense and nn.conv2d_transpose likewise
                      (TVM's legalization of qnn.conv2d_transpose shifts in int16)
    qnn.add/subtract  each operand requantized to the output's parameters in int32, added
                      (subtracted), the output zero point subtracted (added), clipped, cast
    qnn.mul           (lhs - lzp) * (rhs - rzp) in int32, requantized from the product of
                      the scales
    qnn.concatenate   each tensor whose scale or zero point differs from the output's
                      requantized, then concatenate
    qnn.avg_pool2d    requantized to the output's parameters in int32, nn.avg_pool2d,
                      clipped and cast to the data's dtype

A requantization needs its scales and zero points as constants (TVM's canonicalization
reads them too); a call whose parameters are computed at run time is left as it is and
runs its NumPy kernel inside the compiled program (`lib.fallback_ops`).
qnn.quantize and qnn.dequantize have LLVM lowerings of their own and are not rewritten.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..ir.expr import Call, Constant, Expr, Op, Tuple, TupleGetItem
from ..ir.module import IRModule
from ..ir.normal_forms import map_unfused_functions
from ..ir.traverse import rewrite
from ..ir.types import TensorType, TupleType
from .pass_infra import ModulePass, PassContext, register_pass

QNN_COMPUTE = ("qnn.requantize", "qnn.conv2d", "qnn.conv2d_transpose", "qnn.dense",
               "qnn.add", "qnn.subtract", "qnn.mul", "qnn.concatenate", "qnn.avg_pool2d")


@register_pass
@dataclass(frozen=True)
class QnnCanonicalize(ModulePass):
    """Rewrite the qnn compute ops of each global function with ordinary ops."""

    name: ClassVar[str] = "QnnCanonicalize"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        if not _mentions_qnn(mod):
            return mod
        return map_unfused_functions(mod, lambda fn: rewrite(fn, _canonicalize))


def _mentions_qnn(mod: IRModule) -> bool:
    from ..ir.traverse import post_order
    for fn in mod.functions.values():
        for node in post_order(fn):
            if isinstance(node, Op) and node.name in QNN_COMPUTE:
                return True
    return False


# ---------------------------------------------------------------- helpers

def _m() -> Any:
    from ..op import make
    return make


def _const(value: Any, dtype: str) -> Constant:
    from ..ir.builder import const
    return const(np.asarray(value).astype(dtype), dtype)


def _values(expr: Expr) -> np.ndarray | None:
    return expr.data if isinstance(expr, Constant) else None


def _tensor_type(expr: Expr) -> TensorType | None:
    ty = getattr(expr, "checked_type", None)
    return ty if isinstance(ty, TensorType) else None


def _along(values: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A scalar for one value (or equal values), else the vector laid along `axis`."""
    values = np.asarray(values).reshape(-1)
    if values.size == 1 or rank == 0 or bool(np.all(values == values[0])):
        return values[:1].reshape(())
    dims = [1] * rank
    dims[axis] = values.size
    return values.reshape(dims)


def _norm_axis(axis: int, rank: int) -> int:
    if rank <= 1:
        return 0
    return axis + rank if axis < 0 else axis


def _clip_cast(t: Expr, dtype: str) -> Expr:
    from ..op.qnn.fixed_point import INT_RANGES
    if dtype == "int32":
        return t
    lo, hi = INT_RANGES[dtype]
    return _m().cast(_m().clip(t, a_min=float(lo), a_max=float(hi)), dtype=dtype)


def requantize_expr(data: Expr, rank: int, in_scale: np.ndarray, in_zp: np.ndarray,
                    out_scale: np.ndarray, out_zp: np.ndarray, axis: int, rounding: str,
                    compute: str, out_dtype: str) -> Expr | None:
    """TVM's RequantizeLower as ops (`axis` non-negative); None when output_scale is 0
    (left to the kernel, which reports it)."""
    from ..op.qnn.fixed_point import float_bounds, shifts
    M = _m()
    out_s = float(np.float32(np.asarray(out_scale).reshape(())))
    if out_s == 0.0:
        return None
    multipliers = [float(s) / out_s for s in np.asarray(in_scale, np.float32).reshape(-1)]
    zp = _along(np.asarray(in_zp).astype(np.int64), rank, axis)
    ozp = int(np.asarray(out_zp).reshape(()))
    identity = all(m == 1.0 for m in multipliers)
    if compute == "int64":
        t = M.cast(data, dtype="int32")
        if np.any(zp != 0):
            t = M.subtract(t, _const(zp, "int32"))
        if not identity:
            sig, left, total = (np.array(v, np.int64) for v in zip(*map(shifts, multipliers)))
            t = M.cast(t, dtype="int64")
            if np.any(left != 0):
                t = M.left_shift(t, _const(_along(left, rank, axis), "int64"))
            t = M.multiply(t, _const(_along(sig, rank, axis), "int64"))
            half = np.left_shift(np.int64(1), total - 1)
            if rounding == "UPWARD":
                t = M.add(t, _const(_along(half, rank, axis), "int64"))
            else:
                t = M.add(t, M.where(M.greater_equal(t, _const(0, "int64")),
                                     _const(_along(half, rank, axis), "int64"),
                                     _const(_along(half - 1, rank, axis), "int64")))
            t = M.cast(M.right_shift(t, _const(_along(total, rank, axis), "int64")),
                       dtype="int32")
        if ozp != 0:
            t = M.add(_const(ozp, "int32"), t)
        return _clip_cast(t, out_dtype)
    f = compute
    t = M.cast(data, dtype=f)
    if np.any(zp != 0):
        t = M.subtract(t, _const(zp, f))
    if not identity:
        t = M.multiply(t, _const(_along(np.array(multipliers, f), rank, axis), f))
    if ozp != 0:
        t = M.add(t, _const(ozp, f))
    half = _const(0.5, f)
    up = M.floor(M.add(t, half))
    if rounding != "UPWARD":
        down = M.negative(M.floor(M.add(M.negative(t), half)))
        up = M.where(M.less(t, _const(0, f)), down, up)
    lo, hi = float_bounds(out_dtype, f)
    t = M.cast(M.clip(up, a_min=lo, a_max=hi), dtype="int32")
    return _clip_cast(t, out_dtype)


# ---------------------------------------------------------------- per op

def _canonicalize(old: Expr, new: Expr) -> Expr | None:
    if not (isinstance(new, Call) and isinstance(new.op, Op) and new.op.name in QNN_COMPUTE):
        return None
    assert isinstance(old, Call)
    return _RULES[new.op.name](old, new)


def _requantize(old: Call, new: Call) -> Expr | None:
    from ..op.qnn.fixed_point import compute_dtype_of, rounding_of
    ty = _tensor_type(old.args[0])
    params = [_values(a) for a in new.args[1:]]
    if ty is None or any(p is None for p in params):
        return None
    attrs: Any = new.attrs
    rank = len(ty.shape)
    axis = int(attrs.axis)
    axis = (axis + rank if axis < 0 else axis) if rank else 0
    return requantize_expr(new.args[0], rank, *params, axis, rounding_of(attrs.rounding),
                           compute_dtype_of(attrs.compute_dtype), str(attrs.out_dtype))


def _shifted(expr: Expr, zp: Expr, old_zp: Expr, dtype: str, rank: int, axis: int) -> Expr:
    """cast(expr, dtype) - zp, a scalar zero point or a vector along `axis` (`old_zp`:
    the typed original of `zp`)."""
    M = _m()
    t = M.cast(expr, dtype=dtype)
    values = _values(zp)
    if values is not None and not np.any(values != 0):
        return t
    zty = _tensor_type(old_zp)
    z = M.cast(zp, dtype=dtype)
    if zty is not None and len(zty.shape) == 1 and rank > 1:
        dims = [1] * rank
        dims[axis] = -1
        z = M.reshape(z, newshape=tuple(dims))
    return M.subtract(t, z)


def _conv2d(old: Call, new: Call, op: str = "nn.conv2d") -> Expr | None:
    import dataclasses

    from ..op.qnn.relations import qnn_out_dtype
    attrs: Any = new.attrs
    wty = _tensor_type(old.args[1])
    if wty is None:
        return None
    acc = qnn_out_dtype(attrs)
    data, weight, izp, kzp = new.args[:4]
    x = _shifted(data, izp, old.args[2], acc, 0, 0)
    w = _shifted(weight, kzp, old.args[3], acc, len(wty.shape),
                 str(attrs.kernel_layout).find("O"))
    return Call(_op(op), (x, w), dataclasses.replace(attrs, out_dtype=acc), span=new.span)


def _op(name: str) -> Op:
    from ..op import get as get_op
    return get_op(name)


def _dense(old: Call, new: Call) -> Expr | None:
    import dataclasses

    from ..op.qnn.relations import qnn_out_dtype
    attrs: Any = new.attrs
    acc = qnn_out_dtype(attrs)
    data, weight, izp, kzp = new.args[:4]
    x = _shifted(data, izp, old.args[2], acc, 0, 0)
    w = _shifted(weight, kzp, old.args[3], acc, 2, 0)
    return Call(_op("nn.dense"), (x, w), dataclasses.replace(attrs, out_dtype=acc),
                span=new.span)


def _operand_int32(expr: Expr, ty: TensorType, scale: Any, zp: Any, os: Any, ozp: Any,
                   axis: int) -> Expr | None:
    """TVM's RequantizeOrUpcast: the operand in the output's parameters, int32."""
    rank = len(ty.shape)
    return requantize_expr(expr, rank, scale, zp, os, ozp, _norm_axis(axis, rank), "UPWARD",
                           "int64", "int32")


def _add_or_subtract(old: Call, new: Call) -> Expr | None:
    M = _m()
    lty, rty = _tensor_type(old.args[0]), _tensor_type(old.args[1])
    params = [_values(a) for a in new.args[2:]]
    if lty is None or rty is None or any(p is None for p in params):
        return None
    ls, lzp, rs, rzp, os, ozp = params
    attrs: Any = new.attrs
    a = _operand_int32(new.args[0], lty, ls, lzp, os, ozp, int(attrs.lhs_axis))
    b = _operand_int32(new.args[1], rty, rs, rzp, os, ozp, int(attrs.rhs_axis))
    if a is None or b is None:
        return None
    zp = int(np.asarray(ozp).reshape(()))
    if new.op.name == "qnn.add":     # type: ignore[union-attr]
        t = M.add(a, b)
        if zp:
            t = M.subtract(t, _const(zp, "int32"))
    else:
        t = M.subtract(a, b)
        if zp:
            t = M.add(t, _const(zp, "int32"))
    return _clip_cast(t, lty.dtype)


def _mul(old: Call, new: Call) -> Expr | None:
    from ..op.qnn.numpy_kernels import mul_axis, mul_scale
    M = _m()
    lty, rty, oty = (_tensor_type(e) for e in (old.args[0], old.args[1], old))
    params = [_values(a) for a in new.args[2:]]
    if lty is None or rty is None or oty is None or any(p is None for p in params):
        return None
    ls, _, rs, _, os, ozp = params
    attrs: Any = new.attrs
    lr, rr = len(lty.shape), len(rty.shape)
    a = _shifted(new.args[0], new.args[3], old.args[3], "int32", lr,
                 _norm_axis(int(attrs.lhs_axis), lr))
    b = _shifted(new.args[1], new.args[5], old.args[5], "int32", rr,
                 _norm_axis(int(attrs.rhs_axis), rr))
    scale = mul_scale(ls, rs)
    rank = len(oty.shape)
    axis = mul_axis(lr, rank, int(attrs.lhs_axis)) if scale.ndim else rank - 1
    return requantize_expr(M.multiply(a, b), rank, scale, np.int32(0), os, ozp, max(axis, 0),
                           "UPWARD", "int64", lty.dtype)


def _concatenate(old: Call, new: Call) -> Expr | None:
    M = _m()
    data, scales, zps, os, ozp = new.args
    tty = getattr(old.args[0], "checked_type", None)
    if not (isinstance(tty, TupleType) and isinstance(scales, Tuple) and isinstance(zps, Tuple)):
        return None
    out_s, out_z = _values(os), _values(ozp)
    svals, zvals = [_values(s) for s in scales.fields], [_values(z) for z in zps.fields]
    if out_s is None or out_z is None or any(v is None for v in svals + zvals):
        return None
    fields = list(data.fields) if isinstance(data, Tuple) else \
        [TupleGetItem(data, i) for i in range(len(tty.fields))]
    parts: list[Expr] = []
    for f, fty, s, z in zip(fields, tty.fields, svals, zvals):
        assert isinstance(fty, TensorType)
        if np.float32(s) == np.float32(out_s) and np.int64(z) == np.int64(out_z):
            parts.append(f)
            continue
        rank = len(fty.shape)
        r = requantize_expr(f, rank, s, z, out_s, out_z, max(rank - 1, 0), "UPWARD", "int64",
                            fty.dtype)
        if r is None:
            return None
        parts.append(r)
    attrs: Any = new.attrs
    return M.concatenate(Tuple(tuple(parts)), axis=int(attrs.axis))


def _avg_pool2d(old: Call, new: Call) -> Expr | None:
    ty = _tensor_type(old.args[0])
    params = [_values(a) for a in new.args[1:]]
    if ty is None or any(p is None for p in params):
        return None
    rank = len(ty.shape)
    q = requantize_expr(new.args[0], rank, *params, max(rank - 1, 0), "UPWARD", "int64",
                        "int32")
    if q is None:
        return None
    return _clip_cast(Call(_op("nn.avg_pool2d"), (q,), new.attrs, span=new.span), ty.dtype)


_RULES = {
    "qnn.requantize": _requantize,
    "qnn.conv2d": _conv2d,
    "qnn.conv2d_transpose": lambda old, new: _conv2d(old, new, "nn.conv2d_transpose"),
    "qnn.avg_pool2d": _avg_pool2d,
    "qnn.dense": _dense,
    "qnn.add": _add_or_subtract,
    "qnn.subtract": _add_or_subtract,
    "qnn.mul": _mul,
    "qnn.concatenate": _concatenate,
}
