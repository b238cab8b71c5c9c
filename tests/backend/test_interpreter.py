"""The reference interpreter (`rl.evaluate`, `rl.create_executor`): one test per construct.

Every expected value is computed independently of the interpreter: by hand (written
in the test) or by a NumPy formula; no kernel is compared with itself. The scale
tests at the end run a 1,000,000-step tail-recursive loop and a non-tail recursion
over a 100,000-element ADT list on the explicit-stack machine.
"""
from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.executor import InputError
from relaylang.backend.interpreter.machine import InterpreterError
from relaylang.backend.interpreter.values import Closure, ConstructorValue, RefValue

VERSION = '#[version = "0.0.5"]\n'

LIST = """
type List[A] {
  Cons(A, List[A]),
  Nil,
}

type Option[A] {
  Some(A),
  None,
}
"""


def module(text: str, metadata: dict | None = None) -> rl.IRModule:
    return rl.parse(VERSION + text, source_name="test.relay", metadata=metadata)


def run(text: str, *args, entry: str = "main", metadata: dict | None = None):
    return rl.evaluate(module(text, metadata), *args, entry=entry)


def assert_scalar(result, value, dtype: str) -> None:
    assert isinstance(result, np.ndarray), type(result)
    assert result.shape == ()
    assert str(result.dtype) == dtype
    assert result.item() == value


def to_python_list(value: ConstructorValue) -> list:
    """A List ADT value as a Python list (iteratively: lists here are long)."""
    items = []
    while value.name == "Cons":
        head, value = value.fields
        items.append(head.item() if isinstance(head, np.ndarray) else head)
    assert value.name == "Nil" and value.fields == ()
    return items


# ------------------------------------------------------------------ tensors and constants


def test_scalar_literals_become_0d_arrays_of_their_dtype():
    result = run("""
def @main() -> (float32, int64, float64, bool, int32) {
  (1.5f, 5i64, 2.25f64, True, -7)
}
""")
    assert isinstance(result, tuple) and len(result) == 5
    assert_scalar(result[0], 1.5, "float32")
    assert_scalar(result[1], 5, "int64")
    assert_scalar(result[2], 2.25, "float64")
    assert_scalar(result[3], True, "bool")
    assert_scalar(result[4], -7, "int32")


def test_tensor_argument_flows_through_an_op_with_broadcasting():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    out = run("""
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  multiply(add(%x, 1f), 2f)
}
""", x)
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_array_equal(out, [[2, 4, 6], [8, 10, 12]])


def test_identity_returns_the_argument_values():
    x = np.array([1.0, -2.0], dtype="float32")
    out = run("def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] { %x }", x)
    np.testing.assert_array_equal(out, [1.0, -2.0])


# ------------------------------------------------------------------ tuples and projection


def test_tuples_nested_projection_unit_and_one_element_tuple():
    result = run("""
def @main(%a: int32, %b: int32) -> (int32, int32, (), (int32,)) {
  %0 = (%a, (%b, 7));
  %1 = %0.1;
  (%1.1, %0.0, (), (%b,))
}
""", 3, 4)
    assert isinstance(result, tuple) and len(result) == 4
    assert_scalar(result[0], 7, "int32")
    assert_scalar(result[1], 3, "int32")
    assert result[2] == ()
    assert isinstance(result[3], tuple) and len(result[3]) == 1
    assert_scalar(result[3][0], 4, "int32")


def test_tuple_argument_is_projected():
    out = run("""
def @main(%t: (int32, (float32, int32))) -> float32 {
  %0 = %t.1;
  %0.0
}
""", (1, (2.5, 3)))
    assert_scalar(out, 2.5, "float32")


# ------------------------------------------------------------------ let and sequencing


def test_let_binds_and_shadows():
    # %y = (a + 1) * 10 uses the first %x; the second %x shadows it afterwards. (A let
    # variable is in scope in its own value, so `let %x = f(%x)` would not shadow.)
    out = run("""
def @main(%a: int32) -> (int32, int32) {
  let %x = add(%a, 1);
  let %y = multiply(%x, 10);
  let %x = 3;
  (%x, %y)
}
""", 4)
    assert_scalar(out[0], 3, "int32")
    assert_scalar(out[1], 50, "int32")


def test_let_bound_local_recursion():
    # countdown sums n + (n-1) + ... + 1 through its own let binding.
    out = run("""
def @main(%n: int32) -> int32 {
  let %count = fn (%i: int32, %acc: int32) -> int32 {
    if (equal(%i, 0)) { %acc } else { %count(subtract(%i, 1), add(%acc, %i)) }
  };
  %count(%n, 0)
}
""", 100)
    assert_scalar(out, 5050, "int32")


