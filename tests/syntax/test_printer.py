"""The printer (relaylang/syntax/printer.py, print_values.py): exact text for IR built by hand."""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pytest

import relaylang as rl
from relaylang import op
from relaylang.ir import (ANY, Attrs, Call, Clause, Constant, Constructor, DictAttrs, Function,
                          FuncType, GlobalTypeVar, GlobalVar, If, IncompleteType, IRModule, Let,
                          Match, MetaObject, PatternConstructor, PatternTuple, PatternVar,
                          PatternWildcard, RefCreate, RefRead, RefType, RefWrite, TensorType, Tuple,
                          TupleGetItem, TupleType, TypeCall, TypeData, TypeVar, Var)
from relaylang.ir.equal import structural_equal
from relaylang.syntax import print_layout
from relaylang.syntax.print_values import float_attr, legal_name, scalar_literal, unique_name
from relaylang.syntax.printer import META_OMITTED, TextPrinter, astext

HEADER = '#[version = "0.0.5"]\n'
F32 = TensorType((), "float32")
BOOL = TensorType((), "bool")
T23 = TensorType((2, 3), "float32")


def const(value, dtype="float32"):
    return Constant(np.array(value, dtype=dtype))


def call(name, *args, attrs=None):
    return Call(op.get(name), tuple(args), attrs)


def add(a, b):
    return call("add", a, b)


def body(text: str) -> str:
    """Expected expression text: the header, then `text` without its surrounding newlines."""
    return HEADER + text.strip("\n")


def module(*fns: tuple[str, Function], types: tuple[TypeData, ...] = ()) -> IRModule:
    mod = IRModule({GlobalVar(name): fn for name, fn in fns})
    for data in types:
        mod.add_type_definition(data)
    return mod


def list_adt():
    a = TypeVar("A")
    header = GlobalTypeVar("List")
    cons = Constructor("Cons", (a, TypeCall(header, (a,))), header, 0)
    nil = Constructor("Nil", (), header, 1)
    return TypeData(header, (a,), (cons, nil)), cons, nil


# ------------------------------------------------------------------ module layout


def test_module_sorts_types_then_functions_with_blank_lines():
    x = Var("x", F32)
    opaque = TypeData(GlobalTypeVar("Opaque"), (), ())
    data, _, _ = list_adt()
    mod = module(("main", Function((x,), add(x, const(1.0)))),
                 ("aux", Function((), const(0, "int32"))), types=(opaque, data))
    assert astext(mod) == HEADER + (
        "type List[A] {\n"
        "  Cons(A, List[A]),\n"
        "  Nil,\n"
        "}\n"
        "\n"
        "extern type Opaque\n"
        "\n"
        "def @aux() {\n"
        "  0\n"
        "}\n"
        "\n"
        "def @main(%x: float32) {\n"
        "  add(%x, 1f)\n"
        "}\n")
    assert str(mod) == astext(mod) == mod.astext()


def test_empty_module_is_the_header():
    assert astext(IRModule()) == HEADER


def test_adt_without_parameters_prints_as_its_name():
    mod = rl.parse(HEADER + "type List[T] { Cons(T, List[T]), Nil }\ntype S { A }\n"
                   "def @f(%s: S, %l: List[S]) -> S { %s }\n")
    printed = astext(mod)
    assert "def @f(%s: S, %l: List[S]) -> S {" in printed and "S[]" not in printed
    assert structural_equal(rl.parse(printed), mod)


def test_graph_ids_count_on_across_definitions():
    def double():
        x = Var("x", F32)
        y = add(x, x)
        return Function((x,), call("multiply", y, y))
    text = astext(module(("a", double()), ("b", double())))
    assert "%0 = add(%x, %x);\n  multiply(%0, %0)" in text
    assert "def @b(%x1: float32) {\n  %1 = add(%x1, %x1);\n  multiply(%1, %1)\n}" in text


def test_def_with_type_params_attrs_and_return_type():
    a = TypeVar("A")
    x = Var("x", a)
    fn = Function((x,), x, a, (a,), DictAttrs((("Primitive", 1), ("Compiler", "ext"))))
    assert astext(module(("id", fn))) == HEADER + (
        'def @id[A](%x: A, Primitive=1, Compiler="ext") -> A {\n  %x\n}\n')


# ------------------------------------------------------------------ graph form


def test_calls_are_bound_and_the_final_one_inlined():
    x = Var("x", F32)
    e = call("nn.relu", add(x, const(1.0)))
    assert astext(e) == body("""
free_var %x: float32;
%0 = add(%x, 1f);
nn.relu(%0)""")


def test_shared_node_gets_one_binding_by_identity():
    x = Var("x", F32)
    a, b = add(x, x), add(x, x)            # equal structure, different nodes
    assert astext(Tuple((a, a, b))) == body("""
free_var %x: float32;
%0 = add(%x, %x);
%1 = add(%x, %x);
(%0, %0, %1)""")


def test_shared_final_expression_is_bound_not_inlined():
    x = Var("x", F32)
    a = add(x, x)
    fn = Function((), a)
    assert astext(Tuple((fn, a))) == body("""
free_var %x: float32;
%0 = add(%x, %x);
%1 = fn () {
  %0
};
(%1, %0)""")


