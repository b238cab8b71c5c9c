"""InferType against TVM v0.19's tests/python/relay/test_type_infer.py: the checks the golden
cases (tests/golden/tvm/infer_type/) cannot make: the variables of a typed expression and
the type arguments recorded on calls. test_higher_order_nested is also a golden case; here it is
built with the IR builder as TVM's test builds it."""
from __future__ import annotations

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.ir.types import FuncType, TensorType, TypeVar
from relaylang.transform import InferType
from relaylang.typing import infer_types


# TVM's test_free_expr: the typed add's argument is the variable itself
def test_free_expr() -> None:
    x = rl.var("x", "float32")
    mod = InferType()(IRModule.from_expr(rl.Function([x], rl.add(x, x))))
    body = mod["main"].body
    assert body.args[0] is mod["main"].params[0]
    assert rl.structural_equal(body.checked_type, TensorType((), "float32"))


# TVM's test_type_arg_infer: a call of a polymorphic global records its type argument. (A
# difference kept, docs/TVM_DIFFERENCES.md: relaylang records them when asked,
# `infer_types(type_args=True)` as Defunctionalization does, not on every InferType.)
def test_type_arg_infer() -> None:
    mod = infer_types(rl.parse("""#[version = "0.0.5"]
def @id[A](%x: A) -> A {
  %x
}
def @main(%f: float32) -> float32 {
  @id(%f)
}
"""), type_args=True)
    args = mod["main"].body.type_args
    assert len(args) == 1 and rl.structural_equal(args[0], TensorType((), "float32"))


# TVM's test_higher_order_nested: the branches `fn [a](%x: a) -> a { %x }` and `fn (%z) { %z }`
# unify at the less polymorphic type, so the result annotation `fn (b) -> b` types %z.
def test_higher_order_nested() -> None:
    a, b = TypeVar("a"), TypeVar("b")
    x = rl.var("x", a)
    id_func = rl.Function([x], x, a, [a])
    choice_t = FuncType((), TensorType((), "bool"))
    f = rl.var("f", choice_t)
    z = rl.var("z")
    top = rl.Function([f], rl.If(rl.Call(f, []), id_func, rl.Function([z], z)),
                      FuncType((b,), b), [b])
    mod = InferType()(IRModule.from_expr(top))
    expected = FuncType((choice_t,), FuncType((b,), b), (b,))
    assert rl.structural_equal(mod["main"].checked_type, expected)
    typed_z = mod["main"].body.false_branch.params[0]
    assert typed_z.checked_type is b


# TVM's test_type_args: an operator call records its argument types. (relaylang records type
# arguments when asked, `infer_types(type_args=True)`, not on every InferType: a difference
# kept, docs/TVM_DIFFERENCES.md.)
def test_type_args() -> None:
    x = rl.var("x", shape=(10, 10))
    y = rl.var("y", shape=(1, 10))
    mod = infer_types(IRModule.from_expr(rl.add(x, y)), type_args=True)
    mod = infer_types(mod, type_args=True)
    ty_args = mod["main"].body.type_args
    assert len(ty_args) == 2
    assert ty_args[0].dtype == "float32" and ty_args[1].dtype == "float32"
    assert ty_args[0].shape == (10, 10) and ty_args[1].shape == (1, 10)
    # Without the option the call is left as it was.
    assert InferType()(IRModule.from_expr(rl.add(x, y)))["main"].body.type_args == ()
