"""Defunctionalization against TVM v0.19's tests/python/relay/test_pass_defunctionalization.py:
TVM's programs, run through the golden harness (re-parse, idempotence, same values on
random inputs where @main takes tensors); then, as TVM checks, nothing reachable from
@main is higher order and @main computes the same on a list input."""
from __future__ import annotations

import numpy as np
from adt_values import py
from tvm_golden import run_golden

import relaylang as rl
from relaylang.backend.interpreter.values import ConstructorValue
from relaylang.ir.expr import Call, GlobalVar
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.transform import InferType
from relaylang.transform.defunc_specialize import has_func_type

LIST = """#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}
"""


def defunctionalized(text: str) -> tuple[IRModule, IRModule]:
    """TVM's `defunctionalized`: the pass's output, checked to be first order."""
    before = InferType()(rl.parse(text))
    after = run_golden(before, "Defunctionalization")
    seen, work = {"main"}, [after["main"]]
    while work:                                   # every function @main reaches
        for node in post_order(work.pop()):
            if isinstance(node, Call):
                assert not has_func_type(node.checked_type), rl.astext(node)
                assert not any(has_func_type(a.checked_type) for a in node.args)
            if isinstance(node, GlobalVar) and node.name_hint not in seen:
                seen.add(node.name_hint)
                work.append(after[node.name_hint])
    return before, after


def adt_list(mod: IRModule, values) -> ConstructorValue:
    data = next(td for gtv, td in mod.type_definitions.items() if gtv.name_hint == "List")
    cons, nil = (next(c for c in data.constructors if c.name == n) for n in ("Cons", "Nil"))
    out = ConstructorValue(nil, ())
    for v in reversed(list(values)):
        out = ConstructorValue(cons, (np.asarray(v), out))
    return out


# TVM's test_simple
def test_simple() -> None:
    before, after = defunctionalized("""#[version = "0.0.5"]
def @simple[A, B](%f: fn(A) -> B, %xs: A) -> B {
  %f(%xs)
}
def @main(%l: Tensor[(5, 5), float32]) -> Tensor[(5, 5), float32] {
  %0 = fn[A](%x: A) -> A {
    %x
  };
  @simple(%0, %l)
}
""")
    data = np.random.default_rng(0).random((5, 5)).astype("float32")
    np.testing.assert_equal(rl.evaluate(before, data), rl.evaluate(after, data))


# TVM's test_global_recursion
def test_global_recursion() -> None:
    before, after = defunctionalized(LIST + """
def @id[A](%x: A) -> A {
  %x
}
def @map[A, B](%f: fn(A) -> B, %xs: List[A]) -> List[B] {
  match (%xs) {
    Cons(%x, %rest) => Cons(%f(%x), @map(%f, %rest)),
    Nil => Nil,
  }
}
def @main(%l: List[float32]) -> List[float32] {
  @map(@id, %l)
}
""")
    data = np.random.default_rng(0).random(10).astype("float32")
    out = py(rl.evaluate(before, adt_list(before, data)))
    assert out == py(rl.evaluate(after, adt_list(after, data))) and len(out) == 10


# TVM's test_recursive_datatype
def test_recursive_datatype() -> None:
    before, after = defunctionalized(LIST + """
def @sum(%f: fn(int32) -> int32, %k: List[int32]) -> int32 {
  match (%k) {
    Cons(%x, %rest) => %0 = fn(%n) {
      %x + %f(%n)
    };
    @sum(%0, %rest),
    Nil => %f(0),
  }
}
def @id[A](%x: A) -> A {
  %x
}
def @main(%l: List[int32]) -> int32 {
  @sum(@id, %l)
}
""")
    data = np.random.default_rng(0).integers(1, 100, 10).astype("int32")
    out = rl.evaluate(before, adt_list(before, data))
    assert out == rl.evaluate(after, adt_list(after, data)) == data.sum()