def test_binding_placed_in_first_scope_that_uses_it():
    x, c = Var("x", F32), Var("c", BOOL)
    e = If(c, call("nn.relu", add(x, x)), x)
    assert astext(e) == body("""
free_var %c: bool;
free_var %x: float32;
if (%c) {
  %0 = add(%x, %x);
  nn.relu(%0)
} else {
  %x
}""")


def test_node_shared_by_two_branches_is_bound_in_their_common_scope():
    x, c = Var("x", F32), Var("c", BOOL)
    shared = add(x, x)
    e = If(c, call("negative", shared), call("exp", shared))
    assert astext(e) == body("""
free_var %c: bool;
free_var %x: float32;
%0 = add(%x, %x);
if (%c) {
  negative(%0)
} else {
  exp(%0)
}""")


def test_node_shared_inside_and_outside_a_closure():
    x = Var("x", F32)
    shared = add(x, x)
    e = Tuple((Function((), call("exp", shared)), shared))
    assert astext(e) == body("""
free_var %x: float32;
%0 = add(%x, %x);
%1 = fn () {
  exp(%0)
};
(%1, %0)""")


def test_operands_that_are_not_atoms_are_bound():
    x = Var("x", F32)
    t = Tuple((x, x))
    e = Tuple((TupleGetItem(t, 1), RefRead(RefCreate(x)), RefWrite(RefCreate(x), t)))
    assert astext(e) == body("""
free_var %x: float32;
%0 = (%x, %x);
%1 = %0.1;
%2 = ref(%x);
%3 = ref_read(%2);
%4 = ref(%x);
%5 = ref_write(%4, %0);
(%1, %3, %5)""")


def test_callee_closure_bound_after_arguments():
    x = Var("x", F32)
    p = Var("p", F32)
    e = Call(Function((p,), p), (add(x, x),))
    assert astext(e) == body("""
free_var %x: float32;
%0 = add(%x, %x);
%1 = fn (%p: float32) {
  %p
};
%1(%0)""")


def test_one_and_zero_element_tuples():
    x = Var("x", F32)
    assert astext(Tuple((Tuple((x,)), Tuple(())))) == body("""
free_var %x: float32;
%0 = (%x,);
%1 = ();
(%0, %1)""")


# ------------------------------------------------------------------ let


def test_let_chain_prints_as_let_lines():
    x, y, z = Var("x", F32), Var("y"), Var("z", F32)
    e = Let(y, add(x, x), Let(z, call("multiply", y, y), Tuple((y, z))))
    assert astext(e) == body("""
free_var %x: float32;
let %y = add(%x, %x);
let %z: float32 = multiply(%y, %y);
(%y, %z)""")


def test_let_value_bindings_come_before_the_let_line():
    x, y = Var("x", F32), Var("y")
    e = Let(y, call("exp", add(x, x)), y)
    assert astext(e) == body("""
free_var %x: float32;
%0 = add(%x, %x);
let %y = exp(%0);
%y""")


def test_let_as_let_value_is_parenthesised():
    y, z = Var("y"), Var("z")
    e = Let(y, Let(z, const(1, "int32"), z), y)
    assert astext(e) == body("""
let %y = (
  let %z = 1;
  %z
);
%y""")


def test_let_used_as_operand_is_a_parenthesised_binding():
    z = Var("z")
    e = call("exp", Let(z, const(1.0), z))
    assert astext(e) == body("""
%0 = (
  let %z = 1f;
  %z
);
exp(%0)""")


def test_match_as_let_value_and_as_binding_is_parenthesised():
    data, cons, nil = list_adt()
    xs, h, t, n = Var("xs"), Var("h"), Var("t"), Var("n")
    m = Match(xs, (Clause(PatternConstructor(cons, (PatternVar(h), PatternVar(t))), h),
                   Clause(PatternWildcard(), const(0.0))), complete=False)
    e = Let(n, m, call("exp", Match(xs, (Clause(PatternVar(Var("v")), n),))))
    assert astext(e) == body("""
free_var %xs;
let %n = (match? (%xs) {
  Cons(%h, %t) => {
    %h
  },
  _ => {
    0f
  },
});
%0 = (match (%xs) {
  %v => {
    %n
  },
});
exp(%0)""")


def test_let_body_let_shared_is_not_part_of_the_chain():
    a, b = Var("a"), Var("b")
    inner = Let(b, const(2, "int32"), b)
    e = Let(a, inner, Tuple((inner, a)))
    text = astext(e)
    assert text == body("""
%0 = (
  let %b = 2;
  %b
);
let %a = %0;
(%0, %a)""")


def test_recursive_let_names_the_variable_before_its_value():
    f, n = Var("f"), Var("n", TensorType((), "int32"))
    fn = Function((n,), Call(f, (n,)))
    assert astext(Let(f, fn, f)) == body("""
let %f = fn (%n: int32) {
  %f(%n)
};
%f""")


# ------------------------------------------------------------------ names


