"""Building IR from Python (relaylang/ir/builder.py, `IRModule.from_expr`): TVM's names,
the same IR as parsing the equivalent text, and the right numbers when evaluated."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir import expr as E
from relaylang.ir import types as T
from relaylang.ir.attrs import DictAttrs
from relaylang.ir.node import ANY

# ---------------------------------------------------------------- var


def test_var_with_shape_is_a_tensor() -> None:
    x = rl.var("x", shape=(1, 3, 224, 224), dtype="float16")
    assert isinstance(x, E.Var) and x.name_hint == "x"
    t = x.type_annotation
    assert isinstance(t, T.TensorType) and t.shape == (1, 3, 224, 224) and t.dtype == "float16"
    assert rl.var("y", shape=[2, 3]).type_annotation.dtype == "float32"    # TVM's default


def test_var_shape_corner_cases() -> None:
    scalar = rl.var("s", shape=())
    assert scalar.type_annotation.shape == () and scalar.type_annotation.is_scalar
    dims = rl.var("d", shape=(np.int64(2), ANY)).type_annotation.shape
    assert dims == (2, ANY) and type(dims[0]) is int
    assert rl.var("i", shape=(4,), dtype="int").type_annotation.dtype == "int32"
    with pytest.raises(ValueError, match="dimensions are >= 0"):
        rl.var("x", shape=(-1, 3))
    with pytest.raises(TypeError, match="a dimension is an integer"):
        rl.var("x", shape=(2.5,))
    with pytest.raises(TypeError, match="a dimension is an integer"):
        rl.var("x", shape=(True,))
    with pytest.raises(TypeError, match="shape must be a list or tuple"):
        rl.var("x", shape=3)
    with pytest.raises(ValueError, match="'floaty' is not a dtype"):
        rl.var("x", shape=(2,), dtype="floaty")


def test_var_type_annotation() -> None:
    assert rl.var("x").type_annotation is None
    assert rl.var("x", "int8").type_annotation.shape == ()         # TVM: a dtype is a scalar
    assert rl.var("x", "int8").type_annotation.dtype == "int8"
    tt = rl.TupleType([rl.TensorType((2,)), rl.TensorType((), "bool")])
    assert rl.var("t", type_annotation=tt).type_annotation is tt
    with pytest.raises(ValueError, match="either type_annotation or shape"):
        rl.var("x", type_annotation=rl.TensorType((2,)), shape=(2,))
    with pytest.raises(TypeError, match="type_annotation must be a Relay type"):
        rl.var("x", type_annotation=(2, 3))
    with pytest.raises(TypeError, match="name_hint must be a string"):
        rl.var(3)


# ---------------------------------------------------------------- const


@pytest.mark.parametrize("value, dtype, shape", [
    (1, "int32", ()),               # TVM: int -> int32
    (1.5, "float32", ()),           # float -> float32
    (True, "bool", ()),
    (np.float64(2.0), "float32", ()),
    (np.int64(3), "int32", ()),
    (np.float16(1.0), "float16", ()),
    (np.array(7, dtype="uint8"), "uint8", ()),
    ([1, 2, 3], "int32", (3,)),
    ([[1.0], [2.0]], "float32", (2, 1)),
    (np.ones((2, 3)), "float32", (2, 3)),          # float64 data -> float32, as in TVM
    (np.ones((2,), dtype="int64"), "int32", (2,)),
    (np.zeros((0, 2), dtype="float32"), "float32", (0, 2)),
])
def test_const_dtypes(value, dtype, shape) -> None:
    c = rl.const(value)
    assert isinstance(c, E.Constant) and isinstance(c.data, np.ndarray)
    assert str(c.data.dtype) == dtype and c.data.shape == shape


def test_const_with_dtype_and_copying() -> None:
    assert rl.const(1, "float16").data.dtype == np.float16
    assert rl.const([1, 2], dtype="int64").data.dtype == np.int64      # asked for: kept
    assert rl.const(np.ones(2), dtype="float64").data.dtype == np.float64
    assert rl.const(2, dtype="float").data.dtype == np.float32            # canonical spelling
    source = np.arange(4, dtype="float32")
    c = rl.const(source)
    source[0] = 100
    assert c.data[0] == 0 and c.data.flags.c_contiguous
    fortran = np.asfortranarray(np.ones((2, 3), dtype="float32"))
    assert rl.const(fortran).data.flags.c_contiguous


def test_const_errors() -> None:
    with pytest.raises(TypeError, match="const: value must be"):
        rl.const("1")
    with pytest.raises(TypeError, match="const: value must be"):
        rl.const(rl.var("x"))
    with pytest.raises(TypeError, match="const: value must be"):
        rl.const(None)
    with pytest.raises(TypeError, match="numbers or bools"):
        rl.const(np.array([1 + 2j]))
    with pytest.raises(ValueError, match="is not a dtype"):
        rl.const(1, dtype="int3")


def test_const_prints_like_parsed_literals() -> None:
    for value, text in [(1, "1"), (1.5, "1.5f"), (True, "True"), (np.int64(2), "2")]:
        built = rl.IRModule.from_expr(rl.const(value))
        parsed = rl.parse(f'#[version = "0.0.5"]\ndef @main() {{ {text} }}')
        assert rl.structural_equal(built, parsed), text
        assert rl.astext(built) == rl.astext(parsed)


# ---------------------------------------------------------------- composite nodes


def test_builders_make_ir_nodes_and_answer_isinstance() -> None:
    x, y = rl.var("x"), rl.var("y")
    tup = rl.Tuple([x, y])
    assert type(tup) is E.Tuple and tup.fields == (x, y)
    assert isinstance(tup, rl.Tuple) and not isinstance(x, rl.Tuple)
    assert issubclass(E.Tuple, rl.Tuple)
    item = rl.TupleGetItem(tup, np.int64(1))
    assert type(item) is E.TupleGetItem and item.index == 1 and type(item.index) is int
    fn = rl.Function([x, y], item)
    assert type(fn) is E.Function and fn.params == (x, y) and isinstance(fn, rl.Function)
    let = rl.Let(x, rl.const(1.0), x)
    assert type(let) is E.Let and isinstance(let, rl.Let)
    cond = rl.If(rl.const(True), x, y)
    assert type(cond) is E.If and isinstance(cond, rl.If)
    gv = rl.GlobalVar("f")
    assert type(gv) is E.GlobalVar and gv.name_hint == "f" and isinstance(gv, rl.GlobalVar)
    call = rl.Call(gv, [x])
    assert type(call) is E.Call and call.args == (x,) and isinstance(call, rl.Call)
    ref = rl.RefCreate(x)
    assert isinstance(rl.RefWrite(ref, rl.RefRead(ref)), E.RefWrite)
    assert type(rl.TensorType([2, 3])) is T.TensorType
    assert isinstance(rl.TensorType([2]), rl.TensorType)


def test_function_attributes_and_types() -> None:
    x = rl.var("x", shape=(2,))
    fn = rl.Function([x], x, ret_type=rl.TensorType((2,)), attrs={"Primitive": 1})
    assert isinstance(fn.attrs, DictAttrs) and fn.attrs.get("Primitive") == 1
    text = rl.astext(rl.IRModule.from_expr(fn))
    assert "-> Tensor[(2), float32]" in text and "Primitive=1" in text
    a = T.TypeVar("A")
    poly = rl.Function([rl.var("v", type_annotation=a)], rl.var("w"), type_params=[a])
    assert poly.type_params == (a,)
    assert rl.Function([], rl.const(1)).attrs is None


def test_composite_errors_name_the_mistake() -> None:
    x = rl.var("x")
    with pytest.raises(TypeError, match="Function parameter 1 must be a Var"):
        rl.Function([x, "y"], x)
    with pytest.raises(TypeError, match="Function body must be a Relay expression"):
        rl.Function([x], 3)
    with pytest.raises(TypeError, match=r"Tuple field 1 .*wrap numbers and arrays with const"):
        rl.Tuple([x, 1.0])
    with pytest.raises(TypeError, match="Tuple fields must be a list or tuple"):
        rl.Tuple(x)
    with pytest.raises(ValueError, match="index must be >= 0"):
        rl.TupleGetItem(x, -1)
    with pytest.raises(TypeError, match="index must be an integer"):
        rl.TupleGetItem(x, "0")
    with pytest.raises(TypeError, match="bound variable must be a Var"):
        rl.Let(rl.const(1), x, x)
    with pytest.raises(TypeError, match="If cond must be a Relay expression"):
        rl.If(True, x, x)
    with pytest.raises(TypeError, match="Call attrs must be an Attrs object"):
        rl.Call(rl.op.get("nn.relu"), [x], attrs={"axis": 1})
    with pytest.raises(TypeError, match="Function attrs must be a dict"):
        rl.Function([x], x, attrs=[("Primitive", 1)])


# ---------------------------------------------------------------- IRModule.from_expr


def test_from_expr_function_becomes_main() -> None:
    x = rl.var("x", shape=(2,))
    fn = rl.Function([x], rl.nn.relu(x))
    mod = rl.IRModule.from_expr(fn)
    assert [gv.name_hint for gv in mod.functions] == ["main"] and mod["main"] is fn


def test_from_expr_wraps_an_expression_over_its_free_variables() -> None:
    a, b = rl.var("a", shape=(2,)), rl.var("b", shape=(2,))
    y = rl.var("y")
    body = rl.Let(y, rl.add(b, a), rl.multiply(y, b))
    mod = rl.IRModule.from_expr(body)
    main = mod["main"]
    assert main.params == (b, a) and main.body is body      # first use order; y is bound


def test_from_expr_global_symbol_functions_and_clash() -> None:
    x = rl.var("x", shape=(2,))
    named = rl.Function([x], x, attrs={"global_symbol": "entry"})
    assert [gv.name_hint for gv in rl.IRModule.from_expr(named).functions] == ["entry"]

    a = rl.var("a", shape=(2,))
    double = rl.Function([a], rl.add(a, a))
    gv = rl.GlobalVar("double")
    call = rl.Call(gv, [x])
    by_var = rl.IRModule.from_expr(call, functions={gv: double})
    by_name = rl.IRModule.from_expr(call, functions={"double": double})
    for mod in (by_var, by_name):
        assert list(mod.functions)[0] is gv         # the GlobalVar the call uses
        assert [g.name_hint for g in mod.functions] == ["double", "main"]
        out = rl.evaluate(mod, np.array([1.0, 2.5], dtype="float32"))
        np.testing.assert_allclose(out, [2.0, 5.0])

    other_main = rl.Function([a], a)
    clash = rl.IRModule.from_expr(call, functions={"main": other_main, gv: double})
    assert [g.name_hint for g in clash.functions] == ["main", "double", "main_1"]
    with pytest.raises(ValueError, match="global_symbol @double"):
        rl.IRModule.from_expr(rl.Function([x], x, attrs={"global_symbol": "double"}),
                              functions={gv: double})
    with pytest.raises(TypeError, match="expected a Relay expression"):
        rl.IRModule.from_expr(3)
    with pytest.raises(TypeError, match="maps GlobalVars"):
        rl.IRModule.from_expr(x, functions={gv: x})


def test_from_expr_keeps_type_definitions() -> None:
    prelude = rl.parse('#[version = "0.0.5"]\ntype Box[A] { Box(A) }\n'
                       'def @main(%x: float32) { Box(%x) }')
    data = next(iter(prelude.type_definitions.values()))
    ctor = data.constructors[0]
    x = rl.var("x", "float32")
    for defs in ({data.header: data}, [data]):
        mod = rl.IRModule.from_expr(rl.Function([x], rl.Call(ctor, [x])), type_defs=defs)
        assert list(mod.type_definitions.values()) == [data]
        assert rl.structural_equal(mod, prelude)
    typed = rl.transform.InferType()(mod)
    assert isinstance(typed["main"].body.checked_type, T.TypeCall)


# ---------------------------------------------------------------- agrees with the parser

CONV_TEXT = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 8, 8), float32], %b: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, meta[relay.Constant][0], strides=[2, 2], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  nn.relu(%1)
}
"""


