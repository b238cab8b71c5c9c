"""The `blas` BYOC target (relaylang/transform/byoc/targets/blas.py: what it takes;
relaylang/backend/byoc/blas.py: the codegen). Differential: every model built with
`byoc=["blas"]` gives the plain LLVM build's values (rtol 1e-4); golden-style: the
partitioned module holds the composites expected; the codegen refuses what it does not
run with a message naming the function."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from byoc_check import EXAMPLES, example_module

import relaylang as rl
from relaylang.backend.byoc import get_codegen
from relaylang.backend.byoc.blas import BlasCodegenError
from relaylang.backend.byoc.runner import partition
from relaylang.ir.diagnostics import DiagnosticError
from relaylang.ir.expr import Call, Function
from relaylang.ir.traverse import post_order
from relaylang.testing.models import example_inputs, get_workload
from relaylang.transform import BindParams, InferType
from relaylang.transform.byoc import get_pattern_table, supported_ops

TARGET = "blas"


def externals(mod, target: str = TARGET) -> dict[str, Function]:
    return {gv.name_hint: fn for gv, fn in mod.functions.items()
            if fn.attrs is not None and fn.attrs.get("Compiler") == target}


def composites(mod, target: str = TARGET) -> Counter:
    """How many calls of each composite the target's functions hold."""
    out: Counter = Counter()
    for fn in externals(mod, target).values():
        for n in post_order(fn):
            if isinstance(n, Call) and isinstance(n.op, Function) and n.op.attrs is not None \
                    and n.op.attrs.get("Composite"):
                out[n.op.attrs.get("Composite")] += 1
    return out


def partitioned(mod, params=None, target: str = TARGET):
    if params:
        mod = BindParams(params)(mod)
    out, _ = partition(InferType()(mod), [target])
    return out


def assert_same_as_llvm(mod, params, inputs, target: str = TARGET, min_steps: int = 1):
    plain = rl.build(mod, target="llvm", params=params)
    lib = rl.build(mod, target="llvm", params=params, byoc=[target])
    assert len([s for s in lib.external_steps if s[1] == target]) >= min_steps
    want, got = plain(*inputs), lib(*inputs)
    if not isinstance(want, tuple):
        want, got = (want,), (got,)
    for w, g in zip(want, got):
        w, g = np.asarray(w), np.asarray(g)
        assert np.ptp(w) > 0 or w.size == 1       # not a saturated, constant output
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def rand(shape, seed=0, scale=1.0, dtype="float32"):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


# ------------------------------------------------------------------ TVM-style models

def conv_bias_relu_chain(n_layers=2, channels=8):
    """conv2d + bias_add + relu, `n_layers` times (TVM's test_partition_graph conv chains)."""
    x = rl.var("x", shape=(1, 3, 12, 12))
    y, params, c_in = x, {}, 3
    for i in range(n_layers):
        w, b = rl.var(f"w{i}", shape=(channels, c_in, 3, 3)), rl.var(f"b{i}", shape=(channels,))
        y = rl.nn.relu(rl.nn.bias_add(rl.nn.conv2d(y, w, padding=(1, 1), channels=channels,
                                                   kernel_size=(3, 3)), b))
        params[f"w{i}"] = rand((channels, c_in, 3, 3), 10 + i, 0.3)
        params[f"b{i}"] = rand((channels,), 20 + i, 0.1)
        c_in = channels
    return rl.IRModule.from_expr(rl.Function(rl.analysis.free_vars(y), y)), params


def diamond():
    """conv -> relu, two conv branches, add, relu (TVM's diamond in its BYOC tests)."""
    x = rl.var("x", shape=(1, 4, 10, 10))
    w0, w1, w2 = (rl.var(f"w{i}", shape=(4, 4, 3, 3)) for i in range(3))
    b1 = rl.var("b1", shape=(4,))
    top = rl.nn.relu(rl.nn.conv2d(x, w0, padding=(1, 1)))
    left = rl.nn.relu(rl.nn.bias_add(rl.nn.conv2d(top, w1, padding=(1, 1)), b1))
    right = rl.nn.conv2d(top, w2, padding=(1, 1))
    out = rl.nn.relu(rl.add(left, right))
    params = {"w0": rand((4, 4, 3, 3), 1, 0.3), "w1": rand((4, 4, 3, 3), 2, 0.3),
              "w2": rand((4, 4, 3, 3), 3, 0.3), "b1": rand((4,), 4, 0.1)}
    return rl.IRModule.from_expr(rl.Function(rl.analysis.free_vars(out), out)), params


