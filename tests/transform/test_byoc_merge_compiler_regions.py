"""MergeCompilerRegions (relaylang/transform/byoc/merge_compiler_regions.py), mirroring
TVM's tests/python/relay/test_pass_merge_compiler_regions.py: each test names the TVM
test it mirrors; the annotated inputs and expected outputs are TVM's."""
from __future__ import annotations

import numpy as np

import relaylang as rl
from relaylang.transform import (
    AnnotateTarget,
    InferType,
    MergeCompilerRegions,
    PartitionGraph,
)
from relaylang.transform.byoc import register_target_op, unregister_target
from relaylang.transform.byoc.annotations import compiler_begin, compiler_end
from relaylang.transform.byoc.regions import AnnotatedRegionSet


def check(before, expected) -> None:
    result = MergeCompilerRegions()(before)
    assert rl.structural_equal(result, InferType()(expected)), rl.astext(result)
    assert rl.structural_equal(rl.parse(rl.astext(result)), result)


def test_diamond_graph_fanouts():
    # TVM: test_diamond_graph_fanouts
    def diamond_graph_fanouts():
        data = rl.var("data", shape=(10, 10))
        O_1 = rl.abs(compiler_begin(data, "test"))
        ce_1, ce_2 = compiler_end(O_1, "test"), compiler_end(O_1, "test")
        O_2 = rl.nn.relu(compiler_begin(ce_1, "test"))
        ce_3 = compiler_end(O_2, "test")
        X = rl.tanh(compiler_begin(ce_2, "default"))
        ce_4 = compiler_end(X, "default")
        O_3 = rl.add(compiler_begin(ce_3, "test"), compiler_begin(ce_4, "test"))
        return rl.IRModule.from_expr(rl.Function([data], compiler_end(O_3, "test")))

    def expected():
        data = rl.var("data", shape=(10, 10))
        O_1 = rl.abs(compiler_begin(data, "test"))
        ce_2 = compiler_end(O_1, "test")
        O_2 = rl.nn.relu(O_1)
        ce_3 = compiler_end(O_2, "test")
        X = rl.tanh(compiler_begin(ce_2, "default"))
        ce_4 = compiler_end(X, "default")
        O_3 = rl.add(compiler_begin(ce_3, "test"), compiler_begin(ce_4, "test"))
        return rl.IRModule.from_expr(rl.Function([data], compiler_end(O_3, "test")))
    check(diamond_graph_fanouts(), expected())


def test_example_graph():
    # TVM: test_example_graph (the example of the RFC on graph partitioning)
    def inputs():
        return [rl.var(f"in_{i}", shape=(10, 10), dtype="float32") for i in range(1, 11)]
    b, e = compiler_begin, compiler_end

    def annotated():
        ins = inputs()
        in_1, in_2, in_3, in_4, in_5, in_6, in_7, in_8, in_9, in_10 = ins
        node0 = rl.add(b(in_1, "test"), b(in_2, "test"))
        node1 = rl.add(b(in_3, "test"), b(in_4, "test"))
        node2 = rl.add(b(e(node0, "test"), "test"), b(e(node1, "test"), "test"))
        end2 = e(node2, "test")
        node3 = rl.subtract(b(in_5, "default"), b(in_6, "default"))
        dbegin2 = b(in_7, "default")
        node4 = rl.subtract(dbegin2, b(e(node3, "default"), "default"))
        dend2 = e(node4, "default")
        node5 = rl.add(b(end2, "test"), b(dend2, "test"))
        end3, end4 = e(node5, "test"), e(node5, "test")
        node6 = rl.subtract(b(in_8, "default"), b(end3, "default"))
        node7 = rl.add(b(in_9, "test"), b(end4, "test"))
        end5 = e(node7, "test")
        dend3 = e(node6, "default")
        node8 = rl.add(b(dend3, "test"), b(end5, "test"))
        end6 = e(node8, "test")
        node9 = rl.add(b(in_10, "test"), b(end6, "test"))
        return rl.IRModule.from_expr(rl.Function(ins, e(node9, "test")))

    def expected():
        ins = inputs()
        in_1, in_2, in_3, in_4, in_5, in_6, in_7, in_8, in_9, in_10 = ins
        node0 = rl.add(b(in_1, "test"), b(in_2, "test"))
        node1 = rl.add(b(in_3, "test"), b(in_4, "test"))
        node2 = rl.add(node0, node1)
        dbegin0, dbegin1, dbegin2 = b(in_5, "default"), b(in_6, "default"), b(in_7, "default")
        node3 = rl.subtract(dbegin0, dbegin1)
        node4 = rl.subtract(dbegin2, node3)
        dend0 = e(node4, "default")
        begin4 = b(dend0, "test")
        begin5 = b(in_9, "test")
        node5 = rl.add(node2, begin4)
        end1 = e(node5, "test")
        node6 = rl.subtract(b(in_8, "default"), b(end1, "default"))
        dend1 = e(node6, "default")
        node7 = rl.add(begin5, node5)
        end2 = e(node7, "test")
        node8 = rl.add(b(dend1, "test"), b(end2, "test"))
        node9 = rl.add(b(in_10, "test"), node8)
        return rl.IRModule.from_expr(rl.Function(ins, e(node9, "test")))
    check(annotated(), expected())


