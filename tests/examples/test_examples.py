"""The programs in examples/: they parse cleanly, have the structure their header
comments describe, and (once the printer exists) survive a print/parse round trip."""
from __future__ import annotations

from pathlib import Path

import pytest

import relaylang as rl
from relaylang.ir import (Call, Constructor, Function, FuncType, GlobalVar, If, Let, Match, Op,
                          PatternConstructor, PatternVar, PatternWildcard, RefCreate, RefRead,
                          RefWrite, TensorType, TupleGetItem, TupleType, TypeCall, Var, pre_order)
from relaylang.syntax.parser import parse_with_diagnostics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PATHS = sorted(EXAMPLES.glob("*.relay"))
EXPECTED = {"attention", "closures", "conv_bn_relu", "list_adt", "mlp", "recursion",
            "references"}


def load(name: str) -> rl.IRModule:
    path = EXAMPLES / f"{name}.relay"
    return rl.parse(path.read_text(), source_name=path.name)


def nodes(mod: rl.IRModule, name: str = "main") -> list:
    return list(pre_order(mod[name]))


def op_calls(mod: rl.IRModule, op_name: str, fn: str = "main") -> list[Call]:
    return [n for n in nodes(mod, fn)
            if isinstance(n, Call) and isinstance(n.op, Op) and n.op.name == op_name]


def global_calls(mod: rl.IRModule, callee: str, fn: str) -> list[Call]:
    return [n for n in nodes(mod, fn)
            if isinstance(n, Call) and isinstance(n.op, GlobalVar) and n.op.name_hint == callee]


def tensor(shape: tuple, dtype: str = "float32"):
    return lambda t: isinstance(t, TensorType) and t.shape == shape and t.dtype == dtype


# ------------------------------------------------------------------ every file


def test_the_listed_examples_exist():
    assert EXPECTED <= {p.stem for p in PATHS}


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_example_parses_without_diagnostics(path):
    mod, diagnostics = parse_with_diagnostics(path.read_text(), source_name=path.name)
    assert diagnostics == []
    assert "main" in mod


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_example_header_states_the_expected_result(path):
    text = path.read_text()
    head, _, _ = text.partition('#[version = "0.0.5"]')
    assert head.startswith(f"// {path.name} -- ")
    assert "Expected result of @main" in head


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_every_global_is_fully_annotated(path):
    mod = rl.parse(path.read_text(), source_name=path.name)
    for gv, fn in mod.functions.items():
        assert fn.ret_type is not None, f"@{gv.name_hint} has no result type"
        for p in fn.params:
            assert p.type_annotation is not None, f"%{p.name_hint} of @{gv.name_hint}"


# ------------------------------------------------------------------ structure


def test_conv_bn_relu_structure():
    mod = load("conv_bn_relu")
    main = mod["main"]
    assert [p.name_hint for p in main.params] == [
        "data", "conv0_weight", "bn0_gamma", "bn0_beta", "bn0_moving_mean", "bn0_moving_var"]
    assert tensor((1, 3, 32, 32))(main.params[0].type_annotation)
    assert tensor((1, 16, 32, 32))(main.ret_type)
    relu = main.body
    assert isinstance(relu.op, Op) and relu.op.name == "nn.relu"
    first = relu.args[0]
    assert isinstance(first, TupleGetItem) and first.index == 0
    bn = first.tuple_value
    assert bn.op.name == "nn.batch_norm" and len(bn.args) == 5
    assert list(bn.args[1:]) == list(main.params[2:])
    assert bn.attrs.epsilon == pytest.approx(2e-5) and bn.attrs.axis == 1
    conv = bn.args[0]
    assert conv.op.name == "nn.conv2d" and list(conv.args) == list(main.params[:2])
    assert conv.attrs.padding == (1, 1, 1, 1)
    assert conv.attrs.channels == 16
    assert conv.attrs.kernel_size == (3, 3)
    assert conv.attrs.strides == (1, 1) and conv.attrs.data_layout == "NCHW"


def test_mlp_structure():
    mod = load("mlp")
    main = mod["main"]
    chain = []
    node = main.body
    while isinstance(node, Call):
        chain.append(node.op.name)
        node = node.args[0]
    assert node is main.params[0]
    assert chain[::-1] == ["nn.batch_flatten", "nn.dense", "nn.bias_add", "nn.relu",
                           "nn.dense", "nn.bias_add", "nn.softmax"]
    assert [c.attrs.units for c in op_calls(mod, "nn.dense")] == [10, 128]  # pre-order
    assert main.body.attrs.axis == -1
    assert tensor((128, 784))(main.params[1].type_annotation)
    assert tensor((1, 10))(main.ret_type)


def test_recursion_calls_itself_through_globals():
    mod = load("recursion")
    for name in ("factorial", "sum_to"):
        fn = mod[name]
        assert isinstance(fn.body, If)
        assert len(global_calls(mod, name, name)) == 1
        assert all(tensor((), "int32")(p.type_annotation) for p in fn.params)
        assert tensor((), "int32")(fn.ret_type)
    main = mod["main"]
    assert [c.op.name_hint for c in global_calls(mod, "factorial", "main")
            + global_calls(mod, "sum_to", "main")] == ["factorial", "sum_to"]
    assert isinstance(main.ret_type, TupleType) and len(main.ret_type.fields) == 2


