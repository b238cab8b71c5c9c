"""SimplifyExpr: algebraic identities on operator calls
(TVM's src/relay/transforms/simplify_expr.cc, the rules that need no layout knowledge).

    def @main(%x: Tensor[(2, 3), float32]) {          def @main(%x: Tensor[(2, 3), float32]) {
      %0 = multiply(%x, 1f);                            reshape(%x, newshape=[6])
      %1 = reshape(%0, newshape=[3, 2]);      ==>     }
      reshape(%1, newshape=[6])
    }

The rules, each applied only when the types say it is the same value:
  * `x * 1`, `1 * x`, `x + 0`, `0 + x`, `x - 0`, `x / 1` -> `x`, when the call's type is
    `x`'s type (a constant of ones that broadcasts `x` to a larger shape, or changes its
    dtype, keeps the call);
  * `reshape(reshape(x))` -> one `reshape(x)` to the outer call's (static) shape;
  * `transpose(transpose(x))` -> one `transpose(x)` with the axes composed, or `x` when
    the composition is the identity;
  * `cast(x, dtype)` and `cast_like(x, y)` -> `x` when `x` already has that dtype; two
    casts in a row -> one when the first widens (same kind, at least as many bits:
    TVM's SimplifyConsecutiveCast);
  * `x op full(c)` / `zeros` / `ones` / `*_like(...)` -> `x op c` (a scalar constant) when
    the call's type is `x`'s (TVM's SimplifyFullElementwise), after which the identities
    above apply;
  * the `*_like` ops with a static result type become their concrete ops (TVM's
    Concretize*: reshape_like, zeros_like, ones_like, full_like, broadcast_to_like,
    cast_like);
  * `c / sqrt(x)` -> `rsqrt(x)` (times `c` unless it is 1), `x + x` -> `x * 2`, and
    `argmax`/`argmin`/`argsort` of `qnn.dequantize(x)` with a positive constant scale ->
    of `x` (TVM's SimplifyRSqrt, SimplifyAdd, SimplifyDQArg*);
  * constants of adjacent adds and multiplies gathered and folded: (x + c1) * c2 ->
    x * c2 + c1 * c2 and the like (TVM's SimplifyAdjacentMultiplyOrAdd);
  * a clip followed by two casts loses the casts that change no value, and a clip whose
    range covers its integer input's dtype goes (TVM's SimplifyClipAndConsecutiveCast,
    SimplifyCastClip);
  * `a*x*x + b*x*y + c*y*y` with real roots -> `a * (x + p*y) * (x + q*y)` (TVM's
    SimplifyBinomial; `_binomial`).

The pass type-checks the module first when it is not typed (`InferType`), and
returns it typed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..ir.equal import structural_equal
from ..ir.expr import Call, Constant, Expr, Function, Op
from ..ir.module import IRModule
from ..ir.normal_forms import map_unfused_functions
from ..ir.traverse import rewrite
from ..ir.types import TensorType, Type
from ..op import get as get_op
from ..op.transform import ReshapeAttrs, TransposeAttrs
from .pass_infra import ModulePass, PassContext, register_pass

# op name -> (argument positions that may hold the neutral constant, its value)
_NEUTRAL = {"multiply": ((0, 1), 1), "add": ((0, 1), 0), "subtract": ((1,), 0),
            "divide": ((1,), 1)}


@register_pass
@dataclass(frozen=True)
class SimplifyExpr(ModulePass):
    """Apply the identities of the module docstring to each global function."""

    name: ClassVar[str] = "SimplifyExpr"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return map_unfused_functions(mod, lambda fn: _Simplifier().run(fn))


class _Simplifier:
    """One function's rewrite; remembers the types of the nodes it builds."""

    def __init__(self) -> None:
        self.types: dict[int, Type | None] = {}
        self.keep: list[Expr] = []      # built nodes stay alive so their ids stay unique

    def run(self, fn: Function) -> Expr:
        from ..ir.traverse import post_order
        self.uses: dict[int, int] = {}
        for node in post_order(fn):
            for child in node.children():
                self.uses[id(child)] = self.uses.get(id(child), 0) + 1
        return rewrite(fn, self._visit)

    def type_of(self, node: Expr) -> Type | None:
        return node.checked_type if node.checked_type is not None else self.types.get(id(node))

    def _visit(self, old: Expr, new: Expr) -> Expr | None:
        out = self._simplify(old, new) if isinstance(new, Call) and isinstance(new.op, Op) \
            else None
        result = new if out is None else out
        if result.checked_type is None and id(result) not in self.types:
            self.types[id(result)] = old.checked_type    # a rewrite keeps the type
            self.keep.append(result)
        return out

    def _simplify(self, old: Expr, call: Call) -> Expr | None:
        out = self._simplify_once(old, call)
        if out is not None and isinstance(out, Call) and isinstance(out.op, Op) \
                and out is not call:
            self.types.setdefault(id(out), old.checked_type)
            self.keep.append(out)
            again = self._simplify_once(old, out)       # e.g. full -> scalar -> identity
            return out if again is None else again
        return out

    def _simplify_once(self, old: Expr, call: Call) -> Expr | None:
        from ..op import make
        name = call.op.name       # type: ignore[union-attr]
        if name in _NEUTRAL:
            full = self._full_elementwise(old, call)
            if full is not None:
                return full
            neutral = self._neutral(old, call, *_NEUTRAL[name])
            if neutral is not None:
                return neutral
            adjacent = self._mul_add(old, call) if name in ("add", "multiply") else None
            if adjacent is not None:
                return adjacent
            if name == "add" and call.args[0] is call.args[1]:      # TVM's SimplifyAdd
                ty = self.type_of(call.args[0])
                if isinstance(ty, TensorType):
                    return make.multiply(call.args[0], _scalar(2, ty.dtype))
            if name == "divide" and _is_op(call.args[1], "sqrt"):   # TVM's SimplifyRSqrt
                c = call.args[0]
                if isinstance(c, Constant) and np.ndim(c.data) == 0:
                    rs = make.rsqrt(call.args[1].args[0])            # type: ignore[attr-defined]
                    return rs if float(c.data) == 1 else make.multiply(c, rs)
            if name == "add":                                        # TVM's SimplifyBinomial
                return _binomial(call, old.checked_type)
            return None
        if name in ("argmax", "argmin", "argsort") and _is_op(call.args[0], "qnn.dequantize"):
            return self._dq_arg(call)
        if name in _LIKE:
            return self._concretize(old, call)
        if name == "reshape":
            return self._reshape(old, call)
        if name == "transpose":
            return self._transpose(call)
        if name == "cast":
            ty = self.type_of(call.args[0])
            same = isinstance(ty, TensorType) and ty.dtype == call.attrs.dtype  # type: ignore
            if same:
                return call.args[0]
            return self._clip_casts(call) or self._consecutive_cast(call, call.attrs.dtype)
        if name == "clip":
            return self._clip_in_range(call)
        return None

    def _clip_casts(self, call: Call) -> Expr | None:
        """cast(cast(clip(x), t1), t2) (TVM's SimplifyClipAndConsecutiveCast): when the clip's
        range fits in t1, the first cast changes no value, so it goes; when the clip's own
        dtype is t2 too (and an integer), both go. Unlike TVM, a float clip keeps a cast to
        an integer t1 unless t2 is an integer too: that cast drops the fraction (TVM's
        rewrite turns cast(cast(clip(0.82f, -100f, 100f), "int32"), "float32") from 0f
        into 0.82f; with an integer t2 the fraction is dropped there instead)."""
        from ..op import make
        inner = call.args[0]
        if not _is_op(inner, "cast") or not _is_op(inner.args[0], "clip"):  # type: ignore
            return None
        clip = inner.args[0]                                         # type: ignore[attr-defined]
        clip_ty, mid_ty = self.type_of(clip), self.type_of(inner)
        if not (isinstance(clip_ty, TensorType) and isinstance(mid_ty, TensorType)):
            return None
        attrs = clip.attrs
        dtype = call.attrs.dtype                                     # type: ignore[union-attr]
        if not _range_fits(attrs.a_min, attrs.a_max, mid_ty.dtype) or (
                _int_range(clip_ty.dtype) is None and _int_range(dtype) is None):
            return None
        if clip_ty.dtype == dtype and _int_range(dtype) is not None:
            return clip
        return make.cast(clip, dtype=dtype)

    def _clip_in_range(self, call: Call) -> Expr | None:
        """clip(x) whose range covers every value of x's integer dtype -> x (TVM's
        SimplifyCastClip)."""
        ty = self.type_of(call.args[0])
        if not isinstance(ty, TensorType):
            return None
        bounds = _int_range(ty.dtype)
        attrs = call.attrs
        if bounds is None or not (attrs.a_min <= bounds[0] and attrs.a_max >= bounds[1]):
            return None
        return call.args[0]

    def _mul_add(self, old: Expr, call: Call) -> Expr | None:
        """Constants of adjacent adds and multiplies gathered (TVM's
        SimplifyAdjacentMultiplyOrAdd): (x + c1) + c2 -> x + (c1 + c2), (x * c1) * c2 ->
        x * (c1 * c2), (x + c1) * c2 -> x * c2 + c1 * c2, the constants folded; constants on
        either side, the result with `x` first. Unlike TVM, only when the inner call has no
        other user (else it would still be computed, and the rewrite adds work)."""
        split = _const_operand(call)
        if split is None or split[1].data.dtype.fields is not None:
            return None                 # a low-precision carrier: no NumPy arithmetic on it
        e, c = split
        k = 0 if call.args[0] is e else 1
        if not isinstance(old, Call) or self.uses.get(id(old.args[k]), 0) != 1:
            return None
        name = call.op.name                                          # type: ignore[union-attr]
        inner = _const_operand(e) if isinstance(e, Call) and isinstance(e.op, Op) else None
        if inner is None:
            return None
        x, c1 = inner
        inner_name = e.op.name                                       # type: ignore[union-attr]
        if name == "add" and inner_name == "add":
            return _binary("add", x, _fold("add", c1, c))
        if name == "multiply" and inner_name == "multiply":
            return _binary("multiply", x, _fold("multiply", c1, c))
        if name == "multiply" and inner_name == "add":
            return _binary("add", _times(x, c), _fold("multiply", c1, c))
        return None

    def _consecutive_cast(self, call: Call, dtype: str) -> Expr | None:
        """cast(cast(x, t1), t2) -> cast(x, t2) when t1 widens x's dtype (TVM's
        IsWidenCast: the same kind, at least as many bits); cast_like counts as a cast."""
        from ..op import make
        inner = call.args[0]
        if not isinstance(inner, Call) or not (_is_op(inner, "cast") or _is_op(inner, "cast_like")):
            return None
        x = inner.args[0]
        origin, middle = self.type_of(x), self.type_of(inner)
        if not (isinstance(origin, TensorType) and isinstance(middle, TensorType)
                and _widens(origin.dtype, middle.dtype)):
            return None
        return make.cast(x, dtype=dtype)

    def _full_elementwise(self, old: Expr, call: Call) -> Expr | None:
        """`x op full(c)` -> `x op c` when the call's type is `x`'s (TVM's
        SimplifyFullElementwise)."""
        for pos in (0, 1):
            full, other = call.args[pos], call.args[1 - pos]
            value = _full_value(full)
            if value is None or not _same_type(old.checked_type, self.type_of(other)):
                continue
            ty = self.type_of(full)
            if not isinstance(ty, TensorType):
                continue
            const = _scalar(value, ty.dtype)
            args = (const, other) if pos == 0 else (other, const)
            return Call(call.op, args, call.attrs, call.type_args, span=call.span)
        return None

    def _concretize(self, old: Expr, call: Call) -> Expr | None:
        """A `*_like` op whose result type is static -> its concrete op (TVM's
        Concretize*Rewrite)."""
        from ..op import make
        name = call.op.name                                          # type: ignore[union-attr]
        ty = old.checked_type
        if not isinstance(ty, TensorType):
            return None
        if name == "cast_like":
            ty_x = self.type_of(call.args[0])
            if isinstance(ty_x, TensorType) and ty_x.dtype == ty.dtype:
                return call.args[0]
            return make.cast(call.args[0], dtype=ty.dtype)
        shape = _static_shape(ty)
        if shape is None:
            return None
        if name == "reshape_like":
            return make.reshape(call.args[0], newshape=list(shape))
        if name == "zeros_like":
            return make.zeros(shape=list(shape), dtype=ty.dtype)
        if name == "ones_like":
            return make.ones(shape=list(shape), dtype=ty.dtype)
        if name == "full_like":
            return make.full(call.args[1], shape=list(shape), dtype=ty.dtype)
        if name == "broadcast_to_like":
            return make.broadcast_to(call.args[0], shape=list(shape))
        return None

    def _dq_arg(self, call: Call) -> Expr | None:
        """argmax/argmin/argsort of qnn.dequantize(x, scale, zero_point) -> of x: a positive
        scale keeps the order (TVM's SimplifyDQArgFunc)."""
        dq = call.args[0]
        assert isinstance(dq, Call)
        scale = dq.args[1]
        if not (isinstance(scale, Constant) and scale.data.dtype.fields is None
                and bool(np.all(scale.data > 0))):
            return None
        return Call(call.op, (dq.args[0],), call.attrs, call.type_args, span=call.span)

    def _neutral(self, old: Expr, call: Call, positions: tuple[int, ...], value: int
                 ) -> Expr | None:
        for pos in positions:
            const, other = call.args[pos], call.args[1 - pos]
            if isinstance(const, Constant) and np.size(const.data) > 0 \
                    and const.data.dtype.fields is None \
                    and bool(np.all(const.data == value)) \
                    and _same_type(old.checked_type, self.type_of(other)):
                return other
        return None

    def _reshape(self, old: Expr, call: Call) -> Expr | None:
        inner = call.args[0]
        if not _is_op(inner, "reshape"):
            return None
        shape = _static_shape(old.checked_type)
        if shape is None:
            return None
        attrs = ReshapeAttrs(newshape=shape, allowzero=False)
        return Call(get_op("reshape"), (inner.args[0],), attrs,   # type: ignore[attr-defined]
                    span=call.span)

    def _transpose(self, call: Call) -> Expr | None:
        inner = call.args[0]
        if not _is_op(inner, "transpose"):
            return None
        x = inner.args[0]                                          # type: ignore[attr-defined]
        ty = self.type_of(x)
        if not isinstance(ty, TensorType):
            return None
        ndim = len(ty.shape)
        first = _axes(inner.attrs.axes, ndim)                      # type: ignore[attr-defined]
        second = _axes(call.attrs.axes, ndim)                      # type: ignore[union-attr]
        composed = tuple(first[i] for i in second)   # out axis i is x's axis first[second[i]]
        if composed == tuple(range(ndim)):
            return x
        return Call(get_op("transpose"), (x,), TransposeAttrs(axes=composed), span=call.span)


