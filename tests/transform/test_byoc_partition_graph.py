"""PartitionGraph (relaylang/transform/byoc/partition_graph.py), mirroring TVM's
tests/python/relay/test_pass_partition_graph.py: each test names the TVM test it mirrors.
Where TVM runs the partitioned module through a codegen, the interpreter runs it here
(partitioned functions are ordinary functions until a backend claims them)."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.attrs import DictAttrs
from relaylang.ir.diagnostics import DiagnosticError
from relaylang.ir.expr import Call, Constant, Function, GlobalVar, Tuple, TupleGetItem
from relaylang.transform import (
    AnnotateTarget,
    InferType,
    MergeCompilerRegions,
    PartitionGraph,
    Sequential,
)
from relaylang.transform.byoc import register_target_op, unregister_target
from relaylang.transform.byoc.annotations import compiler_begin, compiler_end


@pytest.fixture
def target():
    made: list[str] = []

    def make(name: str, *ops: str) -> str:
        for op in ops:
            register_target_op(name, op)
        made.append(name)
        return name
    yield make
    for name in made:
        unregister_target(name)


def external(fn: Function, compiler: str, symbol: str, ret_type=None) -> Function:
    attrs = DictAttrs((("Compiler", compiler), ("Primitive", 1), ("Inline", 1),
                       ("global_symbol", symbol)))
    return Function(fn.params, fn.body, ret_type, fn.type_params, attrs)


def flow(*targets: str) -> Sequential:
    return Sequential([AnnotateTarget(list(targets)), MergeCompilerRegions(), PartitionGraph()])


def same_results(before, after, *args) -> None:
    want, got = rl.evaluate(before, *args), rl.evaluate(after, *args)
    if isinstance(want, tuple):
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-6)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6)


def round_trips(mod) -> None:
    assert rl.structural_equal(rl.parse(rl.astext(mod)), mod)


def annotate_every_call(body, compiler: str):
    """TVM's MyAnnotator / AllowedListAnnotator: each call of an op in a region of its own."""
    from relaylang.ir.traverse import rewrite

    def fn(old, new):
        if isinstance(new, Call) and hasattr(new.op, "name"):
            return compiler_end(Call(new.op, tuple(compiler_begin(a, compiler) for a in new.args),
                                     new.attrs), compiler)
        return None
    return rewrite(body, fn)


def test_extern_ccompiler_single_op():
    # TVM: test_extern_ccompiler_single_op
    x, y = rl.var("x", shape=(8, 8)), rl.var("y", shape=(8, 8))
    plain = rl.IRModule.from_expr(rl.Function([x, y], rl.add(x, y)))
    mod = rl.IRModule.from_expr(rl.Function([x, y], annotate_every_call(rl.add(x, y), "ccompiler")))
    out = PartitionGraph()(mod)
    fn = out["tvmgen_default_ccompiler_main_0"]
    assert [p.name_hint for p in fn.params] == ["ccompiler_0_i0", "ccompiler_0_i1"]
    assert dict(fn.attrs.entries) == {"Compiler": "ccompiler", "Primitive": 1, "Inline": 1,
                                      "global_symbol": "tvmgen_default_ccompiler_main_0"}
    a, b = np.random.rand(8, 8).astype("float32"), np.random.rand(8, 8).astype("float32")
    same_results(plain, out, a, b)
    round_trips(out)


def test_extern_compiler_sanitized_ops():
    # TVM: test_extern_compiler_sanitized_ops
    x, y = rl.var("x", shape=(8, 8)), rl.var("y", shape=(8, 8))
    body = annotate_every_call(rl.add(x, y), "unsanitary-name++")
    out = PartitionGraph()(rl.IRModule.from_expr(rl.Function([x, y], rl.exp(body))))
    assert "tvmgen_default_unsanitary_name___main_0" in out
    fn = out["tvmgen_default_unsanitary_name___main_0"]
    assert fn.attrs.get("Compiler") == "unsanitary-name++"