@pytest.mark.parametrize("hint, name", [
    ("x", "x"), ("", "v"), ("0", "v0"), ("_tmp", "_tmp"), ("a-b:c", "a_b_c"),
    ("bn.weight", "bn.weight"), ("conv1/weight", "conv1/weight"), ("a.0", "a_0"),
    ("a.", "a_"), (".a", "_a"), ("a//b", "a_/b"), ("type", "type_"), ("ref", "ref_"),
    ("naïve", "na_ve"),
])
def test_legal_names(hint, name):
    assert legal_name(hint, "v") == name


def test_unique_names_follow_tvm_counter():
    taken: dict[str, int] = {}
    assert [unique_name(n, taken) for n in ["x", "x", "x1", "x", "y"]] == \
        ["x", "x1", "x11", "x2", "y"]


def test_names_unique_across_the_whole_text():
    x1, x2, x3 = Var("x", F32), Var("x", F32), Var("x", F32)
    e = Tuple((Function((x1,), x1), Function((x2,), x2), x3))
    # Named in print order; a free variable's declaration is hoisted to the top.
    assert astext(e) == body("""
free_var %x2: float32;
%0 = fn (%x: float32) {
  %x
};
%1 = fn (%x1: float32) {
  %x1
};
(%0, %1, %x2)""")


def test_distinct_type_vars_with_one_name_are_told_apart():
    a1, a2 = TypeVar("A"), TypeVar("A")
    x = Var("x", a1)
    inner = Function((Var("y", a2),), x, None, (a2,))
    fn = Function((x,), inner, None, (a1,))
    assert astext(module(("f", fn))) == HEADER + (
        "def @f[A](%x: A) {\n"
        "  fn [A1](%y: A1) {\n"
        "    %x\n"
        "  }\n"
        "}\n")


def test_type_var_names_that_would_read_as_dtypes_are_renamed():
    tv = TypeVar("float32")
    assert astext(FuncType((tv,), tv, (tv,))) == "fn [Tfloat32](Tfloat32) -> Tfloat32"


# ------------------------------------------------------------------ functions and calls


def test_closure_with_everything():
    a = TypeVar("A")
    dev = MetaObject("VirtualDevice", '{"device_type": 1}')
    x = Var("x", a, dev)
    y = Var("y")
    fn = Function((x, y), x, a, (a,), DictAttrs((("Primitive", 1), ("Composite", "p"))))
    assert astext(fn, show_meta_data=False) == body("""
fn [A](%x {virtual_device=meta[VirtualDevice][0]}: A, %y, Primitive=1, Composite="p") -> A {
  %x
}
""") + "\n" + META_OMITTED


def test_function_without_params_with_attrs():
    fn = Function((), const(0.0), attrs=DictAttrs((("Inline", 1),)))
    assert astext(fn) == body("""
fn (Inline=1) {
  0f
}""")


def test_operator_attrs_print_non_defaults_in_schema_order():
    x = Var("x", TensorType((1, 3, 8, 8), "float32"))
    w = Var("w", TensorType((16, 3, 3, 3), "float32"))
    schema = op.get_op_def("nn.conv2d").attrs
    attrs = schema(kernel_size=(3, 3), channels=16, padding=(1, 1, 1, 1))
    e = call("nn.conv2d", x, w, attrs=attrs)
    assert astext(e).endswith(
        "nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3])")


def test_default_attrs_print_nothing():
    schema = op.get_op_def("nn.bias_add").attrs
    x, b = Var("x"), Var("b")
    assert astext(call("nn.bias_add", x, b, attrs=schema())).endswith("nn.bias_add(%x, %b)")
    assert astext(call("nn.bias_add", x, b, attrs=schema(axis=3))).endswith(
        "nn.bias_add(%x, %b, axis=3)")


def test_non_operator_call_attrs_end_with_type_key():
    f, x = Var("f"), Var("x")
    e = Call(f, (x,), DictAttrs((("k", 1),), "relay.attrs.ReshapeAttrs"))
    assert astext(e).endswith('%f(%x, k=1, attrs_type_key="relay.attrs.ReshapeAttrs")')


def test_opaque_attrs_print_as_trailing_meta_argument():
    x, w = Var("x"), Var("w")
    attrs = MetaObject("relay.attrs.DenseAttrs", '{"units": 3}')
    e = call("nn.dense", x, w, attrs=attrs)
    assert astext(e, show_meta_data=False).endswith(
        "nn.dense(%x, %w, meta[relay.attrs.DenseAttrs][0])\n" + META_OMITTED)


def test_zero_field_constructor_call_prints_bare():
    data, cons, nil = list_adt()
    x = Var("x", F32)
    e = Call(cons, (x, Call(nil, ())))
    assert astext(e) == body("""
free_var %x: float32;
%0 = Nil;
Cons(%x, %0)""")
    assert astext(cons) == body("Cons")


@dataclass(frozen=True, slots=True)
class SampleAttrs(Attrs):
    count: int = 0
    rate: float = 0.0
    flag: bool = False
    name: str = ""
    shape: object = None
    dim: object = None
    target: object = None