_LIKE = ("reshape_like", "zeros_like", "ones_like", "full_like", "broadcast_to_like",
         "cast_like")


# ---------------------------------------------------------------- SimplifyBinomial

# The dtypes whose coefficients TVM's SimplifyBinomial reads (it takes the others as 1).
_BINOMIAL_DTYPES = ("int32", "float32", "float64")


def _binomial(call: Call, ty: Type | None) -> Expr | None:
    """a*x*x + b*x*y + c*y*y, its three terms in any order and each written in any of
    TVM's forms (`a * (x * x)`, `x * (a * x)`, `x * x`, the operands of each add and
    multiply either way round; a coefficient left out is 1) -> a * (x + p*y) * (x + q*y),
    p and q the roots of a*t*t - b*t + c (TVM's SimplifyBinomial; x and y swap first when
    c is 1 and a is larger, so the coefficient in front is 1). Left alone when the roots
    are not real. The factors are written without TVM's `* 1` and `1 *`, which its
    EliminateIdentity then removes: `(x + y) * (x + y)`, one node used twice when p = q.
    Narrower than TVM's, where TVM's result would differ from the input: only scalar
    coefficients (TVM reads the first element of any constant), and for int32 only
    integer roots (TVM truncates them, which changes the value)."""
    if not isinstance(ty, TensorType) or ty.dtype not in _BINOMIAL_DTYPES:
        return None
    outer = [(call.args[0], call.args[1]), (call.args[1], call.args[0])]
    for inner, third in outer:
        if not _is_op(inner, "add") or len(inner.args) != 2:        # type: ignore[union-attr]
            continue
        terms = (inner.args[0], inner.args[1], third)               # type: ignore[union-attr]
        found = _binomial_roles(terms)
        if found is not None:
            return _factor(*found, ty.dtype)
    return None


