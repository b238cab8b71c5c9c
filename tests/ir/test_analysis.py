"""Free, bound and all variables and type variables (relaylang/ir/analysis.py)."""
from __future__ import annotations

import time

import numpy as np

from relaylang.ir import (Call, Clause, Constant, Constructor, Function, FuncType, GlobalTypeVar,
                          If, Let, Match, Op, PatternConstructor, PatternTuple, PatternVar,
                          PatternWildcard, TensorType, Tuple, TupleGetItem, TupleType, TypeCall,
                          TypeVar, Var)
from relaylang.ir.analysis import (all_type_vars, all_vars, bound_type_vars, bound_vars,
                                   free_type_vars, free_vars)

F32 = TensorType((), "float32")
ADD = Op("add")


def add(a, b):
    return Call(ADD, (a, b))


def one():
    return Constant(np.array(1.0, "float32"))


def names(vs):
    return [v.name_hint for v in vs]


def test_free_vars_in_order_of_first_occurrence():
    a, b, c = Var("a"), Var("b"), Var("c")
    e = add(b, Tuple((add(a, b), TupleGetItem(Tuple((c, a)), 0))))
    assert free_vars(e) == [b, a, c]
    assert all_vars(e) == [b, a, c]
    assert bound_vars(e) == []


def test_function_params_are_bound():
    x, y = Var("x"), Var("y")
    fn = Function((x,), add(x, y))
    assert free_vars(fn) == [y]
    assert bound_vars(fn) == [x]
    assert all_vars(fn) == [x, y]


def test_let_binds_its_var_including_in_its_own_value():
    x, y, z, f = Var("x"), Var("y"), Var("z"), Var("f")
    e = Let(x, y, add(x, z))
    assert free_vars(e) == [y, z]
    assert bound_vars(e) == [x]
    assert all_vars(e) == [x, y, z]
    rec = Let(f, Function((), Call(f, ())), Call(f, (y,)))
    assert free_vars(rec) == [y]


def test_match_pattern_vars_are_bound():
    lst = GlobalTypeVar("List")
    cons = Constructor("Cons", (), lst, 0)
    h, t, d, q, w = (Var(n) for n in "htdqw")
    m = Match(d, (
        Clause(PatternConstructor(cons, (PatternVar(h), PatternVar(t))), add(h, q)),
        Clause(PatternTuple((PatternWildcard(), PatternVar(w))), w),
    ))
    assert free_vars(m) == [d, q]
    assert bound_vars(m) == [h, t, w]
    assert all_vars(m) == [d, h, t, q, w]


def test_shared_nodes_are_reported_once():
    x, y = Var("x"), Var("y")
    shared = add(x, y)
    e = If(shared, shared, Tuple((shared, x)))
    assert free_vars(e) == [x, y]


def test_nested_functions():
    x, y, z = Var("x"), Var("y"), Var("z")
    inner = Function((y,), add(x, add(y, z)))
    outer = Function((x,), Call(inner, (x,)))
    assert free_vars(inner) == [x, z]
    assert free_vars(outer) == [z]
    assert bound_vars(outer) == [x, y]


def test_free_type_vars_of_types():
    a, b, c = TypeVar("A"), TypeVar("B"), TypeVar("C")
    t = TupleType((a, FuncType((b,), TupleType((b, c)), (b,)), a))
    assert free_type_vars(t) == [a, c]
    assert bound_type_vars(t) == [b]
    assert all_type_vars(t) == [a, b, c]
    assert free_type_vars(TypeCall(GlobalTypeVar("List"), (c,))) == [c]
    assert free_type_vars(F32) == []


def test_free_type_vars_of_expressions():
    a, b, c, d = TypeVar("A"), TypeVar("B"), TypeVar("C"), TypeVar("D")
    x, y = Var("x", a), Var("y", b)
    fn = Function((x, y), Call(Op("f"), (x,), None, (c,)), TupleType((a, d)), (a,))
    assert free_type_vars(fn) == [b, d, c]
    assert bound_type_vars(fn) == [a]


def test_constructor_inputs_are_not_free():
    a = TypeVar("a")
    lst = GlobalTypeVar("List")
    cons = Constructor("Cons", (a, TypeCall(lst, (a,))), lst, 0)
    assert free_type_vars(Call(cons, (one(), one()))) == []


def test_let_and_pattern_annotations_are_scanned():
    a, b = TypeVar("A"), TypeVar("B")
    x, h = Var("x", a), Var("h", b)
    e = Let(x, one(), Match(x, (Clause(PatternVar(h), h),)))
    assert free_type_vars(e) == [a, b]


# ---------------------------------------------------------------- scale

N = 100_000
LIMIT = 10.0    # seconds: well under one on an idle machine; generous for loaded CI


def test_deep_nested_calls():
    x = Var("x")
    e = x
    for _ in range(N):
        e = Call(Op("f"), (e,))
    start = time.perf_counter()
    assert free_vars(e) == [x]
    assert time.perf_counter() - start < LIMIT


def test_long_let_chain():
    x = Var("x")
    vs = [Var(f"v{i}", F32) for i in range(N)]
    body = vs[-1]
    for i in range(N - 1, -1, -1):
        body = Let(vs[i], add(vs[i - 1] if i else x, one()), body)
    start = time.perf_counter()
    assert free_vars(body) == [x]
    assert len(bound_vars(body)) == N
    assert time.perf_counter() - start < LIMIT


def test_deep_nested_tuple_types():
    a = TypeVar("A")
    t = a
    for _ in range(N):
        t = TupleType((t, F32))
    start = time.perf_counter()
    assert free_type_vars(t) == [a]
    assert free_type_vars(Function((Var("x", t),), one())) == [a]
    assert time.perf_counter() - start < LIMIT


def test_dag_with_heavy_sharing_is_linear():
    x = Var("x")
    e = x
    for _ in range(200):
        e = add(e, e)       # 2**200 paths
    assert free_vars(Function((), e)) == [x]