@pytest.mark.parametrize("field, value, text", [
    ("count", -3, "count=-3"),
    ("count", 1 << 40, "count=1099511627776"),
    ("rate", 0.5, "rate=0.5f"),
    ("rate", 3.0, "rate=3f"),
    ("rate", 1e-05, "rate=1e-05f"),
    ("rate", 0.1234567, "rate=0.1234567f"),
    ("rate", float("inf"), "rate=inff"),
    ("rate", float("-inf"), "rate=-inff"),
    ("rate", float("nan"), "rate=nanf"),
    ("flag", True, "flag=True"),
    ("name", 'a"b\\c\nd\te', 'name="a\\"b\\\\c\\nd\\te"'),
    ("shape", (1, (2, 3), ()), "shape=[1, [2, 3], []]"),
    ("shape", (ANY, None, "s"), 'shape=[?, None, "s"]'),
    ("dim", ANY, "dim=?"),
    ("target", GlobalVar("g"), "target=@g"),
])
def test_attribute_values(field, value, text):
    e = Call(Var("f"), (), SampleAttrs(**{field: value}))
    assert astext(e).endswith(f"%f({text})")


def test_expression_attribute_that_is_not_an_atom_is_bound():
    x = Var("x", F32)
    e = Call(Var("f"), (), SampleAttrs(target=add(x, x)))
    assert astext(e) == body("""
free_var %x: float32;
free_var %f;
%0 = add(%x, %x);
%f(target=%0)""")


def test_float_attr_is_exact():
    for v in [0.1, 1 / 3, 1e300, 5e-324, -2.5]:
        assert float(float_attr(v)[:-1]) == v


# ------------------------------------------------------------------ constants and meta


@pytest.mark.parametrize("value, dtype, text", [
    (42, "int32", "42"), (-1, "int32", "-1"), (42, "int64", "42i64"), (-7, "int16", "-7i16"),
    (0.5, "float32", "0.5f"), (3.0, "float32", "3f"), (1e-05, "float32", "1e-05f"),
    (0.1, "float32", "0.1f"), (1e20, "float32", "1e+20f"), (-0.0, "float32", "-0f"),
    (np.inf, "float32", "inff"), (-np.inf, "float32", "-inff"), (np.nan, "float32", "nanf"),
    (0.5, "float16", "0.5f16"), (np.inf, "float16", "inff16"), (0.1, "float64", "0.1f64"),
    (-np.inf, "float64", "-inff64"), (np.nan, "float64", "nanf64"),
    (True, "bool", "True"), (False, "bool", "False"),
])
def test_scalar_literals(value, dtype, text):
    assert scalar_literal(np.array(value, dtype=dtype)) == text
    assert astext(const(value, dtype)) == body(text)


def test_float32_literal_is_shortest_round_trip():
    rng = np.random.default_rng(1)
    for v in rng.standard_normal(200).astype("float32") * np.float32(1e3):
        text = scalar_literal(np.array(v, dtype="float32"))
        assert np.float32(float(text[:-1])) == v


@pytest.mark.parametrize("data", [np.array(3, dtype="uint8"), np.array(1, dtype="int8"),
                                  np.zeros((2, 2), dtype="float32"), np.array([1], dtype="int32")])
def test_other_constants_go_to_the_meta_table(data):
    assert scalar_literal(data) is None
    assert astext(Constant(data), show_meta_data=False) == body(
        "meta[relay.Constant][0]\n" + META_OMITTED)


def test_meta_table_indices_follow_print_order_and_identity():
    c1, c2 = Constant(np.zeros(2, "float32")), Constant(np.zeros(2, "float32"))
    dev = MetaObject("VirtualDevice", "{}")
    x = Var("x", TensorType((MetaObject("tir.SizeVar", '{"n": 1}'), 4), "float32"), dev)
    e = Function((x,), Tuple((c2, c1, c2, x)))
    p = TextPrinter()
    text = p.expr_text(e)
    assert text == """\
fn (%x {virtual_device=meta[VirtualDevice][0]}: Tensor[(meta[tir.SizeVar][0], 4), float32]) {
  (meta[relay.Constant][0], meta[relay.Constant][1], meta[relay.Constant][0], %x)
}"""
    assert list(p.meta) == ["VirtualDevice", "tir.SizeVar", "relay.Constant"]
    assert p.meta["relay.Constant"][0] is c2.data and p.meta["relay.Constant"][1] is c1.data
    assert p.meta["VirtualDevice"] == [dev]


def test_equal_meta_objects_share_an_index():
    a, b = MetaObject("VirtualDevice", "{}"), MetaObject("VirtualDevice", "{}")
    x, y = Var("x", virtual_device=a), Var("y", virtual_device=b)
    text = astext(Function((x, y), x), show_meta_data=False)
    assert ("%x {virtual_device=meta[VirtualDevice][0]}, "
            "%y {virtual_device=meta[VirtualDevice][0]}") in text


def test_metadata_section_is_appended_when_shown(monkeypatch):
    seen = {}

    def fake_encode(table):
        seen.update(table)
        return "{JSON}"
    from relaylang.syntax import metadata
    monkeypatch.setattr(metadata, "encode_metadata", fake_encode)
    c = Constant(np.ones(3, "float32"))
    assert astext(c) == body("meta[relay.Constant][0]\n#[metadata]\n{JSON}")
    assert list(seen) == ["relay.Constant"] and seen["relay.Constant"][0] is c.data
    mod = module(("main", Function((), c)))
    assert astext(mod) == HEADER + (
        "def @main() {\n  meta[relay.Constant][0]\n}\n\n#[metadata]\n{JSON}")