def test_extern_ccompiler_default_ops(target):
    # TVM: test_extern_ccompiler_default_ops (what the target does not take stays in @main)
    t = target("t_cc", "add", "subtract", "multiply")
    x, y = rl.var("x", shape=(8, 8)), rl.var("y", shape=(8, 8))
    add = rl.add(x, y)
    mod = rl.IRModule.from_expr(rl.Function([x, y], rl.concatenate(
        rl.Tuple([rl.log(add), rl.exp(add)]), axis=0)))
    out = flow(t)(mod)
    x0, y0 = rl.var("x0", shape=(8, 8)), rl.var("y0", shape=(8, 8))
    gv = GlobalVar("tvmgen_default_t_cc_main_0")
    ext = external(rl.Function([x0, y0], rl.add(x0, y0)), t, gv.name_hint,
                   rl.TensorType((8, 8), "float32"))
    x, y = rl.var("x", shape=(8, 8)), rl.var("y", shape=(8, 8))
    call = Call(gv, (x, y))
    main = rl.Function([x, y], rl.concatenate(rl.Tuple([rl.log(call), rl.exp(call)]), axis=0))
    expected = InferType()(rl.IRModule({GlobalVar("main"): main, gv: ext}))
    assert rl.structural_equal(out, expected), rl.astext(out)


def test_extern_ccompiler_multiple_functions(target):
    # TVM: test_extern_ccompiler_multiple_functions
    t = target("t_mf", "add", "subtract", "multiply")
    mod = rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) { %0 = add(%x, %y); @subf(%0, %y) }
