"""Scheduling for parallelism (one parallel loop over the rows that every stage of a
kernel shares; locals per row), the tiled column reductions of matrix-like computes,
and kernel statuses (integer division by zero)."""
from __future__ import annotations

import itertools
import re
import threading

import numpy as np
import pytest
from llvm_check import fused_module, run_native

from relaylang.backend.llvm import loop_ir as L
from relaylang.backend.llvm.jit import (
    STATUS_INT_DIV_BY_ZERO,
    STATUS_INT_MOD_BY_ZERO,
    aligned_copy,
    aligned_empty,
    compile_kernels,
    compile_module,
    pointer_array,
    status_error,
)
from relaylang.backend.llvm.lower import NoLowering, lower_primitive
from relaylang.backend.llvm.schedule import schedule
from relaylang.backend.llvm.te import LowerContext

HEAD = '#[version = "0.0.5"]\n'
RNG = np.random.default_rng(1)


def build_prim(name: str, inputs, fn) -> L.PrimFunc:
    b = LowerContext()
    handles = [b.placeholder(s, d, f"in{k}") for k, (s, d) in enumerate(inputs)]
    out = fn(b, *handles)
    outs = list(out) if isinstance(out, tuple) else [out]
    bufs = [L.Buffer(f"out{k}", o.shape, o.dtype) for k, o in enumerate(outs)]
    body, par = schedule(b, outs, bufs)
    return L.PrimFunc(name, tuple(h.buffer for h in handles) + tuple(bufs), body,
                      len(handles), par, tuple(b.constants))


