"""The `onnxruntime` BYOC target (relaylang/transform/byoc/targets/onnxruntime.py: what it
takes; relaylang/backend/byoc/_onnx_export.py and onnxruntime.py: export and session).
Differential: models built with `byoc=["onnxruntime"]`, and modules partitioned by the
passes alone (so that batch norms, pools, reshapes ... reach the exporter unfolded),
give the plain LLVM build's values (rtol 1e-4); the partitioned modules hold the
regions expected; what the target does not run is refused with a message naming the
function; without onnx/onnxruntime the message names the extra."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from byoc_check import EXAMPLES, example_module

import relaylang as rl
from relaylang.backend.byoc import get_codegen
from relaylang.backend.byoc.runner import partition, value_leaves
from relaylang.ir.diagnostics import DiagnosticError
from relaylang.ir.expr import Call, Op
from relaylang.ir.traverse import post_order
from relaylang.testing.models import example_inputs, get_workload
from relaylang.transform import (
    AnnotateTarget,
    BindParams,
    InferType,
    MergeCompilerRegions,
    PartitionGraph,
    Sequential,
)
from relaylang.transform.byoc import supported_ops

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

TARGET = "onnxruntime"


def externals(mod):
    return {gv.name_hint: fn for gv, fn in mod.functions.items()
            if fn.attrs is not None and fn.attrs.get("Compiler") == TARGET}


def host_ops(mod) -> set[str]:
    return {n.op.name for n in post_order(mod["main"])
            if isinstance(n, Call) and isinstance(n.op, Op)}


def rand(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype("float32")


def check_close(want, got):
    want, got = value_leaves(want), value_leaves(got)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        w, g = np.asarray(w), np.asarray(g)
        assert np.ptp(w) > 0 or w.size == 1       # not a saturated, constant output
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def assert_same_as_llvm(mod, params, inputs, min_steps: int = 1):
    plain = rl.build(mod, target="llvm", params=params)
    lib = rl.build(mod, target="llvm", params=params, byoc=[TARGET])
    assert len([s for s in lib.external_steps if s[1] == TARGET]) >= min_steps
    check_close(plain(*inputs), lib(*inputs))
    return lib


def passes_only(mod):
    """The BYOC passes without the build's folding (batch norms stay batch norms)."""
    return Sequential([AnnotateTarget([TARGET]), MergeCompilerRegions(),
                       PartitionGraph()])(InferType()(mod))


def assert_partitioned_same_as_llvm(mod, inputs, expect_host: set[str] = frozenset()):
    """Partition with the passes alone, run that module in the interpreter (which runs its
    Compiler functions through the codegen, so onnxruntime) and compare with the plain
    build of the original."""
    out = passes_only(mod)
    assert externals(out)
    assert host_ops(out) <= set(expect_host), host_ops(out)
    check_close(rl.build(mod, target="llvm")(*inputs), rl.evaluate(out, *inputs))
    return out


# ------------------------------------------------------------------ models

def small_cnn(unbound_bn: bool = False):
    """conv + batch_norm + relu, max pool, conv + batch_norm + relu, avg pool, global
    average pool, flatten, dense + bias, softmax."""
    x = rl.var("x", shape=(1, 3, 16, 16))
    y, params, c_in = x, {}, 3
    for i, c in enumerate((8, 16)):
        w = rl.var(f"w{i}", shape=(c, c_in, 3, 3))
        g, be, m, v = (rl.var(f"bn{i}_{k}", shape=(c,)) for k in ("g", "b", "m", "v"))
        y = rl.nn.conv2d(y, w, padding=(1, 1), channels=c, kernel_size=(3, 3))
        y = rl.nn.relu(rl.TupleGetItem(rl.nn.batch_norm(y, g, be, m, v), 0))
        y = rl.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2)) if i == 0 else \
            rl.nn.avg_pool2d(y, pool_size=(3, 3), strides=(1, 1), padding=(1, 1))
        params[f"w{i}"] = rand((c, c_in, 3, 3), 30 + i, 0.3)
        params[f"bn{i}_g"] = 1 + rand((c,), 40 + i, 0.1)
        params[f"bn{i}_b"] = rand((c,), 50 + i, 0.1)
        params[f"bn{i}_m"] = rand((c,), 60 + i, 0.1)
        params[f"bn{i}_v"] = 1 + np.abs(rand((c,), 70 + i, 0.1))
        c_in = c
    y = rl.nn.batch_flatten(rl.nn.global_avg_pool2d(y))
    wd, bd = rl.var("wd", shape=(10, 16)), rl.var("bd", shape=(10,))
    out = rl.nn.softmax(rl.nn.bias_add(rl.nn.dense(y, wd), bd))
    params["wd"], params["bd"] = rand((10, 16), 80, 0.3), rand((10,), 81, 0.1)
    return rl.IRModule.from_expr(rl.Function(rl.analysis.free_vars(out), out)), params