def test_sequencing_evaluates_the_first_expression_for_its_effect():
    out = run("""
def @main() -> int32 {
  let %c = ref(1);
  ref_write(%c, 2);
  ref_write(%c, multiply(ref_read(%c), 21));
  ref_read(%c)
}
""")
    assert_scalar(out, 42, "int32")


# ------------------------------------------------------------------ graph-shared nodes


def test_a_shared_ref_node_is_one_cell():
    # %0 is used twice: if it were evaluated twice, the read would see a fresh 0.
    out = run("""
def @main() -> int32 {
  %0 = ref(0);
  ref_write(%0, 5);
  ref_read(%0)
}
""")
    assert_scalar(out, 5, "int32")


def test_a_shared_node_with_an_effect_is_computed_once():
    # %1 bumps the counter and reads it: once gives 1 + 1 = 2, twice would give 1 + 2.
    out = run("""
def @main() -> (int32, int32) {
  let %c = ref(0);
  %1 = (ref_write(%c, add(ref_read(%c), 1)); ref_read(%c));
  %2 = add(%1, %1);
  (%2, ref_read(%c))
}
""")
    assert_scalar(out[0], 2, "int32")
    assert_scalar(out[1], 1, "int32")


def test_a_shared_node_used_in_both_if_branches_and_after_is_one_cell():
    out = run("""
def @main(%flag: bool) -> int32 {
  %0 = ref(10);
  %1 = if (%flag) { ref_write(%0, 1) } else { ref_write(%0, 2) };
  %2 = ref_read(%0);
  %3 = (%1, %2);
  %3.1
}
""", True)
    assert_scalar(out, 1, "int32")


def test_a_shared_node_used_inside_a_closure_and_outside_is_one_cell():
    # The closure body is the first user to evaluate %0, and it runs twice; both calls
    # and the outer read must see one cell (ToANormalForm binds %0 at the common
    # ancestor scope of its users, the body of @main): 0 + 1 + 1 = 2.
    out = run("""
def @main() -> int32 {
  %0 = ref(0);
  let %bump = fn () -> () { ref_write(%0, add(ref_read(%0), 1)) };
  %bump();
  %bump();
  ref_read(%0)
}
""")
    assert_scalar(out, 2, "int32")


def test_a_shared_node_inside_a_function_is_fresh_per_call():
    # Each call of @cell makes its own ref: %a and %b are different cells.
    out = run("""
def @cell(%v: int32) -> ref(int32) {
  %0 = ref(%v);
  %1 = (%0, %0);
  %1.0
}
def @main() -> (int32, int32) {
  let %a = @cell(1);
  let %b = @cell(2);
  ref_write(%a, 100);
  (ref_read(%a), ref_read(%b))
}
""")
    assert_scalar(out[0], 100, "int32")
    assert_scalar(out[1], 2, "int32")


# ------------------------------------------------------------------ if


@pytest.mark.parametrize("n, expected", [(-5, -1), (0, 0), (9, 1)])
def test_if_with_nested_if_computes_sign(n, expected):
    out = run("""
def @main(%n: int32) -> int32 {
  if (less(%n, 0)) { -1 } else { if (equal(%n, 0)) { 0 } else { 1 } }
}
""", n)
    assert_scalar(out, expected, "int32")


def test_if_evaluates_only_the_chosen_branch():
    out = run("""
def @main(%flag: bool) -> (int32, int32) {
  let %t = ref(0);
  let %e = ref(0);
  if (%flag) { ref_write(%t, 1) } else { ref_write(%e, 1) };
  (ref_read(%t), ref_read(%e))
}
""", False)
    assert [v.item() for v in out] == [0, 1]


# ------------------------------------------------------------------ closures


COUNTER = """
def @make_counter(%start: int32) -> fn () -> int32 {
  let %c = ref(%start);
  fn () -> int32 {
    ref_write(%c, add(ref_read(%c), 1));
    ref_read(%c)
  }
}
"""


def test_counter_factory_closures_have_their_own_captured_cells():
    out = run(COUNTER + """
def @main() -> (int32, int32, int32, int32) {
  let %a = @make_counter(0);
  let %b = @make_counter(10);
  let %x = %a();
  let %y = %a();
  let %z = %b();
  let %w = %a();
  (%x, %y, %z, %w)
}
""")
    assert [v.item() for v in out] == [1, 2, 11, 3]


def test_closure_captures_the_binding_at_its_definition_not_a_later_shadow():
    out = run("""
def @main() -> int32 {
  let %k = 1;
  let %f = fn (%x: int32) -> int32 { add(%x, %k) };
  let %k = 100;
  %f(%k)
}
""")
    assert_scalar(out, 101, "int32")   # 100 + the captured 1