def @subf(%a: Tensor[(4), float32], %b: Tensor[(4), float32]) -> Tensor[(4), float32] {
  %0 = multiply(%a, %b); exp(%0) }""")
    out = flow(t)(mod)
    assert {"tvmgen_default_t_mf_main_0", "tvmgen_default_t_mf_subf_0"} <= {
        gv.name_hint for gv in out.functions}
    a = np.arange(4, dtype="float32")
    same_results(mod, out, a, a + 1)
    round_trips(out)


def test_constant_propagation(target):
    # TVM: test_constant_propagation, test_not_bind_constant
    t = target("t_cp", "add")
    ones = np.ones((8, 8), "float32")
    x = rl.var("x", shape=(8, 8))
    mod = rl.IRModule.from_expr(rl.Function([x], rl.exp(rl.add(rl.const(ones), x))))
    bound = flow(t)(mod)
    fn = bound["tvmgen_default_t_cp_main_0"]
    assert len(fn.params) == 1 and isinstance(fn.body.args[0], Constant)
    unbound = Sequential([AnnotateTarget([t]), MergeCompilerRegions(),
                          PartitionGraph(bind_constants=False)])(mod)
    fn = unbound["tvmgen_default_t_cp_main_0"]
    assert len(fn.params) == 2
    call = unbound["main"].body.args[0]
    assert isinstance(call.args[0], Constant)
    same_results(mod, bound, ones)
    same_results(mod, unbound, ones)


def test_multiple_outputs(target):
    # TVM: test_multiple_outputs, test_mixed_single_multiple_outputs
    t = target("t_mo", "abs", "nn.relu")
    data = rl.var("data", shape=(10, 10))
    x = rl.abs(data)
    out = rl.Tuple([rl.nn.relu(x), rl.tanh(x), rl.log(x)])
    mod = rl.IRModule.from_expr(rl.Function([data], out))
    part = flow(t)(mod)
    fn = part["tvmgen_default_t_mo_main_0"]
    assert isinstance(fn.body, Tuple) and len(fn.body.fields) == 2
    outs = part["main"].body.fields
    assert isinstance(outs[0], TupleGetItem) and isinstance(outs[1].args[0], TupleGetItem)
    assert outs[0].tuple_value is outs[1].args[0].tuple_value          # one call, two outputs
    assert {outs[0].index, outs[1].args[0].index} == {0, 1}
    d = np.random.default_rng(1).standard_normal((10, 10)).astype("float32") + 2
    same_results(mod, part, d)
    round_trips(part)


def test_duplicate_outputs(target):
    # TVM: test_duplicate_outputs
    t = target("t_dup", "abs")
    data = rl.var("data", shape=(10, 10))
    x = rl.abs(data)
    mod = rl.IRModule.from_expr(rl.Function(
        [data], rl.Tuple([rl.nn.relu(x), rl.tanh(x), rl.log(x)])))
    part = flow(t)(mod)

    i0 = rl.var("t_dup_0_i0", shape=(10, 10))
    gv = GlobalVar("tvmgen_default_t_dup_main_0")
    ext = external(rl.Function([i0], rl.abs(i0)), t, gv.name_hint,
                   rl.TensorType((10, 10), "float32"))
    data = rl.var("data", shape=(10, 10))
    out = Call(gv, (data,))
    main = rl.Function([data], rl.Tuple([rl.nn.relu(out), rl.tanh(out), rl.log(out)]))
    expected = InferType()(rl.IRModule({GlobalVar("main"): main, gv: ext}))
    assert rl.structural_equal(part, expected), rl.astext(part)


def test_flatten_tuple_output(target):
    # TVM: test_flatten_tuple_output
    t = target("t_flat", "split", "abs")
    a = rl.var("a", shape=(10, 10), dtype="uint8")
    a_split = rl.split(a, indices_or_sections=2)
    a_split_0_abs = rl.abs(TupleGetItem(a_split, 0))
    a_con = rl.concatenate(rl.Tuple([TupleGetItem(a_split, 0), TupleGetItem(a_split, 1)]),
                           axis=0)                     # TVM's TupleWrapper of split
    mod = rl.IRModule.from_expr(rl.Function([a], rl.Tuple([a_con, rl.nn.relu(a_split_0_abs)])))
    part = flow(t)(mod)
    fn = part["tvmgen_default_t_flat_main_0"]
    assert isinstance(fn.body, Tuple) and len(fn.body.fields) == 3     # split.0, split.1, abs
    data = np.arange(100, dtype="uint8").reshape(10, 10)
    same_results(mod, part, data)


def test_constant_tuples(target):
    # TVM: test_constant_tuples -- qnn.concatenate's tuples of constant scales and zero
    # points stay tuples of constants inside the partitioned function
    t = target("const_tuples", "qnn.concatenate")
    a = rl.var("a", shape=(10, 10), dtype="uint8")
    b = rl.var("b", shape=(10, 10), dtype="uint8")
    zeroi, zerof = rl.const(1, "int32"), rl.const(0.0, "float32")
    con = rl.qnn.concatenate(rl.Tuple([rl.abs(a), b]), rl.Tuple([zerof, zerof]),
                             rl.Tuple([zeroi, zeroi]), zerof, zeroi, axis=1)
    mod = InferType()(rl.IRModule.from_expr(rl.Function([a, b], con)))
    part = Sequential([AnnotateTarget([t]), InferType(), MergeCompilerRegions(),
                       PartitionGraph()])(mod)
    concat = part["tvmgen_default_const_tuples_main_0"].body
    assert isinstance(concat, Call) and concat.op.name == "qnn.concatenate"
    assert isinstance(concat.args[1], Tuple) and isinstance(concat.args[2], Tuple)
    assert isinstance(concat.args[3], Constant) and isinstance(concat.args[4], Constant)
    data = np.arange(100, dtype="uint8").reshape(10, 10)
    same_results(mod, part, data, data[::-1].copy())


def test_mod_name_and_empty_regions(target):
    # TVM's mod_name: the prefix of the names; no annotation: the module is unchanged
    t = target("t_name", "add")
    x = rl.var("x", shape=(4,))
    mod = rl.IRModule.from_expr(rl.Function([x], rl.exp(rl.add(x, x))))
    annotated = MergeCompilerRegions()(AnnotateTarget([t])(mod))
    assert "tvmgen_mine_t_name_main_0" in PartitionGraph(mod_name="mine")(annotated)
    assert "tvmgen_t_name_main_0" in PartitionGraph(mod_name="")(annotated)
    assert rl.structural_equal(PartitionGraph()(mod), InferType()(mod))
    p = rl.transform.get_pass("PartitionGraph{mod_name=x,bind_constants=false}")
    assert p.mod_name == "x" and p.bind_constants is False


def test_dnnl_fuse_flow():
    # TVM: test_dnnl_fuse (composites, annotation, merge, partition with the example table)
    mod = rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 3, 3), float32], %b: Tensor[(2), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w, padding=[1, 1, 1, 1]);
  %4 = nn.relu(%3);
  exp(%4)
}""")
    seq = rl.transform.get_pass
    out = Sequential([seq("MergeComposite{pattern_table=example}"),
                      seq("AnnotateTarget{targets=example}"), MergeCompilerRegions(),
                      PartitionGraph()])(mod)
    fn = out["tvmgen_default_example_main_0"]
    composite = [n.op.attrs.get("Composite") for n in rl.ir.post_order(fn)
                 if isinstance(n, Call) and isinstance(n.op, Function)]
    assert composite == ["example.conv2d_bias_relu", "example.conv2d_bias_relu"]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in ((1, 2, 4, 4), (2, 2, 3, 3), (2,))]
    same_results(mod, out, *args)
    round_trips(out)