def conv_relu(w: np.ndarray) -> rl.IRModule:
    x = rl.var("x", shape=(1, 3, 8, 8))
    b = rl.var("b", shape=(4,))
    y = rl.nn.conv2d(x, rl.const(w), strides=(2, 2), padding=(1, 1, 1, 1), channels=4,
                     kernel_size=(3, 3))
    return rl.IRModule.from_expr(rl.Function([x, b], rl.nn.relu(rl.nn.bias_add(y, b))))


def test_conv2d_relu_equals_the_parsed_text() -> None:
    w = np.random.default_rng(0).normal(size=(4, 3, 3, 3)).astype("float32")
    built = conv_relu(w)
    parsed = rl.parse(CONV_TEXT, metadata={"relay.Constant": [w]})
    assert rl.structural_equal(built, parsed)
    assert rl.astext(built) == rl.astext(parsed)
    assert rl.astext(built, show_meta_data=False) == rl.astext(parsed, show_meta_data=False)
    # The printed text parses back to the same program (metadata section included).
    assert rl.structural_equal(rl.parse(rl.astext(built)), built)
    typed = rl.transform.InferType()(built)
    out = typed["main"].body.checked_type
    assert out.shape == (1, 4, 4, 4) and out.dtype == "float32"


LET_IF_TEXT = """#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32], %c: bool) -> (Tensor[(2), float32], Tensor[(2), float32]) {
  let %y = multiply(%x, 2f);
  let %t = if (%c) {
    (%y, %x)
  } else {
    (%x, add(%y, 1f))
  };
  (%t.1, %t.0)
}
"""


