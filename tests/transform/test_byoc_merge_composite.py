"""MergeComposite (relaylang/transform/byoc/merge_composite.py), mirroring TVM's
tests/python/relay/test_pass_merge_composite.py: each test names the TVM test it mirrors.
Results are checked by the composites they hold and by running both programs."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.dataflow_pattern import (
    TupleGetItemPattern,
    is_op,
    is_tuple,
    wildcard,
)
from relaylang.ir.expr import Call, Function
from relaylang.ir.traverse import post_order
from relaylang.transform import MergeComposite, PassContext
from relaylang.transform.byoc import CollectDiagnostics


def composites(mod) -> list[tuple[str, str]]:
    """(Composite, PartitionedFromPattern) of each composite call of @main, callees first."""
    return [(n.op.attrs.get("Composite"), n.op.attrs.get("PartitionedFromPattern"))
            for n in post_order(mod["main"]) if isinstance(n, Call) and isinstance(n.op, Function)
            and n.op.attrs is not None and n.op.attrs.get("Composite")]


def same_results(before, after, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal([int(d) for d in p.type_annotation.shape]).astype("float32")
            for p in before["main"].params]
    np.testing.assert_allclose(rl.evaluate(after, *args), rl.evaluate(before, *args), rtol=1e-5)


def add_sub_mul():
    x, y = wildcard(), wildcard()
    return (x + y) * (x - y)


def add_relu():
    return is_op("nn.relu")(wildcard() + wildcard())


def conv_bias_relu():
    return is_op("nn.relu")(is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), wildcard()),
                                                 wildcard()))


def run(text: str, table):
    mod = rl.parse(text)
    out = MergeComposite(table)(mod)
    same_results(mod, out)
    # printing and parsing back gives the same module
    assert rl.structural_equal(rl.parse(rl.astext(out)), out)
    return out


T10 = "Tensor[(10, 10), float32]"


def test_simple_merge():
    # TVM: test_simple_merge
    out = run(f"""#[version = "0.0.5"]
def @main(%a: {T10}, %b: {T10}) {{
  %0 = add(%a, %b);
  nn.relu(%0)
}}""", [("add_relu", add_relu())])
    assert composites(out) == [("add_relu", "add_nn.relu_")]


def test_branch_merge():
    # TVM: test_branch_merge
    out = run(f"""#[version = "0.0.5"]
def @main(%a: {T10}, %b: {T10}, %c: {T10}) {{
  %0 = add(%a, %b);
  %1 = subtract(%a, %b);
  %2 = multiply(%0, %1);
  %3 = add(%c, %2);
  %4 = subtract(%c, %2);
  %5 = multiply(%3, %4);
  nn.relu(%5)
}}""", [("add_sub_mul", add_sub_mul())])
    assert composites(out) == [("add_sub_mul", "add_subtract_multiply_")] * 2


def test_reuse_call_merge():
    # TVM: test_reuse_call_merge (add_add_add: one call used twice)
    x, y = wildcard(), wildcard()
    sub = x + y
    pattern = (sub + x) + sub
    out = run(f"""#[version = "0.0.5"]
def @main(%a: {T10}, %b: {T10}) {{
  %0 = add(%a, %b);
  %1 = add(%a, %0);
  add(%1, %0)
}}""", [("add_add_add", pattern)])
    assert composites(out) == [("add_add_add", "add_add_add_")]


def test_multiple_patterns():
    # TVM: test_multiple_patterns
    text = """#[version = "0.0.5"]
def @main(%data: Tensor[(1, 8, 6, 6), float32], %kernel: Tensor[(4, 8, 1, 1), float32], %bias: Tensor[(4), float32], %a: Tensor[(1, 4, 6, 6), float32], %b: Tensor[(1, 4, 6, 6), float32]) {
  %0 = nn.conv2d(%data, %kernel);
  %1 = nn.bias_add(%0, %bias);
  %2 = nn.relu(%1);
  %3 = add(%2, %a);
  %4 = nn.relu(%3);
  multiply(%4, %b)
}"""
    out = run(text, [("conv2d_bias_relu", conv_bias_relu()), ("add_relu", add_relu())])
    assert composites(out) == [("conv2d_bias_relu", "nn.conv2d_nn.bias_add_nn.relu_"),
                               ("add_relu", "add_nn.relu_")]


def test_optional_pattern():
    # TVM: test_optional_pattern
    pattern = is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), wildcard()), wildcard()) \
        .optional(lambda x: is_op("nn.relu")(x))
    out = run("""#[version = "0.0.5"]
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(3, 3, 1, 1), float32], %b: Tensor[(3), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w);
  nn.bias_add(%3, %b)
}""", [("layer", pattern)])
    assert composites(out) == [("layer", "nn.conv2d_nn.bias_add_nn.relu_"),
                               ("layer", "nn.conv2d_nn.bias_add_")]


def test_merge_order():
    # TVM: test_merge_order
    def a():
        return is_op("nn.relu")(is_op("abs")(is_op("add")(wildcard(), wildcard())))

    def b():
        return is_op("abs")(is_op("add")(wildcard(), wildcard()))

    def c():
        return is_op("nn.relu")(is_op("abs")(wildcard()))
    text = f"""#[version = "0.0.5"]