def diamond():
    x = rl.var("x", shape=(1, 4, 10, 10))
    w0, w1, w2 = (rl.var(f"w{i}", shape=(4, 4, 3, 3)) for i in range(3))
    top = rl.nn.relu(rl.nn.conv2d(x, w0, padding=(1, 1)))
    left = rl.nn.relu(rl.nn.conv2d(top, w1, padding=(1, 1)))
    right = rl.sigmoid(rl.nn.conv2d(top, w2, padding=(1, 1)))
    out = rl.nn.relu(rl.add(left, right))
    params = {f"w{i}": rand((4, 4, 3, 3), i, 0.3) for i in range(3)}
    return rl.IRModule.from_expr(rl.Function(rl.analysis.free_vars(out), out)), params


def test_small_cnn_with_bound_params_is_one_region():
    mod, params = small_cnn()
    lib = assert_same_as_llvm(mod, params, example_inputs(mod, params))
    out, _ = partition(InferType()(BindParams(params)(mod)), [TARGET])
    assert len(externals(out)) == 1 and host_ops(out) == set()
    assert len(lib.external_steps) == 1


def test_small_cnn_batch_norm_and_pools_exported_unfolded():
    mod, params = small_cnn()
    inputs = [rand((1, 3, 16, 16), 1)] + [params[p.name_hint] for p in mod["main"].params[1:]]
    out = assert_partitioned_same_as_llvm(mod, inputs)
    (fn,) = externals(out).values()
    ops = {n.op.name for n in post_order(fn) if isinstance(n, Call) and isinstance(n.op, Op)}
    assert {"nn.batch_norm", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d",
            "nn.batch_flatten", "nn.softmax", "nn.bias_add"} <= ops


def test_diamond():
    mod, params = diamond()
    assert_same_as_llvm(mod, params, example_inputs(mod, params))


@pytest.mark.parametrize("name", ["mlp", "mnist", "resnet18", "resnet50", "resnext50",
                                  "mobilenet", "gpt2"])
def test_testing_workloads_give_the_llvm_values(name):
    mod, params = get_workload(name, small=True)
    assert_same_as_llvm(mod, params, example_inputs(mod, params))


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_give_the_llvm_values(name):
    mod, inputs = example_module(name)
    assert_same_as_llvm(mod, None, inputs)
    assert_partitioned_same_as_llvm(mod, inputs, expect_host=host_ops(passes_only(mod)))


def test_elementwise_shape_ops_and_tuples():
    a, b = rl.var("a", shape=(2, 3, 4)), rl.var("b", shape=(3, 1))
    s = rl.subtract(rl.multiply(a, b), rl.divide(a, rl.add(rl.abs(b), rl.const(1.0))))
    m = rl.maximum(rl.minimum(s, rl.const(1.5)), rl.negative(rl.tanh(a)))
    t = rl.transpose(rl.reshape(m, newshape=(2, -1, 2)), axes=(2, 0, 1))     # (2, 2, 6)
    c = rl.concatenate(rl.Tuple([t, rl.exp(t), rl.sqrt(rl.abs(t))]), axis=2)
    sm = rl.nn.log_softmax(rl.nn.leaky_relu(c, alpha=0.2), axis=1)
    cl = rl.clip(rl.transpose(c), a_min=-0.5, a_max=0.7)
    out = rl.Tuple([sm, cl])
    mod = rl.IRModule.from_expr(rl.Function([a, b], out))
    inputs = [rand((2, 3, 4), 1), rand((3, 1), 2)]
    assert_same_as_llvm(mod, None, inputs)
    assert_partitioned_same_as_llvm(mod, inputs)


def test_products_and_convolutions():
    x = rl.var("x", shape=(2, 4, 9, 9))
    dw = rl.var("dw", shape=(4, 1, 3, 3))                    # depthwise
    gw = rl.var("gw", shape=(6, 2, 3, 3))                    # grouped, dilated
    y1 = rl.nn.conv2d(x, dw, groups=4, strides=(2, 2), padding=(1, 2, 0, 1))
    y2 = rl.nn.conv2d(x, gw, groups=2, dilation=(2, 2), padding=(2, 2))
    mp = rl.nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), dilation=(1, 2))
    ap = rl.nn.avg_pool2d(x, pool_size=(2, 2), padding=(1, 1), count_include_pad=True)
    gm = rl.nn.global_max_pool2d(x)
    m3 = rl.var("m3", shape=(2, 5, 3))
    mm = rl.nn.matmul(m3, rl.var("f", shape=(4, 3)), transpose_b=True)
    mt = rl.nn.matmul(rl.var("g", shape=(5, 3)), rl.var("h", shape=(5, 4)), transpose_a=True)
    bm = rl.nn.batch_matmul(m3, rl.var("k", shape=(2, 7, 3)), transpose_b=True)
    bt = rl.nn.batch_matmul(m3, rl.var("q", shape=(2, 5, 6)), transpose_a=True,
                            transpose_b=False)
    dn = rl.nn.dense(m3, rl.var("r", shape=(8, 3)))
    out = rl.Tuple([y1, y2, mp, ap, gm, mm, mt, bm, bt, dn])
    fn = rl.Function(rl.analysis.free_vars(out), out)
    mod = rl.IRModule.from_expr(fn)
    inputs = [rand([int(s) for s in p.type_annotation.shape], i) for i, p in
              enumerate(fn.params)]
    assert_same_as_llvm(mod, None, inputs)
    assert_partitioned_same_as_llvm(mod, inputs)


