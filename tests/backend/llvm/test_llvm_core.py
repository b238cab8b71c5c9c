"""The core of the LLVM backend: loop IR printing, lowering + scheduling of computes and
reductions, codegen, JIT, kernel cache, and elementwise/broadcast ops end to end
against the interpreter."""
from __future__ import annotations

import re

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, fused_module

from relaylang.backend.llvm import loop_ir as L
from relaylang.backend.llvm.jit import (
    KernelCallError,
    aligned_empty,
    compile_kernels,
    compile_module,
)
from relaylang.backend.llvm.lower import NoLowering, lower_primitive
from relaylang.backend.llvm.schedule import schedule
from relaylang.backend.llvm.te import LowerContext, LoweringError

HEAD = '#[version = "0.0.5"]\n'
RNG = np.random.default_rng(0)


def program(params: str, body: str) -> str:
    return HEAD + f"def @main({params}) {{ {body} }}\n"


def rand(shape: tuple, dtype: str = "float32") -> np.ndarray:
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    if dtype.startswith(("int", "uint")):
        return RNG.integers(-50 if dtype.startswith("int") else 0, 50, shape).astype(dtype)
    return (RNG.standard_normal(shape) * 2).astype(dtype)


def build_prim(name: str, inputs: list[tuple[tuple, str]], fn) -> L.PrimFunc:
    """A PrimFunc from a lowering written against `b` (the op authors' API)."""
    b = LowerContext()
    handles = [b.placeholder(s, d, f"in{k}") for k, (s, d) in enumerate(inputs)]
    out = fn(b, *handles)
    outs = list(out) if isinstance(out, tuple) else [out]
    bufs = [L.Buffer(f"out{k}", o.shape, o.dtype) for k, o in enumerate(outs)]
    body, par = schedule(b, outs, bufs)
    params = tuple(h.buffer for h in handles) + tuple(bufs)
    return L.PrimFunc(name, params, body, len(handles), par, tuple(b.constants))


def run_prim(prim: L.PrimFunc, *arrays: np.ndarray) -> list[np.ndarray]:
    k = compile_kernels([prim])[prim.name]
    outs = [aligned_empty(s, d) for s, d in k.params[k.num_inputs:]]
    k(list(arrays) + outs)
    return outs


# ---------------------------------------------------------------- loop IR

def test_loop_ir_prints_a_readable_nest() -> None:
    x = L.Buffer("x", (4, 8), "float32")
    out = L.Buffer("out", (4, 8), "float32")
    i, j = L.Var("i", extent=4), L.Var("j", extent=8)
    value = L.Call("exp", (L.Load(x, (i, j)) + 1.0,), "float32")
    body = L.For(i, 4, L.For(j, 8, L.Store(out, (i, j), value), "vectorized"), "parallel")
    prim = L.PrimFunc("k", (x, out), body, 1, 4)
    text = str(prim)
    assert "primfn k(x: float32[4, 8], out: float32[4, 8])" in text
    assert "for i in range(begin, end  # of 4) parallel:" in text
    assert "    for j in range(0, 8) vectorized:" in text
    assert "out[i, j] = exp((x[i, j] + 1.0f))" in text


def test_loop_ir_seq_is_flat_and_if_prints() -> None:
    a = L.Buffer("a", (), "int32", "local")
    s = L.seq(L.Store(a, (), L.const(1, "int32")),
              L.seq(L.Store(a, (), L.const(2, "int32")), None))
    assert isinstance(s, L.Seq) and len(s.stmts) == 2
    cond = L.cmp("lt", L.Load(a, ()), 3)
    text = str(L.IfThenElse(cond, s, L.Store(a, (), L.const(0, "int32"))))
    assert text.splitlines()[0] == "if (a[] < 3i32):"
    assert "else:" in text


def test_expressions_promote_python_numbers() -> None:
    x = L.Buffer("x", (3,), "float16")
    e = 2 * L.Load(x, (L.const(0, "int64"),)) - 1
    assert e.dtype == "float16"
    assert isinstance(e.b, L.Const) and e.b.dtype == "float16"
    with pytest.raises(TypeError):
        bool(e)


