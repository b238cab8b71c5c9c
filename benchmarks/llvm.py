"""The LLVM backend against NumPy, the reference interpreter and onnxruntime, side by side.

    python benchmarks/llvm.py [--repeat 7] [--only chain,mlp,...,ort-gpt2|ort]
                              [--threads 1,2] [--json] [--profile]

Every comparison runs both sides in this process; medians are reported with their
ratio native/baseline (below 1 means native is faster). Native results are checked
against the baseline's before timing (a wrong result fails its row). The chain and
the loop alternate single calls (native, baseline, native, ...) after one untimed
warm-up each. The models alternate blocks of calls (`blocks`: 2 untimed then 5 timed
calls of each side per round), because the interpreter's OpenBLAS threads keep
spinning on both cores for about 0.1 s after each of its calls: a native call right
after one runs on a single core. Their rows also print the strictly alternating
figures in the note.

* chain: `sqrt(exp((x + 1) * 0.5))`, a 4-op fused elementwise chain on 4M float32,
  against NumPy doing the same four ops (into one out= buffer, no temporaries). Target: native at least 2x faster (ratio <= 0.5).
* mlp: relaylang.testing.models "mlp" (784-128-10, batch 1) against the
  interpreter. Target: ratio <= 0.5.
* mnist: the MNIST CNN against the interpreter. Target: ratio <= 0.5.
* resnet50: ResNet-50 batch 1, 224x224, on all cores (RELAY_NUM_THREADS) against
  the interpreter (NumPy + OpenBLAS on all cores). Target: ratio <= 1.0.
* loop: a tail-recursive int64 loop (acc = (31 acc + i) mod 1000003, which LLVM
  cannot fold into a closed form), 1,000,000 iterations natively, 20,000 in the
  interpreter (scaled per iteration). Target: native >= 1000x faster.
* build: `rl.build` of ResNet-50 in a fresh process with an empty kernel cache
  (cold) and again in another fresh process with the cache it filled (warm).
  Targets: <= 3 s cold, <= 0.5 s from the cache (the whole rl.build call; parsing
  is not involved: the model is built in Python). The children keep Python bytecode
  in a temporary folder (as an installed package has its .pyc files) even when
  PYTHONDONTWRITEBYTECODE is set.

Side by side with onnxruntime (issue 18's acceptance table; the `ort-*` names, `ort`
for all of them). Each workload is built once as an ONNX model with onnx.helper
(benchmarks/onnx_workloads.py: random weights from a fixed seed) or is onnx's light
ResNet-50; relaylang imports it with `rl.frontend.from_onnx(model, freeze_params=True)`
and builds it with `rl.build(mod, target="llvm")`, ORT runs the same model
(CPUExecutionProvider, intra_op_num_threads=N, inter_op_num_threads=1, sequential,
ORT_ENABLE_ALL graph optimisations as users get them). At each thread count N,
relaylang runs with RELAY_NUM_THREADS=N (the native pool is resized when it changes),
its output is checked against ORT's first (rtol 1e-3, atol 1e-4; a mismatch fails the
row and the exit status is 1), then the contenders alternate in blocks (`blocks_many`:
2 untimed then about 20 ms of timed calls of each per round, ORT's and OpenBLAS's
threads spin after a call as the interpreter's do), `--repeat` rounds; medians, ratio
relaylang / ORT. GFLOPS (conv and GEMM workloads) count multiply-adds of the
convolutions and matrix products from the shapes as 2 FLOPs; the fraction of peak is of
the FMA peak measured at that thread count in the same run (`benchmarks/peak.py`: a loop
of independent vector FMAs; the issue assumed 117 GFLOPS on one core, 231 on two, but a
core with two AVX-512 FMA units reaches about twice that: 238 / 478 measured on the
development machine on 2026-11-26). `--profile` prints rl.profile's per-kernel table of
the relaylang library after each such row.

| name | workload | threads | target |
|---|---|---|---|
| ort-resnet50 | onnx's light ResNet-50, b1 3x224x224 | 1, 2 | <= 1.2x ORT |
| ort-conv_bn_relu | Conv 3x3/s2 64->128 on 56x56 + BatchNormalization + Relu, b1 | 1, 2 | <= 1.3x ORT |
| ort-mobilenet | stem conv + 5 depthwise 3x3 / pointwise 1x1 + BN + Clip(0,6) blocks at 112/56/28 | 1, 2 | <= 1.3x ORT |
| ort-mnist | MNIST CNN (conv 5x5 8 ch, relu, pool, conv 5x5 16 ch, relu, pool, dense 256->10) b1 | 1 | <= 1.0x ORT |
| ort-mlp | MLP 784-128-10 b1; also against NumPy (x @ W1 + b1, relu, @ W2 + b2) | 1 | <= 1.0x ORT and <= 1.0x NumPy |
| ort-mlp_b64 | the MLP at batch 64 | 2 | <= 1.2x ORT |
| ort-gemm | MatMul 1024x1024x1024 fp32; also against numpy.matmul (OpenBLAS) | 2 | >= 0.9x NumPy's speed |
| ort-gpt2 | 2 pre-norm transformer layers, seq 64, hidden 256, 4 heads (LayerNormalization, MatMul, Softmax, tanh-Gelu, residuals) | 1, 2 | <= 1.5x ORT |

`--threads 1,2` runs every ort-* workload at those counts instead of its own; the
other rows take RELAY_NUM_THREADS=N when a single N is given (all cores otherwise).

The exit status is 0 whether or not targets are met; 1 when something failed to
run or a result was wrong.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import relaylang as rl
from relaylang.testing.models import example_inputs, get_workload


@dataclass
class Row:
    name: str
    native_s: float
    baseline_s: float
    baseline: str
    target: str
    met: bool
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.native_s / self.baseline_s if self.baseline_s else float("inf")


def interleaved(native: Callable[[], Any], baseline: Callable[[], Any], repeat: int
                ) -> tuple[float, float]:
    native()
    baseline()
    n_times, b_times = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        native()
        n_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        baseline()
        b_times.append(time.perf_counter() - t)
    return statistics.median(n_times), statistics.median(b_times)


def blocks(native: Callable[[], Any], baseline: Callable[[], Any], repeat: int,
           block: int = 5, settle: int = 2) -> tuple[float, float]:
    """Medians over `repeat` rounds of: `settle` untimed then `block` timed calls of
    native, the same of baseline. A side's first calls after the other ran are not
    timed: the interpreter's OpenBLAS threads keep spinning on both cores for a while
    after each of its calls (about 0.1 s), so a native call right after one gets a
    single core, and strictly alternating calls (`interleaved`) measure native
    threads against OpenBLAS's spinners rather than against its work."""
    n, b = blocks_many([native, baseline], repeat, block, settle)
    return n, b