def test_batch_norm_tuple_outputs_and_flags():
    x = rl.var("x", shape=(2, 3, 4, 4))
    g, b, m, v = (rl.var(k, shape=(3,)) for k in "gbmv")
    bn = rl.nn.batch_norm(x, g, b, m, v, epsilon=1e-3, center=False, scale=False)
    out = rl.Tuple([rl.TupleGetItem(bn, 0), rl.TupleGetItem(bn, 2)])
    mod = rl.IRModule.from_expr(rl.Function([x, g, b, m, v], out))
    inputs = [rand((2, 3, 4, 4), 1), rand((3,), 2), rand((3,), 3), rand((3,), 4),
              1 + np.abs(rand((3,), 5))]
    assert_partitioned_same_as_llvm(mod, inputs)


def test_export_is_a_checked_onnx_model_with_constants_as_initializers():
    from relaylang.backend.byoc._onnx_export import export
    mod, params = small_cnn()
    out, _ = partition(InferType()(BindParams(params)(mod)), [TARGET])
    ((symbol, fn),) = externals(out).items()
    model, names, layout = export(fn, symbol)
    assert names == ["in0"] and layout == 0
    assert len(model.graph.initializer) >= 4
    assert {n.op_type for n in model.graph.node} >= {"Conv", "MaxPool", "Gemm", "Softmax"}


# ------------------------------------------------------------------ refusals

def test_unclaimed_op_is_refused_with_the_function_name():
    mod = InferType()(rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(2, 4), float32]) -> Tensor[(2, 4), float32] { @ext(%x) }
def @ext(%p: Tensor[(2, 4), float32], Compiler="onnxruntime", Primitive=1, Inline=1,
    global_symbol="ext") -> Tensor[(2, 4), float32] {
  cos(%p)
}"""))
    with pytest.raises(ValueError, match=r"`@ext` holds operator `cos`"):
        get_codegen(TARGET)(mod["ext"], "ext")
    with pytest.raises(DiagnosticError, match=r"onnxruntime.*codegen failed on @ext"):
        rl.build(mod, target="llvm")


def test_claimed_op_with_unsupported_attributes_is_refused():
    mod = InferType()(rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, 4, 3), float32], %w: Tensor[(3, 3, 3, 2), float32]) { @ext(%x, %w) }
def @ext(%p: Tensor[(1, 4, 4, 3), float32], %q: Tensor[(3, 3, 3, 2), float32],
    Compiler="onnxruntime", Primitive=1, Inline=1, global_symbol="ext") {
  nn.conv2d(%p, %q, data_layout="NHWC", kernel_layout="HWIO")
}"""))
    with pytest.raises(ValueError, match=r"nn\.conv2d` with these attributes"):
        get_codegen(TARGET)(mod["ext"], "ext")


def test_nhwc_and_ceil_mode_are_left_to_the_host():
    x = rl.var("x", shape=(1, 6, 6, 3))
    y = rl.nn.max_pool2d(x, pool_size=(2, 2), layout="NHWC")
    z = rl.nn.max_pool2d(rl.var("z", shape=(1, 3, 5, 5)), pool_size=(2, 2), strides=(2, 2),
                         ceil_mode=True)
    mod = rl.IRModule.from_expr(rl.Function([x, rl.analysis.free_vars(z)[0]], rl.Tuple([y, z])))
    assert externals(passes_only(mod)) == {}


def test_missing_onnxruntime_names_the_extra(monkeypatch):
    mod, params = small_cnn()
    out, _ = partition(InferType()(BindParams(params)(mod)), [TARGET])
    ((symbol, fn),) = externals(out).items()
    monkeypatch.setitem(sys.modules, "onnxruntime", None)     # import fails
    with pytest.raises(ImportError, match=r"pip install 'relaylang\[onnxruntime\]'"):
        get_codegen(TARGET)(fn, symbol)
    with pytest.raises(DiagnosticError, match=r"relaylang\[onnxruntime\]"):
        rl.build(out, target="llvm")
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"`onnx` package.*relaylang\[onnxruntime\]"):
        get_codegen(TARGET)(fn, symbol)