def small_mlp():
    x = rl.var("x", shape=(2, 20))
    w1, b1 = rl.var("w1", shape=(16, 20)), rl.var("b1", shape=(16,))
    w2, b2 = rl.var("w2", shape=(5, 16)), rl.var("b2", shape=(5,))
    h = rl.nn.relu(rl.nn.bias_add(rl.nn.dense(x, w1), b1))
    out = rl.nn.softmax(rl.nn.bias_add(rl.nn.dense(h, w2), b2))
    params = {"w1": rand((16, 20), 1, 0.3), "b1": rand((16,), 2, 0.1),
              "w2": rand((5, 16), 3, 0.3), "b2": rand((5,), 4, 0.1)}
    return rl.IRModule.from_expr(rl.Function(rl.analysis.free_vars(out), out)), params


def small_cnn():
    """conv + batch_norm + relu, max pool, conv + batch_norm + relu, global average pool,
    flatten, dense + bias."""
    x = rl.var("x", shape=(1, 3, 16, 16))
    y, params, c_in = x, {}, 3
    for i, c in enumerate((8, 16)):
        w = rl.var(f"w{i}", shape=(c, c_in, 3, 3))
        g, be, m, v = (rl.var(f"bn{i}_{k}", shape=(c,)) for k in ("g", "b", "m", "v"))
        y = rl.nn.conv2d(y, w, padding=(1, 1), channels=c, kernel_size=(3, 3))
        y = rl.nn.relu(rl.TupleGetItem(rl.nn.batch_norm(y, g, be, m, v), 0))
        if i == 0:
            y = rl.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
        params[f"w{i}"] = rand((c, c_in, 3, 3), 30 + i, 0.3)
        params[f"bn{i}_g"] = 1 + rand((c,), 40 + i, 0.1)
        params[f"bn{i}_b"] = rand((c,), 50 + i, 0.1)
        params[f"bn{i}_m"] = rand((c,), 60 + i, 0.1)
        params[f"bn{i}_v"] = 1 + np.abs(rand((c,), 70 + i, 0.1))
        c_in = c
    y = rl.nn.batch_flatten(rl.nn.global_avg_pool2d(y))
    wd, bd = rl.var("wd", shape=(10, 16)), rl.var("bd", shape=(10,))
    out = rl.nn.bias_add(rl.nn.dense(y, wd), bd)
    params["wd"], params["bd"] = rand((10, 16), 80, 0.3), rand((10,), 81, 0.1)
    return rl.IRModule.from_expr(rl.Function(rl.analysis.free_vars(out), out)), params


def inputs_of(mod, params, seed=1):
    return example_inputs(mod, params, seed=seed)


MODELS = {"conv_bias_relu_chain": conv_bias_relu_chain, "diamond": diamond,
          "small_mlp": small_mlp, "small_cnn": small_cnn}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_tvm_style_models_give_the_llvm_values(name):
    mod, params = MODELS[name]()
    assert_same_as_llvm(mod, params, inputs_of(mod, params))


@pytest.mark.parametrize("name", ["mlp", "mnist", "resnet18", "resnet50", "resnext50",
                                  "mobilenet", "gpt2"])
def test_testing_workloads_give_the_llvm_values(name):
    mod, params = get_workload(name, small=True)
    assert_same_as_llvm(mod, params, inputs_of(mod, params))


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_give_the_llvm_values(name):
    mod, inputs = example_module(name)
    assert_same_as_llvm(mod, None, inputs)


# ------------------------------------------------------------------ the composites made

