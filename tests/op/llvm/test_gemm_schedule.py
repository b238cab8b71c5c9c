"""The blocked GEMM form of nn.dense / nn.matmul / nn.batch_matmul (`_blocked_gemm` in
relaylang/op/nn/gemm_lowering.py: the right-hand side re-laid out in panels of 64/32/16/8
columns, padded with zero columns when no block divides N, row-blocked register tiles
in the scheduler) against the interpreter: sizes not divisible by the tiles (rows by
the 6-row block, columns by the panel, K odd), size 1 on each axis, the short-K form,
batch > 1 with every transpose and a broadcast batch, 3-D dense inputs, a fused
bias + relu epilogue, weights as parameters and as build-time constants (packed by
the packer kernels), float32 / float16 / float64 / int32."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, fused_module

import relaylang as rl
from relaylang.backend.llvm.lower import PackedPrimFunc, lower_primitive
from relaylang.op.nn.gemm_lowering import _gemm_block

HEAD = '#[version = "0.0.5"]\n'
TOL = {"float16": (1e-2, 5e-2), "float32": (1e-5, 1e-4), "float64": (1e-9, 1e-9),
       "int32": (0, 0)}


def _values(shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype.startswith("int"):
        return rng.integers(-3, 4, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _program(params: dict[str, tuple], dtype: str, calls: list[str]) -> str:
    decl = ", ".join(f"%{n}: Tensor[{s}, {dtype}]" for n, s in params.items())
    body = f"({', '.join(calls)},)" if len(calls) == 1 else f"({', '.join(calls)})"
    return HEAD + f"def @main({decl}) {{ {body} }}\n"


def _check(shapes: dict[str, tuple], dtype: str, calls: list[str], seed: int) -> None:
    rng = np.random.default_rng(seed)
    vals = [_values(s, dtype, rng) for s in shapes.values()]
    rtol, atol = TOL[dtype]
    assert_matches_interpreter(_program(shapes, dtype, calls), *vals, rtol=rtol, atol=atol)


def test_column_block_choice() -> None:
    assert _gemm_block(128) == 64 and _gemm_block(96) == 32 and _gemm_block(48) == 16
    assert _gemm_block(8) == 8 and _gemm_block(24) == 8 or _gemm_block(24) == 32
    assert _gemm_block(1000) == 64          # 1024: 2.4% padding
    assert _gemm_block(70) == 16            # 80 (the least padding)
    # below 16 columns: a block of 16 from _SMALL_N_BLOCKED (9) up, else the dot form
    assert _gemm_block(10) == 16 and _gemm_block(13) == 16 and _gemm_block(9) == 16
    assert _gemm_block(15) == 16
    assert _gemm_block(1) == 0 and _gemm_block(7) == 0 and _gemm_block(5) == 0


def _lowered(text: str, constant_params: frozenset[int] = frozenset()) -> list:
    """The PrimFuncs of the program's primitive functions."""
    from llvm_check import _is_primitive

    from relaylang.ir.expr import Function
    mod = fused_module(text)
    found: list = []

    def walk(e: object) -> None:
        if isinstance(e, Function) and _is_primitive(e):
            found.append(e)
            return
        for name in ("body", "op", "args", "fields", "value", "tuple_value"):
            c = getattr(e, name, None)
            if isinstance(c, (list, tuple)):
                for x in c:
                    walk(x)
            elif c is not None and not isinstance(c, str):
                walk(c)
    walk(mod["main"])
    return [lower_primitive(f, f"k{i}", constant_params=constant_params)
            for i, f in enumerate(found)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32"])
def test_dense_blocked_awkward_shapes(dtype: str) -> None:
    shapes = {"x": (13, 37), "w": (70, 37), "w61": (61, 37), "w40": (40, 37),
              "x3": (2, 5, 37), "w64": (64, 37), "x4": (4, 16), "w16": (17, 16),
              "x1": (1, 37), "w1": (1, 37), "xk": (9, 1), "wk": (24, 1)}
    calls = ["nn.dense(%x, %w, units=None)", "nn.dense(%x, %w61, units=None)",
             "nn.dense(%x, %w40, units=None)", "nn.dense(%x3, %w64, units=None)",
             "nn.dense(%x4, %w16, units=None)", "nn.dense(%x1, %w, units=None)",
             "nn.dense(%x, %w1, units=None)", "nn.dense(%xk, %wk, units=None)"]
    _check(shapes, dtype, calls, 1)


def test_the_blocked_form_is_used() -> None:
    text = _program({"x": (13, 37), "w": (70, 37)}, "float32", ["nn.dense(%x, %w, units=None)"])
    (prim,) = _lowered(text)
    assert "dense_weight_b" in str(prim) and prim.parallel_extent > 1
    text = _program({"a": (9, 40), "b": (40, 50)}, "float32", ["nn.matmul(%a, %b, units=None)"])
    assert "matmul_weight_b" in str(_lowered(text)[0])
    text = _program({"p": (3, 9, 20), "q": (3, 50, 20)}, "float32",
                    ["nn.batch_matmul(%p, %q, transpose_b=True)"])
    (prim,) = _lowered(text)
    assert "batch_matmul_weight_b" in str(prim) and prim.parallel_extent > 1
    # a short reduction keeps the direct form (matmul) / exact blocks (dense)
    text = _program({"a": (9, 3), "b": (3, 50)}, "float32", ["nn.matmul(%a, %b, units=None)"])
    assert "weight_b" not in str(_lowered(text)[0])


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32"])
def test_matmul_blocked_transposes(dtype: str) -> None:
    shapes = {"a": (9, 33), "b": (33, 50), "at": (33, 9), "bt": (50, 33),
              "a4": (4, 16), "b16": (16, 16), "ak": (7, 2), "bk": (2, 20),
              "v": (33,)}
    calls = ["nn.matmul(%a, %b, units=None)",
             "nn.matmul(%a, %bt, units=None, transpose_b=True)",
             "nn.matmul(%at, %b, units=None, transpose_a=True)",
             "nn.matmul(%at, %bt, units=None, transpose_a=True, transpose_b=True)",
             "nn.matmul(%a4, %b16, units=None)", "nn.matmul(%ak, %bk, units=None)",
             "nn.matmul(%v, %b, units=None)"]
    _check(shapes, dtype, calls, 2)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32"])
def test_batch_matmul_blocked(dtype: str) -> None:
    shapes = {"p": (3, 9, 20), "q": (3, 20, 50), "qt": (3, 50, 20), "pt": (3, 20, 9),
              "q1": (1, 20, 50), "p1": (1, 9, 20), "r": (2, 1, 20), "s": (2, 20, 1)}
    calls = ["nn.batch_matmul(%p, %q, transpose_b=False)",
             "nn.batch_matmul(%p, %qt, transpose_b=True)",
             "nn.batch_matmul(%pt, %q, transpose_a=True, transpose_b=False)",
             "nn.batch_matmul(%pt, %qt, transpose_a=True, transpose_b=True)",
             "nn.batch_matmul(%p, %q1, transpose_b=False)",
             "nn.batch_matmul(%p1, %q, transpose_b=False)",
             "nn.batch_matmul(%r, %s, transpose_b=False)",
             "nn.batch_matmul(%s, %r, transpose_b=False)"]
    _check(shapes, dtype, calls, 3)


EPILOGUE = """def @main(%x: Tensor[(13, 37), {dt}], %w: Tensor[(70, 37), {dt}],
  %c: Tensor[(70), {dt}], %b: Tensor[(37, 50), {dt}], %q: Tensor[(3, 50, 37), {dt}],
  %y: Tensor[(3, 11, 37), {dt}]) {{
  %0 = nn.dense(%x, %w, units=None);
  %1 = nn.relu(nn.bias_add(%0, %c));
  %2 = nn.relu(nn.matmul(%x, %b, units=None));
  %3 = add(nn.batch_matmul(%y, %q, transpose_b=True), 1f);
  (%1, %2, %3)
}}
"""


def _epilogue_args(dtype: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    shapes = {"x": (13, 37), "w": (70, 37), "c": (70,), "b": (37, 50), "q": (3, 50, 37),
              "y": (3, 11, 37)}
    return {k: _values(s, dtype, rng) for k, s in shapes.items()}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fused_bias_relu_epilogue(dtype: str) -> None:
    text = HEAD + EPILOGUE.format(dt=dtype).replace("1f", "1f" if dtype == "float32"
                                                    else "1f16")
    args = _epilogue_args(dtype)
    rtol, atol = TOL[dtype]
    assert_matches_interpreter(text, *args.values(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_constant_weights_are_packed(dtype: str) -> None:
    text = HEAD + EPILOGUE.format(dt=dtype).replace("1f", "1f" if dtype == "float32"
                                                    else "1f64")
    args = _epilogue_args(dtype)
    mod = rl.parse(text)
    consts = {k: args[k] for k in ("w", "c", "b", "q")}
    lib = rl.build(mod, target="llvm", params=consts)
    got = lib(args["x"], args["y"])
    expected = rl.evaluate(mod, *args.values()) if hasattr(rl, "evaluate") else None
    x, w, c, b, q, y = (args[k].astype(np.float64) for k in ("x", "w", "c", "b", "q", "y"))
    want = [np.maximum(x @ w.T + c, 0), np.maximum(x @ b, 0),
            np.matmul(y, q.transpose(0, 2, 1)) + 1]
    rtol = 1e-4 if dtype == "float32" else 1e-10
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), e, rtol=rtol, atol=rtol)
    del expected
    # the weight panels are made by packers at build time, not by every call
    text1 = _program({"x": (13, 37), "w": (70, 37)}, dtype, ["nn.dense(%x, %w, units=None)"])
    (prim,) = _lowered(text1, frozenset({1}))
    assert isinstance(prim, PackedPrimFunc) and prim.packed
    assert "dense_weight_b" in str(prim.packed[0].packer)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32"])
def test_k_blocking_knob(dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The knob `schedule.k_chunk_bytes` (off by default): the reduction in chunks, every row
    block per chunk, partial sums through the result buffer (first chunk, a loop of
    middle ones, a shorter last one)."""
    from llvm_check import set_schedule_default
    set_schedule_default(monkeypatch, "schedule.k_chunk_bytes", 1024)
    shapes = {"x": (40, 50), "w": (70, 50), "b": (50, 64), "p": (2, 41, 50),
              "q": (2, 50, 40)}
    text = _program(shapes, dtype, ["nn.dense(%x, %w, units=None)"])
    (prim,) = _lowered(text)
    assert "for kc" in str(prim)
    calls = ["nn.dense(%x, %w, units=None)", "nn.matmul(%x, %b, units=None)",
             "nn.batch_matmul(%p, %q, transpose_b=False)"]
    _check(shapes, dtype, calls, 7)
    rng = np.random.default_rng(8)
    x, w = _values((40, 50), dtype, rng), _values((70, 50), dtype, rng)
    lib = rl.build(rl.parse(_program({"x": (40, 50), "w": (70, 50)}, dtype,
                                     ["nn.dense(%x, %w, units=None)"])),
                   target="llvm", params={"w": w})
    want = x.astype(np.float64) @ w.astype(np.float64).T
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(np.asarray(lib(x)[0], dtype=np.float64), want,
                               rtol=max(rtol, 1e-6), atol=max(atol, 1e-5) * 10)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_one_panel_rows_in_chunks(dtype: str) -> None:
    """A single column panel: the rows in chunks of row blocks (the last chunk padded,
    its extra rows reading the last row, never stored), (panel, chunk) the parallel loop."""
    shapes = {"x": (13, 37), "w": (61, 37), "x2": (100, 20), "w2": (64, 20),
              "p": (1, 31, 20), "q": (1, 20, 64), "p3": (2, 4, 7, 20)}
    text = _program({"x": (13, 37), "w": (61, 37)}, "float32", ["nn.dense(%x, %w, units=None)"])
    (prim,) = _lowered(text)
    assert prim.parallel_extent == 2        # 13 rows: 2 chunks of 12 (not 13 single rows)
    calls = ["nn.dense(%x, %w, units=None)", "nn.dense(%x2, %w2, units=None)",
             "nn.relu(nn.dense(%x2, %w2, units=None))",
             "nn.batch_matmul(%p, %q, transpose_b=False)", "nn.dense(%p3, %w2, units=None)"]
    _check(shapes, dtype, calls, 9)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_few_columns_padded_to_a_block(dtype: str) -> None:
    """9 to 15 output columns: one padded block of 16 (the weight's zero columns never
    read back), rows not multiples of the row block, K odd, one row, batch > 1; 7
    columns keep the dot-product form."""
    shapes = {"x": (13, 37), "w10": (10, 37), "w9": (9, 37), "w15": (15, 37),
              "w7": (7, 37), "x1": (1, 37), "x3": (2, 5, 37), "x5": (5, 37), "a": (29, 21),
              "b": (21, 11), "bt": (13, 21), "p": (3, 9, 20), "q": (3, 20, 12),
              "q1": (1, 14, 20)}
    calls = ["nn.dense(%x, %w10, units=None)", "nn.dense(%x, %w9, units=None)",
             "nn.dense(%x, %w15, units=None)", "nn.dense(%x, %w7, units=None)",
             "nn.dense(%x1, %w10, units=None)", "nn.dense(%x3, %w15, units=None)",
             "nn.dense(%x5, %w9, units=None)",
             "nn.matmul(%a, %b, units=None)",
             "nn.matmul(%a, %bt, units=None, transpose_b=True)",
             "nn.batch_matmul(%p, %q, transpose_b=False)",
             "nn.batch_matmul(%p, %q1, transpose_b=True)"]
    _check(shapes, dtype, calls, 7)
    text = _program({"x": (13, 37), "w": (10, 37)}, "float32", ["nn.dense(%x, %w, units=None)"])
    assert "dense_weight_b" in str(_lowered(text)[0])
    text = _program({"x": (13, 37), "w": (7, 37)}, "float32", ["nn.dense(%x, %w, units=None)"])
    assert "weight_b" not in str(_lowered(text)[0])
    # fewer rows than _SMALL_N_MIN_ROWS: the dot form (a block dividing N still blocks)
    text = _program({"x": (5, 37), "w": (10, 37)}, "float32", ["nn.dense(%x, %w, units=None)"])
    assert "weight_b" not in str(_lowered(text)[0])
    text = _program({"x": (5, 37), "w": (16, 37)}, "float32", ["nn.dense(%x, %w, units=None)"])
    assert "weight_b" in str(_lowered(text)[0])


def test_few_columns_with_a_packed_weight_and_epilogue() -> None:
    """MLP b64's last layer: a constant 10x128 weight packed at build into one block of
    16 columns, bias add fused; 1 to 3 threads give the same bits."""
    import os
    rng = np.random.default_rng(8)
    w = rng.standard_normal((10, 128)).astype("float32")
    c = rng.standard_normal((10,)).astype("float32")
    x = rng.standard_normal((64, 128)).astype("float32")
    text = HEAD + ("def @main(%x: Tensor[(64, 128), float32], %w: Tensor[(10, 128), float32], "
                   "%c: Tensor[(10), float32]) { nn.bias_add(nn.dense(%x, %w), %c) }\n")
    lib = rl.build(rl.parse(text), target="llvm", params={"w": w, "c": c})
    saved = os.environ.get("RELAY_NUM_THREADS")
    try:
        os.environ["RELAY_NUM_THREADS"] = "1"
        alone = lib(x)
        np.testing.assert_allclose(alone, x @ w.T + c, rtol=1e-4, atol=1e-4)
        for n in ("2", "3"):
            os.environ["RELAY_NUM_THREADS"] = n
            assert lib(x).tobytes() == alone.tobytes()
    finally:
        if saved is None:
            os.environ.pop("RELAY_NUM_THREADS", None)
        else:
            os.environ["RELAY_NUM_THREADS"] = saved


@pytest.mark.parametrize("block, chunk, rows_outer",
                         [(8, 0, 0), (16, 8, 0), (16, 8, 1), (32, 16, 0), (32, 16, 1),
                          (64, 0, 0), (64, 12, 0), (64, 12, 1)])
def test_gemm_knobs_keep_the_values(block: int, chunk: int, rows_outer: int) -> None:
    """Every value of the knobs gemm.block / gemm.row_chunk / gemm.rows_outer gives the
    same product (padded columns: N = 50 is no multiple of 32 or 64; a last partial row
    chunk; both loop orders)."""
    from relaylang.backend.llvm import knobs
    rng = np.random.default_rng(block + chunk)
    x = rng.standard_normal((40, 70)).astype("float32")
    w = rng.standard_normal((50, 70)).astype("float32")
    mod = rl.parse(_program({"x": (40, 70), "w": (50, 70)}, "float32",
                            ["nn.dense(%x, %w, units=None)"]))
    settings = knobs.Settings(every={"gemm.block": block, "gemm.row_chunk": chunk,
                                     "gemm.rows_outer": rows_outer})
    with knobs.using(settings):
        lib = rl.build(mod, target="llvm", params={"w": w}, cache=False)
    (values,) = [v for _, v in lib.kernel_schedules.values()]
    assert values["gemm.block"] == block
    assert values["gemm.row_chunk"] == chunk
    assert values.get("gemm.rows_outer", 0) == rows_outer
    out = lib(x)
    np.testing.assert_allclose(out[0] if isinstance(out, tuple) else out, x @ w.T,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows_outer", [0, 1])
def test_batch_matmul_loop_orders_keep_the_values(rows_outer: int) -> None:
    """Both loop orders of a row-chunked batch_matmul (gemm.rows_outer) give the
    product: 45 rows in chunks of 8 (a partial last chunk), 20 columns in blocks of 32."""
    from relaylang.backend.llvm import knobs
    rng = np.random.default_rng(rows_outer)
    a = rng.standard_normal((2, 45, 33)).astype("float32")
    w = rng.standard_normal((2, 20, 33)).astype("float32")
    mod = rl.parse('#[version = "0.0.5"]\n'
                   "def @main(%a: Tensor[(2, 45, 33), float32], "
                   "%w: Tensor[(2, 20, 33), float32]) { nn.batch_matmul(%a, %w, "
                   "transpose_b=True) }\n")
    settings = knobs.Settings(every={"gemm.row_chunk": 8, "gemm.rows_outer": rows_outer})
    with knobs.using(settings):
        lib = rl.build(mod, target="llvm", cache=False)
    (values,) = [v for _, v in lib.kernel_schedules.values()]
    assert values["gemm.rows_outer"] == rows_outer
    np.testing.assert_allclose(lib(a, w), a @ w.transpose(0, 2, 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_few_rows_with_a_build_time_weight_take_the_blocked_form(rows: int, dtype: str
                                                                  ) -> None:
    """A GEMV (MLP b1) whose weight is a build-time constant: the panels are packed once,
    so even one row takes the blocked form (a weight read by every call keeps the dot
    form); odd columns (padded panel), a fused bias and relu, and dense and matmul in
    both transposes give the interpreter's values."""
    dense = _program({"x": (rows, 37), "w": (70, 37)}, dtype, ["nn.dense(%x, %w, units=None)"])
    (packed,) = _lowered(dense, frozenset({1}))
    assert isinstance(packed, PackedPrimFunc) and "dense_weight_b" in str(packed.packed[0].packer)
    assert "weight_b" not in str(_lowered(dense)[0])
    rng = np.random.default_rng(rows)
    x = _values((rows, 37), dtype, rng)
    w, wt, c = _values((70, 37), dtype, rng), _values((37, 61), dtype, rng), \
        _values((70,), dtype, rng)
    text = HEAD + (
        f"def @main(%x: Tensor[({rows}, 37), {dtype}], %w: Tensor[(70, 37), {dtype}], "
        f"%wt: Tensor[(37, 61), {dtype}], %c: Tensor[(70), {dtype}]) {{\n"
        "  (nn.relu(nn.bias_add(nn.dense(%x, %w), %c)), nn.matmul(%x, %wt),\n"
        "   nn.matmul(%x, %w, transpose_b=True))\n}\n")
    mod = rl.parse(text)
    lib = rl.build(mod, target="llvm", params={"w": w, "wt": wt, "c": c})
    want = rl.evaluate(mod, x, w, wt, c)
    rtol, atol = TOL[dtype]
    for g, e in zip(lib(x), want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=rtol, atol=atol)


def test_a_large_gemv_weight_keeps_the_dot_form() -> None:
    """One row by a weight over _GEMV_BLOCKED_MAX_BYTES streams from memory either way:
    the dot form reads no padded columns. A matmul without transpose_b would read that
    weight strided in the dot form: blocked."""
    from relaylang.op.nn.gemm_lowering import _GEMV_BLOCKED_MAX_BYTES
    k = 1024
    n = _GEMV_BLOCKED_MAX_BYTES // (4 * k) + 8
    dense = _program({"x": (1, k), "w": (n, k)}, "float32", ["nn.dense(%x, %w, units=None)"])
    assert "weight_b" not in str(_lowered(dense, frozenset({1}))[0])
    matmul = _program({"x": (1, k), "w": (k, n)}, "float32", ["nn.matmul(%x, %w, units=None)"])
    assert "weight_b" in str(_lowered(matmul, frozenset({1}))[0].packed[0].packer)