def _binomial_roles(terms: tuple[Expr, Expr, Expr]
                    ) -> tuple[Expr, Expr, float, float, float] | None:
    """(x, y, a, b, c) when the three terms are a*x*x, c*y*y and b*x*y in some order."""
    forms = [_product_forms(t) for t in terms]
    for i_xx, i_yy, i_xy in ((0, 2, 1), (1, 2, 0), (0, 1, 2), (1, 0, 2), (2, 0, 1),
                             (2, 1, 0)):
        for a, x, x2 in forms[i_xx]:
            if x is not x2:
                continue
            for c, y, y2 in forms[i_yy]:
                if y is not y2:
                    continue
                for b, u, v in forms[i_xy]:
                    if (u is x and v is y) or (u is y and v is x):
                        return x, y, a, b, c
    return None


def _product_forms(term: Expr) -> list[tuple[float, Expr, Expr]]:
    """The ways `term` reads as coefficient * u * v: `k * (u * v)`, `u * (k * v)` or
    `u * v` (coefficient 1), each multiply's operands either way round; k a scalar
    constant."""
    if not _is_op(term, "multiply") or len(term.args) != 2:         # type: ignore[union-attr]
        return []
    out: list[tuple[float, Expr, Expr]] = []
    p, q = term.args                                                 # type: ignore[union-attr]
    for first, second in ((p, q), (q, p)):
        k = _coefficient(first)
        if k is not None and _is_op(second, "multiply") and len(second.args) == 2:
            out.append((k, second.args[0], second.args[1]))         # type: ignore[union-attr]
        if _is_op(second, "multiply") and len(second.args) == 2:     # type: ignore[union-attr]
            r, s = second.args                                       # type: ignore[union-attr]
            for kk, other in ((r, s), (s, r)):
                k = _coefficient(kk)
                if k is not None:
                    out.append((k, first, other))
    out.append((1.0, p, q))
    return out