def test_conv_chain_becomes_conv2d_bias_relu_composites_in_one_region():
    mod, params = conv_bias_relu_chain(3)
    out = partitioned(mod, params)
    assert composites(out) == Counter({"blas.conv2d_bias_relu": 3})
    assert len(externals(out)) == 1             # the chain merges into one region
    assert rl.structural_equal(rl.parse(rl.astext(out)), out)


def test_diamond_composites():
    mod, params = diamond()
    out = partitioned(mod, params)
    # the top and left convs fuse their relu (and bias); the right conv ends at the add
    assert composites(out) == Counter({"blas.conv2d_bias_relu": 2})
    text = rl.astext(out)
    assert "nn.conv2d" in text and 'Composite="blas.conv2d_bias_relu"' in text


def test_mlp_composites_leave_softmax_to_the_host():
    mod, params = small_mlp()
    out = partitioned(mod, params)
    assert composites(out) == Counter({"blas.dense_bias_relu": 1, "blas.dense_bias": 1})
    main = rl.astext(out["main"])
    assert "nn.softmax" in main and "nn.dense" not in main


def test_cnn_batch_norms_fold_into_conv_bias_relu():
    mod, params = small_cnn()
    out = partitioned(mod, params)
    # SimplifyInference + FoldScaleAxis fold each batch norm into the weights and an
    # added constant, which the composite takes as its bias
    assert composites(out) == Counter({"blas.conv2d_bias_relu": 2, "blas.dense_bias": 1})
    assert "nn.max_pool2d" in rl.astext(out["main"])


def test_relu6_is_a_clip_composite():
    x, w = rl.var("x", shape=(1, 3, 8, 8)), rl.var("w", shape=(4, 3, 3, 3))
    y = rl.clip(rl.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1)), a_min=0.0, a_max=6.0)
    mod = rl.IRModule.from_expr(rl.Function([x, w], y))
    params = {"w": rand((4, 3, 3, 3), 5)}
    out = partitioned(mod, params)
    assert composites(out) == Counter({"blas.conv2d_bias_clip": 1})
    assert_same_as_llvm(mod, params, [rand((1, 3, 8, 8), 6, 3.0)])


def test_add_that_broadcasts_to_a_larger_shape_is_no_bias():
    x, w = rl.var("x", shape=(4, 8)), rl.var("w", shape=(1, 8))
    big = np.ones((3, 4, 1), "float32")
    y = rl.add(rl.nn.dense(x, w), rl.const(big))           # (4, 1) + (3, 4, 1) -> (3, 4, 1)
    mod = rl.IRModule.from_expr(rl.Function([x, w], y))
    out = partitioned(mod, {"w": rand((1, 8), 7)})
    assert composites(out) == Counter()
    assert len(externals(out)) == 1                        # the dense alone
    assert_same_as_llvm(mod, {"w": rand((1, 8), 7)}, [rand((4, 8), 8)])


# ------------------------------------------------------------------ the kernels' edges