def test_curried_closures_capture_every_enclosing_parameter():
    out = run("""
def @main() -> int32 {
  let %f = fn (%a: int32) -> fn (int32) -> fn (int32) -> int32 {
    fn (%b: int32) -> fn (int32) -> int32 {
      fn (%c: int32) -> int32 { add(add(multiply(%a, 100), multiply(%b, 10)), %c) }
    }
  };
  %f(1)(2)(3)
}
""")
    assert_scalar(out, 123, "int32")


def test_closure_applied_immediately_and_passed_as_an_argument():
    out = run("""
def @twice(%g: fn (int32) -> int32, %x: int32) -> int32 { %g(%g(%x)) }
def @main(%n: int32) -> (int32, int32) {
  %0 = (fn (%y: int32) -> int32 { multiply(%y, 3) })(%n);
  %1 = @twice(fn (%y: int32) -> int32 { add(%y, %n) }, 1);
  (%0, %1)
}
""", 5)
    assert [v.item() for v in out] == [15, 11]


def test_closure_returned_to_python_is_callable():
    adder = run("""
def @main(%k: int32) -> fn (int32) -> int32 {
  fn (%x: int32) -> int32 { add(%x, %k) }
}
""", 10)
    assert isinstance(adder, Closure) and callable(adder)
    out = adder(np.asarray(5, dtype="int32"))
    assert_scalar(out, 15, "int32")
    assert adder(np.asarray(-3, dtype="int32")).item() == 7


# ------------------------------------------------------------------ globals, recursion


def test_calls_to_globals_and_a_global_as_a_value():
    out = run("""
def @square(%x: int32) -> int32 { multiply(%x, %x) }
def @main(%x: int32) -> (int32, int32) {
  let %g = @square;
  (@square(@square(%x)), %g(7))
}
""", 3)
    assert [v.item() for v in out] == [81, 49]


def test_recursion_factorial():
    mod = module("""
def @fact(%n: int64) -> int64 {
  if (less_equal(%n, 1i64)) { 1i64 } else { multiply(%n, @fact(subtract(%n, 1i64))) }
}
def @main(%n: int64) -> int64 { @fact(%n) }
""")
    ex = rl.create_executor(mod)
    for n in (0, 1, 5, 20):
        assert_scalar(ex(n), math.factorial(n), "int64")


EVEN_ODD = """
def @is_even(%n: int32) -> bool {
  if (equal(%n, 0)) { True } else { @is_odd(subtract(%n, 1)) }
}
def @is_odd(%n: int32) -> bool {
  if (equal(%n, 0)) { False } else { @is_even(subtract(%n, 1)) }
}
def @main(%n: int32) -> (bool, bool) { (@is_even(%n), @is_odd(%n)) }
"""


def test_mutual_recursion_between_globals():
    ex = rl.create_executor(module(EVEN_ODD))
    for n in range(8):
        even, odd = ex(n)
        assert_scalar(even, n % 2 == 0, "bool")
        assert_scalar(odd, n % 2 == 1, "bool")


def test_deep_mutual_recursion():
    even, odd = rl.evaluate(module(EVEN_ODD), 100_001)
    assert even.item() is False and odd.item() is True


# ------------------------------------------------------------------ ADTs and match


def test_adt_construction_result_has_name_fields_and_readable_repr():
    value = run(LIST + """
def @main() -> List[int32] { Cons(1, Cons(2, Cons(3, Nil))) }
""")
    assert isinstance(value, ConstructorValue)
    assert value.name == "Cons" and len(value.fields) == 2
    assert_scalar(value.fields[0], 1, "int32")
    assert to_python_list(value) == [1, 2, 3]
    assert repr(value) == "Cons(1, Cons(2, Cons(3, Nil)))"


def test_adt_value_from_python_is_accepted_as_an_argument():
    mod = module(LIST + """
def @make(%n: int32) -> List[int32] {
  if (equal(%n, 0)) { Nil } else { Cons(%n, @make(subtract(%n, 1))) }
}
def @total(%xs: List[int32]) -> int32 {
  match (%xs) {
    Cons(%x, %rest) => add(%x, @total(%rest)),
    Nil => 0,
  }
}
""")
    ex = rl.create_executor(mod)
    xs = ex(4, entry="make")
    assert to_python_list(xs) == [4, 3, 2, 1]
    assert_scalar(ex(xs, entry="total"), 10, "int32")


def test_constructor_used_as_a_first_class_function():
    value = run(LIST + """
def @apply(%f: fn (int32) -> Option[int32], %x: int32) -> Option[int32] { %f(%x) }
def @main() -> Option[int32] {
  let %c = Cons;
  %0 = %c(5, Nil);
  match (%0) {
    Cons(%h, _) => @apply(Some, %h),
    Nil => None,
  }
}
""")
    assert value.name == "Some"
    assert_scalar(value.fields[0], 5, "int32")


