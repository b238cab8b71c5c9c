"""GFLOPS of matrix-like reductions written with the lowering API (the way the nn
lowerings write dense and matmul):

    python tests/backend/llvm/matmul_bench.py [--threads N]

Single-threaded runs are timed in CPU time (process_time: robust on a loaded
machine); NumPy's BLAS is timed the same way (its own threads count too).

dense:  out[i, j] = sum_k x[i, k] * w[j, k]   (1x2048x1000, 256x256x256)
matmul: out[i, j] = sum_k a[i, k] * b[k, j]   (256x256x256, 1x2048x1000)
"""
from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "helpers"))

from relaylang.backend.llvm import loop_ir as L
from relaylang.backend.llvm.jit import aligned_copy, aligned_empty, compile_kernels, pointer_array
from relaylang.backend.llvm.schedule import schedule
from relaylang.backend.llvm.te import LowerContext


def dense_lowering(b, x, w):
    k = b.reduce_axis(x.shape[1], "k")
    return b.compute((x.shape[0], w.shape[0]),
                     lambda i, j: b.reduce_sum(x[i, k] * w[j, k], [k]), name="dense")


def matmul_lowering(b, a, c):
    k = b.reduce_axis(a.shape[1], "k")
    return b.compute((a.shape[0], c.shape[1]),
                     lambda i, j: b.reduce_sum(a[i, k] * c[k, j], [k]), name="matmul")


def build(name: str, inputs, fn) -> L.PrimFunc:
    b = LowerContext()
    handles = [b.placeholder(s, d, f"in{k}") for k, (s, d) in enumerate(inputs)]
    out = fn(b, *handles)
    buf = L.Buffer("out", out.shape, out.dtype)
    body, par = schedule(b, [out], [buf])
    return L.PrimFunc(name, tuple(h.buffer for h in handles) + (buf,), body,
                      len(handles), par, tuple(b.constants))


def cases():
    return [("dense_1x2048x1000", [((1, 2048), "float32"), ((1000, 2048), "float32")],
             dense_lowering, 1, 2048, 1000),
            ("dense_256x256x256", [((256, 256), "float32"), ((256, 256), "float32")],
             dense_lowering, 256, 256, 256),
            ("matmul_256x256x256", [((256, 256), "float32"), ((256, 256), "float32")],
             matmul_lowering, 256, 256, 256),
            ("matmul_1x2048x1000", [((1, 2048), "float32"), ((2048, 1000), "float32")],
             matmul_lowering, 1, 2048, 1000)]


def measure(threads: int = 1, repeat: int = 7) -> list[tuple[str, float, float]]:
    rows = []
    rng = np.random.default_rng(0)
    for name, inputs, fn, m, kk, n in cases():
        prim = build(name, inputs, fn)
        kern = compile_kernels([prim], cache=False)[name]
        ins = [aligned_copy(rng.standard_normal(s).astype(d)) for s, d in inputs]
        out = aligned_empty(prim.outputs[0].shape, "float32")
        ptrs = pointer_array(ins + [out])
        ext = kern.parallel_extent

        def run(kern=kern, ptrs=ptrs, ext=ext) -> None:
            if threads > 1 and ext > 1:
                import threading
                cuts = np.linspace(0, ext, threads + 1).astype(int)
                ts = [threading.Thread(target=kern.run_range, args=(ptrs, int(b0), int(e0)))
                      for b0, e0 in itertools.pairwise(cuts)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
            else:
                kern.run_range(ptrs, 0, ext)
        run()
        ref = ins[0] @ (ins[1].T if "dense" in name else ins[1])
        np.testing.assert_allclose(out, ref, rtol=1e-3, atol=1e-3)
        inner = max(1, int(2e8 // (2 * m * kk * n)))
        times = []
        clock = time.process_time if threads == 1 else time.perf_counter
        for _ in range(repeat):
            t0 = clock()
            for _ in range(inner):
                run()
            times.append((clock() - t0) / inner)
        t = float(np.median(times))
        t0 = clock()
        for _ in range(inner):
            ins[0] @ (ins[1].T if "dense" in name else ins[1])
        tn = (clock() - t0) / inner
        rows.append((name, 2 * m * kk * n / t / 1e9, 2 * m * kk * n / tn / 1e9))
    return rows


if __name__ == "__main__":
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
    for name, g, gn in measure(threads):
        clock = "CPU time" if threads == 1 else "wall time"
        print(f"{name:22s} {g:7.1f} GFLOPS  threads={threads} ({clock}; NumPy/BLAS {gn:.1f}, "
              f"its own threads counted)")