def test_no_meta_no_section():
    assert "#[metadata]" not in astext(const(1.0))
    assert META_OMITTED not in astext(const(1.0), show_meta_data=False)


# ------------------------------------------------------------------ types


@pytest.mark.parametrize("ty, text", [
    (F32, "float32"),
    (T23, "Tensor[(2, 3), float32]"),
    (TensorType((64,), "int8"), "Tensor[(64), int8]"),
    (TensorType((ANY, 3), "float16"), "Tensor[(?, 3), float16]"),
    (TupleType((F32, BOOL)), "(float32, bool)"),
    (TupleType((F32,)), "(float32,)"),
    (TupleType(()), "()"),
    (FuncType((F32, T23), BOOL), "fn (float32, Tensor[(2, 3), float32]) -> bool"),
    (FuncType((), TupleType(())), "fn () -> ()"),
    (TypeCall(GlobalTypeVar("List"), (F32,)), "List[float32]"),
    (TypeCall(GlobalTypeVar("Opaque"), ()), "Opaque"),
    (GlobalTypeVar("Opaque"), "Opaque"),
    (IncompleteType(), "_"),
    (RefType(F32), "ref(float32)"),
    (TupleType((TupleType((RefType(TupleType(())),)), FuncType((F32,), F32))),
     "((ref(()),), fn (float32) -> float32)"),
])
def test_types(ty, text):
    assert astext(ty) == text


def test_deeply_nested_type_prints():
    ty = F32
    for _ in range(20000):
        ty = TupleType((ty,))
    assert astext(ty) == "(" * 20000 + "float32" + ",)" * 20000


# ------------------------------------------------------------------ annotations


def test_type_comments_once_per_node():
    x = Var("x", F32)
    c = const(1.0)
    s = add(x, c)
    for node in (x, c, s):
        node.set_checked_type(F32)
    fn = Function((x,), Tuple((s, s, c)))
    fn.set_checked_type(FuncType((F32,), TupleType((F32, F32, F32))))
    assert astext(fn) == body("""
fn (%x: float32 /* ty=float32 */) {
  %0 = add(%x, 1f /* ty=float32 */) /* ty=float32 */;
  (%0, %0, 1f)
} /* ty=fn (float32) -> (float32, float32, float32) */""")


def test_let_and_if_carry_no_type_comment():
    y = Var("y")
    e = Let(y, const(1.0), y)
    e.set_checked_type(F32)
    assert "ty=" not in astext(e)


# ------------------------------------------------------------------ if, match, patterns


def test_if_layout_and_nesting():
    c = Var("c", BOOL)
    e = If(c, If(c, const(1, "int32"), const(2, "int32")), const(3, "int32"))
    assert astext(e) == body("""
free_var %c: bool;
if (%c) {
  if (%c) {
    1
  } else {
    2
  }
} else {
  3
}""")


def test_match_layout_and_patterns():
    data, cons, nil = list_adt()
    xs, h, a, b = Var("xs"), Var("h"), Var("a"), Var("b", F32)
    clauses = (
        Clause(PatternConstructor(cons, (PatternVar(h), PatternConstructor(nil))), h),
        Clause(PatternTuple((PatternVar(a), PatternVar(b), PatternTuple(()))), a),
        Clause(PatternConstructor(nil), const(0.0)),
    )
    assert astext(Match(xs, clauses)) == body("""
free_var %xs;
match (%xs) {
  Cons(%h, Nil) => {
    %h
  },
  (%a, %b: float32, ()) => {
    %a
  },
  Nil => {
    0f
  },
}""")


def test_match_scrutinee_is_bound():
    x = Var("x", F32)
    e = Match(Tuple((x, x)), (Clause(PatternWildcard(), x),))
    assert astext(e) == body("""
free_var %x: float32;
%0 = (%x, %x);
match (%0) {
  _ => {
    %x
  },
}""")


# ------------------------------------------------------------------ depth and determinism


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def test_deep_call_chain_prints_without_recursion():
    x = Var("x", F32)
    e = x
    for _ in range(100_000):
        e = call("exp", e)
    text, seconds = _timed(lambda: astext(e))
    lines = text.split("\n")
    assert lines[2] == "%0 = exp(%x);" and lines[-2] == "%99998 = exp(%99997);"
    assert lines[-1] == "exp(%99998)"
    assert seconds < 30


def test_long_let_chain_prints_without_recursion():
    n = 100_000
    vars_ = [Var(f"v{i}") for i in range(n)]
    e = vars_[-1]
    for i in reversed(range(n)):
        e = Let(vars_[i], const(0.0) if i == 0 else add(vars_[i - 1], vars_[i - 1]), e)
    text = astext(e)
    lines = text.split("\n")
    assert lines[1] == "let %v0 = 0f;" and lines[2] == "let %v1 = add(%v0, %v0);"
    assert lines[-1] == f"%v{n - 1}" and len(lines) == n + 2