# Idle time before each contender's block: onnxruntime's worker keeps a CPU at 100% for
# 15-20 ms after its last call (0% from 25 ms on), OpenBLAS's about 0.1 s, so the next
# contender's worker would share a core with it (relaylang's pool then ran MLP b64 and
# conv3x3 at 1-thread speed on 2 threads: 523 dispatches, 288 ranges run by the worker;
# GEMM 1024^3 at 2 threads 11.9 ms after NumPy with 30 ms of idle time, 6.0 alone).
SETTLE_S = 0.12


def blocks_many(fns: list[Callable[[], Any]], repeat: int, block: int = 5,
                settle: int = 2) -> list[float]:
    """`blocks` for any number of contenders (onnxruntime's and OpenBLAS's thread pools
    both spin after a call): each block after `SETTLE_S` of idle time and `settle`
    untimed calls; the median per contender, in the order given."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            time.sleep(SETTLE_S)
            for _ in range(settle):
                fn()
            for _ in range(block):
                t = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t)
    return [statistics.median(ts) for ts in times]


def close(a: Any, b: Any, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(close(x, y, rtol, atol) for x, y in zip(a, b))
    return np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=True)


CHAIN = """#[version = "0.0.5"]
def @main(%x: Tensor[(4194304), float32]) -> Tensor[(4194304), float32] {
  %0 = add(%x, 1f);
  %1 = multiply(%0, 0.5f);
  %2 = exp(%1);
  sqrt(%2)
}
"""


def bench_chain(repeat: int) -> Row:
    lib = rl.build(rl.parse(CHAIN), target="llvm")
    x = np.random.default_rng(0).uniform(-1, 1, 4194304).astype("float32")
    tmp = np.empty_like(x)

    def numpy_chain() -> np.ndarray:
        np.add(x, 1.0, out=tmp)
        np.multiply(tmp, 0.5, out=tmp)
        np.exp(tmp, out=tmp)
        return np.sqrt(tmp, out=tmp)

    ok = close(lib(x), numpy_chain(), rtol=1e-5)
    n, b = interleaved(lambda: lib(x), numpy_chain, repeat)
    return Row("chain (4 ops, 4M float32)", n, b, "numpy", "<= 0.5", ok and n / b <= 0.5,
               "" if ok else "WRONG RESULT")


def bench_model(name: str, repeat: int, target: float, **options: Any) -> Row:
    mod, params = get_workload(name, **options)
    inputs = example_inputs(mod, params)
    lib = rl.build(mod, target="llvm", params=params)
    interp = rl.create_executor(rl.transform.BindParams(params)(mod))
    ok = close(lib(*inputs), interp(*inputs), rtol=1e-3, atol=1e-4)
    n, b = blocks(lambda: lib(*inputs), lambda: interp(*inputs), max(3, repeat // 5))
    na, ba = interleaved(lambda: lib(*inputs), lambda: interp(*inputs), repeat)
    note = f"(strictly alternating: {na * 1e3:.3f} ms vs {ba * 1e3:.3f} ms, {na / ba:.2f})"
    if not ok:
        note = "WRONG RESULT " + note
    if lib.fallback_ops:
        note += f" fallback: {', '.join(lib.fallback_ops)}"
    return Row(name, n, b, "interpreter", f"<= {target}", ok and n / b <= target, note.strip())


LOOP = """#[version = "0.0.5"]
def @loop(%i: int64, %acc: int64) -> int64 {
  if (equal(%i, 0i64)) {
    %acc
  } else {
    @loop(subtract(%i, 1i64), mod(add(multiply(%acc, 31i64), %i), 1000003i64))
  }
}
def @main(%n: int64) -> int64 { @loop(%n, 0i64) }
"""


def _loop_reference(n: int) -> int:
    acc = 0
    for i in range(n, 0, -1):
        acc = (acc * 31 + i) % 1000003
    return acc


def bench_loop(repeat: int) -> Row:
    """A hash-like update LLVM cannot turn into a closed form, so every iteration runs."""
    mod = rl.parse(LOOP)
    lib = rl.build(mod, target="llvm")
    interp = rl.create_executor(mod)
    big, small = 1_000_000, 20_000
    ok = (int(lib(np.int64(big))) == _loop_reference(big)
          and int(interp(np.int64(small))) == _loop_reference(small))
    n, b = interleaved(lambda: lib(np.int64(big)), lambda: interp(np.int64(small)), repeat)
    per_native, per_interp = n / big, b / small
    return Row(f"loop (tail recursion, per iteration; {lib.mode} mode)", per_native,
               per_interp, "interpreter", ">= 1000x faster",
               ok and per_interp / per_native >= 1000, "" if ok else "WRONG RESULT")


_BUILD_CHILD = """
import time, sys
import relaylang as rl
from relaylang.testing.models import get_workload
mod, params = get_workload("resnet50")
t = time.perf_counter()
rl.build(mod, target="llvm", params=params)
print(time.perf_counter() - t)
"""


def bench_build() -> list[Row]:
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as pyc:
        env = dict(os.environ, RELAY_CACHE_DIR=cache)
        # bytecode as an installed package has it (written by the first child into a
        # folder of its own, reused by the second), even where PYTHONDONTWRITEBYTECODE
        # is set: compiling ~90 modules from source would add ~0.13 s to each child
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        times = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-X", f"pycache_prefix={pyc}", "-c",
                                  _BUILD_CHILD], env=env, check=True,
                                 capture_output=True, text=True)
            times.append(float(out.stdout.strip().splitlines()[-1]))
    cold, warm = times
    return [Row("build resnet50 cold", cold, 3.0, "target 3 s", "<= 3 s", cold <= 3.0),
            Row("build resnet50 from cache", warm, 0.5, "target 0.5 s", "<= 0.5 s", warm <= 0.5)]


# --- side by side with onnxruntime (issue 18's acceptance table) ---------------------

_PEAKS: dict[int, float] = {}


def peak_gflops(threads: int) -> float:
    """The fp32 FMA peak of `threads` cores, measured once per run (benchmarks/peak.py)."""
    if threads not in _PEAKS:
        _PEAKS[threads] = _sibling("peak").peak_gflops(threads)
    return _PEAKS[threads]


@dataclass
class OrtSpec:
    workload: str            # a key of onnx_workloads.BUILDERS
    threads: tuple[int, ...]
    target: float            # relaylang / ORT at most this
    gflops: bool = False     # report relaylang's GFLOPS and fraction of peak
    numpy: str = ""          # also against direct NumPy: "mlp" or "gemm"
    numpy_target: float = 0.0  # relaylang / NumPy at most this ("gemm": numpy/relaylang >= 0.9)


ORT_SPECS = {
    "resnet50": OrtSpec("resnet50", (1, 2), 1.2, gflops=True),
    "conv_bn_relu": OrtSpec("conv_bn_relu", (1, 2), 1.3, gflops=True),
    "mobilenet": OrtSpec("mobilenet", (1, 2), 1.3, gflops=True),
    "mnist": OrtSpec("mnist", (1,), 1.0, gflops=True),
    "mlp": OrtSpec("mlp", (1,), 1.0, numpy="mlp", numpy_target=1.0),
    "mlp_b64": OrtSpec("mlp_b64", (2,), 1.2),
    "gemm": OrtSpec("gemm", (2,), float("inf"), gflops=True, numpy="gemm",
                    numpy_target=1 / 0.9),
    "gpt2": OrtSpec("gpt2", (1, 2), 1.5),
}


@dataclass
class OrtRow:
    name: str
    threads: int
    relay_s: float
    ort_s: float
    target: str
    met: bool
    matched: bool
    numpy_s: float | None = None
    gflops: float | None = None
    peak_fraction: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.relay_s / self.ort_s if self.ort_s else float("inf")


def _sibling(name: str) -> Any:
    """benchmarks/<name>.py, loaded from its file once (benchmarks/ is not a package and
    is not put on sys.path: its lsp.py would shadow the `lsp` package)."""
    if name not in sys.modules:
        import importlib.util
        from pathlib import Path
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).resolve().parent / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _onnx_workloads() -> Any:
    return _sibling("onnx_workloads")


def _ort_session(model: Any, threads: int) -> Any:
    import onnxruntime as ort
    ort.set_default_logger_severity(3)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def _blas_threads(n: int) -> Any:
    """NumPy's BLAS limited to `n` threads, as relaylang and ORT are (threadpoolctl, of
    the `bench` extra; without it OpenBLAS uses every core and a note says so)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        print("note: threadpoolctl is not installed: NumPy's BLAS uses every core",
              file=sys.stderr)
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(limits=n, user_api="blas")


