"""Large and small GEMMs of the LLVM backend against NumPy (OpenBLAS) and onnxruntime.

    python benchmarks/gemm.py [--repeat 9] [--threads 1,2] [--only dense,matmul,conv,mlp]
                              [--shapes 1024x1024x1024,...]

Every row builds a one-op Relay program with `rl.build(target="llvm")` and times
`lib(x[, w])` against `np.matmul` (or onnxruntime for the MLP) in this process, two
ways: in blocks (the main columns: rounds of one block per side, each block after
`GAP_S` of idle time, one untimed call then 3 timed ones, medians over all) and
strictly alternating single calls after two untimed warm-ups (the note in brackets).
Strict alternation understates the native side at 2 threads: OpenBLAS's worker thread
keeps spinning on the second core for about 0.1 s after each np.matmul, so the native
pool's worker waits for that core and the caller runs the whole range itself
(1024^3 dense: 5.6 ms in blocks, 10-11 ms alternating; numpy 5.9 either way).
Thread counts: RELAY_NUM_THREADS for the native side, threadpoolctl for OpenBLAS,
`intra_op_num_threads` for onnxruntime, all set to the same count per row.

Rows (MxKxN: out[M, N] = x[M, K] @ w[K, N]):
* dense       `nn.dense(%x, %w)` with the weight a parameter (w[N, K] passed each call)
* dense_const the same with the weight bound as a constant at build time (packed once)
* matmul      `nn.matmul(%a, %b)` (b[K, N], both parameters)
* mlp_b64     784-128-10 MLP, batch 64, dense+bias+relu, dense+bias, vs onnxruntime
* conv        a 3x3 convolution 256ch 14x14 and a 1x1 56x56 64->256 (vs itself only:
              reported for regressions of the shared scheduler)

Columns: medians (ms), ratio native/baseline (< 1: native faster), native GFLOPS and
the fraction of the machine's peak (`PEAK_GFLOPS_PER_CORE` x threads: 2 FMA units x
16 float32 lanes x 2 flops x 3.6 GHz = 230 GFLOPS per core; issue 18's 117 per core
is exceeded by both OpenBLAS (188 GFLOPS at 1024^3 on one thread) and this backend).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import relaylang as rl

PEAK_GFLOPS_PER_CORE = 230.0
# 64x128x10: MLP b64's last layer (10 columns: one padded block of 16, gemm_lowering's
# _SMALL_N_BLOCKED)
SHAPES = ["1024x1024x1024", "512x512x512", "512x512x64", "64x784x128", "1x784x128",
          "1000x1x1000", "64x128x10"]


def interleaved(native: Callable[[], Any], baseline: Callable[[], Any], repeat: int
                ) -> tuple[float, float]:
    for _ in range(2):
        native()
        baseline()
    n_t, b_t = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        native()
        n_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        baseline()
        b_t.append(time.perf_counter() - t)
    return statistics.median(n_t), statistics.median(b_t)


GAP_S = 0.3      # idle time before each block: the other side's spinning threads sleep


def blocked(native: Callable[[], Any], baseline: Callable[[], Any], repeat: int
            ) -> tuple[float, float]:
    """Rounds of one block per side, each after `GAP_S` of idle time (OpenBLAS's
    threads spin about 75 ms after a call, onnxruntime's and the native pool's a
    while too: a contender whose worker shares a core with them runs on one core):
    one untimed call then 3 timed ones per block; medians over all timed calls."""
    n_t: list[float] = []
    b_t: list[float] = []
    for _ in range(max(1, repeat // 3)):
        for fn, out in ((native, n_t), (baseline, b_t)):
            time.sleep(GAP_S)
            fn()
            for _ in range(3):
                t = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t)
    return statistics.median(n_t), statistics.median(b_t)


def _mod(text: str) -> Any:
    return rl.parse('#[version = "0.0.5"]\n' + text)


def _threads(n: int) -> Any:
    os.environ["RELAY_NUM_THREADS"] = str(n)
    try:
        from threadpoolctl import threadpool_limits
        return threadpool_limits(limits=n)
    except ImportError:     # pragma: no cover
        import contextlib
        return contextlib.nullcontext()


def _row(name: str, threads: int, flops: float, n: float, b: float, ok: bool,
         baseline: str, alt_n: float = 0.0, alt_b: float = 0.0) -> None:
    gf = flops / n / 1e9
    peak = PEAK_GFLOPS_PER_CORE * threads
    flag = "" if ok else "  WRONG RESULT"
    alt = f"  (alternating: {alt_n * 1e3:.3f} vs {alt_b * 1e3:.3f}, {alt_n / alt_b:.2f})" \
        if alt_n else ""
    print(f"{name:<28} {threads:>2}  {n * 1e3:9.3f} {b * 1e3:9.3f} {n / b:6.2f}  "
          f"{gf:7.1f} {gf / peak:6.1%}  {baseline}{flag}{alt}", flush=True)


def bench_gemm(kind: str, m: int, k: int, n: int, threads: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k), dtype=np.float32)
    if kind == "matmul":
        w = rng.standard_normal((k, n), dtype=np.float32)
        text = (f"def @main(%x: Tensor[({m}, {k}), float32], %w: Tensor[({k}, {n}), float32]) "
                f"{{ nn.matmul(%x, %w, units=None) }}")
        ref = lambda: np.matmul(x, w)
    else:
        w = rng.standard_normal((n, k), dtype=np.float32)
        wt = w.T      # np.matmul(x, w.T): what a BLAS does for dense (no copy)
        text = (f"def @main(%x: Tensor[({m}, {k}), float32], %w: Tensor[({n}, {k}), float32]) "
                f"{{ nn.dense(%x, %w, units=None) }}")
        ref = lambda: np.matmul(x, wt)
    mod = _mod(text)
    with _threads(threads):
        if kind == "dense_const":
            lib = rl.build(mod, target="llvm", params={"w": w})
            run = lambda: lib(x)
        else:
            lib = rl.build(mod, target="llvm")
            run = lambda: lib(x, w)
        got = np.asarray(run())
        ok = np.allclose(got, ref(), rtol=1e-3, atol=1e-3 * np.sqrt(k))
        an, ab = interleaved(run, ref, repeat)
        nt, bt = blocked(run, ref, repeat)
    _row(f"{kind} {m}x{k}x{n}", threads, 2.0 * m * k * n, nt, bt, ok, "numpy", an, ab)


BMM = [(12, 128, 64, 128, True), (12, 128, 128, 64, False), (4, 256, 256, 256, True)]


def bench_bmm(threads: int, repeat: int) -> None:
    """batch_matmul (B, M, K) x (B, N, K)^T (transpose_b, the default) or (B, K, N)."""
    rng = np.random.default_rng(3)
    for bs, m, k, n, tb in BMM:
        x = rng.standard_normal((bs, m, k), dtype=np.float32)
        yshape = (bs, n, k) if tb else (bs, k, n)
        y = rng.standard_normal(yshape, dtype=np.float32)
        yt = y.transpose(0, 2, 1) if tb else y
        text = (f"def @main(%x: Tensor[{(bs, m, k)}, float32], %y: Tensor[{yshape}, float32]) "
                f"{{ nn.batch_matmul(%x, %y, transpose_b={tb}) }}")
        ref = lambda x=x, yt=yt: np.matmul(x, yt)
        with _threads(threads):
            lib = rl.build(_mod(text), target="llvm")
            run = lambda lib=lib, x=x, y=y: lib(x, y)
            ok = np.allclose(np.asarray(run()), ref(), rtol=1e-3, atol=1e-3 * np.sqrt(k))
            an, ab = interleaved(run, ref, repeat)
            nt, bt = blocked(run, ref, repeat)
        _row(f"bmm{'_tb' if tb else ''} {bs}x{m}x{k}x{n}", threads, 2.0 * bs * m * k * n,
             nt, bt, ok, "numpy", an, ab)


MLP = """def @main(%x: Tensor[(64, 784), float32], %w1: Tensor[(128, 784), float32],
  %b1: Tensor[(128), float32], %w2: Tensor[(10, 128), float32], %b2: Tensor[(10), float32]) {
  %0 = nn.dense(%x, %w1, units=None);
  %1 = nn.bias_add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.dense(%2, %w2, units=None);
  nn.bias_add(%3, %b2)
}"""


def bench_mlp(threads: int, repeat: int) -> None:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 784), dtype=np.float32)
    params = {"w1": (rng.standard_normal((128, 784)) * 0.05).astype(np.float32),
              "b1": rng.standard_normal(128).astype(np.float32),
              "w2": (rng.standard_normal((10, 128)) * 0.1).astype(np.float32),
              "b2": rng.standard_normal(10).astype(np.float32)}
    inits = [numpy_helper.from_array(v, k) for k, v in params.items()]
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "mlp",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 784])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 10])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    del onnx
    with _threads(threads):
        lib = rl.build(_mod(MLP), target="llvm", params=params)
        ref = lambda: sess.run(None, {"x": x})[0]
        run = lambda: lib(x)
        ok = np.allclose(np.asarray(run()), ref(), rtol=1e-3, atol=1e-3)
        an, ab = interleaved(run, ref, repeat)
        nt, bt = blocked(run, ref, repeat)
    flops = 2.0 * 64 * (784 * 128 + 128 * 10)
    _row("mlp_b64 784-128-10", threads, flops, nt, bt, ok, "onnxruntime", an, ab)


CONVS = [("conv3x3 256ch 14x14", (1, 256, 14, 14), (256, 256, 3, 3), 1),
         ("conv1x1 64->256 56x56", (1, 64, 56, 56), (256, 64, 1, 1), 0)]


def bench_conv(threads: int, repeat: int) -> None:
    rng = np.random.default_rng(2)
    for name, xs, ws, pad in CONVS:
        x = rng.standard_normal(xs, dtype=np.float32)
        w = (rng.standard_normal(ws) * 0.1).astype(np.float32)
        text = (f"def @main(%x: Tensor[{xs}, float32], %w: Tensor[{ws}, float32]) "
                f"{{ nn.conv2d(%x, %w, padding=[{pad}, {pad}, {pad}, {pad}], "
                f"channels={ws[0]}, kernel_size=[{ws[2]}, {ws[3]}]) }}")
        with _threads(threads):
            lib = rl.build(_mod(text), target="llvm", params={"w": w})
            run = lambda lib=lib, x=x: lib(x)
            nt, bt = blocked(run, run, repeat)
        oh = xs[2] + 2 * pad - ws[2] + 1
        flops = 2.0 * ws[0] * ws[1] * ws[2] * ws[3] * oh * oh
        _row(name, threads, flops, min(nt, bt), min(nt, bt), True, "(itself)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="dense,dense_const,matmul,bmm,mlp,conv")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",") if s]
    print(f"load average: {os.getloadavg()[0]:.2f}  (cpus: {os.cpu_count()})")
    print(f"{'workload MxKxN':<28} th  {'native ms':>9} {'base ms':>9} {'ratio':>6}  "
          f"{'GFLOPS':>7} {'peak':>6}  baseline")
    for th in [int(t) for t in args.threads.split(",")]:
        for kind in ("dense", "dense_const", "matmul"):
            if kind in only:
                for m, k, n in shapes:
                    bench_gemm(kind, m, k, n, th, args.repeat)
        if "bmm" in only:
            bench_bmm(th, args.repeat)
        if "mlp" in only:
            bench_mlp(th, args.repeat * 5)
        if "conv" in only:
            bench_conv(th, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