def test_a_cycle_in_handwritten_annotations_is_a_diagnostic():
    # one region whose input comes from its own output through the host
    x = rl.var("x", shape=(4,))
    a = rl.abs(compiler_begin(x, "t"))
    end = compiler_end(a, "t")
    host = rl.exp(end)
    both = rl.add(compiler_begin(host, "t"), a)          # joins a's region: a cycle
    mod = rl.IRModule.from_expr(rl.Function([x], compiler_end(both, "t")))
    with pytest.raises(DiagnosticError, match="cycle"):
        PartitionGraph()(mod)


# ---------------------------------------------------------------- more of TVM's file, each
# also run through the golden harness (re-parse, idempotence, same values on the interpreter)

def annotate_allowed(fn: Function, ops, compiler: str) -> Function:
    """TVM's AllowedListAnnotator: each call of an op in `ops` in a region of its own."""
    from relaylang.ir.traverse import rewrite

    def visit(old, new):
        if isinstance(new, Call) and getattr(new.op, "name", None) in ops:
            return compiler_end(Call(new.op, tuple(compiler_begin(a, compiler) for a in new.args),
                                     new.attrs), compiler)
        return None
    out = rewrite(fn, visit)
    assert isinstance(out, Function)
    return out


def module(main: Function, **globals_: Function) -> rl.IRModule:
    return InferType()(rl.IRModule({GlobalVar("main"): main,
                                    **{GlobalVar(k): v for k, v in globals_.items()}}))


def test_extern_ccompiler():
    # TVM: test_extern_ccompiler (TVM's C codegen run: the interpreter's, by the harness)
    from tvm_golden import run_golden
    x, y = rl.var("x", shape=(2, 2)), rl.var("y", shape=(2, 2))
    f = rl.Function([x, y], rl.subtract(rl.multiply(y, y), rl.add(x, x)))
    annotated = rl.IRModule.from_expr(annotate_allowed(f, ("add", "subtract", "multiply"),
                                                       "ccompiler"))
    out = run_golden(annotated, "PartitionGraph")
    ext = [fn for fn in out.functions.values()
           if fn.attrs is not None and fn.attrs.get("Compiler") == "ccompiler"]
    assert sorted(fn.body.op.name for fn in ext) == ["add", "multiply", "subtract"]
    xd, yd = np.random.rand(2, 2).astype("float32"), np.random.rand(2, 2).astype("float32")
    np.testing.assert_allclose(rl.evaluate(out, xd, yd), yd * yd - (xd + xd), rtol=1e-6)


