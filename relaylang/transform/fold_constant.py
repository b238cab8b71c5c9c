"""FoldConstant: evaluate what depends only on constants (TVM: transforms/fold_constant.cc).

    def @f(%x: float32) {                       def @f(%x: float32) {
      let %c = add(1f, 2f);                       multiply(3f, %x)
      %0 = (%c, 4f);                  ==>       }
      multiply(%0.0, %x)
    }

Rules, applied bottom-up so that one fold feeds the next:

  * a call of an operator whose arguments are all constants (or tuples of
    constants) is run with the registry's kernel; its result becomes a `Constant`
    (a tuple result becomes a tuple of constants);
  * `(a, b).0` is `a` (any fields, as TVM, when `b` has no effect);
  * `if (c) { a } else { b }` with a constant condition is the chosen branch;
  * `let %v = c; body` with a constant `c` is `body` with `%v` replaced by `c`
    (as TVM's `ConstantFolder::VisitExpr_(LetNode)`).

Device annotations stay, as in TVM: `on_device(c)` around a constant counts
as a constant operand (its value is `c`'s) but is itself never folded away, a
let-bound `on_device(c)` is substituted with its annotation, and
`on_device((c1, c2)).0` becomes `on_device(c1)` with the same attributes, so
device planning still finds where each constant lives. `device_copy` is a
transfer between devices and is never evaluated, nor is what uses it:

    %0 = on_device(1f, virtual_device=D);          %0 = on_device(1f, virtual_device=D);
    %1 = device_copy(2f, src=D, dst=E);    ==>     %1 = device_copy(2f, src=D, dst=E);
    add(add(%0, 2f), %1)                           add(3f, %1)

`shape_of(e)` is folded whenever `e`'s checked type has a static shape, whatever `e` is
(TVM's EvaluateShapeOf). Operators of the `qnn` family are folded only with
`fold_qnn=True` (TVM's option; `fold_constant()`, the library function the ONNX importer
uses, folds them by default).

Never folded: stateful operators (`OpDef.stateful`, e.g. `nn.dropout`), operators
without a kernel, calls whose kernel raises, anything inside a function marked
`Primitive=1` (or `Compiler=...`: already lowered), and results with more than
`max_elements` elements that are also larger than every constant they are computed
from (TVM folds whatever size; the limit keeps printed modules and memory small,
like TVM's later `FoldConstant` size heuristics). So a weight of any size times a
per-channel scale is folded (the module does not grow), while `zeros`/`broadcast_to`
of more than 1 << 16 elements (the default) is left to run time.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, ClassVar

from ..analysis import op_is_stateful
from ..ir.expr import Call, Constant, Expr, Function, If, Let, Op, Tuple, TupleGetItem, Var
from ..ir.module import IRModule
from ..ir.normal_forms import opaque_children, pure_value
from ..ir.traverse import post_order
from ..ir.types import TensorType
from ..op import get_op_def
from .pass_infra import FunctionPass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class FoldConstant(FunctionPass):
    """Fold constant sub-expressions of each global function (the module docstring says which)."""

    name: ClassVar[str] = "FoldConstant"
    opt_level: ClassVar[int] = 2
    max_elements: int = 1 << 16        # -p FoldConstant{max_elements=1024}
    fold_qnn: bool = False             # TVM's option: also evaluate qnn.* calls

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        out = fold_constant(fn, self.max_elements, self.fold_qnn)
        assert isinstance(out, Function)
        return out


def fold_constant(expr: Expr, max_elements: int = 1 << 16, fold_qnn: bool = True) -> Expr:
    """`expr` with its constant sub-expressions evaluated; unchanged parts stay shared.
    `fold_qnn=False` leaves calls of `qnn` operators alone (the pass's default, as TVM's)."""
    order = post_order(expr, opaque_children)    # Primitive functions: not entered
    binder = {id(n.var): n for n in order if isinstance(n, Let)}
    done: dict[int, Expr] = {}
    for node in order:                           # children first; a let's value before its body
        if isinstance(node, Var):
            let = binder.get(id(node))
            value = done.get(id(let.value)) if let is not None else None
            done[id(node)] = value if value is not None and _is_simple_const(value) else node
            continue
        kids = opaque_children(node)
        rebuilt = node.with_children([done[id(c)] for c in kids]) if kids else node
        folded = _fold_shape_of(node, rebuilt) if isinstance(node, Call) else None
        if folded is None:
            folded = _fold(rebuilt, max_elements, fold_qnn)
        done[id(node)] = rebuilt if folded is None else folded
    return done[id(expr)]


def _fold_shape_of(old: Call, new: Call) -> Expr | None:
    """`shape_of(e)` where `e`'s type (of the original call's argument: typed) has a static
    shape: that shape, as a constant of the call's dtype (TVM's EvaluateShapeOf)."""
    if not (isinstance(old.op, Op) and old.op.name == "shape_of" and len(old.args) == 1):
        return None
    ty = old.args[0].checked_type
    if not (isinstance(ty, TensorType) and all(type(d) is int for d in ty.shape)):
        return None
    import numpy as np
    dtype = str(getattr(old.attrs, "dtype", "") or "int32")
    return Constant(np.array(tuple(ty.shape), dtype=dtype).reshape(len(ty.shape)),
                    span=new.span)


def _fold(node: Expr, max_elements: int, fold_qnn: bool = True) -> Expr | None:
    """The folded form of `node` (its children already folded), or None to keep it."""
    if isinstance(node, Let) and _is_simple_const(node.value):
        return node.body                  # its uses were replaced when reached
    if isinstance(node, If) and isinstance(node.cond, Constant):
        return node.true_branch if bool(node.cond.data) else node.false_branch
    if isinstance(node, TupleGetItem):
        return _project(node)
    if isinstance(node, Call) and isinstance(node.op, Op) and all(map(_is_const, node.args)) \
            and not _non_computational(node.op.name):
        return _fold_call(node, max_elements, fold_qnn)
    return None


def _non_computational(name: str) -> bool:
    """Ops declared `non_computational` (on_device, device_copy: TVM's fold_constant.cc
    names both) are not evaluated: a transfer is not computation, and an `on_device`
    annotation must survive folding."""
    opdef = get_op_def(name)
    return opdef is not None and opdef.non_computational


_ON_DEVICE = "on_device"


def _on_device_body(e: Expr) -> Expr | None:
    """`x` of `on_device(x, ...)`, else None."""
    if isinstance(e, Call) and isinstance(e.op, Op) and e.op.name == _ON_DEVICE and e.args:
        return e.args[0]
    return None


def _strip_on_device(e: Expr) -> Expr:
    body = _on_device_body(e)
    return e if body is None else body


def _is_simple_const(e: Expr) -> bool:
    """A constant, maybe annotated with `on_device` (TVM's IsSimpleConstant)."""
    return isinstance(_strip_on_device(e), Constant)


def _is_const(e: Expr) -> bool:
    """A constant or a tuple of constants, each maybe inside `on_device` (iterative:
    tuples may nest)."""
    stack = [e]
    while stack:
        e = _strip_on_device(stack.pop())
        if isinstance(e, Tuple):
            stack.extend(e.fields)
        elif not isinstance(e, Constant):
            return False
    return True


def _project(node: TupleGetItem) -> Expr | None:
    """`(a, b).0` is `a`; `on_device((a, b), ...).0` is `on_device(a, ...)`. As in TVM the
    fields need not be constants; unlike TVM, a tuple whose other fields have effects
    (`pure_value`: a call of a global, a reference write) is kept, so no effect is lost."""
    tup = _strip_on_device(node.tuple_value)
    if not isinstance(tup, Tuple):
        return None
    memo: dict[int, tuple[Expr, bool]] = {}
    if not all(pure_value(f, op_is_stateful, memo)
               for i, f in enumerate(tup.fields) if i != node.index):
        return None
    field = tup.fields[node.index]
    if tup is node.tuple_value:
        return field
    annotation = node.tuple_value
    assert isinstance(annotation, Call)
    return Call(annotation.op, (field,), annotation.attrs, span=annotation.span)


def _fold_call(call: Call, max_elements: int, fold_qnn: bool = True) -> Expr | None:
    assert isinstance(call.op, Op)
    opdef = get_op_def(call.op.name)
    if opdef is None or opdef.kernel is None or opdef.stateful:
        return None
    if not fold_qnn and opdef.package.rsplit(".", 1)[-1] == "qnn":
        return None
    inputs = [_value(a) for a in call.args]
    # A result no larger than an input constant never grows the module (a weight times a
    # per-channel scale); only results beyond both that and `max_elements` stay calls.
    limit = max(max_elements, *(_size(v) for v in inputs)) if inputs else max_elements
    ty = call.checked_type            # known size: do not even compute a too-large result
    if isinstance(ty, TensorType) and all(isinstance(d, int) for d in ty.shape) \
            and prod(ty.shape) > limit:
        return None
    from ..op.numpy_support import quietly  # imports numpy: only once there is work
    try:
        result = quietly(opdef.kernel, inputs, call.attrs)
    except Exception:                 # noqa: BLE001 -- a failing kernel stays a run-time error
        return None
    return _to_expr(result, limit, call)


def _size(value: Any) -> int:
    """The element count of the largest array in a constant value (arrays, nested tuples)."""
    stack, largest = [value], 0
    while stack:
        v = stack.pop()
        if isinstance(v, tuple):
            stack.extend(v)
        else:
            largest = max(largest, int(getattr(v, "size", 1)))
    return largest


def _value(e: Expr) -> Any:
    """The run-time value of a constant expression: an array, or tuples of arrays."""
    done: dict[int, Any] = {}
    def parts(node: Expr) -> tuple[Expr, ...]:
        return node.fields if isinstance(node, Tuple) else \
            () if isinstance(node, Constant) else (_strip_on_device(node),)
    for node in post_order(e, parts):    # tuples may nest deeply: no recursion
        if isinstance(node, Constant):
            done[id(node)] = node.data
        elif isinstance(node, Tuple):
            done[id(node)] = tuple(done[id(f)] for f in node.fields)
        else:                            # on_device(x): the value of x
            done[id(node)] = done[id(_strip_on_device(node))]
    return done[id(e)]


def _to_expr(result: Any, max_elements: int, call: Call) -> Expr | None:
    import numpy as np
    if isinstance(result, (tuple, list)):
        fields = [_to_expr(r, max_elements, call) for r in result]
        if any(f is None for f in fields):
            return None
        return Tuple(tuple(f for f in fields if f is not None), span=call.span)
    data = np.asarray(result)
    if data.size > max_elements or data.dtype == object:
        return None
    return Constant(data, span=call.span)
