"""The ONNX frontend on ONNX's light models: import time, and LLVM-backend latency against
onnxruntime on the same input.

    python benchmarks/onnx_import.py [--repeat 5] [--run-repeat 7] [--only resnet50,vgg19]
                                     [--threads N] [--no-latency] [--json]

The models are those onnx ships in onnx/backend/test/data/light (AlexNet, DenseNet-121,
Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512; batch 1,
3x224x224, weights made by ConstantOfShape and folded to constants at import).

* import: `rl.frontend.from_onnx(path)` (reading the file, ONNX's shape inference, the
  converters, folding, and relaylang's type checking of the result), wall time, median
  of `--repeat` runs (default 5) after one untimed warm-up import; garbage is collected
  before each. Target: ResNet-50 under 1 s.
* latency: the library `rl.build(mod, target="llvm", params=params)` against an
  onnxruntime session (CPU provider, its default optimisations), both on all cores
  (RELAY_NUM_THREADS / onnxruntime's default; `--threads N` sets both), on the input
  ONNX's runner feeds these models (arange(n) / n). One untimed call each, then
  `--run-repeat` calls interleaved (relaylang, onnxruntime, ...); medians and their
  ratio relaylang / onnxruntime (below 1: relaylang is faster). The outputs are compared
  first (rtol 1e-3, atol 1e-5); a mismatch is noted in the row as WRONG RESULT.

The exit status is 0 whether or not the target is met; 1 when something failed to run
(a model that cannot be imported is such a failure) or a result was wrong.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

IMPORT_TARGET_S = 1.0          # ResNet-50, from_onnx including type checking


@dataclass
class Row:
    model: str
    nodes: int
    import_s: float | None = None
    build_s: float | None = None
    relay_s: float | None = None
    ort_s: float | None = None
    note: str = ""
    errors: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float | None:
        if self.relay_s is None or not self.ort_s:
            return None
        return self.relay_s / self.ort_s


def light_dir() -> Path:
    import onnx
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


def model_names() -> list[str]:
    return sorted(p.name[len("light_"):-len(".onnx")] for p in light_dir().glob("light_*.onnx"))


def dummy_inputs(model: Any) -> dict[str, np.ndarray]:
    """ONNX's runner's input for a light model: arange(n) / n, unknown dims 1."""
    inits = {i.name for i in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1
                      for d in vi.type.tensor_type.shape.dim)
        n = int(np.prod(shape))
        out[vi.name] = (np.arange(n).reshape(shape) / n).astype(np.float32)
    return out


def time_import(path: Path, repeat: int) -> float:
    import relaylang as rl
    rl.frontend.from_onnx(str(path))         # warm-up: op families, converters, parser
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        rl.frontend.from_onnx(str(path))
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def ort_session(path: Path, threads: int | None) -> Any:
    import onnxruntime as ort
    ort.set_default_logger_severity(3)       # no warnings about unused initializers
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def time_latency(row: Row, path: Path, repeat: int, threads: int | None) -> None:
    import onnx

    import relaylang as rl
    from relaylang.frontend.onnx import sanitize
    model = onnx.load(str(path))
    feeds = dummy_inputs(model)
    mod, params = rl.frontend.from_onnx(model)
    t = time.perf_counter()
    lib = rl.build(mod, target="llvm", params=params)
    row.build_s = time.perf_counter() - t
    by_name = {sanitize(k): v for k, v in feeds.items()}
    args = [by_name[p.name_hint] for p in mod["main"].params if p.name_hint not in params]
    session = ort_session(path, threads)

    def relay() -> Any:
        return lib(*args)

    def ort() -> Any:
        return session.run(None, feeds)

    got = np.asarray(relay())
    want = np.asarray(ort()[0])
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-3, atol=1e-5):
        row.note = "WRONG RESULT"
    relay_times, ort_times = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        relay()
        relay_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        ort()
        ort_times.append(time.perf_counter() - t)
    row.relay_s = statistics.median(relay_times)
    row.ort_s = statistics.median(ort_times)
    if lib.fallback_ops:
        row.note = (row.note + f" numpy fallback: {', '.join(sorted(lib.fallback_ops))}").strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="imports per model (median)")
    parser.add_argument("--run-repeat", type=int, default=7,
                        help="interleaved runs per model (median)")
    parser.add_argument("--only", default=None, help="comma-separated model names")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads of both sides (default: all cores)")
    parser.add_argument("--no-latency", action="store_true", help="import times only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.threads:
        os.environ["RELAY_NUM_THREADS"] = str(args.threads)
    try:
        import onnx
    except ImportError:
        print("onnx_import: needs onnx (and onnxruntime): pip install 'relaylang[bench]'",
              file=sys.stderr)
        return 1
    names = args.only.split(",") if args.only else model_names()
    rows: list[Row] = []
    failed = False
    for name in names:
        path = light_dir() / f"light_{name}.onnx"
        if not path.exists():
            print(f"{name}: no such light model (models: {', '.join(model_names())})",
                  file=sys.stderr)
            failed = True
            continue
        row = Row(name, len(onnx.load(str(path)).graph.node))
        rows.append(row)
        try:
            row.import_s = time_import(path, args.repeat)
            if not args.no_latency:
                time_latency(row, path, args.run_repeat, args.threads)
        except Exception as e:  # noqa: BLE001 -- a model that cannot run is reported
            failed = True
            row.errors.append(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            print(f"{name}: failed to run: {row.errors[-1]}", file=sys.stderr)
        gc.collect()
    resnet = next((r for r in rows if r.model == "resnet50"), None)
    target_met = None if resnet is None or resnet.import_s is None \
        else resnet.import_s < IMPORT_TARGET_S
    if args.json:
        print(json.dumps({"rows": [dict(asdict(r), ratio=r.ratio) for r in rows],
                          "resnet50_import_target_s": IMPORT_TARGET_S,
                          "resnet50_import_target_met": target_met}, indent=2))
    else:
        def ms(v: float | None) -> str:
            return f"{v * 1e3:10.1f}ms" if v is not None else f"{'-':>12}"
        print(f"{'model':14} {'nodes':>6} {'import':>12} {'build':>12} {'relaylang':>12} "
              f"{'onnxruntime':>12} {'ratio':>7}  note")
        for r in rows:
            ratio = f"{r.ratio:7.2f}" if r.ratio is not None else f"{'-':>7}"
            note = r.note or ("; ".join(r.errors))
            print(f"{r.model:14} {r.nodes:6d} {ms(r.import_s)} {ms(r.build_s)} "
                  f"{ms(r.relay_s)} {ms(r.ort_s)} {ratio}  {note}")
        if target_met is not None:
            print(f"resnet50 import {resnet.import_s:.3f} s: target < {IMPORT_TARGET_S:.0f} s "
                  f"{'met' if target_met else 'MISSED'}")
    failed = failed or any("WRONG" in r.note for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