CLASSIFY = LIST + """
def @classify(%xs: List[int32]) -> int32 {
  match (%xs) {
    Nil => -1,
    Cons(%x, Nil) => %x,
    Cons(%x, Cons(%y, _)) => add(multiply(%x, 10), %y),
  }
}
def @main(%n: int32) -> int32 {
  %0 = if (equal(%n, 0)) { Nil } else {
    if (equal(%n, 1)) { Cons(7, Nil) } else { Cons(4, Cons(2, Cons(9, Nil))) }
  };
  @classify(%0)
}
"""


@pytest.mark.parametrize("n, expected", [(0, -1), (1, 7), (3, 42)])
def test_match_constructor_patterns_nested_var_and_wildcard(n, expected):
    assert_scalar(run(CLASSIFY, n), expected, "int32")


def test_match_tries_clauses_top_to_bottom():
    # Both clauses accept Cons(1, Nil); the first one written wins.
    out = run(LIST + """
def @main() -> int32 {
  match (Cons(1, Nil)) {
    Cons(_, _) => 10,
    Cons(%x, Nil) => 20,
    Nil => 30,
  }
}
""")
    assert_scalar(out, 10, "int32")


@pytest.mark.parametrize("a, b, expected", [(True, True, 3), (True, False, 1),
                                            (False, True, 2), (False, False, 0)])
def test_match_tuple_patterns_with_nested_constructors(a, b, expected):
    # (Some(1) if a else None, Some(2) if b else None) matched against tuple patterns.
    out = run(LIST + """
def @opt(%flag: bool, %v: int32) -> Option[int32] {
  if (%flag) { Some(%v) } else { None }
}
def @main(%a: bool, %b: bool) -> int32 {
  %0 = (@opt(%a, 1), @opt(%b, 2));
  match (%0) {
    (Some(%x), Some(%y)) => add(%x, %y),
    (Some(%x), None) => %x,
    (None, %rest) => match (%rest) {
      Some(%y) => %y,
      None => 0,
    },
  }
}
""", a, b)
    assert_scalar(out, expected, "int32")


def test_match_var_pattern_binds_the_whole_value_and_wildcard_accepts_anything():
    out = run(LIST + """
def @main() -> (int32, int32) {
  %0 = match (Some(8)) {
    %whole => match (%whole) { Some(%v) => %v, None => 0 },
  };
  %1 = match ((1, 2)) {
    _ => 99,
  };
  (%0, %1)
}
""")
    assert [v.item() for v in out] == [8, 99]


def test_failed_partial_match_is_an_interpreter_error_with_the_match_span():
    text = LIST + """
def @head(%xs: List[int32]) -> int32 {
  match? (%xs) {
    Cons(%x, _) => %x,
  }
}
def @main() -> int32 { @head(Nil) }
"""
    mod = module(text)
    lines = (VERSION + text).splitlines()
    line = next(i for i, s in enumerate(lines, 1) if "match?" in s)
    with pytest.raises(InterpreterError) as info:
        rl.evaluate(mod)
    span = info.value.span
    assert span is not None
    assert span.source_name == "test.relay"
    assert (span.line, span.column) == (line, lines[line - 1].index("match?") + 1)
    assert "Nil" in str(info.value)
    assert "test.relay:%d:" % line in str(info.value)


def test_partial_match_that_succeeds_runs_its_clause():
    out = run(LIST + """
def @main() -> int32 {
  match? (Cons(6, Nil)) {
    Cons(%x, _) => %x,
  }
}
""")
    assert_scalar(out, 6, "int32")


# ------------------------------------------------------------------ references


def test_ref_aliasing_two_names_one_cell():
    out = run("""
def @main() -> (int32, int32) {
  let %a = ref(1);
  let %b = %a;
  ref_write(%b, 5);
  let %seen = ref_read(%a);
  ref_write(%a, add(ref_read(%b), 1));
  (%seen, ref_read(%b))
}
""")
    assert [v.item() for v in out] == [5, 6]


def test_ref_aliasing_through_a_call_and_a_tuple():
    out = run("""
def @bump(%r: ref(int32), %by: int32) -> () {
  ref_write(%r, add(ref_read(%r), %by))
}
def @main() -> int32 {
  let %cell = ref(0);
  let %pair = (%cell, %cell);
  @bump(%pair.0, 3);
  @bump(%pair.1, 4);
  ref_read(%cell)
}
""")
    assert_scalar(out, 7, "int32")


def test_ref_write_returns_unit_and_cells_hold_any_value():
    out = run("""
def @main() -> ((), (int32, float32)) {
  let %r = ref((1, 2f));
  let %u = ref_write(%r, (3, 4.5f));
  (%u, ref_read(%r))
}
""")
    assert out[0] == ()
    assert [v.item() for v in out[1]] == [3, 4.5]