@pytest.mark.parametrize("kind", ["if", "fn"])
def test_deep_textual_nesting(kind):
    n = 10_000
    c = Var("c", BOOL)
    e = const(0, "int32")
    for _ in range(n):
        e = If(c, e, const(1, "int32")) if kind == "if" else Function((), e)
    text = astext(e)
    lines = text.split("\n")
    assert lines[-1] == "}"
    assert max(len(line) - len(line.lstrip(" ")) for line in lines) == 2 * print_layout.MAX_INDENT
    assert text.count("{") == text.count("}") == 2 * n if kind == "if" else n


def test_deep_match_and_tuple_nesting():
    x = Var("x", F32)
    e = x
    for _ in range(20_000):
        e = Match(e, (Clause(PatternWildcard(), Tuple((e,))),))
    assert astext(e).count("match (") == 20_000


def test_printing_is_deterministic():
    data, cons, nil = list_adt()
    x = Var("x", F32)
    s = add(x, x)
    fn = Function((x,), Tuple((s, Call(cons, (s, Call(nil, ()))))))
    mod = module(("main", fn), ("other", fn), types=(data,))
    assert astext(mod) == astext(mod)


def test_free_var_declared_once_with_annotation():
    x = Var("x", T23)
    assert astext(Tuple((x, x))) == body("""
free_var %x: Tensor[(2, 3), float32];
(%x, %x)""")


def test_rejects_what_it_cannot_print():
    with pytest.raises(TypeError):
        astext(42)  # type: ignore[arg-type]


def test_sharing_across_deep_nesting_is_fast():
    x, c = Var("x", F32), Var("c", BOOL)
    shared = add(x, x)
    e = shared
    for _ in range(10_000):
        e = If(c, e, call("exp", shared))
    text, seconds = _timed(lambda: astext(e))
    assert text.count("add(") == 1 and text.count("%0") == 10_002   # binding, uses, innermost
    assert seconds < 10


def test_common_scope_matches_naive_ancestor_search():
    import random
    rng = random.Random(7)
    blocks = [print_layout.Block("", "")]
    for _ in range(2000):
        parent = rng.choice(blocks[-40:]) if rng.random() < 0.9 else rng.choice(blocks)
        blocks.append(print_layout.Block("{", "}", parent))

    def naive(a, b):
        ancestors = set()
        while a is not None:
            ancestors.add(id(a))
            a = a.parent
        while id(b) not in ancestors:
            b = b.parent
        return b
    for _ in range(2000):
        a, b = rng.choice(blocks), rng.choice(blocks)
        assert print_layout.common_scope(a, b) is naive(a, b)


# ------------------------------------------------------------------ round trips through the parser

ADT_PROGRAM = """#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}
type Tree[V] {
  Leaf,
  Node(Tree[V], V, Tree[V]),
}
type Opaque
type Pair[A, B] { MkPair(A, B) }
def @depth[V](%t: Tree[V]) -> int32 {
  match (%t) {
    Leaf => 0,
    Node(%l, _, %r) => {
      let %dl = @depth(%l);
      let %dr = @depth(%r);
      if (%dl > %dr) { %dl + 1 } else { %dr + 1 }
    },
  }
}
def @len[A](%xs: List[A]) -> int32 {
  let %n = (match? (%xs) { Cons(_, %t) => add(@len(%t), 1), Nil => 0 });
  %n
}
def @swap[A, B](%p: Pair[A, B]) -> Pair[B, A] {
  match (%p) { MkPair(%a, %b) => MkPair(%b, %a) }
}
def @tup(%p: (int32, (float32, bool))) -> int32 {
  match (%p) { (%i, (_, %b: bool)) => if (%b) { %i } else { 0 }, }
}
def @opaque(%o: Opaque[], %q: Opaque) -> Opaque { %o }
def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B] {
  match (%xs) {
    Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)),
    Nil => Nil,
  }
}
"""

GRAPH_PROGRAMS = [
    """def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(16, 3, 3, 3), float32],
                 %b: Tensor[(16), float32]) -> Tensor[(1, 16, 8, 8), float32] {
      %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);
      %1 = nn.bias_add(%0, %b);
      %2 = nn.relu(%1);
      %3 = add(%2, %2);
      multiply(%3, %2)
    }""",
    """def @refs(%x: float32) {
      let %r = ref(%x);
      ref_write(%r, add(ref_read(%r), 1f));
      ref_read(%r)
    }""",
    """def @closures(%x: float32, %y: float32) -> float32 {
      let %f = fn (%a: float32, %b, Primitive=1, Composite="p") -> float32 { add(%a, %b) };
      %0 = %f(%x, %y);
      %1 = (fn (%z) { %z })(%0);
      let %cnt = fn (%n: int32) -> int32 { if (%n == 0) { 0 } else { %cnt(%n - 1) } };
      (%1, %cnt(10))
    }""",
    """def @tuples(%t: (float32, float32)) {
      %0 = %t.0;
      %1 = (%0, %t.1, (%0,), ());
      (%1.2, %1)
    }""",
    """def @literals() {
      (1, -1, 2147483648, 7i64, -3i16, 0.5f, 1e-05f, 3f, 2.5f16, 0.1f64, inff, -inff,
       True, False, 1e+20f, -0f, 0.33333334f, 65504f16)
    }""",
    """def @nested_let(%x: float32) {
      let %a = (let %b = add(%x, %x); multiply(%b, %b));
      %5 = (let %c = exp(%a); %c);
      (%5, %5)
    }""",
    """def @seq(%x: float32) {
      add(%x, %x);
      %x
    }""",
    """def @shared_if(%c: bool, %x: float32) {
      %0 = add(%x, %x);
      if (%c) { negative(%0) } else { exp(%0) }
    }""",
    """def @poly[T](%a: T, %b: T, %first: bool) -> T {
      if (%first) { %a } else { %b }
    }""",
    """def @types(%a: Tensor[(?, 3), float32], %b: (), %c: (int8,), %d: fn (float32) -> (),
                  %e: _, %f: Tensor[(2), uint8]) { %a }""",
    """def @names(%bn.weight: float32, %conv1/weight: float32) {
      add(%bn.weight, %conv1/weight)
    }""",
    """def @attrs(%x: Tensor[(2, 3), float32]) {
      %0 = sum(%x, axis=[1], keepdims=True);
      %1 = cast(%0, dtype="float16");
      %2 = nn.pad(%x, pad_width=[[0, 0], [1, 1]]);
      %3 = reshape(%x, newshape=[3, 2]);
      %4 = nn.dropout(%x, rate=0.25f);
      (%1, %2, %3, %4)
    }""",
    """def @a(%x: float32) { add(%x, %x) }
    def @b(%x: float32) { %0 = @a(%x); multiply(%0, %0) }""",
]