# ---------------------------------------------------------------- elementwise end to end

def test_one_elementwise_op() -> None:
    text = program("%x: Tensor[(3, 37), float32]", "exp(%x)")
    assert_matches_interpreter(text, rand((3, 37)))


def test_fused_chain_and_loop_ir() -> None:
    text = program("%x: Tensor[(5, 19), float32], %y: Tensor[(19), float32]",
                   "sigmoid(multiply(add(%x, %y), 2f))")
    mod = fused_module(text)
    prim = lower_primitive(mod["main"].body.op, "fused")
    assert "parallel" in str(prim) and "vectorized" in str(prim)
    assert_matches_interpreter(text, rand((5, 19)), rand((19,)))


@pytest.mark.parametrize("xs,ys", [((4, 1), (1, 7)), ((7,), (3, 1, 7)), ((1,), (6, 5)),
                                   ((2, 3, 1), (3, 9))])
def test_broadcasting_both_ways(xs: tuple, ys: tuple) -> None:
    text = program(f"%x: Tensor[{xs}, float32], %y: Tensor[{ys}, float32]",
                   "subtract(%x, %y)")
    assert_matches_interpreter(text, rand(xs), rand(ys))


@pytest.mark.parametrize("shape", [(0,), (3, 0), (1,), (1, 1), (0, 5), ()])
def test_size_zero_and_one(shape: tuple) -> None:
    t = "Tensor[" + (str(shape) if shape else "()") + ", float32]"
    text = program(f"%x: {t}, %y: {t}", "maximum(%x, %y)")
    assert_matches_interpreter(text, rand(shape), rand(shape))


@pytest.mark.parametrize("n", [1, 7, 15, 17, 33, 1001])
def test_odd_sizes(n: int) -> None:
    text = program(f"%x: Tensor[({n}), float32]", "sqrt(abs(%x))")
    assert_matches_interpreter(text, rand((n,)))


def test_float16_rounds_per_op() -> None:
    text = program("%x: Tensor[(4, 33), float16], %y: Tensor[(33), float16]",
                   "tanh(divide(multiply(%x, %y), add(%y, 3f16)))")
    out = assert_matches_interpreter(text, rand((4, 33), "float16"), rand((33,), "float16"))
    assert out.dtype == np.float16


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_integer_ops(dtype: str) -> None:
    text = program(f"%x: Tensor[(3, 11), {dtype}], %y: Tensor[(11), {dtype}]",
                   "(floor_mod(%x, %y), divide(%x, %y), floor_divide(%x, %y), mod(%x, %y),"
                   " maximum(%x, %y), multiply(%x, %y))")
    x = rand((3, 11), dtype)
    y = rand((11,), dtype)
    y[y == 0] = 3
    assert_matches_interpreter(text, x, y)


def test_bool_ops() -> None:
    text = program("%x: Tensor[(2, 9), bool], %y: Tensor[(9), bool]",
                   "(logical_and(%x, %y), logical_xor(%x, %y), add(%x, %y), not_equal(%x, %y),"
                   " logical_not(%x))")
    assert_matches_interpreter(text, rand((2, 9), "bool"), rand((9,), "bool"))


def test_comparisons_where_clip_cast() -> None:
    text = program("%x: Tensor[(3, 10), float32], %y: Tensor[(10), float32]",
                   "(where(less(%x, %y), %x, %y), clip(%x, a_min=-1f, a_max=0.5f),"
                   " cast(%x, dtype=\"int32\"), cast(greater_equal(%x, 0f), dtype=\"float16\"))")
    assert_matches_interpreter(text, rand((3, 10)), rand((10,)))


def test_nan_semantics_match_numpy() -> None:
    x = np.array([np.nan, 1.0, -np.inf, 0.0, np.nan], dtype="float32")
    y = np.array([0.0, np.nan, 1.0, -0.0, np.nan], dtype="float32")
    text = program("%x: Tensor[(5), float32], %y: Tensor[(5), float32]",
                   "(maximum(%x, %y), minimum(%x, %y), isnan(%x), isfinite(%y), round(%x))")
    assert_matches_interpreter(text, x, y)