def _set_threads(n: int | None) -> None:
    if n is None:
        os.environ.pop("RELAY_NUM_THREADS", None)
    else:
        os.environ["RELAY_NUM_THREADS"] = str(n)


def bench_ort(spec: OrtSpec, threads: tuple[int, ...], repeat: int, profile: bool = False
              ) -> list[OrtRow]:
    """One workload at each thread count: built once, imported once, relaylang's output
    checked against ORT's (rtol 1e-3, atol 1e-4) before timing."""
    ow = _onnx_workloads()
    from relaylang.frontend.onnx import sanitize
    w = ow.BUILDERS[spec.workload]()
    mod, params = rl.frontend.from_onnx(w.model, freeze_params=True)
    lib = rl.build(mod, target="llvm", params=params or None)
    by_name = {sanitize(k): v for k, v in w.feeds.items()}
    args = [by_name[p.name_hint] for p in mod["main"].params if p.name_hint not in params]
    numpy_fn: Callable[[], Any] | None = None
    if spec.numpy == "mlp":
        w1, b1, w2, b2 = ow.mlp_weights(w)
        x = w.feeds["x"]

        def numpy_fn() -> Any:
            return np.maximum(x @ w1 + b1, 0) @ w2 + b2
    elif spec.numpy == "gemm":
        wt, x = ow.gemm_weight(w), w.feeds["x"]

        def numpy_fn() -> Any:
            return np.matmul(x, wt)
    rows = []
    saved = os.environ.get("RELAY_NUM_THREADS")
    try:
        for n in threads:
            _set_threads(n)
            session = _ort_session(w.model, n)

            def relay() -> Any:
                return lib(*args)

            def ort_run(session: Any = session) -> Any:
                return session.run(None, w.feeds)

            got = relay()
            got = got[0] if isinstance(got, (tuple, list)) and len(got) == 1 else got
            want = ort_run()[0]
            matched = (np.shape(got) == np.shape(want)
                       and close(got, want, rtol=1e-3, atol=1e-4))
            note = "" if matched else "WRONG RESULT"
            if numpy_fn is not None and not close(numpy_fn(), want, rtol=1e-3, atol=1e-4):
                note = (note + " numpy baseline differs from ORT").strip()
            # calls per timed block: about 20 ms of work per contender and block
            t0 = time.perf_counter()
            ort_run()
            one = max(time.perf_counter() - t0, 1e-6)
            block = int(min(50, max(3, 0.02 / one)))
            fns = [relay, ort_run] + ([numpy_fn] if numpy_fn else [])
            with _blas_threads(n):
                meds = blocks_many(fns, max(3, repeat), block=block, settle=2)
            relay_s, ort_s = meds[0], meds[1]
            numpy_s = meds[2] if numpy_fn else None
            ratio = relay_s / ort_s
            met = matched and ratio <= spec.target
            target = f"<= {spec.target} ORT" if spec.target != float("inf") else "-"
            if spec.numpy == "mlp":
                target += f", <= {spec.numpy_target} numpy"
                met = met and numpy_s is not None and relay_s / numpy_s <= spec.numpy_target
            elif spec.numpy == "gemm":
                target = ">= 0.9 numpy speed"
                met = matched and numpy_s is not None and numpy_s / relay_s >= 0.9
            if numpy_s is not None:
                note = (note + f" numpy {numpy_s * 1e3:.4f} ms, relaylang/numpy "
                        f"{relay_s / numpy_s:.3f}").strip()
            if lib.fallback_ops:
                note += f" fallback: {', '.join(sorted(lib.fallback_ops))}"
            gflops = peak = None
            if spec.gflops and w.flops:
                gflops = w.flops / relay_s / 1e9
                peak = gflops / peak_gflops(n)
                note = (note + f" ORT {w.flops / ort_s / 1e9:.1f} GFLOPS").strip()
            rows.append(OrtRow(w.name, n, relay_s, ort_s, target, met, matched, numpy_s,
                               gflops, peak, note))
            if profile:
                _print_row(rows[-1])
                rl.profile(lib, *args, repeat=3)
    finally:
        _set_threads(int(saved) if saved else None)
    return rows


