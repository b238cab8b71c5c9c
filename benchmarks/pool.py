"""The native worker pool under awkward timing: constant-weight dense kernels at 1 and 2
threads, (a) back to back, (b) after an idle spell, (c) right after an np.matmul.

    python benchmarks/pool.py [--rounds 15] [--sleep 0.3] [--shapes 512x512x64,1024x1024x1024]

Every row builds `nn.dense(%x, %w)` with the weight a constant (`params={"w": w}`, out[M,
N] = x[M, K] @ w[N, K]^T) and times `lib(x)`. Rounds interleave the thread counts
(`RELAY_NUM_THREADS`, set in this process; the pool is remade at each switch and warmed
up) and the three scenarios:

* back_to_back  the median of 10 consecutive calls (after a sleep of SLEEP that lets the
                last block's OpenBLAS threads stop, then 3 untimed calls)
* after_sleep   `time.sleep(SLEEP)`, then 10 calls: the first one (first), and the median
                of the other 9 (next): an idle spell must not leave the pool slower
* after_blas    an np.matmul of 1024^3 float32 (OpenBLAS keeps its threads spinning on
                every core for about 0.1 s after it), then one call
* after_ort     with --ort: 20 calls of an onnxruntime session of the same product
                (intra_op_num_threads = the thread count, its default spinning), then
                the median of 10 calls at once (onnxruntime's worker spins on a CPU for
                about 20 ms after its last run: benchmarks/llvm.py's interleaved blocks
                time relaylang's 2-thread calls beside it), and after_ort_30ms: the same
                after a 30 ms pause

Cells: medians over the rounds (ms). The pool's counters (dispatches, ranges run by
workers, moves of a worker off the dispatcher's CPU, late dispatches, inline runs) are
printed per thread count when the pool has them, and at the end the CPU time other
processes took during the run (from /proc/stat): say it with the figures, the
machine's cores are shared.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import relaylang as rl
from relaylang.backend.native import native_pool

HEAD = '#[version = "0.0.5"]\n'
COUNTERS = ("dispatches", "worker_ranges", "nudges", "late", "inline")


def build(m: int, k: int, n: int):
    text = HEAD + (f"def @main(%x: Tensor[({m}, {k}), float32], %w: Tensor[({n}, {k}), "
                   "float32]) { nn.dense(%x, %w) }\n")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((n, k), dtype=np.float32)
    x = rng.standard_normal((m, k), dtype=np.float32)
    return rl.build(rl.parse(text), target="llvm", params={"w": w}), x, w


def busy_seconds() -> float | None:
    """CPU seconds all processes of the machine spent busy (Linux /proc/stat), or None."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_seconds() -> float:
    t = os.times()
    return t.user + t.system


def ort_session(m: int, k: int, n: int, w: np.ndarray, threads: int):
    """onnxruntime running x @ w^T (a Gemm with transB), `threads` intra-op threads."""
    import onnx
    import onnx.helper as oh
    import onnxruntime as ort
    f = onnx.TensorProto.FLOAT
    graph = oh.make_graph(
        [oh.make_node("Gemm", ["x", "w"], ["y"], transB=1)], "dense",
        [oh.make_tensor_value_info("x", f, [m, k])], [oh.make_tensor_value_info("y", f, [m, n])],
        [oh.make_tensor("w", f, [n, k], w.ravel().tolist())])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)])
    ort.set_default_logger_severity(3)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def timed(lib, x) -> float:
    t = time.perf_counter()
    lib(x)
    return (time.perf_counter() - t) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sleep", type=float, default=0.3)
    ap.add_argument("--shapes", default="512x512x64,1024x1024x1024")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--ort", action="store_true",
                    help="also time calls right after onnxruntime's (after_ort)")
    args = ap.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]
    big = np.random.default_rng(1).standard_normal((1024, 1024), dtype=np.float32)
    print(f"load average: {os.getloadavg()}")
    busy0, own0, wall0 = busy_seconds(), own_seconds(), time.perf_counter()
    for shape in args.shapes.split(","):
        m, k, n = (int(v) for v in shape.split("x"))
        lib, x, w = build(m, k, n)
        sessions = {t: ort_session(m, k, n, w, t) for t in thread_counts} if args.ort else {}
        cells: dict[tuple[int, str], list[float]] = {}
        counters: dict[int, dict[str, int]] = {t: dict.fromkeys(COUNTERS, 0)
                                               for t in thread_counts}
        for r in range(args.rounds):
            order = thread_counts if r % 2 == 0 else thread_counts[::-1]
            for t in order:
                os.environ["RELAY_NUM_THREADS"] = str(t)
                pool = native_pool.get_native_pool()
                time.sleep(args.sleep)       # the last block's np.matmul stops spinning
                for _ in range(3):
                    lib(x)
                before = pool.status() if pool is not None else {}
                cells.setdefault((t, "back_to_back"), []).append(
                    statistics.median(timed(lib, x) for _ in range(10)))
                time.sleep(args.sleep)
                after = [timed(lib, x) for _ in range(10)]
                cells.setdefault((t, "after_sleep first"), []).append(after[0])
                cells.setdefault((t, "after_sleep next"), []).append(statistics.median(after[1:]))
                np.matmul(big, big)
                cells.setdefault((t, "after_blas"), []).append(timed(lib, x))
                if args.ort:
                    time.sleep(args.sleep)
                    for pause, kind in ((0.0, "after_ort"), (0.03, "after_ort_30ms")):
                        for _ in range(20):
                            sessions[t].run(None, {"x": x})
                        time.sleep(pause)
                        cells.setdefault((t, kind), []).append(
                            statistics.median(timed(lib, x) for _ in range(10)))
                now = pool.status() if pool is not None else {}
                for key in COUNTERS:
                    if key in now:
                        counters[t][key] += now[key] - before[key]
        print(f"\ndense {m}x{k}x{n} (constant weight), medians of {args.rounds} rounds, ms")
        kinds = ["back_to_back", "after_sleep first", "after_sleep next", "after_blas"]
        if args.ort:
            kinds += ["after_ort", "after_ort_30ms"]
        print(f"{'threads':>8} " + " ".join(f"{kind:>18}" for kind in kinds))
        for t in thread_counts:
            print(f"{t:>8} " + " ".join(f"{statistics.median(cells[(t, kind)]):>18.3f}"
                                        for kind in kinds))
        for t in thread_counts:
            print(f"  counters, {t} thread(s): {counters[t]}")
    print(f"\nload average: {os.getloadavg()}")
    busy1, own1, wall1 = busy_seconds(), own_seconds(), time.perf_counter()
    if busy0 is not None and busy1 is not None:
        others = max(0.0, (busy1 - busy0) - (own1 - own0)) / (wall1 - wall0)
        print(f"CPUs kept busy by other processes during the run: {others:.2f} "
              f"(of {os.cpu_count()})")


if __name__ == "__main__":
    main()
