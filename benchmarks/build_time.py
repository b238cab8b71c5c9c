"""`rl.build` time of ResNet-50 b1: cold (empty kernel cache) and from the kernel cache,
with the phases (issue 18: cold <= 3 s, from the cache <= 0.5 s).

    python benchmarks/build_time.py [--model resnet50|ort-resnet50] [--runs 5]
                                    [--jobs N] [--profile] [--json]

Each run is two fresh processes sharing a new, empty kernel cache folder
(`RELAY_CACHE_DIR`): the first builds cold (nothing compiled in the process or on disk,
no kernel memo of an earlier build), the second builds the same model again and finds
its kernels in that folder. Only the `rl.build` call is timed (the model is made
before: relaylang.testing.models' ResNet-50 as `benchmarks/llvm.py --only build` builds
it, or onnx's light ResNet-50 imported with `rl.frontend.from_onnx` for ort-resnet50),
with a detailed `BuildTimer` (the phases of `relay build --time`) and the passes timed
by a `PassTimingInstrument`. The children keep Python bytecode in a temporary folder
compiled before the first run (as an installed package has its .pyc files), even where
PYTHONDONTWRITEBYTECODE is set. Reported: the median wall time of the cold and cached
builds over `--runs`, their CPU time (this process and its compile workers), and the
median seconds of each phase:

- types, passes (the -O3 pipeline; the slowest passes below it), lowering (primitive
  functions to loop IR, scheduling included; scheduling alone below it);
- kernel cache (key and look-up), LLVM IR generation (llvmlite IR text), LLVM
  optimisation (O3), codegen (object code, loaded by MCJIT), compile workers (waiting
  for the parts other processes compile: `RELAY_COMPILE_JOBS`, jit.compile_modules);
- loading (from the kernel cache), packing constants (weight packers run at build).

`--jobs N` sets RELAY_COMPILE_JOBS in the children (1: everything compiled in the
building process). `--profile` runs one more cold build under cProfile and prints its
slowest functions (those of this process only: with `--jobs 1` all of them). Run it under the shared lock: `flock /tmp/bench.lock python
benchmarks/build_time.py`.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, os, sys, time
model, profile = sys.argv[1], sys.argv[2] == "1"
import relaylang as rl
from relaylang.backend.build import BuildTimer
from relaylang.transform.instruments import PassTimingInstrument
from relaylang.transform.pass_infra import PassContext
import relaylang.backend.llvm.lower as lower_mod
if model == "resnet50":
    from relaylang.testing.models import get_workload
    mod, params = get_workload("resnet50")
else:
    import importlib.util
    spec = importlib.util.spec_from_file_location("onnx_workloads", sys.argv[3])
    ow = importlib.util.module_from_spec(spec); sys.modules["onnx_workloads"] = ow
    spec.loader.exec_module(ow)
    w = ow.BUILDERS[model.split("-", 1)[1]]()
    mod, params = rl.frontend.from_onnx(w.model, freeze_params=True)
    params = params or None

scheduling = [0.0]
real_schedule = lower_mod.schedule
def timed_schedule(*a, **k):
    start = time.perf_counter()
    try:
        return real_schedule(*a, **k)
    finally:
        scheduling[0] += time.perf_counter() - start
lower_mod.schedule = timed_schedule

class Timer(BuildTimer):
    def __init__(self):
        super().__init__(detailed=True)
        self.samples = []
    def add(self, phase, seconds):
        if phase == "lowering" and any(p == "lowering (loop IR)" for p, _ in self.samples):
            phase = "LLVM IR generation"
        elif phase == "lowering":
            phase = "lowering (loop IR)"
        self.samples.append((phase, seconds))
        super().add(phase, seconds)

timer = Timer()
passes = PassTimingInstrument()
if profile:
    import cProfile, pstats
    prof = cProfile.Profile()
cpu0, kids0, t0 = time.process_time(), os.times(), time.perf_counter()
with PassContext(instruments=[passes]):
    if profile:
        prof.enable()
    lib = rl.build(mod, target="llvm", params=params, timer=timer)
    if profile:
        prof.disable()
wall = time.perf_counter() - t0
kids1 = os.times()
cpu = time.process_time() - cpu0
cpu_workers = (kids1.children_user - kids0.children_user
               + kids1.children_system - kids0.children_system)
if profile:
    stats = pstats.Stats(prof, stream=sys.stderr)
    stats.sort_stats("cumulative").print_stats(35)
    stats.sort_stats("tottime").print_stats(35)
pass_seconds = {}
for name, s in passes.timings:
    pass_seconds[name] = pass_seconds.get(name, 0.0) + s
print(json.dumps({"wall": wall, "cpu": cpu, "cpu_workers": cpu_workers,
                  "phases": timer.samples, "scheduling": scheduling[0],
                  "passes": pass_seconds, "modules": len(lib.modules),
                  "kernels": len(lib.kernel_names), "mode": lib.mode}))
"""


