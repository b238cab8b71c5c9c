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
