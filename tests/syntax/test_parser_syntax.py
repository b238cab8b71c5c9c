"""Every production of LANGUAGE.md §14 and the IR the parser builds for it.

Checks node classes and fields, sharing (`is`: a graph binding used twice is
one node), and scoping: which `Var` object each use of a name resolves to.
Structural equality and the printer are not used here.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.attrs import DictAttrs
from relaylang.ir.expr import (Call, Clause, Constant, Expr, Function, GlobalVar, If, Let, Match,
                               Op, PatternConstructor, PatternTuple, PatternVar, PatternWildcard,
                               RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var)
from relaylang.ir.module import IRModule
from relaylang.ir.node import ANY, MetaObject
from relaylang.ir.span import Span
from relaylang.ir.types import (FuncType, IncompleteType, RefType, TensorType, TupleType, TypeCall,
                                TypeData, TypeVar)

HEADER = '#[version = "0.0.5"]\n'
LIST = "type List[A] { Cons(A, List[A]), Nil, }\n"
OPTION = "type Option[A] { Some(A), None_, }\n"


def mod(text: str, **kw) -> IRModule:
    return rl.parse(HEADER + text, **kw)


def fn_of(text: str, name: str = "main", **kw) -> Function:
    return mod(text, **kw)[name]


def ex(text: str, **kw) -> Expr:
    return rl.parse_expr(text, **kw)


def op_call(node: Expr, name: str) -> Call:
    assert isinstance(node, Call), type(node)
    assert isinstance(node.op, Op), type(node.op)
    assert node.op.name == name
    return node


def value(node: Expr) -> object:
    assert isinstance(node, Constant), type(node)
    return node.data.item()


# ---------------------------------------------------------------- version header and files

def test_header_only_module_is_empty() -> None:
    m = rl.parse(HEADER)
    assert isinstance(m, IRModule)
    assert len(m) == 0 and m.type_definitions == {}


def test_comments_and_whitespace_before_the_header() -> None:
    text = "// license\n/* block\n comment */\n\n  " + HEADER + "def @main() { 0 }"
    m = rl.parse(text)
    assert value(m["main"].body) == 0


@pytest.mark.parametrize("header", ['#[version = "0.0.5"]', '#[ version = "0.0.5" ]',
                                    '#[version="0.0.5"]', '#[\nversion = "0.0.5"\n]'])
def test_header_spellings(header: str) -> None:
    m = rl.parse(header + "\ndef @main() { 0 }")
    assert "main" in m


def test_expression_text_with_and_without_header() -> None:
    assert value(ex("1")) == 1
    assert value(ex(HEADER + "1")) == 1


def test_source_name_is_in_spans() -> None:
    m = rl.parse(HEADER + "def @main() {\n  0\n}", source_name="model.relay")
    assert m.source_name == "model.relay"
    assert m["main"].body.span == Span("model.relay", 3, 3, 3, 4)
    e = ex("add(1, 2)")
    assert e.span.source_name == "string"
    assert rl.parse(HEADER).source_name == "from_string"


# ---------------------------------------------------------------- def

def test_def_with_params_and_types() -> None:
    f = fn_of("def @main(%x: Tensor[(2, 3), float32], %y: float32) -> Tensor[(2, 3), float32] {\n"
              "  multiply(%x, %y)\n}")
    assert isinstance(f, Function)
    assert [p.name_hint for p in f.params] == ["x", "y"]
    x, y = f.params
    assert isinstance(x.type_annotation, TensorType)
    assert x.type_annotation.shape == (2, 3) and x.type_annotation.dtype == "float32"
    assert isinstance(f.ret_type, TensorType) and f.ret_type.shape == (2, 3)
    body = op_call(f.body, "multiply")
    assert body.args[0] is x and body.args[1] is y
    assert f.attrs is None and f.type_params == ()


def test_def_without_annotations() -> None:
    f = fn_of("def @main(%x, %y,) { %y }")
    assert [p.type_annotation for p in f.params] == [None, None]
    assert f.ret_type is None
    assert f.body is f.params[1]


def test_def_with_no_params() -> None:
    f = fn_of("def @main() { () }")
    assert f.params == ()
    assert isinstance(f.body, Tuple) and f.body.fields == ()


def test_def_with_type_params() -> None:
    f = fn_of("def @main[A, B](%a: A, %b: B, %c: List[A]) -> (A, B) { (%a, %b) }\n" + LIST)
    a, b = f.type_params
    assert isinstance(a, TypeVar) and a.name_hint == "A" and b.name_hint == "B"
    assert f.params[0].type_annotation is a
    assert f.params[1].type_annotation is b
    lst = f.params[2].type_annotation
    assert isinstance(lst, TypeCall) and lst.args[0] is a
    assert isinstance(f.ret_type, TupleType) and f.ret_type.fields[0] is a
    assert f.ret_type.fields[1] is b


def test_type_params_of_different_functions_are_different() -> None:
    m = mod("def @f[A](%x: A) { %x }\ndef @g[A](%x: A) { %x }")
    assert m["f"].type_params[0] is not m["g"].type_params[0]
    assert m["g"].params[0].type_annotation is m["g"].type_params[0]


def test_def_attributes_in_the_param_list() -> None:
    f = fn_of('def @main(%a: float32, %b: float32, Compiler="ext", global_symbol="kernel_0", '
              "Primitive=1, relay.reshape_only=1) -> float32 { add(%a, %b) }")
    assert len(f.params) == 2
    assert isinstance(f.attrs, DictAttrs)
    assert f.attrs.entries == (("Compiler", "ext"), ("global_symbol", "kernel_0"),
                               ("Primitive", 1), ("relay.reshape_only", 1))
    assert f.attrs.get("Primitive") == 1


def test_function_with_only_attributes() -> None:
    f = ex("fn (Primitive=1, Inline=1,) { 0 }")
    assert isinstance(f, Function)
    assert f.params == ()
    assert f.attrs.entries == (("Primitive", 1), ("Inline", 1))


def test_virtual_device_param_attribute() -> None:
    devices = {"VirtualDevice": ["cpu", "gpu"]}
    f = fn_of("def @main(%x {virtual_device=meta[VirtualDevice][1]}: Tensor[(2), float32],\n"
              "          %y {virtual_device=meta[VirtualDevice][1]},\n"
              "          virtual_device=meta[VirtualDevice][0]) { add(%x, %y) }",
              metadata=devices)
    x, y = f.params
    assert isinstance(x.virtual_device, MetaObject)
    assert x.virtual_device.type_key == "VirtualDevice"
    assert isinstance(x.type_annotation, TensorType)
    assert y.type_annotation is None
    # The same meta index is the same object.
    assert x.virtual_device is y.virtual_device
    fn_device = f.attrs.get("virtual_device")
    assert isinstance(fn_device, MetaObject) and fn_device is not x.virtual_device


def test_globals_forward_references_and_recursion() -> None:
    m = mod("def @a(%n) { @b(%n) }\ndef @b(%n) { @a(%n) }\ndef @c() { @c }")
    ga, gb, gc = (m.get_global_var(n) for n in "abc")
    assert isinstance(ga, GlobalVar) and ga.name_hint == "a"
    assert m["a"].body.op is gb
    assert m["b"].body.op is ga
    assert m["c"].body is gc
    assert list(m.functions) == [ga, gb, gc]


def test_global_as_value_and_in_call() -> None:
    m = mod("def @id(%x) { %x }\ndef @main() { (@id, @id(1)) }")
    t = m["main"].body
    gv = m.get_global_var("id")
    assert t.fields[0] is gv and t.fields[1].op is gv


# ---------------------------------------------------------------- type definitions

def test_adt_definition() -> None:
    m = mod(LIST)
    gtv = m.get_global_type_var("List")
    data = m[gtv]
    assert isinstance(data, TypeData) and data.header is gtv
    (a,) = data.type_params
    assert isinstance(a, TypeVar) and a.name_hint == "A"
    cons, nil = data.constructors
    assert (cons.name, cons.tag, nil.name, nil.tag) == ("Cons", 0, "Nil", 1)
    assert cons.belong_to is gtv and nil.belong_to is gtv
    head, tail = cons.inputs
    assert head is a
    # Recursive field: List[A] refers to the type being defined.
    assert isinstance(tail, TypeCall) and tail.func is gtv and tail.args[0] is a
    assert nil.inputs == ()
    assert m.get_constructor("Cons") is cons


@pytest.mark.parametrize("text", ["type Void {}", "type Void", "type Void { }"])
def test_adt_without_constructors(text: str) -> None:
    m = mod(text)
    data = m["Void"]
    assert data.constructors == () and data.type_params == ()


def test_adt_without_trailing_comma_and_with_many_params() -> None:
    m = mod("type Either[A, B] { Left(A), Right(B) }")
    data = m["Either"]
    a, b = data.type_params
    left, right = data.constructors
    assert left.inputs == (a,) and right.inputs == (b,)


def test_extern_type() -> None:
    m = mod("extern type Handle[T]\nextern type Storage\ndef @f(%h: Handle[int32]) { %h }")
    handle, storage = m["Handle"], m["Storage"]
    assert handle.constructors == () and len(handle.type_params) == 1
    assert storage.constructors == () and storage.type_params == ()
    ty = m["f"].params[0].type_annotation
    assert isinstance(ty, TypeCall) and ty.func is handle.header


def test_type_forward_reference() -> None:
    m = mod("def @f(%t: Tree[], %u: Tree) { %t }\ntype Tree { Leaf, Node(Tree, Tree) }")
    gtv = m.get_global_type_var("Tree")
    t, u = (p.type_annotation for p in m["f"].params)
    assert isinstance(t, TypeCall) and t.func is gtv and t.args == ()
    assert isinstance(u, TypeCall) and u.func is gtv and u.args == ()
    node = m.get_constructor("Node")
    assert all(isinstance(i, TypeCall) and i.func is gtv for i in node.inputs)


def test_mutually_recursive_types() -> None:
    m = mod("type Tree { Node(Forest) }\ntype Forest { Empty, More(Tree, Forest) }")
    tree, forest = m.get_global_type_var("Tree"), m.get_global_type_var("Forest")
    assert m.get_constructor("Node").inputs[0].func is forest
    assert m.get_constructor("More").inputs[0].func is tree


def test_definitions_interleave() -> None:
    m = mod("def @a() { 0 }\ntype T { C }\ndef @b() { C }\nextern type E\ndef @c() { 1 }")
    assert [g.name_hint for g in m.functions] == ["a", "b", "c"]
    assert [t.name_hint for t in m.type_definitions] == ["T", "E"]


# ---------------------------------------------------------------- constructors in expressions

def test_constructor_values() -> None:
    m = mod(LIST + "def @main() { (Nil, Nil(), Cons, Cons(1, Nil)) }")
    cons, nil = m.get_constructor("Cons"), m.get_constructor("Nil")
    t = m["main"].body
    # A field-less constructor is applied automatically; `Nil()` means the same.
    for node in t.fields[:2]:
        assert isinstance(node, Call) and node.op is nil and node.args == ()
    # A constructor with fields, unapplied, is the constructor itself.
    assert t.fields[2] is cons
    app = t.fields[3]
    assert isinstance(app, Call) and app.op is cons
    assert value(app.args[0]) == 1
    assert isinstance(app.args[1], Call) and app.args[1].op is nil


# ---------------------------------------------------------------- let

def test_let_with_type() -> None:
    e = ex("let %x: int32 = 1; %x")
    assert isinstance(e, Let)
    assert e.var.name_hint == "x"
    assert isinstance(e.var.type_annotation, TensorType)
    assert e.var.type_annotation.dtype == "int32" and e.var.type_annotation.shape == ()
    assert value(e.value) == 1
    assert e.body is e.var


def test_let_chain() -> None:
    e = ex("let %a = 1; let %b = add(%a, %a); %b")
    assert isinstance(e, Let) and isinstance(e.body, Let)
    inner = e.body
    call = op_call(inner.value, "add")
    assert call.args[0] is e.var and call.args[1] is e.var
    assert inner.body is inner.var


def test_let_variable_is_in_scope_in_its_own_value() -> None:
    e = ex("let %countdown = fn (%n: int32) -> int32 {\n"
           "  if (%n == 0) { 0 } else { %countdown(%n - 1) }\n};\n%countdown(10)")
    assert isinstance(e, Let)
    f = e.value
    assert isinstance(f, Function)
    rec = f.body.false_branch
    assert isinstance(rec, Call) and rec.op is e.var
    assert op_call(rec.args[0], "subtract").args[0] is f.params[0]
    assert isinstance(e.body, Call) and e.body.op is e.var


def test_let_shadowing() -> None:
    e = ex("let %x = 1; let %y = %x; let %x = add(%y, 1); (%x, %y)")
    outer, y, inner = e, e.body, e.body.body
    assert outer.var is not inner.var
    assert outer.var.name_hint == inner.var.name_hint == "x"
    assert y.value is outer.var
    assert op_call(inner.value, "add").args[0] is y.var
    assert inner.body.fields[0] is inner.var and inner.body.fields[1] is y.var


def test_let_value_sees_the_new_variable_not_the_shadowed_one() -> None:
    # The variable is in scope in its own value (§6.8), so it shadows the outer `%x` there.
    e = ex("let %x = 1; let %x = fn () { %x }; %x")
    inner = e.body
    assert inner.value.body is inner.var and inner.value.body is not e.var


def test_let_in_body_shadows_parameter() -> None:
    # TVM's defect (§6.8): the first let of a chain was ignored when a parameter had the
    # same name. We do not imitate it.
    f = fn_of("def @main(%x) { let %x = 1; %x }")
    assert isinstance(f.body, Let)
    assert f.body.var is not f.params[0]
    assert f.body.body is f.body.var


def test_let_scope_ends_with_its_parenthesis() -> None:
    e = ex("free_var %y; add((let %y = 1; %y), %y)")
    call = op_call(e, "add")
    inner = call.args[0]
    assert isinstance(inner, Let)
    assert inner.body is inner.var
    assert call.args[1] is not inner.var
    assert call.args[1].name_hint == "y"


def test_let_value_can_be_if_fn_tuple_and_projection() -> None:
    e = ex("let %a = if (True) { 1 } else { 2 }; let %b = fn () { %a }; let %c = (%a, %b);"
           " let %d = %c.1; %d")
    assert isinstance(e.value, If)
    assert isinstance(e.body.value, Function) and e.body.value.body is e.var
    c = e.body.body
    assert isinstance(c.value, Tuple)
    d = c.body
    assert isinstance(d.value, TupleGetItem) and d.value.tuple_value is c.var


# ---------------------------------------------------------------- graph bindings

def test_graph_binding_shares_the_node() -> None:
    f = fn_of("def @main(%x) {\n  %0 = add(%x, %x);\n  %1 = multiply(%0, %0);\n  (%1, %0)\n}")
    t = f.body
    assert isinstance(t, Tuple)        # no Let was created
    mul = op_call(t.fields[0], "multiply")
    add = op_call(t.fields[1], "add")
    assert mul.args[0] is add and mul.args[1] is add
    assert add.args[0] is f.params[0]


def test_graph_ids_need_not_be_consecutive_and_leading_zeros_are_ignored() -> None:
    e = ex("%46 = 1; %7 = (%46, %046); %007")
    assert isinstance(e, Tuple)
    assert e.fields[0] is e.fields[1]
    assert value(e.fields[0]) == 1


def test_graph_binding_visible_in_nested_scopes() -> None:
    e = ex("%0 = add(1, 2);\n%1 = fn () { %0 };\n"
           "if (True) { (%0, %1) } else { match (%0) { _ => %0 } }")
    assert isinstance(e, If)
    node = e.true_branch.fields[0]
    assert op_call(node, "add")
    closure = e.true_branch.fields[1]
    assert isinstance(closure, Function) and closure.body is node
    m = e.false_branch
    assert m.data is node and m.clauses[0].rhs is node


def test_graph_bindings_interleave_with_let() -> None:
    e = ex("%0 = 1; let %x = add(%0, %0); %1 = multiply(%x, %0); (%1, %x)")
    assert isinstance(e, Let)
    one = op_call(e.value, "add").args[0]
    mul = op_call(e.body.fields[0], "multiply")
    assert mul.args[0] is e.var and mul.args[1] is one
    assert e.body.fields[1] is e.var


def test_graph_ids_are_per_definition() -> None:
    m = mod("def @a() { %0 = 1; %0 }\ndef @b() { %0 = 2; %0 }")
    assert value(m["a"].body) == 1 and value(m["b"].body) == 2


def test_graph_id_equals_is_a_comparison_not_a_binding() -> None:
    e = ex("%0 = 1; %1 = 2; %0 == %1")
    eq = op_call(e, "equal")
    assert value(eq.args[0]) == 1 and value(eq.args[1]) == 2
    e = ex("%0 = 1; %0 != %0")
    ne = op_call(e, "not_equal")
    assert ne.args[0] is ne.args[1]


def test_graph_comparison_as_argument() -> None:
    e = ex("%0 = 1; %1 = 2; where((%0 == %1), %0, %1)")
    w = op_call(e, "where")
    eq = op_call(w.args[0], "equal")
    assert eq.args[0] is w.args[1] and eq.args[1] is w.args[2]


# ---------------------------------------------------------------- sequencing

def test_sequencing_becomes_let_with_nameless_var() -> None:
    e = ex("free_var %r; ref_write(%r, 1f); ref_write(%r, 2f); ref_read(%r)")
    assert isinstance(e, Let)
    assert e.var.name_hint == "" and isinstance(e.value, RefWrite)
    second = e.body
    assert isinstance(second, Let) and second.var.name_hint == ""
    assert second.var is not e.var
    assert isinstance(second.body, RefRead)
    assert second.body.ref is e.value.ref


def test_sequence_in_block_and_parentheses() -> None:
    e = ex("({ 1; 2 }, (3; 4))")
    assert isinstance(e, Tuple)
    for field, (a, b) in zip(e.fields, ((1, 2), (3, 4))):
        assert isinstance(field, Let) and field.var.name_hint == ""
        assert value(field.value) == a and value(field.body) == b


def test_block_is_its_own_scope() -> None:
    f = fn_of("def @main(%x) { { let %x = 1; %x }; %x }")
    seq = f.body
    assert isinstance(seq, Let)
    block = seq.value
    assert isinstance(block, Let) and block.body is block.var
    assert seq.body is f.params[0]


# ---------------------------------------------------------------- if

def test_if() -> None:
    e = ex("free_var %c: bool; if (%c) { 1 } else { let %y = 2; %y }")
    assert isinstance(e, If)
    assert isinstance(e.cond, Var) and e.cond.name_hint == "c"
    assert value(e.true_branch) == 1
    assert isinstance(e.false_branch, Let) and e.false_branch.body is e.false_branch.var


def test_nested_if_in_else() -> None:
    e = ex("if (True) { 1 } else { if (False) { 2 } else { 3 } }")
    assert isinstance(e.false_branch, If)
    assert value(e.false_branch.false_branch) == 3


def test_if_as_operand_and_argument() -> None:
    e = ex("add(if (True) { 1 } else { 2 }, 3) + if (False) { 4 } else { 5 }")
    add = op_call(e, "add")
    assert isinstance(add.args[1], If)
    assert isinstance(op_call(add.args[0], "add").args[0], If)


def test_if_condition_is_a_full_expression() -> None:
    e = ex("if (let %c = True; %c) { 1 } else { 2 }")
    assert isinstance(e.cond, Let)


# ---------------------------------------------------------------- fn

def test_fn_with_type_params_and_return_type() -> None:
    f = ex("fn [A](%x: A) -> A { %x }")
    assert isinstance(f, Function)
    (a,) = f.type_params
    assert f.params[0].type_annotation is a and f.ret_type is a
    assert f.body is f.params[0]


@pytest.mark.parametrize("text", ["fn (%x) { %x }(1f)", "(fn (%x) { %x })(1f)"])
def test_fn_immediately_applied(text: str) -> None:
    e = ex(text)
    assert isinstance(e, Call)
    assert isinstance(e.op, Function)
    assert e.op.body is e.op.params[0]
    assert value(e.args[0]) == 1.0


def test_closures_capture_enclosing_locals() -> None:
    f = ex("fn (%x) { fn (%y) { fn (%x) { add(%x, %y) } } }")
    outer = f
    mid = outer.body
    inner = mid.body
    add = op_call(inner.body, "add")
    # The innermost %x shadows the outer one; %y is captured from the middle closure.
    assert add.args[0] is inner.params[0] and add.args[0] is not outer.params[0]
    assert add.args[1] is mid.params[0]


def test_params_go_out_of_scope_after_the_fn() -> None:
    e = ex("free_var %x; (fn (%x) { %x }, %x)")
    f, after = e.fields
    assert f.body is f.params[0]
    assert after is not f.params[0] and isinstance(after, Var)


# ---------------------------------------------------------------- calls and attributes

def test_call_forms() -> None:
    e = ex("free_var %f; (%f(), %f(1)(2), %f(1, 2,), %f((1), (3, 4)))")
    f = e.fields[0].op
    nullary, curried, trailing, grouped = e.fields
    assert isinstance(nullary, Call) and nullary.op is f and nullary.args == ()
    assert isinstance(curried.op, Call) and curried.op.op is f
    assert [value(a) for a in curried.op.args] == [1] and [value(a) for a in curried.args] == [2]
    assert [value(a) for a in trailing.args] == [1, 2]
    assert isinstance(grouped.args[0], Constant) and isinstance(grouped.args[1], Tuple)
    assert nullary.attrs is None


def test_call_args_are_full_expressions() -> None:
    e = ex("add(let %a = 1; %a, { %0 = 2; %0 })")
    add = op_call(e, "add")
    assert isinstance(add.args[0], Let) and add.args[0].body is add.args[0].var
    assert value(add.args[1]) == 2


def test_operator_attribute_int_and_list_values() -> None:
    e = ex("free_var %x; free_var %w;\n"
           "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=(2), channels=16,\n"
           '          kernel_size=[3, 3], data_layout="NHWC", out_dtype="float16")')
    call = op_call(e, "nn.conv2d")
    a = call.attrs
    assert type(a).__name__ == "Conv2DAttrs"
    assert a.strides == (2, 2) and a.padding == (1, 1, 1, 1)
    assert a.groups == 2 and a.channels == 16 and a.kernel_size == (3, 3)
    assert a.data_layout == "NHWC" and a.out_dtype == "float16"
    # Fields not written keep their defaults.
    assert a.dilation == (1, 1) and a.kernel_layout == "OIHW"


def test_operator_attribute_float_bool_values() -> None:
    e = ex("free_var %x; (nn.leaky_relu(%x, alpha=0.1f), clip(%x, a_min=-1f, a_max=6i64),\n"
           " nn.batch_norm(%x, %x, %x, %x, %x, epsilon=1e-05f, center=False, scale=True),\n"
           " sum(%x, axis=[-1], keepdims=True))")
    leaky, clip, bn, total = e.fields
    assert leaky.attrs.alpha == pytest.approx(0.1)
    assert clip.attrs.a_min == -1.0 and clip.attrs.a_max == 6.0
    assert bn.attrs.epsilon == pytest.approx(1e-05)
    assert bn.attrs.center is False and bn.attrs.scale is True
    assert total.attrs.axis == (-1,) and total.attrs.keepdims is True


def test_operator_attribute_null_values() -> None:
    e = ex("free_var %x; (sum(%x, axis=None), nn.dense(%x, %x, units=nullptr), "
           "nn.dense(%x, %x, units=None))")
    total, dense1, dense2 = e.fields
    assert total.attrs.axis is None
    assert dense1.attrs.units is None and dense2.attrs.units is None


def test_operator_attribute_nested_and_empty_lists() -> None:
    e = ex("free_var %x; (nn.pad(%x, pad_width=[[0, 0], [1, 1], [2, 3],]), sum(%x, axis=[]))")
    pad, total = e.fields
    assert pad.attrs.pad_width == ((0, 0), (1, 1), (2, 3))
    assert total.attrs.axis == ()


def test_operator_attribute_any_and_meta_values() -> None:
    table = {"VirtualDevice": ["cpu"]}
    e = ex("free_var %x; (nn.dense(%x, %x, units=?), on_device(%x, "
           "virtual_device=meta[VirtualDevice][0], constrain_result=True))", metadata=table)
    dense, on_device = e.fields
    assert dense.attrs.units is ANY
    vd = on_device.attrs.virtual_device
    assert isinstance(vd, MetaObject) and vd.type_key == "VirtualDevice"
    assert on_device.attrs.constrain_result is True


def test_operators_without_attributes_get_none() -> None:
    e = ex("add(1, 2)")
    assert op_call(e, "add").attrs is None


def test_attrs_only_call() -> None:
    e = ex('zeros(shape=[2, 3], dtype="float32")')
    z = op_call(e, "zeros")
    assert z.args == () and z.attrs.shape == (2, 3) and z.attrs.dtype == "float32"


def test_same_attributes_are_shared() -> None:
    # Attribute objects are immutable; equal ones may be one object.
    e = ex("free_var %x; (sum(%x, axis=[1]), sum(%x, axis=[1]), sum(%x, axis=[2]))")
    a, b, c = (f.attrs for f in e.fields)
    assert a.axis == b.axis == (1,) and c.axis == (2,)


def test_non_operator_call_with_attrs_type_key() -> None:
    e = ex('free_var %f; free_var %x; %f(%x, k=1, s="v", l=[1, 2], b=True, '
           'attrs_type_key="relay.attrs.MyAttrs")')
    assert isinstance(e, Call) and isinstance(e.op, Var)
    assert len(e.args) == 1
    assert isinstance(e.attrs, DictAttrs)
    assert e.attrs.attrs_type_key == "relay.attrs.MyAttrs"
    assert e.attrs.entries == (("k", 1), ("s", "v"), ("l", (1, 2)), ("b", True))


def test_attribute_values_that_are_expressions() -> None:
    m = mod('def @g() { 0 }\ndef @main(%x) {\n  %0 = 1;\n'
            '  @g(%x, a=@g, b=%x, c=%0, d=(2), attrs_type_key="K")\n}')
    call = m["main"].body
    g = m.get_global_var("g")
    assert call.op is g
    entries = dict(call.attrs.entries)
    assert entries["a"] is g
    assert entries["b"] is m["main"].params[0]
    assert value(entries["c"]) == 1
    # `(v)` groups a single attribute value; it never makes a tuple (§6.4).
    assert entries["d"] == 2


def test_meta_attrs_object_as_last_argument() -> None:
    table = {"relay.attrs.DenseAttrs": ["dense attrs"]}
    e = ex("free_var %x; free_var %w; nn.dense(%x, %w, meta[relay.attrs.DenseAttrs][0])",
           metadata=table)
    call = op_call(e, "nn.dense")
    assert len(call.args) == 2
    assert isinstance(call.attrs, MetaObject)
    assert call.attrs.type_key == "relay.attrs.DenseAttrs"


# ---------------------------------------------------------------- tuples and projection

def test_tuples() -> None:
    e = ex("((), (1,), (1), (1, 2, 3), (1, 2,), ((1, 2),))")
    unit, one, grouped, three, trailing, nested = e.fields
    assert isinstance(unit, Tuple) and unit.fields == ()
    assert isinstance(one, Tuple) and [value(f) for f in one.fields] == [1]
    assert isinstance(grouped, Constant) and value(grouped) == 1
    assert [value(f) for f in three.fields] == [1, 2, 3]
    assert [value(f) for f in trailing.fields] == [1, 2]
    assert isinstance(nested, Tuple) and isinstance(nested.fields[0], Tuple)


def test_tuple_elements_are_full_expressions() -> None:
    e = ex("(let %a = 1; %a, { 2 }, match (3) { _ => 4 })")
    assert isinstance(e.fields[0], Let)
    assert value(e.fields[1]) == 2
    assert isinstance(e.fields[2], Match)


def test_projection() -> None:
    e = ex("free_var %t; (%t.0, (%t).1, %t.12, (%t.0).1)")
    a, b, c, d = e.fields
    t = a.tuple_value
    assert isinstance(t, Var) and t.name_hint == "t"
    assert isinstance(a, TupleGetItem) and a.index == 0
    assert b.tuple_value is t and b.index == 1
    assert c.index == 12
    assert isinstance(d.tuple_value, TupleGetItem) and d.index == 1
    assert d.tuple_value.tuple_value is t


def test_projection_of_graph_binding_tuple_literal_and_call() -> None:
    e = ex("free_var %f; %0 = (1, 2); (%0.1, (3, 4).0, (%f(1)).0, %f(2).1)")
    assert isinstance(e.fields[0].tuple_value, Tuple) and e.fields[0].index == 1
    assert isinstance(e.fields[1].tuple_value, Tuple)
    assert isinstance(e.fields[2].tuple_value, Call)
    # TVM rejected `%f(2).1`; this reader accepts it (grammar/relay.lark).
    assert isinstance(e.fields[3], TupleGetItem) and isinstance(e.fields[3].tuple_value, Call)


def test_projection_then_call() -> None:
    e = ex("free_var %t; %t.0(1)")
    assert isinstance(e, Call) and isinstance(e.op, TupleGetItem)


# ---------------------------------------------------------------- infix operators

def test_precedence() -> None:
    # `1 == 1 < 1 + 1 * 1` is `1 == (1 < (1 + (1 * 1)))` (§6.5).
    e = ex("1 == 2 < 3 + 4 * 5")
    eq = op_call(e, "equal")
    assert value(eq.args[0]) == 1
    lt = op_call(eq.args[1], "less")
    assert value(lt.args[0]) == 2
    add = op_call(lt.args[1], "add")
    assert value(add.args[0]) == 3
    mul = op_call(add.args[1], "multiply")
    assert [value(a) for a in mul.args] == [4, 5]


def test_precedence_reversed() -> None:
    e = ex("1 * 2 + 3 < 4 == 5")
    eq = op_call(e, "equal")
    lt = op_call(eq.args[0], "less")
    add = op_call(lt.args[0], "add")
    mul = op_call(add.args[0], "multiply")
    assert [value(a) for a in mul.args] == [1, 2]
    assert value(eq.args[1]) == 5


@pytest.mark.parametrize("text, name", [
    ("1 - 2 - 3", "subtract"), ("8 / 4 / 2", "divide"), ("1 + 2 + 3", "add"),
    ("1 * 2 * 3", "multiply"), ("1 == 2 == 3", "equal"), ("1 != 2 != 3", "not_equal"),
    ("1 < 2 < 3", "less"), ("1 > 2 > 3", "greater"), ("1 <= 2 <= 3", "less_equal"),
    ("1 >= 2 >= 3", "greater_equal"),
])
def test_left_associativity(text: str, name: str) -> None:
    e = op_call(ex(text), name)
    inner = op_call(e.args[0], name)
    assert [value(a) for a in inner.args] == [1 if name != "divide" else 8,
                                              2 if name != "divide" else 4]
    assert value(e.args[1]) == (3 if name != "divide" else 2)


def test_same_level_operators_mix_left_to_right() -> None:
    e = ex("1 - 2 + 3")
    add = op_call(e, "add")
    assert op_call(add.args[0], "subtract")
    e = ex("1 / 2 * 3")
    assert op_call(op_call(e, "multiply").args[0], "divide")
    e = ex("1 <= 2 > 3")
    assert op_call(op_call(e, "greater").args[0], "less_equal")


def test_operands_are_calls_projections_and_parentheses() -> None:
    e = ex("free_var %t; free_var %f; %f(1) + %t.0 * (2 - 3)")
    add = op_call(e, "add")
    assert isinstance(add.args[0], Call) and isinstance(add.args[0].op, Var)
    mul = op_call(add.args[1], "multiply")
    assert isinstance(mul.args[0], TupleGetItem)
    assert op_call(mul.args[1], "subtract")


def test_subtraction_of_negative_literal() -> None:
    e = ex("free_var %a; %a - -1")
    sub = op_call(e, "subtract")
    assert value(sub.args[1]) == -1


def test_division_needs_a_space() -> None:
    e = ex("free_var %x; free_var %y; %x / %y")
    div = op_call(e, "divide")
    assert div.args[0].name_hint == "x" and div.args[1].name_hint == "y"


# ---------------------------------------------------------------- match and patterns

def test_match_with_constructor_patterns() -> None:
    m = mod(LIST + "def @main(%l: List[int32]) {\n  match (%l) {\n"
                   "    Cons(%h, %t) => %h,\n    Nil => 0,\n  }\n}")
    f = m["main"]
    match = f.body
    assert isinstance(match, Match) and match.complete is True
    assert match.data is f.params[0]
    c0, c1 = match.clauses
    assert isinstance(c0, Clause)
    p = c0.lhs
    assert isinstance(p, PatternConstructor) and p.constructor is m.get_constructor("Cons")
    h, t = p.patterns
    assert isinstance(h, PatternVar) and h.var.name_hint == "h"
    assert c0.rhs is h.var
    assert isinstance(c1.lhs, PatternConstructor)
    assert c1.lhs.constructor is m.get_constructor("Nil") and c1.lhs.patterns == ()


def test_partial_match() -> None:
    e = ex("match? (1) { %x => %x }")
    assert isinstance(e, Match) and e.complete is False
    assert e.clauses[0].rhs is e.clauses[0].lhs.var


def test_every_pattern_form() -> None:
    m = mod(LIST + OPTION + "def @main(%v) {\n  match (%v) {\n"
            "    _ => 0,\n"
            "    %a => 1,\n"
            "    %b: Tensor[(2), float32] => 2,\n"
            "    Nil => 3,\n"
            "    Cons(Some(%c), _) => 4,\n"
            "    (%d, (%e), ()) => 5,\n"
            "    (%f,) => 6,\n"
            "    Cons(_, Cons((%g, None_), Nil)) => 7,\n"
            "  }\n}")
    clauses = m["main"].body.clauses
    pats = [c.lhs for c in clauses]
    assert isinstance(pats[0], PatternWildcard)
    assert isinstance(pats[1], PatternVar) and pats[1].var.type_annotation is None
    ty = pats[2].var.type_annotation
    assert isinstance(ty, TensorType) and ty.shape == (2,)
    assert isinstance(pats[3], PatternConstructor) and pats[3].patterns == ()
    cons = pats[4]
    assert cons.constructor is m.get_constructor("Cons")
    some, wild = cons.patterns
    assert some.constructor is m.get_constructor("Some")
    assert isinstance(some.patterns[0], PatternVar) and isinstance(wild, PatternWildcard)
    tup = pats[5]
    assert isinstance(tup, PatternTuple) and len(tup.patterns) == 3
    # In patterns, parentheses always make a tuple: `(%e)` is a one-element tuple (§7.2).
    assert isinstance(tup.patterns[1], PatternTuple) and len(tup.patterns[1].patterns) == 1
    assert isinstance(tup.patterns[2], PatternTuple) and tup.patterns[2].patterns == ()
    assert isinstance(pats[6], PatternTuple) and len(pats[6].patterns) == 1
    deep = pats[7].patterns[1].patterns[0]
    assert isinstance(deep, PatternTuple)
    assert deep.patterns[1].constructor is m.get_constructor("None_")
    assert [value(c.rhs) for c in clauses] == list(range(8))


def test_match_arm_scoping() -> None:
    e = ex("let %x = 1;\n(match (%x) { %x => %x, (%y, %x) => (%x, %y), _ => %x }, %x)")
    outer = e.var
    match, after = e.body.fields
    assert match.data is outer
    c0, c1, c2 = match.clauses
    assert c0.rhs is c0.lhs.var and c0.rhs is not outer
    y, x = (p.var for p in c1.lhs.patterns)
    assert c1.rhs.fields[0] is x and c1.rhs.fields[1] is y
    assert c2.rhs is outer
    assert after is outer


def test_let_at_start_of_arm_shadows_pattern_var() -> None:
    e = ex("match (1) { %x => let %x = 2; %x }")
    clause = e.clauses[0]
    assert isinstance(clause.rhs, Let)
    assert clause.rhs.var is not clause.lhs.var
    assert clause.rhs.body is clause.rhs.var


def test_match_arm_body_is_a_sequence_without_braces() -> None:
    m = mod(LIST + "def @main(%l: List[int32]) {\n  match (%l) {\n"
            "    Cons(%h, %t) => %0 = add(%h, %h); (%0, %t),\n    Nil => { 0 }\n  }\n}")
    c0, c1 = m["main"].body.clauses
    t = c0.rhs
    assert isinstance(t, Tuple)
    assert op_call(t.fields[0], "add").args[0] is c0.lhs.patterns[0].var
    assert t.fields[1] is c0.lhs.patterns[1].var
    assert value(c1.rhs) == 0


def test_match_scrutinee_forms() -> None:
    e = ex("free_var %x; free_var %g; (match %x { _ => 0 }, match ((%x, %x)) { _ => 1 },"
           " match (%g(%x)) { _ => 2 }, match (1) {})")
    a, b, c, d = e.fields
    assert isinstance(a.data, Var)
    assert isinstance(b.data, Tuple) and b.data.fields[0] is a.data
    assert isinstance(c.data, Call)
    assert d.clauses == ()


def test_match_in_if_branch_and_as_call_argument() -> None:
    e = ex("add(match (1) { _ => 2 }, if (True) { match (3) { _ => 4 } } else { 5 })")
    add = op_call(e, "add")
    assert isinstance(add.args[0], Match)
    assert isinstance(add.args[1].true_branch, Match)


# ---------------------------------------------------------------- references

def test_references() -> None:
    e = ex("let %r = ref(1); let %_ = ref_write(%r, 2); ref_read(%r)")
    assert isinstance(e.value, RefCreate) and value(e.value.value) == 1
    write = e.body.value
    assert isinstance(write, RefWrite) and write.ref is e.var and value(write.value) == 2
    read = e.body.body
    assert isinstance(read, RefRead) and read.ref is e.var


def test_reference_operands_are_full_expressions() -> None:
    e = ex("ref_read(let %r = ref((1, 2)); %r)")
    assert isinstance(e, RefRead) and isinstance(e.ref, Let)
    assert isinstance(e.ref.value.value, Tuple)


# ---------------------------------------------------------------- free_var

def test_free_var() -> None:
    e = ex("free_var %x: float32;\nfree_var %y;\nadd(%x, %y)")
    add = op_call(e, "add")
    x, y = add.args
    assert isinstance(x, Var) and x.name_hint == "x"
    assert isinstance(x.type_annotation, TensorType) and x.type_annotation.dtype == "float32"
    assert y.type_annotation is None


def test_free_var_is_one_object_and_visible_in_nested_scopes() -> None:
    e = ex("free_var %x; (%x, fn () { %x }, { %x })")
    a, f, b = e.fields
    assert f.body is a and b is a


def test_free_var_is_shadowed_by_let() -> None:
    e = ex("free_var %x; let %x = 1; %x")
    assert isinstance(e, Let) and e.body is e.var


# ---------------------------------------------------------------- meta references

def test_meta_constants_are_shared() -> None:
    table = {"relay.Constant": [np.ones((2, 3), "float32"), np.arange(4, dtype="int8")]}
    e = ex("add(meta[relay.Constant][0], meta[relay.Constant][0]) /* ty=... */", metadata=table)
    add = op_call(e, "add")
    c = add.args[0]
    assert isinstance(c, Constant)
    assert add.args[1] is c
    assert c.data.shape == (2, 3) and c.data.dtype == np.float32
    np.testing.assert_array_equal(c.data, np.ones((2, 3), "float32"))


def test_meta_constants_in_module_across_definitions() -> None:
    table = {"relay.Constant": [np.zeros(3, "float32"), np.arange(4, dtype="int8")]}
    m = mod("def @a() { meta[relay.Constant][1] }\ndef @b() { (meta[relay.Constant][0], "
            "meta[relay.Constant][1]) }", metadata=table)
    a = m["a"].body
    assert isinstance(a, Constant) and a.data.dtype == np.int8
    assert m["b"].body.fields[1] is a
    assert m["b"].body.fields[0].data.shape == (3,)


def test_meta_constant_projection() -> None:
    table = {"relay.Constant": [np.zeros(3, "float32")]}
    e = ex("meta[relay.Constant][0].0", metadata=table)
    assert isinstance(e, TupleGetItem) and isinstance(e.tuple_value, Constant)


def test_meta_constant_given_as_expression() -> None:
    given = Constant(np.array(5, "int64"))
    e = ex("meta[relay.Constant][0]", metadata={"relay.Constant": [given]})
    assert e is given


def test_meta_dimension() -> None:
    e = ex("fn (%x: Tensor[(meta[tir.SizeVar][0], 3, meta[tir.SizeVar][0]), float32]) { %x }",
           metadata={"tir.SizeVar": ["n"]})
    shape = e.params[0].type_annotation.shape
    assert isinstance(shape[0], MetaObject) and shape[0].type_key == "tir.SizeVar"
    assert shape[1] == 3 and shape[2] is shape[0]


# ---------------------------------------------------------------- comments and names

def test_comments_everywhere() -> None:
    f = fn_of("// leading\ndef @main(/* a */ %x /* b */: /* c */ float32 // d\n, %y) /* e */ {\n"
              "  %0 = add(%x, %y) /* ty=float32 */; // index 0\n"
              "  /* nested /* block */ comment */ %0 /* trailing */\n}\n// end")
    assert op_call(f.body, "add").args[0] is f.params[0]


def test_nested_block_comments() -> None:
    assert value(ex("/* a /* b */ c */ 1")) == 1
    assert value(ex("/* 1 /* 2 /* 3 /* 4 */ 3 */ 2 */ 1 */ 7")) == 7
    assert value(ex("/**/ 1 /***/ /* * / */")) == 1
    assert value(ex("1 /* contains // and \" and { */")) == 1


def test_line_comment_at_end_of_input_without_newline() -> None:
    assert value(ex("1 // done")) == 1


def test_slash_after_name_is_part_of_the_name() -> None:
    # `/` is an identifier character (§2.3): `%a//x` is the single local `a//x`.
    e = ex("free_var %a//x; free_var %a; (%a//x, %a // comment\n)")
    ax, a = e.fields
    assert ax.name_hint == "a//x" and a.name_hint == "a"
    assert ax is not a


def test_names_with_slash_and_dot() -> None:
    f = fn_of("def @main(%conv1/weight: float32, %bn.gamma: float32, %a.b/c_1: float32) {\n"
              "  %0 = nn.relu(%conv1/weight);\n  add(%0, %bn.gamma)\n}")
    w, g, abc = f.params
    assert (w.name_hint, g.name_hint, abc.name_hint) == ("conv1/weight", "bn.gamma", "a.b/c_1")
    add = op_call(f.body, "add")
    assert op_call(add.args[0], "nn.relu").args[0] is w
    assert add.args[1] is g


def test_globals_with_slash_and_dot() -> None:
    m = mod("def @ns/f.g() { 0 }\ndef @main() { @ns/f.g() }")
    gv = m.get_global_var("ns/f.g")
    assert m["main"].body.op is gv


def test_dotted_operator_names_are_shared_ops() -> None:
    e = ex("free_var %x; (nn.relu(%x), nn.relu(%x), image.resize2d(%x))")
    a, b, c = e.fields
    assert a.op is b.op and a.op.name == "nn.relu"
    assert c.op.name == "image.resize2d"


def test_underscore_and_true_as_local_names() -> None:
    e = ex("free_var %True; free_var %_; (%True, %_, True)")
    t, u, lit = e.fields
    assert isinstance(t, Var) and t.name_hint == "True"
    assert isinstance(u, Var) and u.name_hint == "_"
    assert isinstance(lit, Constant)


def test_locals_and_globals_are_separate_namespaces() -> None:
    m = mod("def @x(%x) { (%x, @x) }\ndef @main() { 0 }")
    t = m["x"].body
    assert isinstance(t.fields[0], Var) and t.fields[1] is m.get_global_var("x")


def test_crlf_line_endings() -> None:
    m = rl.parse(HEADER.replace("\n", "\r\n") + "def @main() {\r\n  1\r\n}\r\n")
    assert value(m["main"].body) == 1
    assert m["main"].body.span.line == 3


# ---------------------------------------------------------------- printer forms (§11.9)

def test_let_bound_to_match() -> None:
    e = ex("let %x = match (1) { _ => 2 };\n%x")
    assert isinstance(e, Let) and isinstance(e.value, Match) and e.body is e.var


def test_graph_binding_of_match() -> None:
    e = ex("%3 = match? (1) {\n  %v => { %v },\n};\n(%3, %3)")
    assert isinstance(e, Tuple) and isinstance(e.fields[0], Match)
    assert e.fields[0] is e.fields[1] and e.fields[0].complete is False


def test_let_bound_to_let_chain() -> None:
    e = ex("let %x = let %y = 1; let %z = %y; %z; %x")
    assert isinstance(e, Let)
    y = e.value
    assert isinstance(y, Let) and value(y.value) == 1
    z = y.body
    assert isinstance(z, Let) and z.value is y.var and z.body is z.var
    assert e.body is e.var


def test_graph_binding_of_parenthesised_let_chain() -> None:
    e = ex("%5 = (\n  let %s = add(1, 2);\n  multiply(%s, %s)\n);\n(%5, %5)")
    assert e.fields[0] is e.fields[1]
    chain = e.fields[0]
    mul = op_call(chain.body, "multiply")
    assert mul.args[0] is chain.var


def test_ref_type_and_polymorphic_fn_type() -> None:
    f = ex("fn (%r: ref(int32), %f: fn [A](A) -> A, %g: fn [A, B](A, B) -> ref((A, B))) { %r }")
    r, poly, poly2 = (p.type_annotation for p in f.params)
    assert isinstance(r, RefType) and isinstance(r.value, TensorType)
    assert r.value.dtype == "int32"
    assert isinstance(poly, FuncType)
    (a,) = poly.type_params
    assert poly.arg_types == (a,) and poly.ret_type is a
    a2, b2 = poly2.type_params
    assert a2 is not a
    assert isinstance(poly2.ret_type, RefType) and poly2.ret_type.value.fields == (a2, b2)


def test_polymorphic_fn_type_params_do_not_leak() -> None:
    m = mod("type A { MkA }\ndef @f(%g: fn [A](A) -> A, %a: A) { %a }")
    a = m["f"].params[1].type_annotation
    assert isinstance(a, TypeCall) and a.func is m.get_global_type_var("A")


def test_escaped_strings_nanf_and_inff16() -> None:
    f = ex(r'fn (%x, Composite="a\"b\\n", Compiler="x\ty") { (nanf, inff16, -inff64) }')
    assert f.attrs.get("Composite") == 'a"b\\n'
    assert f.attrs.get("Compiler") == "x\ty"
    nan, inf16, ninf64 = f.body.fields
    assert math.isnan(nan.data.item()) and nan.data.dtype == np.float32
    assert inf16.data.dtype == np.float16 and inf16.data.item() == math.inf
    assert ninf64.data.dtype == np.float64 and ninf64.data.item() == -math.inf


# ---------------------------------------------------------------- types (§5)

def param_type(text: str, **kw):
    return ex(f"fn (%x: {text}) {{ %x }}", **kw).params[0].type_annotation


@pytest.mark.parametrize("text, shape, dtype", [
    ("Tensor[(2, 3), float32]", (2, 3), "float32"),
    ("Tensor[(64), float32]", (64,), "float32"),
    ("Tensor[(64,), int8]", (64,), "int8"),
    ("Tensor[(), bool]", (), "bool"),
    ("Tensor[(1, 2, 3, 4,), float16]", (1, 2, 3, 4), "float16"),
    ("float32", (), "float32"),
    ("float16x4", (), "float16x4"),
    ("int", (), "int32"),
    ("bool", (), "bool"),
])
def test_tensor_types(text: str, shape: tuple, dtype: str) -> None:
    ty = param_type(text)
    assert isinstance(ty, TensorType)
    assert ty.shape == shape and ty.dtype == dtype


def test_any_dimension() -> None:
    ty = param_type("Tensor[(?, 3, ?), float32]")
    assert ty.shape == (ANY, 3, ANY)
    assert ty.shape[0] is ANY


@pytest.mark.parametrize("text, arity", [("()", 0), ("(float32,)", 1), ("(float32)", 1),
                                         ("(float32, int8)", 2), ("(float32, int8,)", 2)])
def test_tuple_types(text: str, arity: int) -> None:
    # Parentheses in type position always make a tuple (§5.1).
    ty = param_type(text)
    assert isinstance(ty, TupleType) and len(ty.fields) == arity
    assert all(isinstance(f, TensorType) for f in ty.fields)


def test_nested_tuple_type() -> None:
    ty = param_type("((), ((float32)), (Tensor[(2), int32], bool))")
    assert isinstance(ty.fields[0], TupleType) and ty.fields[0].fields == ()
    assert isinstance(ty.fields[1].fields[0], TupleType)
    assert ty.fields[2].fields[0].shape == (2,)


def test_function_types() -> None:
    ty = param_type("fn (float32, (int8, bool)) -> fn () -> Tensor[(3), float32]")
    assert isinstance(ty, FuncType) and ty.type_params == ()
    assert len(ty.arg_types) == 2 and isinstance(ty.arg_types[1], TupleType)
    inner = ty.ret_type
    assert isinstance(inner, FuncType) and inner.arg_types == ()
    assert inner.ret_type.shape == (3,)


def test_adt_types() -> None:
    m = mod(LIST + "type Either[A, B] { L(A), R(B) }\ntype Unit { U }\n"
            "def @f(%a: List[float32], %b: Either[int8, List[bool]], %c: Unit[], %d: Unit) { %a }")
    lst, either, unit = (m.get_global_type_var(n) for n in ("List", "Either", "Unit"))
    a, b, c, d = (p.type_annotation for p in m["f"].params)
    assert isinstance(a, TypeCall) and a.func is lst and a.args[0].dtype == "float32"
    assert b.func is either and b.args[1].func is lst
    assert c.func is unit and c.args == () and d.func is unit and d.args == ()


def test_incomplete_type() -> None:
    ty = param_type("_")
    assert isinstance(ty, IncompleteType)
    ty = param_type("(_, Tensor[(2), float32])")
    assert isinstance(ty.fields[0], IncompleteType)
    assert ty.fields[0] is not param_type("_")


def test_type_param_shadows_adt_name() -> None:
    m = mod("type T { MkT }\ndef @f[T](%x: T, %y: List[T]) { %x }\n" + LIST +
            "def @g(%x: T) { %x }")
    tv = m["f"].type_params[0]
    assert m["f"].params[0].type_annotation is tv
    assert m["f"].params[1].type_annotation.args[0] is tv
    g_ty = m["g"].params[0].type_annotation
    assert isinstance(g_ty, TypeCall) and g_ty.func is m.get_global_type_var("T")


def test_type_param_applied() -> None:
    f = ex("fn [F, A](%x: F[A]) { %x }")
    ty = f.params[0].type_annotation
    assert isinstance(ty, TypeCall) and ty.func is f.type_params[0]
    assert ty.args == (f.type_params[1],)


def test_types_on_let_and_pattern_and_free_var() -> None:
    e = ex("free_var %v: (int32, float32); let %x: fn (int32) -> int32 = fn (%a: int32) { %a };"
           " match (%v) { (%p: int32, _) => %x(%p) }")
    assert isinstance(e.var.type_annotation, FuncType)
    clause = e.body.clauses[0]
    assert clause.lhs.patterns[0].var.type_annotation.dtype == "int32"
    assert isinstance(e.body.data.type_annotation, TupleType)


def test_type_data_type_params_in_constructor_fields() -> None:
    m = mod("type Pair[A, B] { MkPair(A, B, fn (A) -> B, (A, B)) }")
    data = m["Pair"]
    a, b = data.type_params
    f, t = data.constructors[0].inputs[2:]
    assert f.arg_types == (a,) and f.ret_type is b
    assert t.fields == (a, b)


# ---------------------------------------------------------------- spans

def test_spans_are_one_based_with_end_positions() -> None:
    e = ex("free_var %x;\n  add(%x,  %x)")
    add = op_call(e, "add")
    x = add.args[0]
    assert x.span == Span("string", 1, 10, 1, 12)      # the free_var declaration
    assert add.span.line == 2 and add.span.column == 3


def test_parameter_and_let_spans() -> None:
    f = fn_of("def @main(%long_name) {\n  let %y = 1;\n  %y\n}")
    assert f.params[0].span == Span("from_string", 2, 11, 2, 21)
    assert f.body.var.span == Span("from_string", 3, 7, 3, 9)
    assert f.span.line == 2 and f.span.column == 1


def test_parse_with_diagnostics_on_valid_text() -> None:
    from relaylang.syntax.parser import parse_with_diagnostics
    m, diags = parse_with_diagnostics(HEADER + "def @main() { 0 }")
    assert diags == []
    assert value(m["main"].body) == 0


def test_parse_returns_new_objects_each_time() -> None:
    a = fn_of("def @main(%x) { %x }")
    b = fn_of("def @main(%x) { %x }")
    assert a is not b and a.params[0] is not b.params[0]


def test_parser_state_does_not_leak_between_parses() -> None:
    mod(LIST + "def @main() { Nil }")
    with pytest.raises(rl.DiagnosticError):
        ex("Nil")
    with pytest.raises(rl.DiagnosticError):
        ex("%0")
