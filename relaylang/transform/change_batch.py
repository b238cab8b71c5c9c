"""ChangeBatch: give chosen parameters a new batch size and retype the program
(TVM's python/tvm/relay/transform/transform.py `ChangeBatch`, a Python function pass).

`data` names the parameters and which of their axes holds the batch; that axis becomes
`batch_size` in the parameter's type, the function's return type is dropped and type
inference works out the rest, so a model exported for batch 1 serves batch 16.

    def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(4, 3), float32]) {
      nn.dense(%x, %w)
    }
        ==>  (ChangeBatch{data=x:0,batch_size=8})
    def @main(%x: Tensor[(8, 3), float32], %w: Tensor[(4, 3), float32]) {
      nn.dense(%x, %w) /* ty=Tensor[(8, 4), float32] */
    }

`data` is written `name:axis` entries separated by `;` (`x:0;mask:1`); from Python it may
also be a dict from names or `Var`s to axes, as TVM's. TVM matches variables by identity;
text has none, so here a name means the parameter of that name in every global function.
A name no function has as a parameter, a parameter without a tensor annotation, or an axis
outside it is an error with the parameter's location; so is a program that no longer
type-checks with the new batch (a `reshape` to a fixed batch, say).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..ir.diagnostics import Diagnostic, DiagnosticError
from ..ir.expr import Expr, Function, GlobalVar, Var
from ..ir.module import IRModule
from ..ir.normal_forms import is_opaque
from ..ir.traverse import rewrite
from ..ir.types import TensorType
from ..typing import infer_types
from .pass_infra import FunctionPass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class ChangeBatch(FunctionPass):
    """Set the batch axis of the parameters named in `data` to `batch_size`."""

    name: ClassVar[str] = "ChangeBatch"
    opt_level: ClassVar[int] = 1
    data: Any = ""                      # "x:0;y:1", or {name or Var: axis}
    batch_size: int = 16

    def __post_init__(self) -> None:
        # Kept as one `name:axis;...` string: it prints back as a pipeline option.
        text = ";".join(f"{k}:{v}" for k, v in parse_batch_axes(self.data).items())
        object.__setattr__(self, "data", text)
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be positive, not {self.batch_size}")

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        axes = parse_batch_axes(self.data)
        changed = {gv: new for gv, fn in mod.functions.items()
                   for new in [self.transform_function(fn, mod, ctx)] if new is not fn}
        found = {p.name_hint for fn in mod.functions.values() for p in fn.params}
        missing = [name for name in axes if name not in found]
        if missing:
            span = next(iter(mod.functions.values())).span if mod.functions else None
            raise DiagnosticError([Diagnostic.error(
                f"ChangeBatch: no function has a parameter %{missing[0]}", span,
                code="pass-option")], mod.sources)
        # Typed here, not by requiring InferType: typing the input first would fix the types
        # of let-bound variables to the old signature (a checked type is set once).
        return infer_types(with_new_signatures(mod, changed))

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        if is_opaque(fn):
            return fn
        axes = parse_batch_axes(self.data)
        new_vars: dict[int, Var] = {}
        for p in fn.params:
            if p.name_hint in axes:
                new_vars[id(p)] = _rebatched(p, axes[p.name_hint], self.batch_size, mod)
        if not new_vars:
            return fn

        def substitute(old: Expr, new: Expr) -> Expr | None:
            return new_vars.get(id(old))

        body = rewrite(fn.body, substitute)
        params = tuple(new_vars.get(id(p), p) for p in fn.params)
        # The return type is inferred again, as TVM's pass drops it too.
        return Function(params, body, None, fn.type_params, fn.attrs, span=fn.span)


def with_new_signatures(mod: IRModule, changed: dict[GlobalVar, Function]) -> IRModule:
    """`mod` with the functions of `changed`, whose types differ from the old ones, under new
    `GlobalVar`s, and every call of them updated. A GlobalVar's type is set once, and the old
    ones still name the old functions in the modules that hold them."""
    fresh = {id(gv): GlobalVar(gv.name_hint, span=gv.span) for gv in changed}

    def rename(old: Expr, new: Expr) -> Expr | None:
        return fresh.get(id(old)) if isinstance(old, GlobalVar) else None

    out = mod.copy()
    out.functions = {}
    for gv, fn in mod.functions.items():
        new_fn = rewrite(changed.get(gv, fn), rename) if fresh else fn
        assert isinstance(new_fn, Function)
        out.functions[fresh.get(id(gv), gv)] = new_fn
    return out


def parse_batch_axes(data: Any) -> dict[str, int]:
    """`"x:0;y:1"` or `{"x": 0, Var(y): 1}` -> `{"x": 0, "y": 1}` (ValueError if malformed)."""
    if isinstance(data, str):
        pairs: list[tuple[Any, Any]] = []
        for item in data.replace(";", " ").split():
            name, sep, axis = item.partition(":")
            if not sep or not name:
                raise ValueError(f"ChangeBatch data entry `{item}` is not NAME:AXIS")
            pairs.append((name, axis))
    else:
        pairs = list(dict(data).items())
    out: dict[str, int] = {}
    for key, axis in pairs:
        name = (key.name_hint if isinstance(key, Var) else str(key)).lstrip("%")
        try:
            out[name] = int(axis)
        except ValueError:
            raise ValueError(f"ChangeBatch axis of {name} is not an integer: {axis}") from None
    return out


def _rebatched(p: Var, axis: int, batch: int, mod: IRModule) -> Var:
    ty = p.type_annotation
    if not isinstance(ty, TensorType):
        raise DiagnosticError([Diagnostic.error(
            f"ChangeBatch: parameter %{p.name_hint} has no tensor type annotation", p.span,
            code="pass-option")],
            mod.sources)
    rank = len(ty.shape)
    if not -rank <= axis < rank:
        raise DiagnosticError([Diagnostic.error(
            f"ChangeBatch: axis {axis} is outside %{p.name_hint}, a tensor of rank {rank}",
            p.span, code="pass-option")], mod.sources)
    shape = list(ty.shape)
    shape[axis] = batch
    return Var(p.name_hint, TensorType(tuple(shape), ty.dtype), p.virtual_device, span=p.span)