def whole_graph(fn: Function, compiler: str) -> Function:
    """TVM's WholeGraphAnnotator: a begin on every variable argument of a call, an end
    on the last call."""
    from relaylang.ir.expr import Var
    from relaylang.ir.traverse import rewrite

    def visit(old, new):
        if isinstance(new, Call) and hasattr(new.op, "name"):
            args = tuple(compiler_begin(a, compiler) if isinstance(a, Var) else a
                         for a in new.args)
            return Call(new.op, args, new.attrs)
        return None
    body = rewrite(fn.body, visit)
    return rl.Function(fn.params, compiler_end(body, compiler))


def test_extern_dnnl():
    # TVM: test_extern_dnnl (the partition; TVM's DNNL run: the interpreter's)
    from tvm_golden import assert_same, run_golden
    ishape, w1shape = (1, 32, 14, 14), (32, 1, 3, 3)

    def get_func():
        data, weight1 = rl.var("data", shape=ishape), rl.var("weight1", shape=w1shape)
        d1 = rl.nn.conv2d(data, weight1, kernel_size=(3, 3), padding=(1, 1), groups=32)
        d2 = rl.nn.conv2d(d1, weight1, kernel_size=(3, 3), padding=(1, 1), groups=32)
        return rl.Function([data, weight1], rl.add(d1, d2))

    def expected():
        data0, input0 = rl.var("data", shape=ishape), rl.var("input", shape=w1shape)
        d1 = rl.nn.conv2d(data0, input0, kernel_size=(3, 3), padding=(1, 1), groups=32)
        d2 = rl.nn.conv2d(d1, input0, kernel_size=(3, 3), padding=(1, 1), groups=32)
        gv = GlobalVar("tvmgen_default_dnnl_main_0")
        func = external(rl.Function([data0, input0], rl.add(d1, d2)), "dnnl", gv.name_hint,
                        rl.TensorType(ishape, "float32"))
        data, weight = rl.var("data", shape=ishape), rl.var("input", shape=w1shape)
        return module(rl.Function([data, weight], Call(gv, (data, weight))),
                      tvmgen_default_dnnl_main_0=func)

    annotated = rl.IRModule.from_expr(whole_graph(get_func(), "dnnl"))
    out = run_golden(annotated, "PartitionGraph")
    assert_same(out, expected())
    rng = np.random.default_rng(0)
    args = [rng.uniform(0, 1, ishape).astype("float32"),
            rng.uniform(0, 1, w1shape).astype("float32")]
    same_results(rl.IRModule.from_expr(get_func()), out, *args)


BN = ("bn_gamma", "bn_beta", "bn_mean", "bn_var")


def test_function_lifting():
    # TVM: test_function_lifting (the passes after PartitionGraph leave the external
    # functions alone: batch_norm is not simplified inside its function)
    from tvm_golden import assert_same, run_golden
    data = rl.var("data", shape=(1, 3, 224, 224))
    weight = rl.var("weight", shape=(16, 3, 3, 3))
    bn = [rl.var(n, shape=(16,)) for n in BN]
    conv = rl.nn.conv2d(data, weight, kernel_size=(3, 3), channels=16, padding=(1, 1))
    func = rl.Function([data, weight, *bn], rl.nn.batch_norm(conv, *bn))
    annotated = rl.IRModule.from_expr(annotate_allowed(func, ("nn.batch_norm", "nn.conv2d"),
                                                       "test_compiler"))
    out = run_golden(annotated, "InferType,PartitionGraph,SimplifyInference,FoldConstant,"
                     "AlterOpLayout", opt_level=3)

    # the expected module (TVM's)
    data0 = rl.var("data0", shape=(1, 16, 224, 224))
    bn1 = [rl.var(n + "1", shape=(16,)) for n in BN]
    gv0 = GlobalVar("tvmgen_default_test_compiler_main_2")
    func0 = external(rl.Function([data0, *bn1], rl.nn.batch_norm(data0, *bn1)),
                     "test_compiler", gv0.name_hint)
    data1, weight1 = rl.var("data1", shape=(1, 3, 224, 224)), rl.var("weight1", shape=(16, 3, 3, 3))
    gv1 = GlobalVar("tvmgen_default_test_compiler_main_0")
    func1 = external(rl.Function([data1, weight1], rl.nn.conv2d(
        data1, weight1, kernel_size=(3, 3), channels=16, padding=(1, 1))),
        "test_compiler", gv1.name_hint)
    data, weight = rl.var("data", shape=(1, 3, 224, 224)), rl.var("weight", shape=(16, 3, 3, 3))
    bn0 = [rl.var(n, shape=(16,)) for n in BN]
    main = rl.Function([data, weight, *bn0], Call(gv0, (Call(gv1, (data, weight)), *bn0)))
    expected = InferType()(rl.IRModule({GlobalVar("main"): main, gv0: func0, gv1: func1}))
    _fill_ret_types(expected)
    assert_same(out, expected)