def _round_trip_module(mod):
    text = astext(mod)
    again = rl.parse(text)
    assert structural_equal(again, mod), text
    assert astext(again) == text


def _round_trip_expr(expr):
    text = astext(expr)
    again = rl.parse_expr(text)
    assert structural_equal(again, expr, map_free_vars=True), text
    assert astext(again) == text


@pytest.mark.parametrize("source", [ADT_PROGRAM] + [HEADER + p for p in GRAPH_PROGRAMS])
def test_parsed_programs_round_trip(source):
    _round_trip_module(rl.parse(source))


def test_parsed_expression_with_free_vars_round_trips():
    expr = rl.parse_expr("free_var %x: float32; free_var %y; %0 = add(%x, %y);"
                         "(%0, %0, fn (%z) { %z })")
    _round_trip_expr(expr)


VD = MetaObject("VirtualDevice", '{"attrs":{"device_type_int":"1","virtual_device_id":"0"},'
                                 '"type_key":"VirtualDevice"}')
SIZE = MetaObject("tir.SizeVar", '{"attrs":{"dtype":"int64","name":"n"},"type_key":"tir.SizeVar"}')


def _built_expressions():
    x, c = Var("x", F32), Var("c", BOOL)
    shared = add(x, x)
    h, t, n = Var("h"), Var("t"), Var("n")
    match = Match(Tuple((x, shared)),
                  (Clause(PatternTuple((PatternVar(h), PatternWildcard())), h),
                   Clause(PatternWildcard(), x)), complete=False)
    y = Var("y", TensorType((SIZE, 3), "float32"), VD)
    meta_const = Constant(np.arange(6, dtype="float32").reshape(2, 3))
    strs = DictAttrs((("name", 'a"b\\c\nd\te\x01'), ("k", (1, (2.5, None)))), "relay.attrs.Foo")
    yield "shared across branches", If(c, call("negative", shared), call("exp", shared))
    yield "shared into closure", Tuple((Function((), call("exp", shared)), shared))
    yield "let in let", Let(n, Let(t, shared, t), Tuple((n, n)))
    yield "match as let value", Let(n, match, n)
    yield "bound match", call("exp", Match(x, (Clause(PatternVar(h), h),)))
    yield "bound let", Tuple((Let(t, x, t), x))
    yield "meta and virtual device", Function((y,), Tuple((meta_const, meta_const, y)),
                                              attrs=DictAttrs((("Primitive", 1),)))
    yield "special floats", Tuple(tuple(const(v, d) for v in (np.nan, np.inf, -np.inf)
                                        for d in ("float16", "float32", "float64")))
    yield "attribute strings", Call(Var("f"), (x,), strs)
    yield "odd names", Tuple(tuple(Var(hint, F32) for hint in
                                   ["bn.weight", "a/b", "", "0", "type", "a-b", "x", "x", "x1"]))
    yield "deep calls", _chain(10_000)


def _chain(n):
    e = Var("x", F32)
    for _ in range(n):
        e = call("exp", e)
    return e


@pytest.mark.parametrize("name, expr", list(_built_expressions()))
def test_built_expressions_round_trip(name, expr):
    _round_trip_expr(expr)


def test_built_module_round_trips():
    data, cons, nil = list_adt()
    a = TypeVar("A")
    xs = Var("xs", TypeCall(data.header, (a,)))
    h, t = Var("h"), Var("t")
    length = GlobalVar("length")
    body = Match(xs, (Clause(PatternConstructor(cons, (PatternWildcard(), PatternVar(t))),
                             add(Call(length, (t,)), const(1, "int32"))),
                      Clause(PatternConstructor(nil), const(0, "int32"))))
    fn = Function((xs,), body, TensorType((), "int32"), (a,))
    mod = IRModule({length: fn})
    mod.add_type_definition(data)
    mod.add_type_definition(TypeData(GlobalTypeVar("Opaque"), (), ()))
    _round_trip_module(mod)