def _coefficient(e: Expr) -> float | None:
    if isinstance(e, Constant) and np.ndim(e.data) == 0 and e.data.dtype.kind in "iuf" \
            and e.data.dtype.fields is None:
        return float(e.data)
    return None


def _factor(x: Expr, y: Expr, a: float, b: float, c: float, dtype: str) -> Expr | None:
    from ..op import make
    if c == 1 and a > 1:
        x, y, a, c = y, x, c, a
    disc = b * b - 4 * a * c
    if disc < 0 or a == 0:
        return None
    same = disc < 10e-5                                # TVM's test for a double root
    root = float(np.sqrt(disc))
    p = (b + root) / (2 * a)
    q = p if same else (b - root) / (2 * a)
    if dtype.startswith("int") and not (p == int(p) and q == int(q)):
        return None

    def factor(r: float) -> Expr:
        return make.add(x, y if r == 1 else make.multiply(y, _scalar(r, dtype)))
    first = factor(p)
    product = make.multiply(first, first if same else factor(q))
    return product if a == 1 else make.multiply(_scalar(a, dtype), product)


def _widens(origin: str, cast: str) -> bool:
    """TVM's IsWidenCast: the same kind of number and at least as many bits."""
    def split(dtype: str) -> tuple[str, int]:
        kind = dtype.rstrip("0123456789")
        bits = dtype[len(kind):]
        return kind, int(bits) if bits else (1 if kind == "bool" else 0)
    (k1, b1), (k2, b2) = split(origin), split(cast)
    return k1 == k2 and b1 <= b2 and k1 in ("int", "uint", "float")


