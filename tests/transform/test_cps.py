"""ToCPS, UnCPS and the checker `is_cps`: examples, targeted programs, types, depth."""
from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.block_forms import is_cps
from relaylang.ir.expr import Call, Constant, Expr, Function, GlobalVar, If, Let, Op, Var
from relaylang.ir.module import IRModule
from relaylang.ir.types import FuncType, TensorType, TupleType, TypeVar
from relaylang.transform.normal_forms import to_cps, un_cps
from relaylang.transform.normal_forms.to_cps import CPSError, CPSTypes, ToCPS, cps_type
from relaylang.transform.normal_forms.un_cps import UnCPS

same_value = partial(shared_same_value, equal_nan=True)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.relay") if p.stem != "digits_mlp")


def inputs_for(mod) -> list:
    rng = np.random.default_rng(0)
    args = []
    for p in mod["main"].params:
        ty = p.type_annotation
        if ty.dtype.startswith("int"):
            args.append(np.full(ty.shape, 4, dtype=ty.dtype))
        else:
            args.append(rng.uniform(0.1, 1.0, ty.shape).astype(ty.dtype))
    return args


def check_cps(mod, args_list):
    """CPS output is in CPS, re-parses and type-checks; UnCPS gives the same results."""
    cps = ToCPS()(mod)
    assert is_cps(cps)
    rl.transform.InferType()(rl.parse(rl.astext(cps)))
    back = UnCPS()(cps)
    rl.transform.InferType()(rl.parse(rl.astext(back)))
    for args in args_list:
        assert same_value(rl.evaluate(mod, *args), rl.evaluate(back, *args))
    return cps


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_examples(name):
    mod = rl.parse((EXAMPLES / f"{name}.relay").read_text())
    check_cps(mod, [inputs_for(mod)])


def test_non_tail_call_gets_a_continuation_and_tail_call_passes_k():
    text = HEADER + """
def @g(%n: int32) -> int32 { add(%n, 1) }
def @main(%n: int32) -> int32 { %0 = @g(%n); @g(%0) }
"""
    cps = check_cps(rl.parse(text), [[np.int32(5)]])
    main = cps["main"]
    assert len(main.params) == 2 and main.type_params and main.ret_type is main.type_params[-1]
    outer = main.body
    assert isinstance(outer, Call) and isinstance(outer.args[-1], Function)
    inner = outer.args[-1].body                  # @g(%x, %k): the tail call passes %k on
    assert isinstance(inner, Call) and inner.args[-1] is main.params[-1]


def test_if_in_the_middle_binds_a_join_continuation():
    text = HEADER + """
def @main(%c: bool, %x: float32) -> float32 {
  %0 = if (%c) { add(%x, 1f) } else { negative(%x) };
  multiply(%0, 2f)
}
"""
    cps = check_cps(rl.parse(text), [[np.array(c), np.float32(3)] for c in (True, False)])
    body = cps["main"].body
    assert isinstance(body, Let) and isinstance(body.value, Function) and isinstance(body.body, If)


def test_shared_value_across_branches_and_closures():
    text = HEADER + """
def @twice(%f: fn (int32) -> int32, %x: int32) -> int32 { %0 = %f(%x); %f(%0) }
def @main(%c: bool, %n: int32) -> int32 {
  %0 = multiply(%n, 3);
  %1 = fn (%y: int32) -> int32 { add(%y, %0) };
  %2 = if (%c) { @twice(%1, %0) } else { %1(%0) };
  add(%2, %0)
}
"""
    mod = rl.parse(text)
    cps = check_cps(mod, [[np.array(c), np.int32(2)] for c in (True, False)])
    assert "twice" in [gv.name_hint for gv in UnCPS()(cps).functions]


def test_match_and_refs():
    text = HEADER + """
type Opt { Some(int32), None }
def @get(%o: Opt, %d: int32) -> int32 { match (%o) { Some(%v) => %v, None => %d } }
def @main(%n: int32) -> int32 {
  let %r = ref(%n);
  %0 = greater(%n, 0);
  %1 = if (%0) { Some(%n) } else { None };
  %2 = @get(%1, 7);
  ref_write(%r, add(ref_read(%r), %2));
  ref_read(%r)
}
"""
    check_cps(rl.parse(text), [[np.int32(k)] for k in (3, 0)])


def test_recursive_local_closure():
    text = HEADER + """
def @main(%n: int32) -> int32 {
  let %loop = fn (%i: int32, %acc: int32) -> int32 {
    if (equal(%i, 0)) { %acc } else { %loop(subtract(%i, 1), add(%acc, %i)) }
  };
  %loop(%n, 0)
}
"""
    check_cps(rl.parse(text), [[np.int32(2000)]])


def test_cps_type():
    a = TypeVar("answer")
    i32 = TensorType((), "int32")
    t = cps_type(TupleType((FuncType((i32,), i32), i32)), a)
    fn = t.fields[0]
    assert isinstance(fn, FuncType) and fn.ret_type is a
    assert isinstance(fn.arg_types[1], FuncType) and fn.arg_types[1].ret_type is a
    assert t.fields[1] is i32


def test_primitive_function_is_rejected():
    text = HEADER + """
def @main(%x: float32) -> float32 {
  %0 = fn (%y: float32, Primitive=1) -> float32 { negative(%y) };
  %0(%x)
}
"""
    with pytest.raises(CPSError):
        ToCPS()(rl.parse(text))


def test_checker_rejects_direct_style_calls():
    assert not is_cps(rl.parse(HEADER + "def @f(%x: int32) { %0 = @f(%x); add(%0, 1) }"))
    assert is_cps(rl.parse(HEADER + "def @f(%x: int32) { @f(add(%x, 1)) }"))