def _child(model: str, cache: str, pyc: str, jobs: int | None, profile: bool = False
           ) -> dict:
    env = dict(os.environ, RELAY_CACHE_DIR=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if jobs is not None:
        env["RELAY_COMPILE_JOBS"] = str(jobs)
    workloads = str(ROOT / "benchmarks" / "onnx_workloads.py")
    out = subprocess.run([sys.executable, "-X", f"pycache_prefix={pyc}", "-c", _CHILD,
                          model, "1" if profile else "0", workloads],
                         check=False, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit(f"the build child failed (exit status {out.returncode})")
    if profile:
        sys.stderr.write(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _phase_medians(results: list[dict]) -> dict[str, float]:
    names: list[str] = []
    for r in results:
        for name, _ in r["phases"]:
            if name not in names:
                names.append(name)
    out = {}
    for name in names:
        out[name] = statistics.median(sum(s for n, s in r["phases"] if n == name)
                                      for r in results)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet50", choices=["resnet50", "ort-resnet50"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=None,
                    help="RELAY_COMPILE_JOBS in the children (default: unset)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cold: list[dict] = []
    warm: list[dict] = []
    with tempfile.TemporaryDirectory() as pyc:
        # bytecode as an installed package has it, compiled before the first run
        subprocess.run([sys.executable, "-X", f"pycache_prefix={pyc}", "-m", "compileall",
                        "-q", str(ROOT / "relaylang")], check=True,
                       env={k: v for k, v in os.environ.items()
                            if k != "PYTHONDONTWRITEBYTECODE"})
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as cache:
                cold.append(_child(args.model, cache, pyc, args.jobs))
                if not any(Path(cache).iterdir()):
                    raise SystemExit("the cold build wrote no kernel cache entry")
                warm.append(_child(args.model, cache, pyc, args.jobs))
        if args.profile:
            with tempfile.TemporaryDirectory() as cache:
                _child(args.model, cache, pyc, args.jobs, profile=True)
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    med = statistics.median
    summary = {
        "model": args.model, "runs": args.runs, "jobs": args.jobs,
        "load_before": load, "load_after": load_after,
        "cold_s": med(r["wall"] for r in cold), "cached_s": med(r["wall"] for r in warm),
        "cold_all_s": [r["wall"] for r in cold], "cached_all_s": [r["wall"] for r in warm],
        "cold_cpu_s": med(r["cpu"] + r["cpu_workers"] for r in cold),
        "cached_cpu_s": med(r["cpu"] + r["cpu_workers"] for r in warm),
        "cold_phases": _phase_medians(cold), "cached_phases": _phase_medians(warm),
        "scheduling_s": med(r["scheduling"] for r in cold),
        "modules": cold[0]["modules"], "kernels": cold[0]["kernels"],
        "mode": cold[0]["mode"],
    }
    pass_names = sorted(cold[0]["passes"], key=lambda n: -cold[0]["passes"][n])
    summary["cold_passes"] = {n: med(r["passes"].get(n, 0.0) for r in cold)
                              for n in pass_names}
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    print(f"rl.build {args.model} ({summary['mode']} mode, {summary['kernels']} kernels in "
          f"{summary['modules']} module(s)); {args.runs} runs; load average "
          f"{load:.2f} before, {load_after:.2f} after")
    print(f"  cold:   median {summary['cold_s']:.3f} s (cpu {summary['cold_cpu_s']:.3f} s), "
          "runs " + " ".join(f"{x:.2f}" for x in summary["cold_all_s"])
          + f"   target 3 s: {'PASS' if summary['cold_s'] <= 3.0 else 'FAIL'}")
    print(f"  cached: median {summary['cached_s']:.3f} s (cpu "
          f"{summary['cached_cpu_s']:.3f} s), runs "
          + " ".join(f"{x:.2f}" for x in summary["cached_all_s"])
          + f"   target 0.5 s: {'PASS' if summary['cached_s'] <= 0.5 else 'FAIL'}")
    names = list(summary["cold_phases"])
    names += [n for n in summary["cached_phases"] if n not in names]
    width = max(len(n) for n in names + ["  scheduling (in lowering)"]) + 2
    print(f"\n{'phase':<{width}} {'cold ms':>9} {'cached ms':>10}")
    for n in names:
        c = summary["cold_phases"].get(n)
        w = summary["cached_phases"].get(n)
        print(f"{n:<{width}} {c * 1e3 if c is not None else float('nan'):>9.1f} "
              f"{w * 1e3 if w is not None else float('nan'):>10.1f}")
        if n == "passes":
            for p in pass_names[:6]:
                label = f"  {p}"
                print(f"{label:<{width}} {summary['cold_passes'][p] * 1e3:>9.1f}")
        if n == "lowering (loop IR)":
            label = "  scheduling (in lowering)"
            print(f"{label:<{width}} {summary['scheduling_s'] * 1e3:>9.1f}")
    print(f"{'total (phases)':<{width}} {sum(summary['cold_phases'].values()) * 1e3:>9.1f} "
          f"{sum(summary['cached_phases'].values()) * 1e3:>10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