def run_split(prim: L.PrimFunc, *arrays: np.ndarray, parts: int = 3) -> list[np.ndarray]:
    """Run the kernel as the executor does: sub-ranges of its parallel loop on threads."""
    k = compile_kernels([prim])[prim.name]
    ins = [aligned_copy(a) for a in arrays]
    outs = [aligned_empty(s, d) for s, d in k.params[k.num_inputs:]]
    for o in outs:
        o[...] = 0
    ptrs = pointer_array(ins + outs)
    bounds = np.linspace(0, k.parallel_extent, parts + 1).astype(int)
    threads = [threading.Thread(target=k.run_range, args=(ptrs, int(a), int(c)))
               for a, c in itertools.pairwise(bounds)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outs


def softmax(b, x):
    *lead, m = x.shape
    k = b.reduce_axis(m, "k")
    mx = b.compute(lead, lambda *i: b.reduce_max(x[i + (k,)], [k]), name="mx")
    e = b.compute(x.shape, lambda *i: b.call("exp", x[i] - mx[i[:-1]]), name="e")
    k2 = b.reduce_axis(m, "k2")
    s = b.compute(lead, lambda *i: b.reduce_sum(e[i + (k2,)], [k2]), name="s")
    return b.compute(x.shape, lambda *i: e[i] / s[i[:-1]], name="softmax")


def np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_softmax_rows_run_in_parallel_with_row_locals() -> None:
    prim = build_prim("par_softmax", [((37, 21), "float32")], softmax)
    text = str(prim)
    assert prim.parallel_extent == 37
    assert "for p in range(begin, end  # of 37) parallel:" in text
    assert "allocate mx: float32[]" in text and "allocate s: float32[]" in text
    x = RNG.standard_normal((37, 21)).astype("float32")
    (out,) = run_split(prim, x)
    np.testing.assert_allclose(out, np_softmax(x), rtol=1e-5)


def test_batch_one_fuses_outer_dims() -> None:
    # (1, 3, 5, 33): the leading 1 adds nothing; 3 * 5 rows are the parallel range
    prim = build_prim("par_softmax4", [((1, 3, 5, 33), "float32")], softmax)
    assert prim.parallel_extent == 15
    assert re.search(r"in0\[0, \(p / 5\), \(p % 5\), ", str(prim)), str(prim)
    x = RNG.standard_normal((1, 3, 5, 33)).astype("float32")
    (out,) = run_split(prim, x, parts=4)
    np.testing.assert_allclose(out, np_softmax(x), rtol=1e-5)


def test_several_outputs_share_the_parallel_loop() -> None:
    def lower(b, x):
        k = b.reduce_axis(x.shape[1], "k")
        total = b.compute((x.shape[0],), lambda i: b.reduce_sum(x[i, k], [k]), name="tot")
        am = b.compute((x.shape[0],), lambda i: b.reduce_argmax(x[i, k], [k]), name="am")
        scaled = b.compute(x.shape, lambda i, j: x[i, j] / total[i], name="scaled")
        return scaled, total, am
    prim = build_prim("par_multi", [((70, 19), "float32")], lower)
    assert prim.parallel_extent == 70
    x = RNG.random((70, 19)).astype("float32") + 0.5
    scaled, total, am = run_split(prim, x)
    np.testing.assert_allclose(total, x.sum(1), rtol=1e-5)
    np.testing.assert_allclose(scaled, x / x.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(am, x.argmax(1))


def test_transposed_read_of_a_local_is_not_fused() -> None:
    def lower(b, x):
        k = b.reduce_axis(x.shape[1], "k")
        s = b.compute((x.shape[0],), lambda i: b.reduce_sum(x[i, k], [k]), name="rs")
        t = b.materialize(b.compute(x.shape, lambda i, j: x[i, j] * s[i], name="t"))
        return b.compute((x.shape[1], x.shape[0]), lambda j, i: t[i, j], name="tr")
    prim = build_prim("par_transpose", [((6, 6), "float32")], lower)
    assert prim.parallel_extent == 1
    x = RNG.random((6, 6)).astype("float32")
    (out,) = run_split(prim, x, parts=1)
    np.testing.assert_allclose(out, (x * x.sum(1, keepdims=True)).T, rtol=1e-5)


def test_program_with_batch_one_reductions_in_parallel() -> None:
    text = HEAD + """def @main(%x: Tensor[(1, 9, 40), float32]) {
  %0 = max(%x, axis=[-1], keepdims=True);
  %1 = exp(subtract(%x, %0));
  %2 = sum(%1, axis=[-1], keepdims=True);
  divide(%1, %2)
}
"""
    from llvm_check import primitive_kernels
    try:
        kernels = primitive_kernels(fused_module(text))
    except NoLowering as err:         # the reduce family's lowering is someone else's
        pytest.skip(f"reductions do not lower yet: {err}")
    assert kernels and all(k.parallel_extent == 9 for k in kernels.values())
    x = RNG.standard_normal((1, 9, 40)).astype("float32")
    np.testing.assert_allclose(run_native(text, x), np_softmax(x), rtol=1e-5)


# ---------------------------------------------------------------- matrix-like reductions

def matmul(b, a, c):
    k = b.reduce_axis(a.shape[1], "k")
    return b.compute((a.shape[0], c.shape[1]),
                     lambda i, j: b.reduce_sum(a[i, k] * c[k, j], [k]), name="mm")


def dense(b, x, w):
    k = b.reduce_axis(x.shape[1], "k")
    return b.compute((x.shape[0], w.shape[0]),
                     lambda i, j: b.reduce_sum(x[i, k] * w[j, k], [k]), name="dense")


@pytest.mark.parametrize("m,kk,n", [(9, 13, 70), (1, 40, 37), (3, 5, 3)])
def test_matmul_tiles_columns_with_k_outside(m: int, kk: int, n: int) -> None:
    prim = build_prim(f"mm_{m}_{kk}_{n}", [((m, kk), "float32"), ((kk, n), "float32")],
                      matmul)
    text = str(prim)
    width = min(64, n)
    kind = "unrolled" if width <= 4 else "vectorized"
    assert re.search(rf"for k in range\(0, {kk}\) serial:\n\s+for \w+ in range\(0, {width}\) "
                     rf"{kind}:", text), text
    a = RNG.standard_normal((m, kk)).astype("float32")
    c = RNG.standard_normal((kk, n)).astype("float32")
    (out,) = run_split(prim, a, c)
    np.testing.assert_allclose(out, a @ c, rtol=1e-4, atol=1e-4)


def test_matmul_accumulator_tile_is_in_vector_registers() -> None:
    prim = build_prim("mm_regs", [((64, 64), "float32"), ((64, 64), "float32")], matmul)
    assert prim.parallel_extent == 11         # blocks of 6 rows (the last of 4) in parallel
    opt = compile_module([prim], cache=False).get_source("ll")
    # the tile lives in vector phis across the k loop (no loads/stores of it)
    assert re.search(r"= phi <(8|16) x float>", opt), opt
    assert "alloca" not in opt


@pytest.mark.parametrize("m,kk,n", [(7, 9, 64), (13, 5, 70), (3, 3, 16), (25, 1, 33)])
def test_matmul_blocks_rows_into_one_tile(m: int, kk: int, n: int) -> None:
    """R rows of `a` share each vector of `b` in the k loop: R accumulator tiles, the
    last block shorter; the same values as NumPy for row counts R does not divide."""
    prim = build_prim(f"mm_rows_{m}_{kk}_{n}", [((m, kk), "float32"), ((kk, n), "float32")],
                      matmul)
    text = str(prim)
    # one accumulator tile per row of each block (without blocking: one per tile width)
    assert len(re.findall(r"allocate \w+_tile\d+", text)) >= 3, text
    a = RNG.standard_normal((m, kk)).astype("float32")
    c = RNG.standard_normal((kk, n)).astype("float32")
    (out,) = run_split(prim, a, c)
    np.testing.assert_allclose(out, a @ c, rtol=1e-4, atol=1e-4)


def test_dense_batch_one_is_parallel_over_columns() -> None:
    prim = build_prim("dense_b1", [((1, 300), "float32"), ((50, 300), "float32")], dense)
    assert prim.parallel_extent == 50
    x = RNG.standard_normal((1, 300)).astype("float32")
    w = RNG.standard_normal((50, 300)).astype("float32")
    (out,) = run_split(prim, x, w)
    np.testing.assert_allclose(out, x @ w.T, rtol=1e-4, atol=1e-4)


def test_matrix_benchmark_runs() -> None:
    from matmul_bench import build, dense_lowering
    prim = build("bench_small", [((4, 64), "float32"), ((40, 64), "float32")], dense_lowering)
    assert prim.parallel_extent == 4 * 40        # (i, j) flattened: 4 rows are too few


# ---------------------------------------------------------------- statuses

@pytest.mark.parametrize("op,dtype,status", [("divide", "int32", STATUS_INT_DIV_BY_ZERO),
                                             ("floor_divide", "int64", STATUS_INT_DIV_BY_ZERO),
                                             ("mod", "int8", STATUS_INT_MOD_BY_ZERO),
                                             ("floor_mod", "uint16", STATUS_INT_MOD_BY_ZERO)])
def test_integer_division_by_zero_is_an_error(op: str, dtype: str, status: int) -> None:
    n = 1000
    text = HEAD + (f"def @main(%x: Tensor[({n}), {dtype}], %y: Tensor[({n}), {dtype}])"
                   f" {{ {op}(%x, %y) }}\n")
    x = np.arange(n).astype(dtype)
    y = np.ones(n, dtype)
    want = x // y if "divide" in op else x % y
    np.testing.assert_array_equal(run_native(text, x, y), want)    # no error without 0
    y[517] = 0
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        run_native(text, x, y)
    prim = lower_primitive(fused_module(text)["main"].body.op, f"dz_{op}")
    k = compile_kernels([prim])[prim.name]
    ins = [aligned_copy(x), aligned_copy(y), aligned_empty((n,), dtype)]
    ptrs = pointer_array(ins)
    assert k.run_range_status(ptrs, 0, 500) == 0
    assert k.run_range_status(ptrs, 500, k.parallel_extent) == status
    err = status_error(status, prim.name)
    assert isinstance(err, ZeroDivisionError) and err.status == status
    assert str(err) == "integer division by zero"


@pytest.mark.parametrize("op", ["divide", "floor_mod"])
def test_integer_division_by_a_constant_zero_is_an_error(op: str) -> None:
    """A divisor known to be 0 at compile time fails like one met at run time (the
    interpreter raises); an integer mean over no elements is still 0."""
    text = HEAD + f"def @main(%x: Tensor[(5), int32]) {{ {op}(%x, 0) }}\n"
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        run_native(text, np.arange(5, dtype="int32"))
    empty = HEAD + "def @main(%x: Tensor[(3, 0), int32]) { mean(%x, axis=[1]) }\n"
    np.testing.assert_array_equal(run_native(empty, np.zeros((3, 0), "int32")),
                                  np.zeros(3, "int32"))


def test_interpreter_reports_the_same_error() -> None:
    import relaylang as rl
    text = HEAD + "def @main(%x: Tensor[(3), int32], %y: Tensor[(3), int32]) { divide(%x, %y) }\n"
    x, y = np.array([1, 2, 3], "int32"), np.array([1, 0, 3], "int32")
    with pytest.raises(Exception, match="integer division by zero"):
        rl.evaluate(rl.parse(text), x, y)
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        run_native(text, x, y)


def test_unknown_status_is_a_runtime_error() -> None:
    err = status_error(64, "k")
    assert isinstance(err, RuntimeError) and "status 64" in str(err)
    assert isinstance(status_error(0x7FFF0002), RuntimeError)      # not a kernel's flags
    assert isinstance(status_error(STATUS_INT_DIV_BY_ZERO | STATUS_INT_MOD_BY_ZERO),
                      ZeroDivisionError)


def test_constant_index_division_has_no_checks() -> None:
    prim = build_prim("flat_idx", [((1, 4, 6, 8), "float32")], softmax)
    raw = compile_module([prim], cache=False).get_source("ll-raw")
    assert "status" in raw
    assert not re.search(r"or i32 %.*, %", raw.split("define i32 @flat_idx")[0]), raw


def test_large_row_locals_live_on_the_heap_per_thread() -> None:
    # a materialised row of 20000 floats (80 KB > the stack limit) per parallel iteration
    def lower(b, x):
        e = b.materialize(b.compute(x.shape, lambda i, j: b.call("exp", x[i, j]), name="ex"))
        k = b.reduce_axis(x.shape[1], "k")
        s = b.compute((x.shape[0],), lambda i: b.reduce_sum(e[i, k], [k]), name="sm")
        return b.compute(x.shape, lambda i, j: e[i, j] / s[i], name="norm")
    prim = build_prim("par_heap", [((6, 20000), "float32")], lower)
    assert prim.parallel_extent == 6 and "allocate ex_m: float32[20000]" in str(prim)
    raw = compile_module([prim], cache=False).get_source("ll-raw")
    assert re.search(r"call .*malloc", raw) and re.search(r"call .*free", raw)
    x = RNG.standard_normal((6, 20000)).astype("float32")
    (out,) = run_split(prim, x, parts=3)
    e = np.exp(x.astype(np.float64))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-4)


def test_direct_convolution_tiles_output_columns() -> None:
    # out[c, h, w] = sum_{rc, kh, kw} x[rc, h + kh, w + kw] * wt[c, rc, kh, kw]
    def lower(b, x, wt):
        rc, kh, kw = b.reduce_axis(3, "rc"), b.reduce_axis(3, "kh"), b.reduce_axis(3, "kw")
        return b.compute((4, 8, 70), lambda c, h, w: b.reduce_sum(
            x[rc, h + kh, w + kw] * wt[c, rc, kh, kw], [rc, kh, kw]), name="conv")
    prim = build_prim("conv_tile", [((3, 10, 72), "float32"), ((4, 3, 3, 3), "float32")],
                      lower)
    text = str(prim)
    assert prim.parallel_extent == 32 and "range(0, 64) vectorized" in text, text
    x = RNG.standard_normal((3, 10, 72)).astype("float32")
    wt = RNG.standard_normal((4, 3, 3, 3)).astype("float32")
    (out,) = run_split(prim, x, wt)
    ref = np.zeros((4, 8, 70))
    for kh in range(3):
        for kw in range(3):
            ref += np.einsum("rhw,cr->chw", x[:, kh:kh + 8, kw:kw + 70], wt[:, :, kh, kw])
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_schedule_names_are_deterministic_for_the_cache() -> None:
    from relaylang.backend.llvm.jit import module_ir
    shapes = [((9, 13), "float32"), ((13, 70), "float32")]
    first = module_ir([build_prim("det", shapes, matmul)])
    build_prim("other", [((5, 21), "float32")], softmax)
    assert module_ir([build_prim("det", shapes, matmul)]) == first


@pytest.mark.parametrize("shape", [(1,), (3, 1, 5), (2, 0, 3), (1, 1, 7), (4, 5, 6), (70, 3),
                                   (1, 2, 3, 67)])
def test_mixed_stages_over_edge_shapes_any_split(shape: tuple) -> None:
    """max over the middle axis (a column reduction), sum over the last axis (a row
    reduction) and elementwise consumers of both, as two outputs; run over a random
    partition of the parallel range."""
    nd = len(shape)

    def lower(b, x):
        mid = nd // 2 if nd > 1 else 0
        k = b.reduce_axis(shape[mid], "km")
        red_shape = shape[:mid] + shape[mid + 1:]

        def mx_f(*i):
            return b.reduce_max(x[i[:mid] + (k,) + i[mid:]], [k])
        mx = b.compute(red_shape, mx_f, name="mxm")
        k2 = b.reduce_axis(shape[-1], "kl")
        sm = b.compute(shape[:-1], lambda *i: b.reduce_sum(x[i + (k2,)], [k2]), name="sml")

        def out_f(*i):
            v = x[i] - mx[i[:mid] + i[mid + 1:]] if red_shape else x[i] - mx[()]
            return v * (sm[i[:-1]] if nd > 1 else sm[()])
        return b.compute(shape, out_f, name="mix"), b.compute(
            shape[:-1], lambda *i: sm[i] * 2.0, name="twice")
    prim = build_prim(f"mix_{'_'.join(map(str, shape))}", [(shape, "float32")], lower)
    x = RNG.standard_normal(shape).astype("float32")
    mid = nd // 2 if nd > 1 else 0
    with np.errstate(all="ignore"):
        mx = x.max(mid, keepdims=True) if x.size else np.zeros(
            shape[:mid] + (1,) + shape[mid + 1:], "float32")
    sm = x.sum(-1, keepdims=True)
    want = (x - mx) * sm
    parts = int(RNG.integers(1, 5))
    out, twice = run_split(prim, x, parts=parts)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(twice, sm[..., 0] * 2, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- kernels with a prologue

def _conv_kernel(ds, ws, attrs, epilogue=False):
    from llvm_check import primitive_kernels
    o = ws[0]
    call = f"nn.conv2d(%x, %w, {attrs})"
    params = f"%x: Tensor[{ds}, float32], %w: Tensor[{ws}, float32]"
    if epilogue:
        params += f", %b: Tensor[({o}), float32]"
        call = f"nn.relu(nn.bias_add({call}, %b))"
    text = HEAD + f"def @main({params}) {{ {call} }}\n"
    (k,) = primitive_kernels(fused_module(text)).values()
    return text, k


def _split_agrees(k, arrays, trials: int = 4) -> np.ndarray:
    """One whole call, then random partitions of [0, extent) on threads: the same bits."""
    ins = [aligned_copy(a) for a in arrays]
    outs = [aligned_empty(s, d) for s, d in k.params[k.num_inputs:]]
    ptrs = pointer_array(ins + outs)
    k.run_range(ptrs, 0, k.parallel_extent)
    whole = [o.copy() for o in outs]
    for _ in range(trials):
        for o in outs:
            o[...] = np.nan
        cuts = sorted(RNG.integers(0, k.parallel_extent + 1, int(RNG.integers(0, 5))))
        bounds = [0, *map(int, cuts), k.parallel_extent]
        threads = [threading.Thread(target=k.run_range, args=(ptrs, a, c))
                   for a, c in itertools.pairwise(bounds)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for o, w in zip(outs, whole):
            np.testing.assert_array_equal(o, w)
    return whole[0]


@pytest.mark.parametrize("ds,ws,attrs", [
    ((1, 16, 14, 14), (32, 16, 3, 3), "padding=[1, 1], channels=32, kernel_size=[3, 3]"),
    ((2, 8, 9, 11), (16, 8, 3, 3), ("strides=[2, 1], padding=[1, 2], channels=16, "
                                    "kernel_size=[3, 3]")),
    ((1, 20, 12, 12), (50, 20, 5, 5), "channels=50, kernel_size=[5, 5]"),
    ((1, 32, 10, 10), (32, 1, 3, 3), "padding=[1, 1], groups=32, channels=32, kernel_size=[3, 3]"),
    ((1, 12, 7, 9), (24, 12, 1, 1), ("channels=24, kernel_size=[1, 1], data_layout=\"NHWC\", "
                                     "kernel_layout=\"HWIO\"")),
])
@pytest.mark.parametrize("epilogue", [False, True])
def test_convolution_with_prologue_is_parallel_any_split(ds, ws, attrs, epilogue) -> None:
    """A padded input and a re-laid weight (stages with other leading dims) are computed
    by every call; the blocked result and its epilogue share one parallel loop."""
    if "NHWC" in attrs:
        ds = (ds[0], ds[2], ds[3], ds[1])
        ws = (ws[2], ws[3], ws[1], ws[0])
    if epilogue and "NHWC" in attrs:
        pytest.skip("bias_add axis differs")
    text, k = _conv_kernel(ds, ws, attrs, epilogue)
    assert k.parallel_extent > 1
    o = ws[0] if "NHWC" not in attrs else ws[3]
    arrays = [RNG.standard_normal(ds).astype("float32"),
              RNG.standard_normal(ws).astype("float32")]
    if epilogue:
        arrays.append(RNG.standard_normal((o,)).astype("float32"))
    out = _split_agrees(k, arrays)
    np.testing.assert_allclose(out, run_native(text, *arrays), rtol=0)
    from llvm_check import assert_matches_interpreter
    assert_matches_interpreter(text, *arrays, rtol=1e-5, atol=1e-4)


def test_blocked_dense_is_parallel_with_its_weight_prologue() -> None:
    text = HEAD + ("def @main(%x: Tensor[(16, 40), float32], %w: Tensor[(64, 40), float32]) "
                   "{ nn.dense(%x, %w, units=64) }\n")
    from llvm_check import primitive_kernels
    (k,) = primitive_kernels(fused_module(text)).values()
    assert k.parallel_extent > 1
    x = RNG.standard_normal((16, 40)).astype("float32")
    w = RNG.standard_normal((64, 40)).astype("float32")
    out = _split_agrees(k, [x, w])
    np.testing.assert_allclose(out, x @ w.T, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cols", [1, 64])
def test_prologue_only_when_cheap_compared_to_the_main_nest(cols: int) -> None:
    """t = exp(x) (a local read shifted by one row, so it cannot share the parallel
    loop); out[i, l] = sum_k t[(i + 1) % 80, k] * y[k, l]: with one column t costs as
    much as out (serial); with 64 columns it is 1/64 of out (every call computes t)."""
    def lower(b, x, y):
        t = b.materialize(b.compute(x.shape, lambda i, j: b.call("exp", x[i, j]), name="t"))
        k = b.reduce_axis(x.shape[1], "k")
        return b.compute((x.shape[0], cols), lambda i, c: b.reduce_sum(
            t[(i + 1) % x.shape[0], k] * y[k, c], [k]), name="shifted")
    prim = build_prim(f"pro_cost_{cols}", [((80, 90), "float32"), ((90, cols), "float32")],
                      lower)
    assert (prim.parallel_extent > 1) == (cols > 1), str(prim)
    x = RNG.standard_normal((80, 90)).astype("float32") * 0.1
    y = RNG.standard_normal((90, cols)).astype("float32")
    want = np.roll(np.exp(x), -1, axis=0) @ y
    for parts in (1, 2, 3):
        (out,) = run_split(prim, x, y, parts=parts)
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


def test_prologue_locals_are_per_call_and_relaid_output_any_split() -> None:
    """A cheap prologue (a re-laid small table) feeding a blocked stage whose output is
    re-laid out again (`out[i, j] = t[j / 8, i, j % 8]`): parallel, any split agrees."""
    def lower(b, x, w):
        nblk = w.shape[0] // 8
        kk = x.shape[1]
        wb = b.materialize(b.compute((nblk, kk, 8), lambda jb, k, jj: w[jb * 8 + jj, k],
                                     name="wb"))
        k = b.reduce_axis(kk, "k")
        t = b.compute((nblk, x.shape[0], 8), lambda jb, m, jj: b.reduce_sum(
            x[m, k] * wb[jb, k, jj], [k]), name="tb")
        return b.compute((x.shape[0], w.shape[0]),
                         lambda i, j: b.max(t[j / 8, i, j % 8], b.const(0, "float32")),
                         name="out")
    prim = build_prim("pro_relaid", [((33, 20), "float32"), ((24, 20), "float32")], lower)
    assert prim.parallel_extent > 1, str(prim)
    assert "parallel" in str(prim)
    x = RNG.standard_normal((33, 20)).astype("float32")
    w = RNG.standard_normal((24, 20)).astype("float32")
    whole = run_split(prim, x, w, parts=1)[0]
    for parts in (2, 3, 5):
        np.testing.assert_array_equal(run_split(prim, x, w, parts=parts)[0], whole)
    np.testing.assert_allclose(whole, np.maximum(x @ w.T, 0), rtol=1e-4, atol=1e-4)
