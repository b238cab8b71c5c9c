"""Software prefetch under K blocking (loop IR `Prefetch`, the scheduler's knob
schedule.prefetch_chunks, on by default for nn.contrib_conv2d_NCHWc): the prefetch
statement compiles to LLVM's prefetch and changes no value; every prefetched index lies
inside its buffer (interval bounds over the loop nest); blocked convolutions with K
chunks and prefetch 0 / 1 / 2 chunks ahead give the interpreter's values on awkward
shapes (odd flattened pixels, stride 2, one-sided padding, batch 2, 1x1 kernels,
1x1 spatial output, a column tile remainder)."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import _is_primitive, assert_matches_interpreter, fused_module

from relaylang.backend.llvm import knobs
from relaylang.backend.llvm import loop_ir as L
from relaylang.backend.llvm.jit import aligned_empty, compile_kernels, compile_module
from relaylang.backend.llvm.lower import lower_primitive

HEAD = '#[version = "0.0.5"]\n'


def _text(ds: tuple, ws: tuple, attrs: str) -> str:
    layouts = (f'data_layout="NCHW{ds[4]}c", kernel_layout="OIHW{ws[4]}i{ws[5]}o", '
               f'out_layout="NCHW{ws[5]}c"')
    full = ", ".join(a for a in (attrs, layouts) if a)
    return (HEAD + f"def @main(%x: Tensor[{ds}, float32], %w: Tensor[{ws}, float32]) "
            f"{{ nn.contrib_conv2d_NCHWc(%x, %w, {full}) }}\n")


def _settings(prefetch: int, chunk: int = 16384) -> knobs.Settings:
    return knobs.Settings(every={"schedule.k_chunk_bytes": chunk,
                                 "schedule.prefetch_chunks": prefetch})


def _prim(text: str) -> L.PrimFunc:
    mod = fused_module(text)
    stack, fn = [mod["main"].body], None
    while stack:
        e = stack.pop()
        op = getattr(e, "op", None)
        if op is not None and _is_primitive(op):
            fn = op
        stack.extend(getattr(e, "args", ()))
    assert fn is not None
    return lower_primitive(fn, "k")


def _stmts(root: L.Stmt):
    """(statement, {id(var): (lo, hi)} of the loops around it), iteratively."""
    stack = [(root, {})]
    while stack:
        s, env = stack.pop()
        yield s, env
        if isinstance(s, L.For):
            inner = dict(env)
            inner[id(s.var)] = (s.begin, s.begin + s.extent - 1)
            stack.append((s.body, inner))
        elif isinstance(s, L.Seq):
            stack.extend((c, env) for c in s.stmts)
        elif isinstance(s, L.Allocate):
            stack.append((s.body, env))
        elif isinstance(s, L.IfThenElse):
            stack.append((s.then, env))
            if s.otherwise is not None:
                stack.append((s.otherwise, env))


def _bounds(e: L.Expr, env: dict) -> tuple[int, int]:
    """Interval of an index expression (nonnegative operands of div / mod)."""
    memo: dict[int, tuple[int, int]] = {}
    for n in L.walk(e):
        k = [memo[id(c)] for c in L.children(n)]
        if isinstance(n, L.Const):
            r = (int(n.value), int(n.value))
        elif isinstance(n, L.Var):
            r = env[id(n)]
        elif isinstance(n, L.Binary):
            (a0, a1), (b0, b1) = k
            if n.op == "add":
                r = (a0 + b0, a1 + b1)
            elif n.op == "sub":
                r = (a0 - b1, a1 - b0)
            elif n.op == "mul":
                c = [a0 * b0, a0 * b1, a1 * b0, a1 * b1]
                r = (min(c), max(c))
            elif n.op == "div":
                assert a0 >= 0 and b0 > 0 and b0 == b1
                r = (a0 // b0, a1 // b0)
            elif n.op == "mod":
                assert a0 >= 0 and b0 > 0 and b0 == b1
                r = (0, min(a1, b0 - 1)) if a1 - a0 < b0 else (0, b0 - 1)
                if a1 - a0 < b0 and a0 % b0 <= a1 % b0:
                    r = (a0 % b0, a1 % b0)
            elif n.op == "min":
                r = (min(a0, b0), min(a1, b1))
            elif n.op == "max":
                r = (max(a0, b0), max(a1, b1))
            else:
                raise AssertionError(n.op)
        else:
            raise TypeError(type(n).__name__)
        memo[id(n)] = r
    return memo[id(e)]


def _prefetches(prim: L.PrimFunc) -> list[tuple[L.Prefetch, dict]]:
    return [(s, env) for s, env in _stmts(prim.body) if isinstance(s, L.Prefetch)]


# ---------------------------------------------------------------- the statement itself

def test_prefetch_statement_compiles_and_changes_nothing() -> None:
    x = L.Buffer("x", (64, 32), "float32")
    out = L.Buffer("out", (64, 32), "float32")
    i, j = L.Var("i", extent=64), L.Var("j", extent=32)
    ahead = L.binary("min", i + 4, L.const(63, L.INDEX))
    body = L.For(i, 64, L.seq(
        L.Prefetch(x, (ahead, L.const(0, L.INDEX)), 3),
        L.Prefetch(x, (ahead, L.const(16, L.INDEX)), 0),
        L.For(j, 32, L.Store(out, (i, j), L.Load(x, (i, j)) * 2.0), "vectorized")), "serial")
    prim = L.PrimFunc("pf", (x, out), body, 1)
    text = str(prim)
    assert "prefetch x[min((i + 4), 63), 0] locality=3" in text
    assert "prefetch x[min((i + 4), 63), 16] locality=0" in text
    asm = compile_module([prim], cache=False).get_source("asm")
    assert "prefetcht0" in asm and "prefetchnta" in asm
    a = np.random.default_rng(0).standard_normal((64, 32)).astype("float32")
    k = compile_kernels([prim], cache=False)["pf"]
    o = aligned_empty((64, 32), "float32")
    k([a, o])
    np.testing.assert_array_equal(o, a * 2)


# ---------------------------------------------------------------- in the convolution

CASES = [
    # data (N, CB, H, W, ic), weight (OB, CB, KH, KW, ic, oc), attrs
    ((1, 6, 7, 7, 8), (2, 6, 3, 3, 8, 64), "padding=[1, 1, 1, 1]"),         # flat, 49 pixels
    ((1, 5, 9, 26, 8), (1, 5, 3, 3, 8, 64), "padding=[1, 1, 1, 1]"),        # rows of 26
    ((2, 5, 15, 13, 8), (1, 5, 3, 3, 8, 64), "strides=[2, 2], padding=[0, 1, 1, 0]"),
    ((1, 24, 7, 7, 8), (2, 24, 1, 1, 8, 64), ""),                            # 1x1, chunks of cb
    ((2, 24, 14, 14, 8), (1, 24, 1, 1, 8, 64), "strides=[2, 2]"),            # 1x1 /2, batch 2
    # batch 2: one block of output channels and batch 1 would leave only the row blocks
    # to run in parallel, which runs them without K chunks
    ((2, 6, 7, 5, 8), (1, 6, 3, 3, 8, 80), "padding=[1, 1, 1, 1]"),         # tile 64 + 16
    ((2, 9, 8, 9, 8), (1, 9, 3, 3, 8, 32), "padding=[1, 0, 0, 1]"),         # 2 lines a tile
    ((1, 4, 1, 1, 8), (1, 4, 3, 3, 8, 64), "padding=[1, 1, 1, 1]"),         # 1x1 spatial
]


@pytest.mark.parametrize("prefetch", [0, 1, 2])
@pytest.mark.parametrize("ds, ws, attrs", CASES, ids=[f"{c[0]}-{c[1][5]}" for c in CASES])
def test_nchwc_prefetch_matches_interpreter(ds, ws, attrs, prefetch):
    rng = np.random.default_rng(sum(ds) + sum(ws) + prefetch)
    x = rng.standard_normal(ds).astype("float32")
    w = rng.standard_normal(ws).astype("float32")
    with knobs.using(_settings(prefetch)):
        assert_matches_interpreter(_text(ds, ws, attrs), x, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ds, ws, attrs", CASES, ids=[f"{c[0]}-{c[1][5]}" for c in CASES])
def test_nchwc_prefetch_indices_stay_inside(ds, ws, attrs):
    """With K chunks, the prefetches read the weight a chunk ahead (clamped to the last
    chunk and the last column): every index within its dimension."""
    for ahead in (1, 2):
        with knobs.using(_settings(ahead)):
            prim = _prim(_text(ds, ws, attrs))
        found = _prefetches(prim)
        chunked = dict(prim.knobs).get("schedule.prefetch_chunks") == ahead
        if ds[2] * ds[3] > 1:     # every case but the 1x1 spatial one has K chunks
            assert found and chunked, str(prim)
        for pf, env in found:
            assert pf.buffer.shape == ws
            for e, dim in zip(pf.indices, pf.buffer.shape):
                lo, hi = _bounds(e, env)
                assert 0 <= lo and hi <= dim - 1, (str(pf), lo, hi, dim)


def test_nchwc_prefetch_off_and_default() -> None:
    ds, ws = (1, 6, 7, 7, 8), (2, 6, 3, 3, 8, 64)
    text = _text(ds, ws, "padding=[1, 1, 1, 1]")
    with knobs.using(_settings(0)):
        assert not _prefetches(_prim(text))
    with knobs.using(knobs.Settings(every={"schedule.k_chunk_bytes": 16384})):
        prim = _prim(text)
    from relaylang.op.nn.conv_nchwc_lowering import NCHWC_K_MERGE, NCHWC_PREFETCH_CHUNKS
    assert dict(prim.knobs)["schedule.prefetch_chunks"] == NCHWC_PREFETCH_CHUNKS
    assert dict(prim.knobs)["conv.k_merge"] == NCHWC_K_MERGE
    assert set(dict(prim.knob_space)["schedule.prefetch_chunks"]) == {0, 1, 2}
    assert set(dict(prim.knob_space)["conv.k_merge"]) == {0, 1, 2}
    assert bool(_prefetches(prim)) == bool(NCHWC_PREFETCH_CHUNKS)
    # no K chunks: no prefetch
    with knobs.using(_settings(1, chunk=0)):
        assert not _prefetches(_prim(text))


@pytest.mark.parametrize("merge", [0, 1, 2])
@pytest.mark.parametrize("ds, ws, attrs", [CASES[0], CASES[2], CASES[6]],
                         ids=["flat", "strided", "rows"])
def test_nchwc_k_merge_matches_interpreter(ds, ws, attrs, merge):
    """The reduction's first axis (knob conv.k_merge: blocks, blocks x kernel rows,
    blocks x kernel positions) with K chunks and prefetch: the interpreter's values."""
    rng = np.random.default_rng(merge + sum(ds))
    x = rng.standard_normal(ds).astype("float32")
    w = rng.standard_normal(ws).astype("float32")
    settings = knobs.Settings(every={"schedule.k_chunk_bytes": 16384,
                                     "schedule.prefetch_chunks": 1, "conv.k_merge": merge})
    with knobs.using(settings):
        prim = _prim(_text(ds, ws, attrs))
        assert dict(prim.knobs)["conv.k_merge"] == merge
        assert_matches_interpreter(_text(ds, ws, attrs), x, w, rtol=1e-4, atol=1e-4)