def _fill_ret_types(mod: rl.IRModule) -> None:
    """The external functions of TVM's expected modules get their return types (TVM's
    InferType fills one in; relaylang's leaves it out, and PartitionGraph writes it)."""
    import dataclasses
    for gv, fn in list(mod.functions.items()):
        if fn.attrs is not None and fn.attrs.get("Compiler") and fn.ret_type is None:
            mod.functions[gv] = dataclasses.replace(fn, ret_type=fn.checked_type.ret_type)


def test_function_lifting_inline():
    # TVM: test_function_lifting_inline (Inline puts the external function back in @main
    # as a function literal, still external)
    from tvm_golden import assert_same, run_golden
    data = rl.var("data", shape=(1, 16, 224, 224))
    bn = [rl.var(n, shape=(16,)) for n in BN]
    func = rl.Function([data, *bn], rl.nn.batch_norm(data, *bn))
    annotated = rl.IRModule.from_expr(annotate_allowed(func, ("nn.batch_norm", "nn.conv2d"),
                                                       "test_compiler"))
    out = run_golden(annotated, "InferType,PartitionGraph,SimplifyInference,FoldConstant,"
                     "AlterOpLayout,Inline,InferType", opt_level=3)

    data0 = rl.var("data0", shape=(1, 16, 224, 224))
    bn1 = [rl.var(n + "1", shape=(16,)) for n in BN]
    vec = rl.TensorType((16,), "float32")
    func0 = external(rl.Function([data0, *bn1], rl.nn.batch_norm(data0, *bn1)),
                     "test_compiler", "tvmgen_default_test_compiler_main_0",
                     rl.TupleType([rl.TensorType((1, 16, 224, 224), "float32"), vec, vec]))
    data = rl.var("data", shape=(1, 16, 224, 224))
    bn0 = [rl.var(n, shape=(16,)) for n in BN]
    expected = module(rl.Function([data, *bn0], Call(func0, (data, *bn0))))
    assert_same(out, expected)