def test_power_constant_exponents_and_float64() -> None:
    text = program("%x: Tensor[(9), float64]",
                   "(power(%x, 2f64), power(%x, 0.5f64), power(%x, 3f64), exp(%x))")
    x = np.array([-np.inf, -0.0, 0.0, 1.5, 2.0, 4.0, 0.25, 7.0, 9.0])
    assert_matches_interpreter(text, x)


def test_integer_power() -> None:
    text = program("%x: Tensor[(7), int32], %y: Tensor[(7), int32]", "power(%x, %y)")
    x = np.array([2, -3, 1, -1, 5, 0, 7], dtype="int32")
    y = np.array([10, 3, -4, -3, 0, 2, 31], dtype="int32")
    assert_matches_interpreter(text, x, y)


# ---------------------------------------------------------------- reductions via te

def test_reduction_sum_over_rows_keeps_inner_loop_spatial() -> None:
    def lower(b, x):
        k = b.reduce_axis(x.shape[0], "k")
        return b.compute((x.shape[1],), lambda j: b.reduce_sum(x[k, j], [k]), name="colsum")
    prim = build_prim("colsum", [((13, 71), "float32")], lower)
    text = str(prim)
    # a tile of 64 output columns (then one of 7) with the reduction loop outside it;
    # the tiles are the parallel loop
    assert re.search(r"for k in range\(0, 13\) serial:\n\s+for \w+ in range\(0, 64\) "
                     r"vectorized:", text), text
    assert re.search(r"for k in range\(0, 13\) serial:\n\s+for \w+ in range\(0, 7\) "
                     r"vectorized:", text), text
    assert prim.parallel_extent == 2
    x = rand((13, 71))
    (out,) = run_prim(prim, x)
    np.testing.assert_allclose(out, x.sum(0), rtol=1e-5, atol=1e-5)