def _scalar(value: object, dtype: str) -> Constant:
    """A scalar constant of `dtype` (low-precision dtypes in their carriers, as rl.const)."""
    from ..ir.builder import const
    return const(value, dtype)


def _const_operand(call: Expr) -> tuple[Expr, Constant] | None:
    """(x, c) for an add or multiply of a non-constant `x` and a constant `c`, either way."""
    if not (isinstance(call, Call) and isinstance(call.op, Op)
            and call.op.name in ("add", "multiply") and len(call.args) == 2):
        return None
    a, b = call.args
    if isinstance(b, Constant) and not isinstance(a, Constant):
        return a, b
    if isinstance(a, Constant) and not isinstance(b, Constant):
        return b, a
    return None


def _fold(name: str, a: Constant, b: Constant) -> Constant:
    data = np.add(a.data, b.data) if name == "add" else np.multiply(a.data, b.data)
    return Constant(np.asarray(data, dtype=a.data.dtype))


def _binary(name: str, a: Expr, b: Expr) -> Call:
    return Call(get_op(name), (a, b))


def _times(x: Expr, c: Constant) -> Expr:
    """x * c, gathering c into x's own constant factor if it has one."""
    inner = _const_operand(x)
    if inner is not None and x.op.name == "multiply":              # type: ignore[attr-defined]
        return _binary("multiply", inner[0], _fold("multiply", inner[1], c))
    return _binary("multiply", x, c)