def test_multiple_use_of_an_output():
    # TVM: test_multiple_use_of_an_output (both of its cases: one region holding log,
    # subtract and multiply; or log and subtract in regions of their own)
    from tvm_golden import assert_same, run_golden
    s = (8, 8)

    def get_func():
        x, y, z = (rl.var(n, shape=s) for n in "xyz")
        add = rl.add(x, y)
        return rl.Function([x, y, z], rl.multiply(rl.log(add), rl.subtract(add, z)))

    def expected_same_output_region():
        x0, y0 = rl.var("x0", shape=s), rl.var("y0", shape=s)
        gv = GlobalVar("tvmgen_default_ccompiler_main_0")
        func = external(rl.Function([x0, y0], rl.multiply(rl.log(x0), rl.subtract(x0, y0))),
                        "ccompiler", gv.name_hint, rl.TensorType(s, "float32"))
        x, y, z = (rl.var(n, shape=s) for n in "xyz")
        main = rl.Function([x, y, z], Call(gv, (rl.add(x, y), z)))
        return InferType()(rl.IRModule({GlobalVar("main"): main, gv: func}))

    def expected_different_output_region():
        i0 = rl.var("i0", shape=s)
        gv0 = GlobalVar("tvmgen_default_ccompiler_main_0")
        f0 = external(rl.Function([i0], rl.log(i0)), "ccompiler", gv0.name_hint,
                      rl.TensorType(s, "float32"))
        x0, y0 = rl.var("x0", shape=s), rl.var("y0", shape=s)
        gv1 = GlobalVar("tvmgen_default_ccompiler_main_1")
        f1 = external(rl.Function([x0, y0], rl.subtract(x0, y0)), "ccompiler", gv1.name_hint,
                      rl.TensorType(s, "float32"))
        x, y, z = (rl.var(n, shape=s) for n in "xyz")
        add = rl.add(x, y)
        main = rl.Function([x, y, z], rl.multiply(Call(gv0, (add,)), Call(gv1, (add, z))))
        return InferType()(rl.IRModule({GlobalVar("main"): main, gv0: f0, gv1: f1}))

    for ops, expected in ((("subtract", "log", "multiply"), expected_same_output_region()),
                          (("subtract", "log"), expected_different_output_region())):
        annotated = rl.IRModule.from_expr(annotate_allowed(get_func(), ops, "ccompiler"))
        assert_same(run_golden(annotated, "MergeCompilerRegions,PartitionGraph"), expected)


def test_duplicate_merge_and_tuplegetitem(target):
    # TVM: test_duplicate_merge_and_tuplegetitem (TVM's untyped batch_norm parameters,
    # which its InferType types from the data, are annotated)
    from tvm_golden import assert_same, run_golden
    t = target("test_duplicate_merge_and_tuplegetitem", "nn.batch_norm", "nn.relu")

    def create_graph():
        data = rl.var("data", shape=(10, 10))
        bn = [rl.var(n, shape=(10,)) for n in BN]
        x = rl.nn.batch_norm(data, *bn)
        bn_out_1 = TupleGetItem(x, 1)
        out = rl.Tuple([rl.nn.relu(TupleGetItem(x, 0)), rl.tanh(bn_out_1), rl.log(bn_out_1)])
        return rl.Function([data, *bn], out)

    def expected():
        f0_i = [rl.var(f"{t}_0_i0", shape=(10, 10))] + \
            [rl.var(f"{t}_0_i{i}", shape=(10,)) for i in range(1, 5)]
        f0_n0 = rl.nn.batch_norm(*f0_i)
        f0_o0 = rl.Tuple([rl.nn.relu(TupleGetItem(f0_n0, 0)), TupleGetItem(f0_n0, 1)])
        gv0 = GlobalVar(f"tvmgen_default_{t}_main_0")
        # (no return type written: relaylang's PartitionGraph writes none for a region
        # of several outputs; TVM's InferType fills it in on both sides)
        func0 = external(rl.Function(f0_i, f0_o0), t, gv0.name_hint)
        data = rl.var("data", shape=(10, 10))
        bn = [rl.var(n, shape=(10,)) for n in BN]
        function_out = Call(gv0, (data, *bn))
        get_out1 = TupleGetItem(function_out, 1)
        out = rl.Tuple([TupleGetItem(function_out, 0), rl.tanh(get_out1), rl.log(get_out1)])
        return InferType()(rl.IRModule({GlobalVar("main"): rl.Function([data, *bn], out),
                                        gv0: func0}))

    out = run_golden(rl.IRModule.from_expr(create_graph()),
                     f"AnnotateTarget{{targets={t}}},MergeCompilerRegions,PartitionGraph")
    assert_same(out, expected())