def test_if_else():
    # TVM: test_if_else (restrictions propagate through an `if`; partitioning succeeds)
    target = "t_if_else_merge"
    for op in ("sigmoid", "erf", "add"):
        register_target_op(target, op)
    try:
        data = rl.var("data", shape=(1, 32))
        add0 = rl.add(data, data)
        sub0 = rl.subtract(add0, data)
        eq = rl.equal(rl.sum(add0), rl.sum(sub0))
        ife = rl.If(eq, rl.sigmoid(add0), rl.sigmoid(sub0))
        mod = rl.IRModule.from_expr(rl.Function([data], rl.add(add0, rl.erf(ife))))
        x = np.random.default_rng(0).standard_normal((1, 32)).astype("float32")
        for non_call in (True, False):
            merged = MergeCompilerRegions()(AnnotateTarget([target], non_call)(mod))
            part = PartitionGraph()(merged)
            np.testing.assert_allclose(rl.evaluate(part, x), rl.evaluate(mod, x), rtol=1e-6)
    finally:
        unregister_target(target)


def test_region_set():
    # TVM's AnnotatedRegionSet (tests/python/relay/test_annotated_regions.py, test_region_set_creator_diamond)
    data = rl.var("data", shape=(10, 10))
    O_1 = rl.abs(compiler_begin(data, "test"))
    ce_1 = compiler_end(O_1, "test")
    X = rl.tanh(compiler_begin(ce_1, "default"))
    ce_2 = compiler_end(X, "default")
    out = rl.add(compiler_begin(ce_1, "test"), compiler_begin(ce_2, "test"))
    regions = AnnotatedRegionSet.create(rl.Function([data], compiler_end(out, "test")))
    assert sorted((r.target, len(r.ins), len(r.outs)) for r in regions) == \
        [("default", 1, 1), ("test", 1, 1), ("test", 2, 1)]
    assert regions.get_region(O_1).target == "test" and regions.get_region(X).target == "default"
    assert regions.get_region(data) is None


def test_deep_chain():
    # 10,000 alternating regions: linear, no recursion
    register_target_op("t_deep", "add")
    try:
        x = rl.var("x", shape=(4,))
        y = x
        for _ in range(5000):
            y = rl.exp(rl.add(y, y))
        mod = rl.IRModule.from_expr(rl.Function([x], y))
        out = PartitionGraph()(MergeCompilerRegions()(AnnotateTarget(["t_deep"])(mod)))
        assert len(out.functions) == 5001
    finally:
        unregister_target("t_deep")