def _int_range(dtype: str) -> tuple[int, int] | None:
    """The smallest and largest value of an integer dtype, else None."""
    if not dtype.startswith(("int", "uint")) or dtype.rstrip("0123456789") not in ("int", "uint"):
        return None
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def _range_fits(a_min: float, a_max: float, dtype: str) -> bool:
    """Does [a_min, a_max] lie within the values of the integer dtype `dtype`?"""
    bounds = _int_range(dtype)
    return bounds is not None and bounds[0] <= a_min and a_max <= bounds[1]


def _full_value(e: Expr) -> float | int | bool | None:
    """The fill value of zeros/ones/full/zeros_like/ones_like/full_like with a constant
    scalar fill, else None."""
    if not isinstance(e, Call) or not isinstance(e.op, Op):
        return None
    name = e.op.name
    if name in ("zeros", "zeros_like"):
        return 0
    if name in ("ones", "ones_like"):
        return 1
    if name in ("full", "full_like"):
        fill = e.args[0] if name == "full" else e.args[1]
        if isinstance(fill, Constant) and np.ndim(fill.data) == 0 \
                and fill.data.dtype.fields is None:
            return fill.data.item()
    return None


def _is_op(expr: Expr, name: str) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name == name


def _same_type(a: Type | None, b: Type | None) -> bool:
    return a is not None and b is not None and structural_equal(a, b)


def _static_shape(ty: Type | None) -> tuple[int, ...] | None:
    if not isinstance(ty, TensorType) or not all(isinstance(d, int) for d in ty.shape):
        return None
    return tuple(int(d) for d in ty.shape)


def _axes(axes: tuple[int, ...] | None, ndim: int) -> tuple[int, ...]:
    """Transpose axes made explicit and non-negative."""
    if not axes:                # None or [] (TVM): reverse
        return tuple(reversed(range(ndim)))
    return tuple(a + ndim if a < 0 else a for a in axes)
