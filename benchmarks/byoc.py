"""ResNet-50 with the BYOC targets `blas` and `onnxruntime` against the plain LLVM build.

    flock /tmp/bench.lock python benchmarks/byoc.py [--repeat 5] [--threads 1,2]
                                                    [--model resnet50] [--small] [--json]

The model is the one benchmarks/llvm.py measures: `get_workload("resnet50")` (batch 1,
3x224x224, weights bound as constants), imported through that script's module so the
two stay the same. Three libraries are built in this process from it:

* llvm: `rl.build(mod, target="llvm", params=params)`;
* blas: the same with `byoc=["blas"]`: convolutions with their folded batch norm (a bias)
  and ReLU run as `blas.conv2d_bias_relu` composites (im2col + NumPy's matmul, that is
  OpenBLAS), the dense layer as `blas.dense_bias`; pools, residual adds and the rest stay
  in LLVM code. At N > 1 threads it is also timed with OpenBLAS held to one thread
  during its calls (the note): OpenBLAS's own threads wait for work by spinning and
  fare badly beside the native pool's (and other processes') threads;
* onnxruntime: `byoc=["onnxruntime"]`: the whole network is one region exported to ONNX
  and run by an onnxruntime session (CPUExecutionProvider, ORT_ENABLE_ALL).

At each thread count N: RELAY_NUM_THREADS=N (the native pool; the onnxruntime library is
built again so that its session takes N intra-op threads), OpenBLAS limited to N threads
(threadpoolctl, around the whole row). Outputs are checked against the llvm library's
(rtol 1e-3, atol 1e-4; a mismatch marks the row WRONG and the exit status is 1), then
the three alternate in blocks (benchmarks/llvm.py's `blocks_many`: an idle pause, 2
untimed calls, then `--block` timed calls of each, `--repeat` rounds); medians and the
ratios target/llvm (below 1: the target is faster). Build times are printed for the
record (the llvm kernels come from the on-disk cache after the first build). The
machine's load (`os.getloadavg`) is printed before and after.

The exit status is 0 unless something failed to run or a result was wrong; there is no
target to meet: the figures say what offloading to a library costs or gains here.

Measured on the 2-CPU development machine (2026-11-26, `--repeat 7`, load average 2.7-3.4
from other jobs; medians in ms, ratio to llvm):

    threads   llvm    blas          onnxruntime    blas, OpenBLAS on 1 thread
    1         62.9    110.1 (1.75)  61.2 (0.97)
    2         39.2     79.7 (2.04)  37.9 (0.97)    115.5 (2.95)

The blas regions lose to the LLVM backend's convolutions (OpenBLAS sgemm reaches 95-145
GFLOPS on ResNet-50's im2col shapes on one core, plus the im2col copies); onnxruntime
runs the whole network as one region at the LLVM build's speed. Under heavier load
(5-6) the 2-thread blas row degrades to 0.7-1.4 s: OpenBLAS's threads wait by spinning,
and a descheduled one stalls every GEMM (plain `numpy.matmul` between other NumPy work
measured 6-9x slower on 2 threads than on 1 then).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import relaylang as rl


def _bench_llvm() -> Any:
    """benchmarks/llvm.py, loaded from its file under its own name (benchmarks/ is not a
    package and must not go on sys.path: its lsp.py would shadow the `lsp` package)."""
    if "llvm" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "llvm", Path(__file__).resolve().parent / "llvm.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["llvm"] = module
        spec.loader.exec_module(module)
    return sys.modules["llvm"]


@dataclass
class Row:
    threads: int
    llvm_ms: float
    blas_ms: float
    ort_ms: float
    blas_ok: bool
    ort_ok: bool
    blas_regions: int
    ort_regions: int
    blas_1_ms: float | None = None     # N > 1: blas with OpenBLAS held to one thread

    @property
    def blas_ratio(self) -> float:
        return self.blas_ms / self.llvm_ms

    @property
    def ort_ratio(self) -> float:
        return self.ort_ms / self.llvm_ms


def _controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        print("note: threadpoolctl is not installed: OpenBLAS keeps its own thread count",
              file=sys.stderr)
        return None
    return ThreadpoolController()


def _blas_limit(ctl: Any, n: int) -> Any:
    if ctl is None:
        import contextlib
        return contextlib.nullcontext()
    return ctl.limit(limits=n, user_api="blas")


def _caller(lib: Any, inputs: list[Any], one_blas_thread: Any = None) -> Any:
    """A call of `lib` on `inputs`; with a threadpoolctl controller, OpenBLAS is held to
    one thread during the call."""
    if one_blas_thread is None:
        return lambda: lib(*inputs)

    def call() -> Any:
        with _blas_limit(one_blas_thread, 1):
            return lib(*inputs)
    return call


def _timed_build(mod: Any, params: Any, **kw: Any) -> tuple[Any, float]:
    t = time.perf_counter()
    lib = rl.build(mod, target="llvm", params=params, **kw)
    return lib, time.perf_counter() - t


def run(model: str, small: bool, threads: list[int], repeat: int, block: int,
        verbose: bool = True) -> list[Row]:
    bench = _bench_llvm()
    mod, params = bench.get_workload(model, small=small)
    inputs = bench.example_inputs(mod, params)
    rows = []
    ctl = _controller()
    saved = os.environ.get("RELAY_NUM_THREADS")
    try:
        for n in threads:
            bench._set_threads(n)
            with _blas_limit(ctl, n):
                llvm, t_llvm = _timed_build(mod, params)
                blas, t_blas = _timed_build(mod, params, byoc=["blas"])
                ort, t_ort = _timed_build(mod, params, byoc=["onnxruntime"])
                if verbose:
                    print(f"# {n} thread(s): build llvm {t_llvm:.2f} s, blas {t_blas:.2f} s, "
                          f"onnxruntime {t_ort:.2f} s", flush=True)
                want = llvm(*inputs)
                blas_ok = bench.close(blas(*inputs), want, rtol=1e-3, atol=1e-4)
                ort_ok = bench.close(ort(*inputs), want, rtol=1e-3, atol=1e-4)
                fns = [_caller(llvm, inputs), _caller(blas, inputs), _caller(ort, inputs)]
                if n > 1 and ctl is not None:
                    fns.append(_caller(blas, inputs, ctl))
                meds = bench.blocks_many(fns, repeat, block=block, settle=2)
            rows.append(Row(n, meds[0] * 1e3, meds[1] * 1e3, meds[2] * 1e3, blas_ok, ort_ok,
                            len(blas.external_steps), len(ort.external_steps),
                            meds[3] * 1e3 if len(meds) > 3 else None))
            if verbose:
                _print_row(rows[-1])
    finally:
        bench._set_threads(int(saved) if saved else None)
    return rows


def _print_header() -> None:
    print(f"{'threads':>7} {'llvm ms':>10} {'blas ms':>10} {'blas/llvm':>9} "
          f"{'ort ms':>10} {'ort/llvm':>8}  note")


def _print_row(r: Row) -> None:
    note = f"blas regions {r.blas_regions}, onnxruntime regions {r.ort_regions}"
    if r.blas_1_ms is not None:
        note += (f"; blas with OpenBLAS on 1 thread {r.blas_1_ms:.2f} ms "
                 f"({r.blas_1_ms / r.llvm_ms:.3f})")
    if not r.blas_ok:
        note += "; blas WRONG RESULT"
    if not r.ort_ok:
        note += "; onnxruntime WRONG RESULT"
    print(f"{r.threads:>7} {r.llvm_ms:10.2f} {r.blas_ms:10.2f} {r.blas_ratio:9.3f} "
          f"{r.ort_ms:10.2f} {r.ort_ratio:8.3f}  {note}", flush=True)


def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds of blocks (default 5)")
    parser.add_argument("--block", type=int, default=3, help="timed calls per block")
    parser.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--small", action="store_true",
                        help="the model's small test variant (a quick run)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",") if t.strip()]
    if not args.json:
        print(f"# {args.model}{' (small)' if args.small else ''}; load average {_load()}")
        _print_header()
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        print("onnxruntime is not installed: pip install 'relaylang[onnxruntime]'",
              file=sys.stderr)
        return 1
    rows = run(args.model, args.small, threads, max(1, args.repeat), max(1, args.block),
               verbose=not args.json)
    if args.json:
        print(json.dumps([{**asdict(r), "blas_ratio": r.blas_ratio, "ort_ratio": r.ort_ratio}
                          for r in rows], indent=2))
    else:
        print(f"# load average after: {_load()}")
    return 0 if all(r.blas_ok and r.ort_ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