CONV_CASES = [
    # (data shape, weight shape, conv2d attrs)
    ((2, 3, 9, 11), (5, 3, 3, 3), {"strides": (2, 2), "padding": (1, 2, 0, 1)}),
    ((1, 4, 10, 10), (6, 4, 3, 3), {"dilation": (2, 2), "padding": (2, 2)}),
    ((1, 4, 7, 7), (6, 4, 1, 1), {}),
    ((2, 4, 7, 7), (6, 4, 1, 1), {"strides": (2, 2)}),
    ((1, 4, 7, 7), (6, 4, 1, 1), {"padding": (1, 1)}),
    ((1, 2, 5, 6), (3, 2, 5, 2), {"strides": (1, 3)}),
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_geometries(case, dtype):
    dshape, wshape, attrs = CONV_CASES[case]
    x, w = rl.var("x", shape=dshape, dtype=dtype), rl.var("w", shape=wshape, dtype=dtype)
    b = rl.var("b", shape=(wshape[0],), dtype=dtype)
    y = rl.nn.relu(rl.nn.bias_add(rl.nn.conv2d(x, w, **attrs), b))
    mod = rl.IRModule.from_expr(rl.Function([x, w, b], y))
    assert_same_as_llvm(mod, None, [rand(dshape, 1, dtype=dtype), rand(wshape, 2, dtype=dtype),
                                    rand((wshape[0],), 3, dtype=dtype)])


def test_products_with_transposes_and_batches():
    b = rl.var("b", shape=(4, 5))
    mm = rl.nn.matmul(rl.var("e", shape=(3, 2, 4)), rl.var("f", shape=(4, 3)))   # N-d @ 2-d
    mt = rl.nn.matmul(rl.var("g", shape=(5, 3)), b, transpose_a=True, transpose_b=True)
    bm = rl.nn.batch_matmul(rl.var("c", shape=(2, 3, 6)), rl.var("d", shape=(2, 7, 6)),
                            transpose_b=True)
    bmt = rl.nn.batch_matmul(rl.var("a", shape=(2, 5, 3)), rl.var("k", shape=(2, 5, 6)),
                             transpose_a=True, transpose_b=False)
    dn = rl.nn.dense(rl.var("m", shape=(2, 5, 3)), rl.var("h", shape=(8, 3)))   # 3-d data
    out = rl.Tuple([mm, mt, bm, bmt, dn])
    fn = rl.Function(rl.analysis.free_vars(out), out)
    mod = rl.IRModule.from_expr(fn)
    inputs = [rand([int(s) for s in p.type_annotation.shape], i) for i, p in
              enumerate(fn.params)]
    out_mod = partitioned(mod)
    assert externals(out_mod)
    assert "nn." not in rl.astext(out_mod["main"])  # every product runs in blas
    assert_same_as_llvm(mod, None, inputs)


def test_batch_matmul_transposed_a_with_bias_and_relu():
    x, y = rl.var("x", shape=(3, 4, 5)), rl.var("y", shape=(3, 4, 6))
    out = rl.nn.relu(rl.add(rl.nn.batch_matmul(x, y, transpose_a=True, transpose_b=False),
                            rl.const(rand((6,), 9))))
    mod = rl.IRModule.from_expr(rl.Function([x, y], out))
    assert composites(partitioned(mod)) == Counter({"blas.batch_matmul_bias_relu": 1})
    assert_same_as_llvm(mod, None, [rand((3, 4, 5), 1), rand((3, 4, 6), 2)])


def test_float16_and_grouped_convs_are_not_taken():
    x, w = rl.var("x", shape=(1, 4, 6, 6), dtype="float16"), \
        rl.var("w", shape=(4, 4, 3, 3), dtype="float16")
    x2, w2 = rl.var("x2", shape=(1, 4, 6, 6)), rl.var("w2", shape=(4, 1, 3, 3))
    out = rl.Tuple([rl.nn.conv2d(x, w), rl.nn.conv2d(x2, w2, groups=4)])
    mod = rl.IRModule.from_expr(rl.Function([x, w, x2, w2], out))
    assert externals(partitioned(mod)) == {}


# ------------------------------------------------------------------ refusals

def external_module(body_text: str) -> rl.IRModule:
    return rl.parse(f"""#[version = "0.0.5"]
def @main(%x: Tensor[(2, 4), float32]) -> Tensor[(2, 4), float32] {{
  @tvmgen_default_blas_main_0(%x)
}}
def @tvmgen_default_blas_main_0(%p: Tensor[(2, 4), float32], Compiler="blas", Primitive=1,
    Inline=1, global_symbol="tvmgen_default_blas_main_0") -> Tensor[(2, 4), float32] {{
  {body_text}
}}""")


def test_codegen_refuses_an_op_the_target_does_not_claim():
    mod = InferType()(external_module("nn.softmax(%p)"))
    fn = mod["tvmgen_default_blas_main_0"]
    with pytest.raises(BlasCodegenError, match=r"tvmgen_default_blas_main_0.*nn\.softmax"):
        get_codegen("blas")(fn, "tvmgen_default_blas_main_0")
    with pytest.raises(DiagnosticError, match=r"blas.*codegen failed.*nn\.softmax"):
        rl.build(mod, target="llvm")


def test_codegen_refuses_a_product_it_does_not_take():
    # a dense of int32 operands: claimed by nobody, refused by the codegen
    mod = InferType()(rl.parse("""#[version = "0.0.5"]
def @f(%p: Tensor[(2, 4), int32], %q: Tensor[(3, 4), int32], Compiler="blas", Primitive=1,
    Inline=1, global_symbol="f") -> Tensor[(2, 3), int32] {
  nn.dense(%p, %q, units=None)
}
def @main(%p: Tensor[(2, 4), int32], %q: Tensor[(3, 4), int32]) { @f(%p, %q) }"""))
    with pytest.raises(BlasCodegenError, match=r"`@f`.*nn\.dense.*not taken"):
        get_codegen("blas")(mod["f"], "f")


def test_callable_checks_its_arguments():
    mod, params = small_mlp()
    out = partitioned(mod, params)
    (symbol, fn), = externals(out).items()
    run = get_codegen("blas")(fn, symbol)
    with pytest.raises(ValueError, match="expected Tensor"):
        run(np.zeros((3, 20), "float32"))
    with pytest.raises(ValueError, match="takes 1 arguments"):
        run()


def test_target_tables_agree_with_the_codegen():
    from relaylang.transform.byoc.targets.blas import PRODUCTS
    assert supported_ops("blas") == sorted(PRODUCTS)
    names = [entry[0] for entry in get_pattern_table("blas")]
    assert "blas.conv2d_bias_relu" in names and "blas.dense_bias" in names
    # activations before bias-only patterns: the longer match wins
    assert names.index("blas.dense_bias_relu") < names.index("blas.dense_bias")


def test_resnet50_every_product_runs_in_blas():
    # relay.testing's ResNet is pre-activation (bn, relu, conv): after the batch norms
    # fold, each conv followed by a shift and a relu is a conv2d_bias_relu composite, the
    # convolutions that feed a residual add stay plain conv2d calls in the blas regions
    mod, params = get_workload("resnet50", small=True)
    out = partitioned(mod, params)
    assert composites(out) == Counter({"blas.conv2d_bias_relu": 9, "blas.dense_bias": 1})
    convs = sum(1 for fn in externals(out).values() for n in post_order(fn)
                if isinstance(n, Call) and getattr(n.op, "name", "") == "nn.conv2d")
    assert convs == 17                       # stem + 4 units x 3 + 4 projections
    host = rl.astext(out["main"])
    assert "nn.conv2d" not in host and "nn.dense" not in host


def test_tuple_parameter_taken_whole_or_flattened():
    mod = InferType()(rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(3, 4), float32]) {
  @ext((%x, %w))
}
def @ext(%p: (Tensor[(2, 4), float32], Tensor[(3, 4), float32]), Compiler="blas",
    Primitive=1, Inline=1, global_symbol="ext") -> Tensor[(2, 3), float32] {
  nn.dense(%p.0, %p.1, units=None)
}"""))
    x, w = rand((2, 4), 1), rand((3, 4), 2)
    run = get_codegen("blas")(mod["ext"], "ext")
    want = x @ w.T
    np.testing.assert_allclose(run((x, w)), want, rtol=1e-6)
    np.testing.assert_allclose(run(x, w), want, rtol=1e-6)      # as executors pass it
    np.testing.assert_allclose(rl.evaluate(mod, x, w), want, rtol=1e-6)
    np.testing.assert_allclose(rl.build(mod, target="llvm")(x, w), want, rtol=1e-6)


def test_codegen_refuses_control_flow_and_bindings():
    for body in ("let %y = nn.dense(%p, %p, units=None); %y",
                 "if (less(1, 2)) { nn.dense(%p, %p, units=None) } else { %p }"):
        mod = InferType()(rl.parse(f"""#[version = "0.0.5"]
def @main(%x: Tensor[(4, 4), float32]) -> Tensor[(4, 4), float32] {{ @ext(%x) }}
def @ext(%p: Tensor[(4, 4), float32], Compiler="blas", Primitive=1, Inline=1,
    global_symbol="ext") -> Tensor[(4, 4), float32] {{
  {body}
}}"""))
        with pytest.raises(BlasCodegenError, match=r"`@ext` holds a `(Let|If)` expression"):
            get_codegen("blas")(mod["ext"], "ext")