def test_reduction_sum_over_last_axis_and_consumer() -> None:
    # softmax-like: max, exp-sum, divide (three stages; the first two are local)
    def lower(b, x):
        n, m = x.shape
        k = b.reduce_axis(m, "k")
        mx = b.compute((n,), lambda i: b.reduce_max(x[i, k], [k]), name="mx")
        e = b.compute((n, m), lambda i, j: b.call("exp", x[i, j] - mx[i]), name="e")
        k2 = b.reduce_axis(m, "k2")
        s = b.compute((n,), lambda i: b.reduce_sum(e[i, k2], [k2]), name="s")
        return b.compute((n, m), lambda i, j: e[i, j] / s[i], name="softmax")
    prim = build_prim("softmax", [((5, 21), "float32")], lower)
    assert "allocate mx" in str(prim)
    x = rand((5, 21))
    (out,) = run_prim(prim, x)
    ref = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, ref / ref.sum(1, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_reductions_max_min_prod_argmax(dtype: str) -> None:
    def lower(b, x):
        k = b.reduce_axis(x.shape[1], "k")
        return (b.compute((x.shape[0],), lambda i: b.reduce_max(x[i, k], [k])),
                b.compute((x.shape[0],), lambda i: b.reduce_min(x[i, k], [k])),
                b.compute((x.shape[0],), lambda i: b.reduce_argmax(x[i, k], [k])),
                b.compute((x.shape[0],), lambda i: b.reduce_argmin(x[i, k], [k]),
                          dtype="int32"),
                b.compute((x.shape[0],), lambda i: b.reduce_sum(x[i, k], [k])))
    x = rand((6, 9), dtype)
    if dtype != "int32":
        x[2, 4] = np.nan
        x[3, :] = np.nan
    prim = build_prim(f"mm_{dtype}", [(x.shape, dtype)], lower)
    mx, mn, amx, amn, sm = run_prim(prim, x)
    np.testing.assert_array_equal(mx, x.max(1))
    np.testing.assert_array_equal(mn, x.min(1))
    np.testing.assert_array_equal(amx, x.argmax(1))
    np.testing.assert_array_equal(amn, x.argmin(1).astype("int32"))
    want = x.astype("float32").sum(1).astype(dtype) if dtype == "float16" else x.sum(1)
    np.testing.assert_allclose(sm.astype("float64"), want.astype("float64"), rtol=1e-3)


def test_reduction_over_two_axes_and_materialize() -> None:
    def lower(b, x):
        sq = b.materialize(b.compute(x.shape, lambda i, j, l: x[i, j, l] * x[i, j, l]))
        k1, k2 = b.reduce_axis(x.shape[0]), b.reduce_axis(x.shape[2])
        return b.compute((x.shape[1],), lambda j: b.reduce_sum(sq[k1, j, k2], [k1, k2]))
    x = rand((3, 4, 5))
    (out,) = run_prim(build_prim("sumsq", [(x.shape, "float32")], lower), x)
    np.testing.assert_allclose(out, (x * x).sum((0, 2)), rtol=1e-5)


def test_reduction_not_at_root_is_an_error() -> None:
    b = LowerContext()
    x = b.placeholder((3, 4), "float32", "x")
    k = b.reduce_axis(4)
    with pytest.raises(LoweringError):
        b.compute((3,), lambda i: b.reduce_sum(x[i, k], [k]) + 1)


# ---------------------------------------------------------------- codegen / jit / cache

def test_optimised_ir_is_vectorised_and_args_noalias() -> None:
    text = program("%x: Tensor[(64, 1000), float32], %y: Tensor[(1000), float32]",
                   "maximum(multiply(add(%x, %y), 2f), 0f)")
    prim = lower_primitive(fused_module(text)["main"].body.op, "vec_check")
    m = compile_module([prim], cache=False)
    raw, opt = m.get_source("ll-raw"), m.get_source("ll")
    assert "noalias align 4" in raw and "llvm.loop.vectorize.enable" in raw   # float32
    assert re.search(r"<(8|16) x float>", opt), opt
    assert "fmul" in opt and m.get_source("asm").strip()
    assert re.search(r"\bymm|\bzmm", m.get_source("asm"))


def test_kernel_validates_arguments_and_runs_ranges() -> None:
    text = program("%x: Tensor[(8, 5), float32]", "negative(%x)")
    prim = lower_primitive(fused_module(text)["main"].body.op, "neg_check")
    k = compile_kernels([prim])["neg_check"]
    assert k.params == [((8, 5), "float32"), ((8, 5), "float32")]
    assert k.parallel_extent == 8
    x = rand((8, 5))
    with pytest.raises(KernelCallError, match="float32"):
        k([x.astype("float64"), np.empty((8, 5), "float32")])
    with pytest.raises(KernelCallError, match="must be"):
        k([x[:4], np.empty((8, 5), "float32")])
    with pytest.raises(KernelCallError, match="contiguous"):
        k([np.asfortranarray(x), np.empty((8, 5), "float32")])
    with pytest.raises(KernelCallError, match="takes 2"):
        k([x])
    out = np.zeros((8, 5), "float32")
    k([x, out])                      # unaligned arrays are staged through aligned copies
    np.testing.assert_array_equal(out, -x)
    from relaylang.backend.llvm.jit import aligned_copy, pointer_array
    xa, oa = aligned_copy(x), aligned_empty((8, 5), "float32")
    oa[...] = 0
    ptrs = pointer_array([xa, oa])
    k.run_range(ptrs, 2, 5)
    np.testing.assert_array_equal(oa[2:5], -x[2:5])
    assert not oa[:2].any() and not oa[5:].any()


def test_object_code_round_trip_and_cache(tmp_path, monkeypatch) -> None:
    from relaylang.backend.llvm import cache
    from relaylang.backend.llvm.jit import load_object, structure_key
    monkeypatch.setenv("RELAY_CACHE_DIR", str(tmp_path))
    text = program("%x: Tensor[(3, 3), float32]", "floor(%x)")
    prim = lower_primitive(fused_module(text)["main"].body.op, "floor_check")
    m1 = compile_module([prim], cache=True)
    entries = list(tmp_path.glob("*.o"))
    assert len(entries) == 1
    m2 = compile_module([prim], cache=True)          # a hit
    assert m2.object_code == m1.object_code
    entries[0].write_bytes(b"garbage")               # a corrupt entry is rebuilt
    m3 = compile_module([prim], cache=True)
    assert m3.object_code == m1.object_code
    assert cache.load(structure_key([prim])) == m1.object_code   # keyed by the loop IR
    m4 = load_object(m1.object_code, m1.infos)
    x = rand((3, 3))
    out = aligned_empty((3, 3), "float32")
    m4.kernels["floor_check"]([x, out])
    np.testing.assert_array_equal(out, np.floor(x))


def test_cache_key_is_linear_in_shared_expressions() -> None:
    """Repeated squaring shares subexpressions: the key lists each node once (a plain
    repr would expand the DAG exponentially), and different kernels get different keys."""
    import time

    from relaylang.backend.llvm.jit import structure_key

    def lower(b, x):
        def f(*i):
            e = x[i]
            for _ in range(40):
                e = e * e
            return e
        return b.compute(x.shape, f, name="sq")
    prim = build_prim("sq40", [((5,), "float32")], lower)
    start = time.perf_counter()
    key = structure_key([prim])
    assert time.perf_counter() - start < 1.0 and len(key) < 100_000
    other = build_prim("sq40b", [((6,), "float32")], lower)
    assert structure_key([other]) != key


def test_constants_are_baked() -> None:
    import relaylang as rl
    x = rl.var("x", shape=(2, 3), dtype="float32")
    c = rl.const(np.arange(6, dtype="float32").reshape(2, 3))
    mod = rl.IRModule.from_expr(rl.Function([x], rl.multiply(rl.add(x, c), rl.const(2.0))))
    xv = rand((2, 3))
    out = assert_matches_interpreter(mod, xv)
    np.testing.assert_allclose(out, (xv + np.arange(6).reshape(2, 3)) * 2, rtol=1e-6)
    # FuseOps passes tensor constants as arguments; a primitive function holding one
    # gets it baked in as global data
    from relaylang.ir.attrs import DictAttrs
    from relaylang.ir.expr import Function
    fn = Function([x], rl.multiply(rl.add(x, c), rl.const(2.0)),
                  attrs=DictAttrs((("Primitive", 1),)))
    typed = rl.transform.InferType()(rl.IRModule.from_expr(fn))["main"]
    prim = lower_primitive(typed, "baked")
    assert len(prim.constants) == 1 and "2.0f" in str(prim)
    (got,) = run_prim(prim, xv)
    np.testing.assert_allclose(got, out, rtol=1e-6)


def test_no_lowering_names_the_op() -> None:
    text = program("%x: Tensor[(2, 3), bool]", "einsum((%x, %x), equation=\"ij,ij->ij\")")
    with pytest.raises(NoLowering) as err:
        lower_primitive(fused_module(text)["main"].body.op, "nope")
    assert err.value.op_name == "einsum"


def test_every_loop_has_its_own_loop_id() -> None:
    """llvmlite returns one node for equal metadata operands: each loop's id must be
    distinct, or every loop of a module carries the hints of the last one."""
    import re

    import relaylang as rl
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(64, 100), float32], %y: Tensor[(64, 100), float32]) {
  %0 = exp(%x);
  %1 = sum(%0, axis=[1]);
  %2 = nn.softmax(%y);
  (%1, %2)
}"""
    lib = rl.build(rl.parse(text), target="llvm")
    raw = "\n".join(m.get_source("ll-raw") for m in lib.modules)
    ids = re.findall(r"!llvm\.loop (!\d+)", raw)
    assert len(ids) >= 2 and len(set(ids)) == len(ids)


def test_kernel_work_counts_stores_and_survives_json() -> None:
    from relaylang.backend.llvm.jit import KernelInfo
    text = program("%x: Tensor[(8, 5), float32]", "negative(%x)")
    prim = lower_primitive(fused_module(text)["main"].body.op, "work_check")
    assert prim.work == 40
    info = KernelInfo.of(prim)
    assert info.work == 40 and KernelInfo.from_json(info.to_json()) == info
    old = {k: v for k, v in info.to_json().items() if k != "work"}   # an older cache entry
    assert KernelInfo.from_json(old).work == 0