def _print_row(r: OrtRow) -> None:
    mark = "met" if r.met else "MISSED"
    gf = (f"{r.gflops:7.1f} {r.peak_fraction * 100:5.1f}%" if r.gflops is not None
          else f"{'':7} {'':6}")
    print(f"{r.name:14} {r.threads:>2} {r.relay_s * 1e3:11.4f}ms {r.ort_s * 1e3:11.4f}ms "
          f"{r.ratio:7.3f} {gf}  {r.target}: {mark} {r.note}", flush=True)


def _print_ort_header() -> None:
    print(f"{'workload':14} {'th':>2} {'relaylang':>13} {'ORT':>13} {'ratio':>7} "
          f"{'GFLOPS':>7} {'%peak':>6}  target")


LEGACY = ["chain", "mlp", "mnist", "resnet50", "loop", "build"]
ORT_NAMES = [f"ort-{k}" for k in ORT_SPECS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", default=",".join(LEGACY + ORT_NAMES),
                        help="comma-separated: " + ", ".join(LEGACY + ORT_NAMES)
                        + "; 'ort' means every ort-* workload")
    parser.add_argument("--threads", default=None,
                        help="thread counts, e.g. 1,2: every ort-* workload runs at each "
                        "(default: its own from the issue's table); the other rows use "
                        "RELAY_NUM_THREADS=N when one N is given (default: all cores)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", action="store_true",
                        help="print rl.profile's per-kernel table after each ort-* row")
    args = parser.parse_args(argv)
    threads = (tuple(int(t) for t in args.threads.split(",") if t.strip())
               if args.threads else None)
    saved_threads = os.environ.get("RELAY_NUM_THREADS")
    if threads and len(threads) == 1:
        os.environ["RELAY_NUM_THREADS"] = str(threads[0])
    wanted: list[str] = []
    for name in args.only.split(","):
        name = name.strip()
        wanted.extend(ORT_NAMES if name == "ort" else [name] if name else [])
    unknown = [n for n in wanted if n not in LEGACY + ORT_NAMES]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}")
    rows: list[Row] = []
    ort_rows: list[OrtRow] = []
    failed = False
    runners: dict[str, Callable[[], list[Row]]] = {
        "chain": lambda: [bench_chain(args.repeat)],
        "mlp": lambda: [bench_model("mlp", args.repeat * 20, 0.5)],
        "mnist": lambda: [bench_model("mnist", args.repeat * 5, 0.5)],
        "resnet50": lambda: [bench_model("resnet50", args.repeat, 1.0)],
        "loop": lambda: [bench_loop(max(3, args.repeat // 2))],
        "build": bench_build,
    }
    header = False
    try:
        for name in wanted:
            try:
                if name in runners:
                    rows.extend(runners[name]())
                    continue
                spec = ORT_SPECS[name[len("ort-"):]]
                if args.profile and not args.json and not header:
                    _print_ort_header()
                    header = True
                ort_rows.extend(bench_ort(spec, threads or spec.threads, args.repeat,
                                          profile=args.profile and not args.json))
            except Exception as e:  # noqa: BLE001 - a benchmark that cannot run is reported
                failed = True
                print(f"{name}: failed to run: {type(e).__name__}: {e}", file=sys.stderr)
    finally:
        _set_threads(int(saved_threads) if saved_threads else None)
    if args.json:
        print(json.dumps([dict(asdict(r), ratio=r.ratio) for r in rows]
                         + [dict(asdict(r), ratio=r.ratio, baseline="onnxruntime")
                            for r in ort_rows], indent=2))
    else:
        if rows:
            print(f"{'benchmark':40} {'native':>12} {'baseline':>12} {'ratio':>8}  target")
        for r in rows:
            mark = "met" if r.met else "MISSED"
            print(f"{r.name:40} {r.native_s * 1e3:10.3f}ms {r.baseline_s * 1e3:10.3f}ms "
                  f"{r.ratio:8.5f}  {r.target} vs {r.baseline}: {mark} {r.note}")
        if ort_rows:
            if rows:
                print()
            _print_ort_header()
            for r in ort_rows:
                _print_row(r)
            if _PEAKS:
                print("%peak: of the measured fp32 FMA peak, " + ", ".join(
                    f"{n} thread(s) {g:.1f} GFLOPS" for n, g in sorted(_PEAKS.items())))
    failed = (failed or any("WRONG" in r.note for r in rows)
              or any(not r.matched for r in ort_rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