def let_if_tuple() -> rl.IRModule:
    x, c = rl.var("x", shape=(2,)), rl.var("c", "bool")
    y, t = rl.var("y"), rl.var("t")
    branch = rl.If(c, rl.Tuple([y, x]), rl.Tuple([x, rl.add(y, rl.const(1.0))]))
    body = rl.Let(y, rl.multiply(x, rl.const(2.0)),
                  rl.Let(t, branch, rl.Tuple([rl.TupleGetItem(t, 1), rl.TupleGetItem(t, 0)])))
    ret = rl.TupleType([rl.TensorType((2,)), rl.TensorType((2,))])
    return rl.IRModule.from_expr(rl.Function([x, c], body, ret_type=ret))


def test_let_if_tuple_program_equals_the_parsed_text() -> None:
    built, parsed = let_if_tuple(), rl.parse(LET_IF_TEXT)
    assert rl.structural_equal(built, parsed)
    assert rl.astext(built) == rl.astext(parsed)
    rl.transform.InferType()(built)


# ---------------------------------------------------------------- evaluation


def test_evaluate_built_conv_module() -> None:
    rng = np.random.default_rng(1)
    w = rng.normal(size=(4, 3, 3, 3)).astype("float32")
    x = rng.normal(size=(1, 3, 8, 8)).astype("float32")
    b = rng.normal(size=(4,)).astype("float32")
    out = rl.evaluate(conv_relu(w), x, b)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.zeros((1, 4, 4, 4), dtype="float32")
    for i in range(4):
        for j in range(4):
            patch = padded[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            expected[0, :, i, j] = np.tensordot(w, patch, axes=([1, 2, 3], [0, 1, 2]))
    expected = np.maximum(expected + b[None, :, None, None], 0)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_evaluate_let_if_tuple() -> None:
    x = np.array([1.0, -3.0], dtype="float32")
    first, second = rl.evaluate(let_if_tuple(), x, np.array(True))
    np.testing.assert_allclose(first, x)
    np.testing.assert_allclose(second, 2 * x)
    first, second = rl.evaluate(let_if_tuple(), x, np.array(False))
    np.testing.assert_allclose(first, 2 * x + 1)
    np.testing.assert_allclose(second, x)


def test_evaluate_mlp_with_constants_and_references() -> None:
    rng = np.random.default_rng(2)
    w1, w2 = rng.normal(size=(8, 4)).astype("float32"), rng.normal(size=(3, 8)).astype("float32")
    x = rl.var("x", shape=(2, 4))
    h = rl.nn.relu(rl.nn.dense(x, rl.const(w1), units=8))
    y = rl.nn.softmax(rl.nn.dense(h, rl.const(w2)), axis=-1)
    data = rng.normal(size=(2, 4)).astype("float32")
    out = rl.evaluate(rl.IRModule.from_expr(rl.Function([x], y)), data)
    logits = np.maximum(data @ w1.T, 0) @ w2.T
    expected = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=1e-5)

    r = rl.var("r")
    prog = rl.Let(r, rl.RefCreate(rl.const(1.0)),
                  rl.Let(rl.var("_"), rl.RefWrite(r, rl.add(rl.RefRead(r), rl.const(2.0))),
                         rl.RefRead(r)))
    assert float(rl.evaluate(rl.IRModule.from_expr(prog))) == 3.0


# ---------------------------------------------------------------- import cost


def test_import_and_building_without_constants_do_not_load_numpy() -> None:
    code = ("import sys, relaylang as rl; a = 'numpy' in sys.modules; "
            "x = rl.var('x', shape=(1, 3)); y = rl.nn.relu(rl.add(x, x)); "
            "f = rl.Function([x], rl.Tuple([y])); m = rl.IRModule.from_expr(f); "
            "dir(rl.nn); rl.op.make.concatenate; "
            "print(a, 'numpy' in sys.modules, 'llvmlite' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False", "False"]


def test_import_relaylang_does_not_load_the_op_registry() -> None:
    code = ("import sys, relaylang as rl; rl.__version__; "
            "print(sorted(m for m in sys.modules if m.startswith('relaylang')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "['relaylang']"