def test_ref_returned_to_python_is_a_cell():
    cell = run("def @main() -> ref(int32) { ref(41) }")
    assert isinstance(cell, RefValue)
    assert_scalar(cell.value, 41, "int32")
    assert repr(cell) == "ref(41)"


# ------------------------------------------------------------------ meta constants


META = """
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = multiply(%x, meta[relay.Constant][0]);
  add(%0, meta[relay.Constant][1])
}
"""


def test_meta_constants_from_the_metadata_table():
    w = np.array([[1, 2, 3], [4, 5, 6]], dtype="float32")
    b = np.array([0.5, -0.5, 1.0], dtype="float32")
    x = np.full((2, 3), 2.0, dtype="float32")
    out = run(META, x, metadata={"relay.Constant": [w, b]})
    np.testing.assert_array_equal(out, [[2.5, 3.5, 7.0], [8.5, 9.5, 13.0]])


def test_meta_constants_survive_the_printed_metadata_section():
    w = np.array([[1, 2, 3], [4, 5, 6]], dtype="float32")
    b = np.array([0.5, -0.5, 1.0], dtype="float32")
    text = rl.astext(module(META, {"relay.Constant": [w, b]}), show_meta_data=True)
    out = rl.evaluate(rl.parse(text), np.ones((2, 3), dtype="float32"))
    np.testing.assert_array_equal(out, w + b)


# ------------------------------------------------------------------ op kernels vs NumPy


