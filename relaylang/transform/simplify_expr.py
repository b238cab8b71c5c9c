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
  * `cast(x, dtype)` -> `x` when `x` already has that dtype.

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
        name = call.op.name       # type: ignore[union-attr]
        if name in _NEUTRAL:
            return self._neutral(old, call, *_NEUTRAL[name])
        if name == "reshape":
            return self._reshape(old, call)
        if name == "transpose":
            return self._transpose(call)
        if name == "cast":
            ty = self.type_of(call.args[0])
            same = isinstance(ty, TensorType) and ty.dtype == call.attrs.dtype  # type: ignore
            return call.args[0] if same else None
        return None

    def _neutral(self, old: Expr, call: Call, positions: tuple[int, ...], value: int
                 ) -> Expr | None:
        for pos in positions:
            const, other = call.args[pos], call.args[1 - pos]
            if isinstance(const, Constant) and np.size(const.data) > 0 \
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