def test_tuple_output_exec():
    # TVM: test_tuple_output_exec (a region whose output is a tuple; TVM's C codegen run:
    # the interpreter's)
    from tvm_golden import run_golden
    a, b = rl.var("a", shape=(10, 10)), rl.var("b", shape=(10, 10))
    ba, bb = compiler_begin(a, "ccompiler"), compiler_begin(b, "ccompiler")
    eout = compiler_end(rl.Tuple([rl.add(ba, bb), rl.subtract(ba, bb)]), "ccompiler")
    out = run_golden(rl.IRModule.from_expr(rl.Function([a, b], eout)), "PartitionGraph")
    fn = out["tvmgen_default_ccompiler_main_0"]
    assert isinstance(fn.body, Tuple) and len(fn.body.fields) == 2
    ad, bd = np.random.rand(10, 10).astype("float32"), np.random.rand(10, 10).astype("float32")
    got = rl.evaluate(out, ad, bd)
    np.testing.assert_allclose(got[0], ad + bd, rtol=1e-6)
    np.testing.assert_allclose(got[1], ad - bd, rtol=1e-6)


def test_preserve_type_import(target):
    # TVM: test_preserve_type_import (type definitions and imports survive the BYOC
    # passes; TVM's static tensor arrays of its prelude are the prelude's List here)
    from tvm_golden import run_golden
    t = target("t_keep", "add")
    mod = rl.parse("""#[version = "0.0.5"]
#[import "prelude"]
def @main(%v: Tensor[(2, 3), float32]) -> List[Tensor[(2, 3), float32]] {
  %0 = add(%v, %v);
  Cons(%0, Cons(%v, Nil))
}""")
    out = run_golden(mod, f"RemoveUnusedFunctions,AnnotateTarget{{targets={t}}},"
                     "MergeCompilerRegions,PartitionGraph")
    assert "tvmgen_default_t_keep_main_0" in out
    assert {td.header.name_hint for td in mod.type_definitions.values()} <= \
        {td.header.name_hint for td in out.type_definitions.values()}


def test_mixed_single_multiple_outputs():
    # TVM: test_mixed_single_multiple_outputs (hand-written annotations: a region of two
    # outputs, one of them read by the host, and a region of one)
    from tvm_golden import assert_same, run_golden
    t, s = "test_target", (10, 10)

    def create_graph():
        data = rl.var("data", shape=s)
        o_1 = rl.abs(compiler_begin(data, t))
        ce_2 = compiler_end(o_1, t)
        ce_3 = compiler_end(rl.nn.relu(o_1), t)
        x = rl.tanh(ce_2)
        ce_4 = compiler_end(rl.add(compiler_begin(ce_3, t), compiler_begin(x, t)), t)
        return rl.Function([data], ce_4)

    def expected():
        f1_cb1 = rl.var("test_target_0_i0", shape=s)
        f1_o_1 = rl.abs(f1_cb1)
        gv1 = GlobalVar("tvmgen_default_test_target_main_0")
        # (no return type written for a region of several outputs, see above)
        func1 = external(rl.Function([f1_cb1], rl.Tuple([rl.nn.relu(f1_o_1), f1_o_1])), t,
                         gv1.name_hint)
        f2_cb3, f2_cb4 = rl.var("test_target_1_i0", shape=s), rl.var("test_target_1_i1", shape=s)
        gv0 = GlobalVar("tvmgen_default_test_target_main_1")
        func0 = external(rl.Function([f2_cb3, f2_cb4], rl.add(f2_cb3, f2_cb4)), t,
                         gv0.name_hint, rl.TensorType(s, "float32"))
        data = rl.var("data", shape=s)
        tuple_out = Call(gv1, (data,))
        x = rl.tanh(TupleGetItem(tuple_out, 1))
        main = rl.Function([data], Call(gv0, (TupleGetItem(tuple_out, 0), x)))
        return InferType()(rl.IRModule({GlobalVar("main"): main, gv1: func1, gv0: func0}))

    out = run_golden(rl.IRModule.from_expr(create_graph()), "PartitionGraph")
    assert_same(out, expected())