def _conv2d_nchw(x, w, pad, stride):
    """Direct convolution: a sum over kernel offsets of shifted input windows."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), dtype="float64")
    for i in range(kh):
        for j in range(kw):
            window = x[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, i, j])
    return out


def _max_pool(x, k, s):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.full((n, c, oh, ow), -np.inf)
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = x[:, :, i * s:i * s + k, j * s:j * s + k].max(axis=(2, 3))
    return out


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


RNG = np.random.default_rng(7)
A23 = RNG.standard_normal((2, 3)).astype("float32")
B3 = RNG.standard_normal(3).astype("float32")
P23 = (RNG.random((2, 3)) + 0.5).astype("float32")
X4 = RNG.standard_normal((2, 4)).astype("float32")
W34 = RNG.standard_normal((3, 4)).astype("float32")
IMG = RNG.standard_normal((1, 2, 6, 6)).astype("float32")
KER = RNG.standard_normal((3, 2, 3, 3)).astype("float32")

F = "float32"
# (call text over %a/%b, argument types, arguments, result type, NumPy formula)
OP_CASES = {
    "add_broadcast": ("add(%a, %b)", ["Tensor[(2, 3), float32]", "Tensor[(3), float32]"],
                      [A23, B3], "Tensor[(2, 3), float32]", lambda a, b: a + b),
    "subtract": ("subtract(%a, %b)", ["Tensor[(2, 3), float32]", "Tensor[(3), float32]"],
                 [A23, B3], "Tensor[(2, 3), float32]", lambda a, b: a - b),
    "divide": ("divide(%a, %b)", ["Tensor[(2, 3), float32]", "Tensor[(2, 3), float32]"],
               [A23, P23], "Tensor[(2, 3), float32]", lambda a, b: a / b),
    "power": ("power(%a, %b)", ["Tensor[(2, 3), float32]", "Tensor[(2, 3), float32]"],
              [P23, A23], "Tensor[(2, 3), float32]", lambda a, b: np.exp(b * np.log(a))),
    "maximum": ("maximum(%a, %b)", ["Tensor[(2, 3), float32]", "Tensor[(3), float32]"],
                [A23, B3], "Tensor[(2, 3), float32]", lambda a, b: np.where(a > b, a, b)),
    "exp": ("exp(%a)", ["Tensor[(2, 3), float32]"], [A23], "Tensor[(2, 3), float32]",
            lambda a: np.e ** a.astype("float64")),
    "sigmoid": ("sigmoid(%a)", ["Tensor[(2, 3), float32]"], [A23], "Tensor[(2, 3), float32]",
                lambda a: 1 / (1 + np.exp(-a.astype("float64")))),
    "tanh": ("tanh(%a)", ["Tensor[(2, 3), float32]"], [A23], "Tensor[(2, 3), float32]",
             lambda a: (np.exp(2.0 * a) - 1) / (np.exp(2.0 * a) + 1)),
    "relu": ("nn.relu(%a)", ["Tensor[(2, 3), float32]"], [A23], "Tensor[(2, 3), float32]",
             lambda a: (a + abs(a)) / 2),
    "leaky_relu": ("nn.leaky_relu(%a, alpha=0.1f)", ["Tensor[(2, 3), float32]"], [A23],
                   "Tensor[(2, 3), float32]", lambda a: np.where(a > 0, a, 0.1 * a)),
    "sum_axis": ("sum(%a, axis=[1])", ["Tensor[(2, 3), float32]"], [A23], "Tensor[(2), float32]",
                 lambda a: a[:, 0] + a[:, 1] + a[:, 2]),
    "mean_keepdims": ("mean(%a, axis=[0], keepdims=True)", ["Tensor[(2, 3), float32]"], [A23],
                      "Tensor[(1, 3), float32]", lambda a: ((a[0] + a[1]) / 2)[None, :]),
    "max_all": ("max(%a)", ["Tensor[(2, 3), float32]"], [A23], "float32",
                lambda a: sorted(a.ravel())[-1]),
    "argmax": ("argmax(%a, axis=[1])", ["Tensor[(2, 3), float32]"], [A23], "Tensor[(2), int32]",
               lambda a: np.array([list(r).index(max(r)) for r in a])),
    "softmax": ("nn.softmax(%a)", ["Tensor[(2, 3), float32]"], [A23], "Tensor[(2, 3), float32]",
                lambda a: np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)),
    "log_softmax": ("nn.log_softmax(%a)", ["Tensor[(2, 3), float32]"], [A23],
                    "Tensor[(2, 3), float32]",
                    lambda a: a - np.log(np.exp(a).sum(axis=1, keepdims=True))),
    "dense": ("nn.dense(%a, %b, units=3)", ["Tensor[(2, 4), float32]", "Tensor[(3, 4), float32]"],
              [X4, W34], "Tensor[(2, 3), float32]",
              lambda x, w: np.einsum("ik,jk->ij", x, w)),
    "batch_matmul": ("nn.batch_matmul(%a, %b, transpose_b=True)",
                     ["Tensor[(1, 2, 4), float32]", "Tensor[(1, 3, 4), float32]"],
                     [X4[None], W34[None]], "Tensor[(1, 2, 3), float32]",
                     lambda x, w: np.einsum("bik,bjk->bij", x, w)),
    "transpose": ("transpose(%a, axes=[1, 0])", ["Tensor[(2, 3), float32]"], [A23],
                  "Tensor[(3, 2), float32]",
                  lambda a: np.array([[a[i, j] for i in range(2)] for j in range(3)])),
    "reshape": ("reshape(%a, newshape=[3, -1])", ["Tensor[(2, 3), float32]"], [A23],
                "Tensor[(3, 2), float32]", lambda a: np.array(a.ravel().tolist()).reshape(3, 2)),
    "concatenate": ("concatenate((%a, %b), axis=0)",
                    ["Tensor[(2, 3), float32]", "Tensor[(2, 3), float32]"], [A23, P23],
                    "Tensor[(4, 3), float32]", lambda a, b: np.array(a.tolist() + b.tolist())),
    "strided_slice": ("strided_slice(%a, begin=[0, 2], end=[2, 0], strides=[1, -1])",
                      ["Tensor[(2, 3), float32]"], [A23], "Tensor[(2, 2), float32]",
                      lambda a: np.array([[r[2], r[1]] for r in a])),
    "cast": ("cast(%a, dtype=\"int32\")", ["Tensor[(2, 3), float32]"], [A23 * 10],
             "Tensor[(2, 3), int32]", lambda a: np.trunc(a)),
    "where": ("where(greater(%a, 0f), %a, %b)",
              ["Tensor[(2, 3), float32]", "Tensor[(2, 3), float32]"], [A23, P23],
              "Tensor[(2, 3), float32]", lambda a, b: np.choose((a > 0).astype(int), [b, a])),
    "clip": ("clip(%a, a_min=-0.5f, a_max=0.5f)", ["Tensor[(2, 3), float32]"], [A23],
             "Tensor[(2, 3), float32]", lambda a: np.minimum(np.maximum(a, -0.5), 0.5)),
    "conv2d": ("nn.conv2d(%a, %b, padding=[1, 1, 1, 1], channels=3, kernel_size=[3, 3])",
               ["Tensor[(1, 2, 6, 6), float32]", "Tensor[(3, 2, 3, 3), float32]"], [IMG, KER],
               "Tensor[(1, 3, 6, 6), float32]", lambda x, w: _conv2d_nchw(x, w, 1, 1)),
    "conv2d_strided": ("nn.conv2d(%a, %b, strides=[2, 2], channels=3, kernel_size=[3, 3])",
                       ["Tensor[(1, 2, 6, 6), float32]", "Tensor[(3, 2, 3, 3), float32]"],
                       [IMG, KER], "Tensor[(1, 3, 2, 2), float32]",
                       lambda x, w: _conv2d_nchw(x, w, 0, 2)),
    "max_pool2d": ("nn.max_pool2d(%a, pool_size=[2, 2], strides=[2, 2])",
                   ["Tensor[(1, 2, 6, 6), float32]"], [IMG], "Tensor[(1, 2, 3, 3), float32]",
                   lambda x: _max_pool(x, 2, 2)),
    "global_avg_pool2d": ("nn.global_avg_pool2d(%a)", ["Tensor[(1, 2, 6, 6), float32]"], [IMG],
                          "Tensor[(1, 2, 1, 1), float32]",
                          lambda x: x.sum(axis=(2, 3), keepdims=True) / 36),
    "batch_norm": ("%0 = nn.batch_norm(%a, %b, %b, %b, %b, epsilon=0.01f); %0.0",
                   ["Tensor[(2, 3), float32]", "Tensor[(3), float32]"], [A23, P23[0]],
                   "Tensor[(2, 3), float32]",
                   lambda x, p: (x - p) / np.sqrt(p + 0.01) * p + p),
}


@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_op_kernel_matches_numpy_formula(name):
    call, types, args, ret, formula = OP_CASES[name]
    params = ", ".join(f"%{p}: {t}" for p, t in zip("ab", types))
    out = run(f"def @main({params}) -> {ret} {{ {call} }}", *args)
    expected = np.asarray(formula(*[a.astype("float64") for a in args]))
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.astype("float64"), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op, expected", [("divide", [-3, 3, -3, 3]),
                                          ("mod", [-1, 1, 1, -1]),
                                          ("floor_divide", [-4, 3, -4, 3]),
                                          ("floor_mod", [1, 1, -1, -1])])
def test_integer_division_follows_tvm(op, expected):
    # TVM's divide/mod on integers truncate toward zero (C semantics, topi::divide /
    # truncmod); floor_divide/floor_mod round toward negative infinity. By hand:
    # -7/2, 7/2, 7/-2, -7/-2.
    a = np.array([-7, 7, 7, -7], dtype="int32")
    b = np.array([2, 2, -2, -2], dtype="int32")
    out = run(f"def @main(%a: Tensor[(4), int32], %b: Tensor[(4), int32]) -> "
              f"Tensor[(4), int32] {{ {op}(%a, %b) }}", a, b)
    assert out.dtype == np.int32
    assert out.tolist() == expected


def test_kernel_failure_is_an_interpreter_error_with_the_call_span():
    # Indices are checked at run time: take with mode="fast" on an index past the end.
    text = """
