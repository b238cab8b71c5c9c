"""AnnotateTarget (relaylang/transform/byoc/annotate_target.py), mirroring TVM's
tests/python/relay/test_pass_annotate_target.py: each test names the TVM test it mirrors.
Expected programs are built with the same annotation helpers and compared structurally."""
from __future__ import annotations

import pytest

import relaylang as rl
from relaylang.dataflow_pattern import is_op, wildcard
from relaylang.ir.expr import Call, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem
from relaylang.transform import AnnotateTarget, InferType, MergeComposite, PassContext
from relaylang.transform.byoc import (
    CollectDiagnostics,
    register_pattern_table,
    register_target_op,
    unregister_target,
)
from relaylang.transform.byoc.annotations import compiler_begin as cb
from relaylang.transform.byoc.annotations import compiler_end as ce
from relaylang.transform.byoc.annotations import compiler_of

TARGETS = ("t_test", "t_A", "t_B", "t_relu")


@pytest.fixture(autouse=True)
def targets():
    register_target_op("t_test", "nn.relu")
    register_target_op("t_A", "nn.relu")
    register_target_op("t_B", "add")
    register_target_op("t_relu", "nn.relu")
    yield
    for t in TARGETS:
        unregister_target(t)


def mod_of(body, params):
    return rl.IRModule.from_expr(rl.Function(params, body))


def check(before, after, targets, include_non_call_ops=True):
    result = AnnotateTarget(targets, include_non_call_ops)(before)
    expected = InferType()(after)
    assert rl.structural_equal(result, expected), rl.astext(result)
    assert rl.structural_equal(rl.parse(rl.astext(result)), result)     # prints, parses back


def test_multiple_ends():
    # TVM: test_multiple_ends
    def before():
        x = rl.var("x", shape=(10, 10))
        r = rl.nn.relu(x)
        return mod_of(rl.add(rl.abs(r), rl.abs(r)), [x])

    def after():
        x = rl.var("x", shape=(10, 10))
        r = rl.nn.relu(cb(x, "t_test"))
        a_1 = rl.abs(cb(ce(r, "t_test"), "default"))
        a_2 = rl.abs(cb(ce(r, "t_test"), "default"))
        out = rl.add(cb(ce(a_1, "default"), "default"), cb(ce(a_2, "default"), "default"))
        return mod_of(ce(out, "default"), [x])
    for non_call in (False, True):
        check(before(), after(), ["t_test"], non_call)


def test_type_propagation():
    # TVM: test_type_propagation (the pass returns a typed module)
    x = rl.var("x", shape=(10, 10))
    out = AnnotateTarget(["t_test"])(mod_of(rl.nn.relu(x), [x]))
    assert out["main"].checked_type is not None


def test_ref_create_read_write():
    # TVM: test_ref_create_read_write
    def before():
        ref = RefCreate(rl.const(1.0))
        return rl.IRModule.from_expr(RefWrite(ref, rl.nn.relu(RefRead(ref))))

    def after(non_call):
        co = rl.const(1.0)
        if non_call:
            co = cb(co, "default")
        ref = RefCreate(co)
        ref1 = ref
        if non_call:
            ref = cb(ce(ref, "default"), "default")
            ref1 = cb(ce(ref1, "default"), "default")
        read = RefRead(ref1)
        if non_call:
            read = ce(read, "default")
        end = ce(rl.nn.relu(cb(read, "t_relu")), "t_relu")
        if non_call:
            end = cb(end, "default")
        r = RefWrite(ref, end)
        if non_call:
            r = ce(r, "default")
        return rl.IRModule.from_expr(r)
    for non_call in (True, False):
        check(before(), after(non_call), ["t_relu"], non_call)


def test_tuple():
    # TVM: test_tuple
    register_target_op("t_tuple", "nn.relu")
    register_target_op("t_tuple", "concatenate")

    def before():
        x, y = rl.var("x", shape=(10, 5)), rl.var("y", shape=(10, 5))
        z = rl.concatenate(rl.Tuple([rl.nn.relu(x), rl.nn.relu(y)]), axis=1)
        return mod_of(z, [x, y])

    def after(non_call):
        t = "t_tuple"
        x, y = rl.var("x", shape=(10, 5)), rl.var("y", shape=(10, 5))
        ce_1 = ce(rl.nn.relu(cb(x, t)), t)
        ce_2 = ce(rl.nn.relu(cb(y, t)), t)
        if non_call:
            ce_3 = ce(Tuple((cb(ce_1, t), cb(ce_2, t))), t)
        else:
            ce_3 = Tuple((ce_1, ce_2))
        out = rl.concatenate(cb(ce_3, t), axis=1)
        return mod_of(ce(out, t), [x, y])
    try:
        for non_call in (False, True):
            check(before(), after(non_call), ["t_tuple"], non_call)
    finally:
        unregister_target("t_tuple")