def @main(%a: {T10}, %b: {T10}) {{
  %0 = add(%a, %b);
  %1 = abs(%0);
  nn.relu(%1)
}}"""
    assert composites(run(text, [("A", a()), ("B", b()), ("C", c())])) == \
        [("A", "add_abs_nn.relu_")]
    assert composites(run(text, [("B", b()), ("C", c()), ("A", a())])) == [("B", "add_abs_")]
    assert composites(run(text, [("C", c()), ("A", a()), ("B", b())])) == \
        [("C", "abs_nn.relu_")]


def test_parallel_merge():
    # TVM: test_parallel_merge (two branches sharing inputs, each its own composite)
    pattern = is_op("add")(wildcard(), wildcard())
    out = run(f"""#[version = "0.0.5"]
def @main(%a: {T10}, %b: {T10}) {{
  %0 = add(%a, %b);
  %1 = add(%a, %b);
  subtract(%0, %1)
}}""", [("add", pattern)])
    assert composites(out) == [("add", "add_")] * 2


def test_multiple_input_subgraphs():
    # TVM: test_multiple_input_subgraphs (two independent chains)
    out = run(f"""#[version = "0.0.5"]
def @main(%a: {T10}, %b: {T10}, %c: {T10}, %d: {T10}) {{
  %0 = add(%a, %b);
  %1 = nn.relu(%0);
  %2 = add(%c, %d);
  %3 = nn.relu(%2);
  multiply(%1, %3)
}}""", [("add_relu", add_relu())])
    assert composites(out) == [("add_relu", "add_nn.relu_")] * 2


def test_tuple_get_item_merge():
    # TVM: test_tuple_get_item_merge (bn then relu of its first output)
    x, gamma, beta, mean, var = (wildcard() for _ in range(5))
    bn = is_op("nn.batch_norm")(x, gamma, beta, mean, var)
    pattern = is_op("nn.relu")(TupleGetItemPattern(bn, 0))
    out = run("""#[version = "0.0.5"]
def @main(%x: Tensor[(1, 8, 4, 4), float32], %g: Tensor[(8), float32], %b: Tensor[(8), float32], %m: Tensor[(8), float32], %v: Tensor[(8), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v);
  %1 = %0.0;
  nn.relu(%1)
}""", [("bn_relu", pattern)])
    assert composites(out) == [("bn_relu", "nn.batch_norm_TupleGetItem0_nn.relu_")]


def test_pattern_with_check():
    # TVM: test_pattern_with_check
    def before():
        return rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(1, 10, 10, 10), float32], %w: Tensor[(10, 10, 3, 3), float32], %b: Tensor[(10), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b);
  nn.relu(%1)
}""")

    def nchw(call):
        return call.args[0].args[0].attrs.data_layout == "NCHW"

    def nhwc(call):
        return call.args[0].args[0].attrs.data_layout == "NHWC"
    assert composites(MergeComposite([("cbr", conv_bias_relu(), nhwc)])(before())) == []
    assert composites(MergeComposite([("cbr", conv_bias_relu(), nchw)])(before())) == \
        [("cbr", "nn.conv2d_nn.bias_add_nn.relu_")]


def test_diamond_not_merge():
    # TVM: test_diamond_not_merge
    conv = conv_bias_relu()
    pattern = is_op("multiply")(conv, is_op("clip")(conv))
    text = """#[version = "0.0.5"]
def @main(%data: Tensor[(1, 8, 4, 4), float32], %kernel: Tensor[(4, 8, 1, 1), float32], %bias: Tensor[(4), float32]) {
  %0 = nn.conv2d(%data, %kernel);
  %1 = nn.bias_add(%0, %bias);
  %2 = nn.relu(%1);
  %3 = add(%2, 1f);
  %4 = clip(%3, a_min=0f, a_max=255f);
  multiply(%2, %4)
}"""
    mod = rl.parse(text)
    out = MergeComposite([("pat", pattern)])(mod)
    assert composites(out) == []
    assert rl.structural_equal(out, rl.transform.InferType()(mod))