def test_100k_let_chain_without_recursion_error():
    n = 100_000
    add, one = Op("add"), Constant(np.array(1, "float32"))
    vs = [Var("v0", TensorType((), "float32"))] + [Var(f"v{i}") for i in range(1, n)]
    body: Expr = vs[-1]
    for i in range(n - 1, 0, -1):
        body = Let(vs[i], Call(add, (vs[i - 1], one)), body)
    mod = IRModule({GlobalVar("main"): Function((vs[0],), body)})
    cps = ToCPS()(mod)
    assert is_cps(cps)
    assert isinstance(cps["main"].body, Let)


# ------------------------------------------------ linear work on shared types (issue 14)


def _nested_tuple_module(n: int) -> IRModule:
    """`(((%x, add(%x, 1f)), %x), ...)`, depth `n`: each tuple's type holds the last's."""
    body = "(" * n + "%x" + "".join(", %x)" if i % 2 else ", add(%x, 1f))" for i in range(n))
    return rl.parse(HEADER + f"def @main(%x: Tensor[(4), float32]) {{\n  {body}\n}}\n")


def _doubling_tuple_module(n: int) -> IRModule:
    """`%i = (%i-1, %i-1)`: a type of `2**n` leaves as a tree, `n + 1` nodes as a DAG."""
    lines = ["  %0 = (%x, %x);"] + [f"  %{i} = (%{i - 1}, %{i - 1});" for i in range(1, n)]
    return rl.parse(HEADER + "def @main(%x: float32) {\n" + "\n".join(lines)
                    + f"\n  %{n - 1}\n}}\n")


def _counting(monkeypatch, module, name: str, limit: int) -> list[int]:
    """Count the calls of `module.name`, failing fast past `limit` (a quadratic or
    exponential walk would take minutes to finish)."""
    real, calls = getattr(module, name), [0]

    def counted(*args):
        calls[0] += 1
        assert calls[0] <= limit, f"{name} called more than {limit} times"
        return real(*args)
    monkeypatch.setattr(module, name, counted)
    return calls


def test_cps_types_convert_each_shared_type_once():
    a, leaf = TypeVar("answer"), TensorType((4,), "float32")
    chain: list = [leaf]
    for _ in range(500):
        chain.append(TupleType((chain[-1], leaf)))
    convert = CPSTypes(a)
    out = [convert(t) for t in chain]               # each node's type, as ToCPS asks
    assert convert.rebuilt == len(chain)           # one conversion per distinct type node
    assert all(out[i + 1].fields[0] is out[i] for i in range(len(chain) - 1))
    assert convert(chain[-1]) is out[-1] and convert.rebuilt == len(chain)


def test_cps_types_give_each_polymorphic_occurrence_its_own_type_variables():
    a, i32 = TypeVar("answer"), TensorType((), "int32")
    t = TypeVar("T")
    mono = TupleType((FuncType((i32,), i32), i32))
    poly = TupleType((FuncType((t,), t, (t,)), mono))
    convert = CPSTypes(a)
    first, second = convert(poly), convert(poly)
    assert first.fields[0].type_params[0] is not second.fields[0].type_params[0]
    assert first.fields[1] is second.fields[1] is convert(mono)     # shared: no binders


def test_to_cps_on_a_nested_tuple_converts_linearly_many_types(monkeypatch):
    n = 400
    mod = _nested_tuple_module(n)
    calls = _counting(monkeypatch, to_cps, "_rebuild_type", 20 * n)
    cps = ToCPS()(mod)
    assert calls[0] <= 4 * n                        # was about n * n: 120k at n = 400
    assert is_cps(cps)
    back = UnCPS()(cps)
    x = np.ones(4, "float32")
    assert same_value(rl.evaluate(mod, x), rl.evaluate(back, x))


def test_un_cps_visits_a_shared_type_once(monkeypatch):
    n = 40
    cps = ToCPS()(_doubling_tuple_module(n))
    calls = _counting(monkeypatch, un_cps, "type_children", 50 * n)
    back = UnCPS()(cps)
    assert calls[0] <= 10 * n                       # was 2**n: the type walked as a tree
    assert {gv.name_hint for gv in back.functions} == {"main", "main_cps"}


def test_to_cps_gives_two_uses_of_a_polymorphic_global_their_own_type_variables():
    mod = rl.parse(HEADER + """
def @id[A](%x: A) -> A { %x }
def @main(%x: int32) -> int32 { let %f = @id; let %g = @id; %0 = %f(%x); %g(%0) }
""")
    cps = ToCPS()(mod)

    def round_trips(m) -> bool:
        return rl.structural_equal(rl.parse(rl.astext(m)), m)
    assert round_trips(cps) and round_trips(rl.transform.InferType()(cps))
    back = rl.transform.InferType()(UnCPS()(cps))
    assert round_trips(back) and int(rl.evaluate(back, np.int32(3))) == 3


def test_uncps_renames_calls_in_functions_that_stay_in_cps():
    # Found by the 100k-case fuzz run: @get returns a function, so it stays in CPS, and
    # must reach @twice's CPS version (@twice_cps), not the direct-style @twice.
    text = """#[version = "0.0.5"]
def @twice(%y: int32) -> int32 { %y }
def @get() -> fn (int32) -> int32 { @twice }
def @main(%x: int32) -> int32 { %0 = @get(); %0(%x) }
"""
    mod = rl.parse(text)
    out = rl.transform.InferType()(rl.transform.Sequential(
        [rl.transform.get_pass("ToCPS"), rl.transform.get_pass("UnCPS")])(mod))
    assert "@twice_cps" in rl.astext(out["get"])
    assert int(rl.evaluate(out, np.int32(3))) == 3