def @main(%x: Tensor[(3), float32], %i: Tensor[(1), int32]) -> Tensor[(1), float32] {
  take(%x, %i, axis=0, mode="fast")
}
"""
    try:
        out = run(text, np.zeros(3, "float32"), np.array([7], "int32"))
    except InterpreterError as e:
        assert e.span is not None and (e.span.line, e.span.column) == (4, 3)
    else:  # a kernel may define out-of-range "fast" reads; it must not crash either way
        assert out.shape == (1,)


# ------------------------------------------------------------------ arguments and results


SIGNATURE = """
def @main(%x: Tensor[(2, 3), float32], %n: int64) -> Tensor[(2, 3), float32] {
  multiply(%x, cast(%n, dtype="float32"))
}
"""


def test_python_scalars_and_lists_are_converted_to_the_declared_dtype():
    out = run(SIGNATURE, [[1, 2, 3], [4, 5, 6]], 2)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[2, 4, 6], [8, 10, 12]])
    echoed = run("def @main(%n: int64, %f: float32, %b: bool) -> (int64, float32, bool) "
                 "{ (%n, %f, %b) }", 3, 0.5, True)
    assert_scalar(echoed[0], 3, "int64")
    assert_scalar(echoed[1], 0.5, "float32")
    assert_scalar(echoed[2], True, "bool")


def test_wrong_dtype_is_an_input_error():
    with pytest.raises(InputError, match=r"%x.*float32.*float64"):
        run(SIGNATURE, np.ones((2, 3), dtype="float64"), 1)


def test_python_int_out_of_the_dtype_range_is_an_input_error():
    # 2**40 does not fit int32: a clear InputError, not NumPy's OverflowError.
    with pytest.raises(InputError, match=r"%n"):
        run("def @main(%n: int32) -> int32 { %n }", 2 ** 40)


def test_wrong_shape_is_an_input_error():
    with pytest.raises(InputError, match=r"%x.*shape \(2, 3\).*\(3, 2\)"):
        run(SIGNATURE, np.ones((3, 2), dtype="float32"), 1)
    with pytest.raises(InputError, match=r"shape"):
        run(SIGNATURE, np.ones((2, 3, 1), dtype="float32"), 1)


def test_wrong_arity_is_an_input_error():
    with pytest.raises(InputError, match=r"@main takes 2 argument\(s\) \(%x, %n\), got 1"):
        run(SIGNATURE, np.ones((2, 3), dtype="float32"))


def test_tensor_given_for_a_tuple_and_unknown_entry_are_input_errors():
    mod = module("def @main(%t: (int32, int32)) -> int32 { %t.0 }")
    with pytest.raises(InputError, match=r"tuple of 2"):
        rl.evaluate(mod, 5)
    with pytest.raises(InputError, match=r"tuple of 2"):
        rl.evaluate(mod, (1, 2, 3))
    with pytest.raises(InputError, match=r"no function @nope"):
        rl.evaluate(mod, (1, 2), entry="nope")


def test_any_dimension_accepts_every_length():
    ex = rl.create_executor(module(
        "def @main(%x: Tensor[(?, 2), float32]) -> Tensor[(?, 2), float32] { add(%x, %x) }"))
    for n in (1, 5):
        out = ex(np.ones((n, 2), dtype="float32"))
        np.testing.assert_array_equal(out, np.full((n, 2), 2.0))
    with pytest.raises(InputError):
        ex(np.ones((3, 3), dtype="float32"))


def test_executor_runs_other_entries_and_is_reusable():
    ex = rl.create_executor(module(COUNTER + """