def test_opaque_call_attrs_round_trip():
    attrs = MetaObject("relay.attrs.DenseAttrs",
                       '{"attrs":{"out_dtype":"float32","units":"null"},'
                       '"type_key":"relay.attrs.DenseAttrs"}')
    x = Var("x", F32)
    _round_trip_expr(call("nn.dense", x, x, attrs=attrs))


def test_node_using_a_recursive_let_variable_is_bound_where_first_reached():
    x, f, n = Var("x", F32), Var("f"), Var("n", F32)
    shared = Call(f, (x,))
    e = Let(f, Function((n,), add(shared, n)), Tuple((shared, Call(f, (x,)))))
    # The common scope of `%f(%x)` is above `let %f`; it stays in the closure body (TVM's
    # place), which the parser accepts: graph ids are visible to the end of the definition.
    assert astext(e) == body("""
free_var %x: float32;
let %f = fn (%n: float32) {
  %0 = %f(%x);
  add(%0, %n)
};
%1 = %f(%x);
(%0, %1)""")
    _round_trip_expr(e)


def _random_expr(rng, budget):
    """A well-formed random expression with sharing across scopes, lets (recursive through
    closures), ifs, closures, refs, tuple matches and constants."""
    pool = []

    def build(scope, budget):
        if budget <= 1:
            usable = [e for e, needs in pool if needs <= set(map(id, scope))]
            if usable and rng.random() < 0.4:
                return rng.choice(usable)
            if scope and rng.random() < 0.6:
                return rng.choice(scope)
            return const(rng.choice([0.5, -2.0, 3.0]))
        half = budget // 2
        kind = rng.randrange(9)
        if kind == 0:
            e = add(build(scope, half), build(scope, half))
        elif kind == 1:
            e = Tuple(tuple(build(scope, budget // 3) for _ in range(rng.randrange(4))))
        elif kind == 2:
            e = TupleGetItem(Tuple((build(scope, half), build(scope, half))), rng.randrange(2))
        elif kind == 3:
            v = Var(rng.choice(["x", "v", "a.b", ""]))
            value = (Function((), build(scope + [v], half)) if rng.random() < 0.3
                     else build(scope, half))
            e = Let(v, value, build(scope + [v], half))
        elif kind == 4:
            cond = rng.choice(scope) if scope else Constant(np.array(True))
            e = If(cond, build(scope, half), build(scope, half))
        elif kind == 5:
            params = [Var(rng.choice(["p", "x"]), rng.choice([F32, None]))
                      for _ in range(rng.randrange(3))]
            e = Function(tuple(params), build(scope + params, budget - 1))
        elif kind == 6:
            r = RefCreate(build(scope, half))
            e = Tuple((RefRead(r), RefWrite(r, build(scope, half))))
        elif kind == 7:
            a, b = Var("a"), Var("b")
            pair = Tuple((build(scope, budget // 3), build(scope, budget // 3)))
            e = Match(pair, (Clause(PatternTuple((PatternVar(a), PatternVar(b))),
                                    build(scope + [a, b], budget // 3)),
                             Clause(PatternWildcard(), build(scope, budget // 3))),
                      complete=rng.random() < 0.5)
        else:
            e = call("nn.relu", build(scope, budget - 1))
        pool.append((e, set(map(id, scope))))
        return e
    return build([], budget)


def test_random_programs_round_trip():
    import random
    for seed in range(150):
        rng = random.Random(seed)
        _round_trip_expr(_random_expr(rng, rng.randrange(5, 50)))


def test_node_shared_by_two_definitions_prints_in_each():
    x = Var("x", F32)
    shared = add(x, x)
    c = Constant(np.zeros(2, "float32"))
    mod = module(("a", Function((x,), Tuple((shared, c)))),
                 ("b", Function((x,), Tuple((shared, c)))))
    text = astext(mod, show_meta_data=False)
    assert text == HEADER + (
        "def @a(%x: float32) {\n"
        "  %0 = add(%x, %x);\n"
        "  (%0, meta[relay.Constant][0])\n"
        "}\n"
        "\n"
        "def @b(%x1: float32) {\n"
        "  %1 = add(%x1, %x1);\n"
        "  (%1, meta[relay.Constant][0])\n"
        "}\n"
        "\n" + META_OMITTED)


def test_sequencing_prints_as_a_statement_and_round_trips():
    text = ('#[version = "0.0.5"]\ndef @main(%r: int32) {\n  %0 = ref(%r);\n'
            '  ref_write(%0, 1);\n  ref_read(%0)\n}\n')
    assert rl.astext(rl.parse(text)) == text


def test_a_let_value_using_its_own_variable_in_a_nested_call_stays_in_place() -> None:
    # Found by the fuzzer: `%0 = negative(%r);` was printed above `let %r = ...`,
    # where `%r` is not bound yet.
    text = """#[version = "0.0.5"]
def @main(%x: int32) -> int32 {
  let %r = add(negative(%r), %x);
  %r
}
"""
    mod = rl.parse(text)
    printed = rl.astext(mod)
    assert "let %r = add(negative(%r), %x);" in printed
    assert rl.structural_equal(rl.parse(printed), mod)