def test_type_check():
    # TVM: test_type_check (a check reading the inferred types)
    def check(call):
        conv = call.args[0].args[0]
        return conv.checked_type.shape[1] == 4       # the output channels
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, 8, 4, 4), float32], %w: Tensor[(%C, 8, 1, 1), float32], %b: Tensor[(%C), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = nn.bias_add(%0, %b);
  nn.relu(%1)
}"""
    four = rl.parse(text.replace("%C", "4"))
    five = rl.parse(text.replace("%C", "5"))
    assert composites(MergeComposite([("cbr", conv_bias_relu(), check)])(four))
    assert not composites(MergeComposite([("cbr", conv_bias_relu(), check)])(five))


def test_pattern_table_by_name_and_notes():
    # the text form, and a pattern that matches nothing: a note, not an error
    mod = rl.parse(f"""#[version = "0.0.5"]
def @main(%a: {T10}, %b: {T10}) {{
  %0 = add(%a, %b);
  nn.relu(%0)
}}""")
    collect = CollectDiagnostics()
    with PassContext(instruments=[collect]):
        out = rl.transform.get_pass("MergeComposite{pattern_table=example}")(mod)
    assert composites(out) == [("example.add_relu", "add_nn.relu_")]
    notes = [d for d in collect.diagnostics if d.severity.value == "note"]
    assert [d.message.split("`")[1] for d in notes] == ["example.conv2d_bias_relu",
                                                        "example.dense_bias"]
    sink: list = []
    with PassContext(config={"diagnostics": sink}):
        MergeComposite([("nothing", is_op("exp")(wildcard()))])(mod)
    assert len(sink) == 1 and "matched nothing" in sink[0].message


def test_bad_tables():
    mod = rl.parse(f"""#[version = "0.0.5"]
def @main(%a: {T10}) {{ nn.relu(%a) }}""")
    with pytest.raises(TypeError, match="entry 0"):
        MergeComposite([("x",)])(mod)
    with pytest.raises(TypeError, match="pattern_table"):
        MergeComposite("example")
    with pytest.raises(ValueError, match="no pattern table"):
        MergeComposite(pattern_table="no_such_target")(mod)


def test_concat_tuple_pattern():
    # TVM: test_einsum_reshape_pattern's shape: a call of a fuzzy tuple
    out = run(f"""#[version = "0.0.5"]
def @main(%a: {T10}, %b: {T10}) {{
  %0 = (%a, %b);
  %1 = concatenate(%0);
  nn.relu(%1)
}}""", [("concat_relu", is_op("nn.relu")(is_op("concatenate")(is_tuple(None))))])
    assert composites(out) == [("concat_relu", "Tuple_concatenate_nn.relu_")]


def test_deep_chain():
    x = rl.var("x", shape=(4,))
    y = x
    for _ in range(5000):
        y = rl.nn.relu(rl.add(y, rl.const(1.0)))
    mod = rl.IRModule.from_expr(rl.Function([x], y))
    out = MergeComposite([("add_relu", add_relu())])(mod)
    assert len(composites(out)) == 5000


def test_einsum_reshape_pattern():
    # TVM: test_einsum_reshape_pattern (optional reshapes around an einsum of a tuple; run
    # through the golden harness too, with the table registered for a test target)
    from tvm_golden import assert_same, run_golden

    from relaylang.ir.attrs import DictAttrs
    from relaylang.transform.byoc import register_pattern_table, unregister_target

    def make_einsum_reshape_pattern():
        x = wildcard()
        x = is_op("reshape")(x) | x
        y = wildcard()
        y = is_op("reshape")(y) | y
        z = is_op("einsum")(is_tuple([x, y]))
        return is_op("reshape")(z) | z

    def before():
        a, b = rl.var("a", shape=(10, 10)), rl.var("b", shape=(10, 10))
        c, d = rl.reshape(a, newshape=[20, 5]), rl.reshape(b, newshape=[20, 5])
        r = rl.einsum(rl.Tuple([c, d]), equation="...ab,...cb->...ac")
        return rl.IRModule.from_expr(rl.Function([a, b], r))

    def expected():
        func = before()["main"]
        # (TVM's attributes are a map; relaylang's keep the order the pass gives them)
        func = Function(func.params, func.body, attrs=DictAttrs((
            ("PartitionedFromPattern", "reshape_reshape_Tuple_einsum_"),
            ("Composite", "einsum_reshape"))))
        input0, input1 = rl.var("a", shape=(10, 10)), rl.var("b", shape=(10, 10))
        return rl.IRModule.from_expr(rl.Function([input0, input1],
                                                 Call(func, (input0, input1))))

    table = [("einsum_reshape", make_einsum_reshape_pattern())]
    out = MergeComposite(table)(before())
    assert composites(out) == [("einsum_reshape", "reshape_reshape_Tuple_einsum_")]
    assert_same(out, expected())
    register_pattern_table("t_einsum", table)
    try:
        assert_same(run_golden(before(), "MergeComposite{pattern_table=t_einsum}"), expected())
    finally:
        unregister_target("t_einsum")