def @main() -> int32 { %0 = @make_counter(5); %0() }
"""))
    assert ex().item() == 6
    assert ex().item() == 6          # every run starts from fresh cells
    counter = ex(41, entry="make_counter")
    assert counter().item() == 42 and counter().item() == 43


# ------------------------------------------------------------------ scale


def test_million_step_tail_recursive_loop():
    n = 1_000_000
    out = run("""
def @loop(%i: int64, %acc: int64) -> int64 {
  if (equal(%i, 0i64)) { %acc } else { @loop(subtract(%i, 1i64), add(%acc, %i)) }
}
def @main(%n: int64) -> int64 { @loop(%n, 0i64) }
""", n)
    assert_scalar(out, n * (n + 1) // 2, "int64")


def test_tail_recursive_loop_runs_in_constant_memory():
    # 20,000 live frames would be megabytes; a tail loop keeps one (peak ~1.5 KB).
    mod = module("""
def @loop(%i: int64, %acc: int64) -> int64 {
  if (equal(%i, 0i64)) { %acc } else { @loop(subtract(%i, 1i64), add(%acc, %i)) }
}
def @main(%n: int64) -> int64 { @loop(%n, 0i64) }
""")
    ex = rl.create_executor(mod)
    ex(10)                        # warm caches outside the measurement
    tracemalloc.start()
    try:
        out = ex(20_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.item() == 20_000 * 20_001 // 2
    assert peak < 256_000, f"peak {peak} bytes for a tail-recursive loop"


FOLD = LIST + """
def @range(%lo: int64, %hi: int64) -> List[int64] {
  if (greater_equal(%lo, %hi)) { Nil } else { Cons(%lo, @range(add(%lo, 1i64), %hi)) }
}
def @foldr(%f: fn (int64, int64) -> int64, %acc: int64, %xs: List[int64]) -> int64 {
  match (%xs) {
    Cons(%x, %rest) => %f(%x, @foldr(%f, %acc, %rest)),
    Nil => %acc,
  }
}
def @foldl(%f: fn (int64, int64) -> int64, %acc: int64, %xs: List[int64]) -> int64 {
  match (%xs) {
    Cons(%x, %rest) => @foldl(%f, %f(%acc, %x), %rest),
    Nil => %acc,
  }
}
def @main(%n: int64) -> (int64, int64) {
  let %xs = @range(0i64, %n);
  let %plus = fn (%a: int64, %b: int64) -> int64 { add(%a, %b) };
  let %minus = fn (%x: int64, %rest: int64) -> int64 { subtract(%x, %rest) };
  (@foldl(%plus, 0i64, %xs), @foldr(%minus, 0i64, %xs))
}
"""


def test_hundred_thousand_element_list_non_tail_recursion():
    # @range and @foldr recurse 100,000 deep without tail calls; @foldl walks the list.
    n = 100_000
    total, alternating = run(FOLD, n)
    assert_scalar(total, n * (n - 1) // 2, "int64")       # 4,999,950,000: needs int64
    # foldr(x - rest) is 0 - (1 - (2 - ...)) = sum (-1)**i * i = -n/2 for even n: it
    # checks the order of the folds as well as their depth.
    assert_scalar(alternating, -(n // 2), "int64")


def test_long_adt_list_result_repr_and_fields_do_not_recurse():
    xs = rl.evaluate(module(FOLD), 0, 100_000, entry="range")
    items = to_python_list(xs)
    assert items[:3] == [0, 1, 2] and items[-1] == 99_999 and len(items) == 100_000
    text = repr(xs)
    assert text.startswith("Cons(0, Cons(1, ") and text.endswith("Nil" + ")" * 100_000)
