"""Type inference records `Call.type_args` (`infer_types(mod, type_args=True)`): the instantiated
type parameters of calls to polymorphic globals, constructors and local functions, and the
argument types of operator calls (as TVM's InferType), only when fully known, on new call
nodes of the output (the input module is not changed); type arguments a call of a polymorphic
function already carries pin the instantiation. The text format has no spelling for them,
so printing is unchanged.
"""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.expr import Call, Constant, Constructor, Function, GlobalVar, Let, Op, Var
from relaylang.ir.hash import structural_hash
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import FuncType, TensorType, TypeVar
from relaylang.transform import InferType
from relaylang.typing import infer_types

F32, I32 = TensorType((), "float32"), TensorType((), "int32")
HEADER = '#[version = "0.0.5"]\n'
PROGRAM = HEADER + """
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @id[A](%x: A) -> A { %x }
def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B] {
  match (%xs) {
    Cons(%x, %rest) => Cons(%f(%x), @map(%f, %rest)),
    Nil => Nil,
  }
}
def @main(%a: float32, %n: int32) -> (List[float32], int32) {
  (@map(fn (%i: int32) -> float32 { cast(%i, dtype="float32") }, Cons(%n, Nil)), @id(%n))
}
"""


def typed(mod):
    return infer_types(mod, type_args=True)


def calls(fn: Function) -> dict[str, list[Call]]:
    """The calls in `fn`, by callee name (global, constructor or op)."""
    out: dict[str, list[Call]] = {}
    for node in post_order(fn):
        if isinstance(node, Call):
            op = node.op
            name = op.name_hint if isinstance(op, GlobalVar) else \
                op.name if isinstance(op, (Constructor, Op)) else type(op).__name__
            out.setdefault(name, []).append(node)
    return out


def text(types) -> list[str]:
    return [rl.astext(t) for t in types]


def test_global_and_constructor_calls_record_instantiations() -> None:
    mod = typed(rl.parse(PROGRAM))
    main = calls(mod["main"])
    assert text(main["map"][0].type_args) == ["int32", "float32"]
    assert text(main["id"][0].type_args) == ["int32"]
    assert text(main["Cons"][0].type_args) == ["int32"]
    assert text(main["Nil"][0].type_args) == ["int32"]
    assert text(main["cast"][0].type_args) == ["int32"]     # an op call: its argument types


def test_calls_inside_a_polymorphic_body_get_its_type_parameters() -> None:
    mod = typed(rl.parse(PROGRAM))
    fn = mod["map"]
    a, b = fn.type_params
    inner = calls(fn)
    assert inner["map"][0].type_args[0] is a and inner["map"][0].type_args[1] is b
    assert inner["Cons"][0].type_args[0] is b
    assert all(isinstance(t, TypeVar) for t in inner["Nil"][0].type_args)
    assert inner["Var"][0].type_args == ()           # %f(%x): %f is monomorphic here


def test_printed_text_and_structural_identity_are_unchanged() -> None:
    untyped, parsed = rl.parse(PROGRAM), rl.parse(PROGRAM)
    first, second = typed(untyped), typed(rl.parse(PROGRAM))
    assert rl.astext(first) == rl.astext(second) == rl.astext(InferType()(rl.parse(PROGRAM)))
    assert rl.structural_equal(first["main"], second["main"])
    assert structural_hash(first["main"]) == structural_hash(second["main"])
    # The input is not changed: it stays structurally what the parser built.
    assert rl.structural_equal(untyped, parsed) and not rl.structural_equal(first, parsed)
    assert structural_hash(untyped) == structural_hash(parsed)
    # The recorded type arguments re-type the same: typing again keeps them.
    again = typed(first)
    assert text(calls(again["main"])["map"][0].type_args) == ["int32", "float32"]
    assert rl.structural_equal(again, first)