def test_composite_function():
    # TVM: test_composite_function
    register_pattern_table("t_test", [("t_test.add_relu",
                                       is_op("nn.relu")(is_op("add")(wildcard(), wildcard())))])
    a, b = rl.var("a", shape=(10, 10)), rl.var("b", shape=(10, 10))
    mod = MergeComposite(pattern_table="t_test")(mod_of(rl.nn.relu(rl.add(a, b)), [a, b]))
    out = AnnotateTarget(["t_test"])(mod)
    body = out["main"].body
    assert compiler_of(body) == "t_test"
    call = body.args[0]
    assert call.op.attrs.get("Composite") == "t_test.add_relu"
    assert [compiler_of(arg) for arg in call.args] == ["t_test", "t_test"]
    # the composite's body is not annotated
    assert not any(isinstance(n, Call) and compiler_of(n) for n in rl.ir.post_order(call.op.body))


def test_double_target():
    # TVM: test_double_target (the pass is idempotent)
    x = rl.var("x", shape=(10, 5))
    for non_call in (True, False):
        mod1 = AnnotateTarget(["t_A"], non_call)(mod_of(rl.nn.relu(x), [x]))
        mod2 = AnnotateTarget(["t_A"], non_call)(mod1)
        assert rl.structural_equal(mod1, mod2)


def test_different_targets():
    # TVM: test_different_targets
    x = rl.var("x", shape=(10, 5))
    mod = AnnotateTarget(["t_A", "t_B"])(mod_of(rl.add(rl.nn.relu(x), x), [x]))
    body = mod["main"].body
    assert compiler_of(body) == "t_B"
    assert compiler_of(body.args[0].args[0]) == "t_B"                 # begin of t_B
    assert compiler_of(body.args[0].args[0].args[0]) == "t_A"         # end of the relu


def test_multiple_runs():
    # TVM: test_multiple_runs
    def before():
        x = rl.var("x", shape=(10, 5))
        a_1 = rl.nn.relu(x)
        return mod_of(rl.add(rl.abs(a_1), rl.nn.relu(a_1)), [x])
    for non_call in (True, False):
        mod = AnnotateTarget(["t_A"], non_call)(before())
        mod = AnnotateTarget(["t_B"], non_call)(mod)
        expected = AnnotateTarget(["t_A", "t_B"], non_call)(before())
        assert rl.structural_equal(expected, mod)


def test_ends_with_tuple():
    # TVM: test_ends_with_tuple
    x = rl.var("x", shape=(10, 10))
    tup = rl.Tuple([rl.nn.relu(x), rl.nn.relu(x)])
    out = AnnotateTarget(["t_test"])(mod_of(tup, [x]))
    body = out["main"].body
    assert compiler_of(body) == "t_test" and isinstance(body.args[0], Tuple)  # fields agree
    out = AnnotateTarget(["t_test"], False)(mod_of(tup, [x]))
    body = out["main"].body
    assert isinstance(body, Tuple) and [compiler_of(f) for f in body.fields] == ["t_test"] * 2


def test_if_else():
    # TVM: test_if_else
    c = rl.var("c", "bool")
    x = rl.var("x", shape=(4,))
    out = AnnotateTarget(["t_test"])(mod_of(rl.If(c, rl.nn.relu(x), rl.abs(x)), [c, x]))
    body = out["main"].body
    assert compiler_of(body.true_branch) == "t_test"
    assert compiler_of(body.false_branch) == "default"


def test_while_let():
    # TVM: test_while_let (a let-bound function is not annotated; its body is)
    x = rl.var("x", shape=(4,))
    f = rl.var("f")
    p = rl.var("p", shape=(4,))
    fn = rl.Function([p], rl.nn.relu(p))
    mod = mod_of(rl.Let(f, fn, Call(f, (x,))), [x])
    out = AnnotateTarget(["t_test"])(mod)
    let = out["main"].body
    assert compiler_of(let.value.body) == "t_test"
    same = AnnotateTarget(["t_test"])(out)
    assert rl.structural_equal(out, same)


def test_free_vars_zeros_and_empty_tuple():
    # TVM: test_free_vars_zeros, test_empty_tuple
    for body in (rl.zeros(shape=(0,), dtype="float32"), rl.Tuple([])):
        mod = rl.IRModule.from_expr(rl.Function([], body))
        for non_call in (True, False):
            assert rl.structural_equal(AnnotateTarget(["t_test"], non_call)(mod),
                                       InferType()(mod))


def test_projection_and_external_functions():
    # a projection takes its tuple's target; functions already external are left alone
    x = rl.var("x", shape=(4,))
    out = AnnotateTarget(["t_test"])(mod_of(TupleGetItem(rl.Tuple([rl.nn.relu(x), x]), 0), [x]))
    assert compiler_of(out["main"].body) == "default"
    ext = rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(4), float32]) { @ext(%x) }