def test_list_adt_declares_cons_and_nil():
    mod = load("list_adt")
    data = mod["List"]
    assert [c.name for c in data.constructors] == ["Cons", "Nil"]
    assert [tv.name_hint for tv in data.type_params] == ["A"]
    cons = mod.get_constructor("Cons")
    assert isinstance(cons.inputs[1], TypeCall) and cons.inputs[1].func is data.header
    for name in ("map", "foldl", "foldr", "length", "last", "range", "sum_list", "main"):
        assert name in mod
    assert [tv.name_hint for tv in mod["map"].type_params] == ["A", "B"]
    assert [tv.name_hint for tv in mod["foldl"].type_params] == ["A", "B"]


def test_list_adt_matches_on_constructor_patterns():
    mod = load("list_adt")
    body = mod["map"].body
    assert isinstance(body, Match) and body.complete
    first, second = (c.lhs for c in body.clauses)
    assert isinstance(first, PatternConstructor) and first.constructor.name == "Cons"
    assert all(isinstance(p, PatternVar) for p in first.patterns)
    assert isinstance(second, PatternConstructor) and second.constructor.name == "Nil"
    length = mod["length"].body
    assert isinstance(length.clauses[0].lhs.patterns[0], PatternWildcard)
    last = mod["last"].body
    assert isinstance(last, Match) and not last.complete          # match?
    nested = last.clauses[0].lhs.patterns[1]
    assert isinstance(nested, PatternConstructor) and nested.constructor.name == "Nil"


def test_list_adt_main_builds_and_folds_a_list():
    mod = load("list_adt")
    built = [n for n in nodes(mod) if isinstance(n, Call) and isinstance(n.op, Constructor)]
    assert [c.op.name for c in built].count("Cons") == 4
    assert global_calls(mod, "map", "main") and global_calls(mod, "sum_list", "main")
    assert global_calls(mod, "foldl", "sum_list")


def test_closures_structure():
    mod = load("closures")
    adder = mod["make_adder"]
    assert isinstance(adder.ret_type, FuncType)
    inner = adder.body
    assert isinstance(inner, Function)
    assert adder.params[0] in list(pre_order(inner.body))      # captures %k
    main = mod["main"]
    lets = [n for n in nodes(mod) if isinstance(n, Let)]
    loop = next(let for let in lets if let.var.name_hint == "loop")
    assert isinstance(loop.value, Function)
    assert loop.var in list(pre_order(loop.value.body))         # let-bound recursion
    assert global_calls(mod, "compose", "main")
    assert [tv.name_hint for tv in mod["compose"].type_params] == ["A", "B", "C"]
    assert main.ret_type is not None


def test_references_structure():
    mod = load("references")
    all_nodes = nodes(mod) + nodes(mod, "make_counter")
    kinds = {type(n) for n in all_nodes}
    assert {RefCreate, RefRead, RefWrite} <= kinds
    sequenced = [n for n in nodes(mod) if isinstance(n, Let) and n.var.name_hint == ""]
    assert len(sequenced) >= 3           # `%loop(1);` and the two `%counter.0();`
    writes = [n for n in nodes(mod) if isinstance(n, RefWrite)]
    assert len(writes) == 2 and all(isinstance(w.ref, Var) for w in writes)
    ret = mod["make_counter"].ret_type
    assert isinstance(ret, TupleType) and all(isinstance(t, FuncType) for t in ret.fields)
    assert isinstance(ret.fields[0].ret_type, TupleType) and ret.fields[0].ret_type.fields == ()


def test_attention_structure():
    mod = load("attention")
    mms = op_calls(mod, "nn.batch_matmul")
    assert len(mms) == 2 and all(m.attrs.transpose_b for m in mms)
    assert [c.attrs.axes for c in op_calls(mod, "transpose")] == [(0, 2, 1)]
    assert {c.attrs.newshape for c in op_calls(mod, "reshape")} == {(-1, 16), (1, 4, 16)}
    assert len(op_calls(mod, "nn.dense")) == 4
    (div,) = op_calls(mod, "divide")
    assert float(div.args[1].data) == 4.0
    assert len(op_calls(mod, "nn.softmax")) == 1


def test_graph_bindings_share_nodes():
    mod = load("attention")
    main = mod["main"]
    projections = op_calls(mod, "nn.dense")
    shared = [d for d in projections if d.args[0].op.name == "reshape"
              and d.args[0].args[0] is main.params[0]]
    assert len(shared) == 3 and len({id(d.args[0]) for d in shared}) == 1


# ------------------------------------------------------------------ round trip


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_example_round_trips_through_the_printer(path):
    printer = pytest.importorskip("relaylang.syntax.printer")
    equal = pytest.importorskip("relaylang.ir.equal")
    mod = rl.parse(path.read_text(), source_name=path.name)
    text = printer.astext(mod)
    again = rl.parse(text, source_name=f"printed {path.name}")
    assert equal.structural_equal(again, mod), text
    assert printer.astext(again) == text