def test_every_claimed_op_has_a_converter():
    from relaylang.backend.byoc._onnx_export import CONVERTERS
    claimed = set(supported_ops(TARGET))
    assert claimed and claimed <= set(CONVERTERS)


def test_blas_and_onnxruntime_together():
    # blas comes first: it takes the convolutions and the dense layer, onnxruntime the rest
    mod, params = get_workload("resnet18", small=True)
    inputs = example_inputs(mod, params)
    lib = rl.build(mod, target="llvm", params=params, byoc=["blas", TARGET])
    kinds = {kind for _, kind in lib.external_steps}
    assert kinds == {"blas", TARGET}
    check_close(rl.build(mod, target="llvm", params=params)(*inputs), lib(*inputs))


def test_reductions_layer_norm_pad_and_unary_ops():
    x = rl.var("x", shape=(2, 3, 5))
    g, b = rl.var("g", shape=(5,)), rl.var("b", shape=(5,))
    ln = rl.nn.layer_norm(x, g, b, epsilon=1e-3)
    ln2 = rl.nn.layer_norm(x, g, b, center=False, scale=False)
    pos = rl.add(rl.abs(x), rl.const(0.5))
    un = rl.power(rl.add(rl.log(pos), rl.rsqrt(pos)), rl.const(2.0))
    er = rl.add(rl.erf(x), rl.add(rl.floor(x), rl.ceil(x)))
    red = rl.Tuple([rl.sum(x, axis=(1,)), rl.mean(x, axis=(0, 2), keepdims=True),
                    rl.variance(x, rl.mean(x, axis=(2,), keepdims=True), axis=(2,), unbiased=True),
                    rl.max(x, axis=(1,), exclude=True), rl.min(x), rl.sum(x)])
    sq = rl.squeeze(rl.expand_dims(x, axis=1, num_newaxis=2), axis=(1,))
    pd = rl.nn.pad(x, pad_width=((0, 0), (1, 2), (2, 0)), pad_val=rl.const(-1.5))
    out = rl.Tuple([ln, ln2, un, er, red, sq, pd])
    mod = rl.IRModule.from_expr(rl.Function([x, g, b], out))
    inputs = [rand((2, 3, 5), 1), 1 + rand((5,), 2, 0.1), rand((5,), 3)]
    lib = assert_same_as_llvm(mod, None, inputs)
    # layer_norm is decomposed by the build's SimplifyInference: its variance runs in
    # onnxruntime too, nothing is left to the host
    assert host_ops(partition(InferType()(mod), [TARGET])[0]) == set()
    assert len(lib.external_steps) >= 1
    out = assert_partitioned_same_as_llvm(mod, inputs)
    ops = {n.op.name for fn in externals(out).values() for n in post_order(fn)
           if isinstance(n, Call) and isinstance(n.op, Op)}
    assert {"nn.layer_norm", "nn.pad", "variance", "rsqrt", "erf"} <= ops


def test_session_takes_the_build_thread_count(monkeypatch):
    mod, params = small_cnn()
    out, _ = partition(InferType()(BindParams(params)(mod)), [TARGET])
    ((symbol, fn),) = externals(out).items()
    for n in (1, 2):
        monkeypatch.setenv("RELAY_NUM_THREADS", str(n))
        run = get_codegen(TARGET)(fn, symbol)
        options = run.session.get_session_options()
        assert options.intra_op_num_threads == n
        assert options.inter_op_num_threads == 1


def test_tuple_parameter_and_nested_tuple_result():
    mod = InferType()(rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  @ext((%x, %y), %x)
}
def @ext(%p: (Tensor[(2, 3), float32], Tensor[(2, 3), float32]), %q: Tensor[(2, 3), float32],
    Compiler="onnxruntime", Primitive=1, Inline=1, global_symbol="ext") {
  %0 = concatenate(%p, axis=0);
  (%0, (exp(%q), %p.1))
}"""))
    x, y = rand((2, 3), 1), rand((2, 3), 2)
    run = get_codegen(TARGET)(mod["ext"], "ext")
    cat, (ex, second) = run((x, y), x)
    np.testing.assert_allclose(cat, np.concatenate([x, y]), rtol=1e-6)
    np.testing.assert_allclose(ex, np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(second, y)
    got = rl.evaluate(mod, x, y)              # the interpreter runs @ext through the codegen
    np.testing.assert_allclose(got[1][0], np.exp(x), rtol=1e-6)