def @ext(%y: Tensor[(4), float32], Compiler="t_test") -> Tensor[(4), float32] { nn.relu(%y) }""")
    out = AnnotateTarget(["t_test"])(ext)
    assert rl.structural_equal(out["ext"], InferType()(ext)["ext"])


def test_options_and_unknown_targets():
    p = rl.transform.get_pass("AnnotateTarget{targets=t_A;t_B,include_non_call_ops=false}")
    assert p.targets == "t_A;t_B" and p.include_non_call_ops is False
    x = rl.var("x", shape=(4,))
    collect = CollectDiagnostics()
    with PassContext(instruments=[collect]):
        AnnotateTarget(["nobody"])(mod_of(rl.nn.relu(x), [x]))
        out = AnnotateTarget()(mod_of(rl.nn.relu(x), [x]))
    assert [d.message.split(":")[1].split()[0] for d in collect.diagnostics] == ["nothing", "no"]
    assert compiler_of(out["main"].body) == "default"


def test_deep_chain():
    x = rl.var("x", shape=(4,))
    y = x
    for _ in range(5000):
        y = rl.abs(rl.nn.relu(y))
    out = AnnotateTarget(["t_test"])(mod_of(y, [x]))
    assert compiler_of(out["main"].body) == "default"


def test_if_free_vars():
    # TVM: test_if_free_vars (an `if` between free variables: the condition's and the else
    # branch's calls are fenced, the zeros of the then branch are not)
    target = "test_if_free_vars"
    for op in ("equal", "sigmoid", "erf"):
        register_target_op(target, op)
    try:
        def before():
            data = rl.var("data", shape=(1, 32))
            eq1, eq2 = rl.var("e1", shape=(), dtype="float32"), rl.var("e2", shape=(), dtype="float32")
            ife = rl.If(rl.equal(eq1, eq2), rl.zeros(shape=(1, 32), dtype="float32"),
                        rl.sigmoid(data))
            return mod_of(rl.erf(ife), [data, eq1, eq2])

        def after():
            data = rl.var("data", shape=(1, 32))
            eq1, eq2 = rl.var("e1", shape=(), dtype="float32"), rl.var("e2", shape=(), dtype="float32")
            ce_1 = ce(rl.equal(cb(eq1, target), cb(eq2, target)), target)
            true_branch = rl.zeros(shape=(1, 32), dtype="float32")
            ce_2 = ce(rl.sigmoid(cb(data, target)), target)
            ce_3 = ce(rl.erf(cb(rl.If(ce_1, true_branch, ce_2), target)), target)
            return mod_of(ce_3, [data, eq1, eq2])
        for non_call in (True, False):
            check(before(), after(), target, non_call)
        # the same through the golden harness (re-parse, idempotence, same values)
        from tvm_golden import assert_same, run_golden
        assert_same(run_golden(before(), f"AnnotateTarget{{targets={target}}}"), after())
    finally:
        unregister_target(target)


def test_extern_dnnl():
    # TVM: test_extern_dnnl (its annotation, with a test target taking what TVM's DNNL
    # table takes here, conv2d and add; its run: the partitioned module on the interpreter,
    # through the golden harness)
    import numpy as np
    from tvm_golden import assert_same, run_golden
    target = "dnnl"
    for op in ("nn.conv2d", "add"):
        register_target_op(target, op)
    ishape, w1shape = (1, 32, 14, 14), (32, 1, 3, 3)
    try:
        def annotated():
            data, weight1 = rl.var("data", shape=ishape), rl.var("weight1", shape=w1shape)
            d1 = rl.nn.conv2d(data, weight1, kernel_size=(3, 3), padding=(1, 1), groups=32)
            d2 = rl.nn.conv2d(d1, weight1, kernel_size=(3, 3), padding=(1, 1), groups=32)
            return mod_of(rl.add(d1, d2), [data, weight1])

        def expected():
            data, weight1 = rl.var("data", shape=ishape), rl.var("weight1", shape=w1shape)
            d1 = rl.nn.conv2d(cb(data, target), cb(weight1, target), kernel_size=(3, 3),
                              padding=(1, 1), groups=32)
            end0, end1 = ce(d1, target), ce(d1, target)
            d2 = rl.nn.conv2d(cb(end0, target), cb(weight1, target), kernel_size=(3, 3),
                              padding=(1, 1), groups=32)
            out = rl.add(cb(end1, target), cb(ce(d2, target), target))
            return mod_of(ce(out, target), [data, weight1])
        check(annotated(), expected(), [target])
        assert_same(run_golden(annotated(), f"AnnotateTarget{{targets={target}}}"), expected())
        part = run_golden(annotated(), f"AnnotateTarget{{targets={target}}},MergeCompilerRegions,"
                          "PartitionGraph")
        assert "tvmgen_default_dnnl_main_0" in part
        rng = np.random.default_rng(0)
        i_data = rng.uniform(0, 1, ishape).astype("float32")
        w1_data = rng.uniform(0, 1, w1shape).astype("float32")
        np.testing.assert_allclose(rl.evaluate(part, i_data, w1_data),
                                   rl.evaluate(annotated(), i_data, w1_data), rtol=1e-5)
    finally:
        unregister_target(target)