def test_type_arguments_a_call_carries_pin_the_instantiation() -> None:
    x = Var("x", F32)
    ident_param = Var("y", TypeVar("A"))
    ident = Function((ident_param,), ident_param, type_params=(ident_param.type_annotation,))
    gv = GlobalVar("id")

    def module(type_args) -> IRModule:
        main = Function((x,), Call(gv, (x,), None, type_args))
        return IRModule({gv: ident, GlobalVar("main"): main})
    assert text(calls(typed(module((F32,)))["main"])["id"][0].type_args) == ["float32"]
    with pytest.raises(rl.DiagnosticError, match="expected int32, found float32"):
        InferType()(module((I32,)))
    with pytest.raises(rl.DiagnosticError, match="takes 1 type argument, the call carries 2"):
        InferType()(module((F32, F32)))


def test_unknown_instantiations_are_not_recorded() -> None:
    # The element type of this Nil is never decided: nothing to record, and no crash.
    mod = typed(rl.parse(HEADER + """
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @len[A](%xs: List[A]) -> int32 {
  match (%xs) { Cons(_, %r) => add(1, @len(%r)), Nil => 0 }
}
def @main() -> int32 { @len(Nil) }
"""))
    main = calls(mod["main"])
    assert main["len"][0].type_args == () and main["Nil"][0].type_args == ()
    assert int(rl.evaluate(mod)) == 0


def test_local_polymorphic_function() -> None:
    a = TypeVar("A")
    p = Var("p", a)
    local = Function((p,), p, type_params=(a,))
    # Let-bound functions are not generalised (as in TVM): the variable is annotated.
    f, x = Var("f", FuncType((a,), a, (a,))), Var("x", F32)
    mod = IRModule({GlobalVar("main"): Function((x,), Let(f, local, Call(f, (x,))))})
    assert text(calls(typed(mod)["main"])["Var"][0].type_args) == ["float32"]


def test_deep_chain_of_polymorphic_calls() -> None:
    a = TypeVar("A")
    p = Var("p", a)
    gv = GlobalVar("id")
    x = Var("x", F32)
    body: object = x
    for _ in range(100_000):
        body = Call(gv, (body,))
    one = Call(Op("add"), (body, Constant(np.array(1, "float32"))))
    mod = IRModule({gv: Function((p,), p, a, (a,)),
                    GlobalVar("main"): Function((x,), one)})
    node = typed(mod)["main"].body.args[0]
    for _ in range(100_000):
        assert text(node.type_args) == ["float32"]
        node = node.args[0]


def test_operator_calls_record_their_argument_types_only_when_asked() -> None:
    source = HEADER + """
def @main(%x: Tensor[(10, 10), float32], %y: Tensor[(1, 10), float32]) {
  %0 = add(%x, %y);
  concatenate((%0, %x), axis=1)
}
"""
    mod = typed(rl.parse(source))
    main = calls(mod["main"])
    assert text(main["add"][0].type_args) == ["Tensor[(10, 10), float32]",
                                             "Tensor[(1, 10), float32]"]
    assert text(main["concatenate"][0].type_args) == [
        "(Tensor[(10, 10), float32], Tensor[(10, 10), float32])"]
    assert rl.astext(mod) == rl.astext(InferType()(rl.parse(source)))
    # Without the option no call is rebuilt: the typed module holds the input's nodes.
    parsed = rl.parse(source)
    plain = infer_types(parsed)
    assert plain["main"].body is parsed["main"].body and plain["main"].body.type_args == ()


def test_operator_call_type_arguments_follow_its_arguments() -> None:
    # TVM sets an op call's type arguments to its argument types every time: ones the call
    # carries (a pass may have changed its arguments since) are replaced, equal ones kept.
    x = Var("x", TensorType((3,), "float32"))
    stale = Call(Op("negative"), (x,), None, (F32,))
    mod = typed(IRModule({GlobalVar("main"): Function((x,), stale)}))
    assert text(mod["main"].body.type_args) == ["Tensor[(3), float32]"]
    again = typed(mod)
    assert again["main"].body is mod["main"].body
