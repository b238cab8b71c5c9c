"""Reference interpreter speed: per-op overhead, recursion, ADT folds, and models against NumPy.

    python benchmarks/interpreter.py [--repeat 7] [--repeat-large 3] [--chain 10000]
                                     [--loop 1000000] [--list 100000] [--mlp-calls 200]
                                     [--batch 1] [--image 224] [--units 3,4,6,3]
                                     [--gpt2-layers 12] [--gpt2-seq 1600] [--json]

Every program is parsed and type-checked once, run once untimed (compilation
of the function bodies happens on that first run), then timed `--repeat` times
(`--repeat-large` for the loop, the list and GPT-2); medians are reported.

* chain: a graph-form chain of `--chain` tiny elementwise calls on a (1, 64)
  float32 tensor. The same kernels are also called directly, in a plain
  Python loop over (kernel, attrs, constant) on the same inputs, inside the one
  `fp_errors_ignored` the interpreter runs in. Overhead per op = (interpreter
  - direct) / ops. Target: under 3 µs per op.
* loop: `%loop(%i + 1, %acc + %i)` in tail position, `--loop` iterations on
  int64 scalars (constant stack depth); µs per iteration.
* list: a `--list`-element `List[int64]` built by a non-tail recursive
  `@range` and summed by `@foldl` with a closure; µs per element each.
* MLP: examples/mlp.relay (784 -> 128 -> 10, batch 1) against the same ops
  written directly in NumPy; `--mlp-calls` calls per timed sample. Target:
  within 2x.
* CNN: ResNet-50 from gen_resnet.py (random weights, std 1/sqrt(fan-in), as
  contiguous arrays) against a direct NumPy ResNet-50: convolutions as im2col +
  matmul, batch norm as scale and shift, max pool over strided slices, runs
  interleaved with the interpreter's. Target: within 1.1x.
* CNN fp16: the same ResNet-50 with float16 weights, input and types, against the
  float32 one in the interpreter (runs interleaved). Target: within 2x.
* GPT-2 fp16: gen_models' GPT-2 (`--gpt2-layers` blocks, 768 wide, `--gpt2-seq`
  tokens: 1600 is the activations of TVM's collage GPT-2 test, 1600x768 and
  1600x3072) in float16 against the same model in float32, both in the interpreter,
  runs interleaved; random weights (std 0.02, layer norms 1 and 0), causal mask.
  Float16 kernels compute in float32 and round (relaylang/op/numpy_support.py).
  Target: within 2x. The fp16 result is checked against the fp32 one (within 5% of
  its largest magnitude: float16 has 11 bits).

Results are checked (the chain exactly, the models with allclose); a wrong
result fails its target. The exit status is 0 whether or not targets are met;
it is 1 when something failed to run.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.append(str(Path(__file__).resolve().parent))  # after the packages: `lsp` is not ./lsp.py
import gen_models  # sibling script modules, not a package
import gen_resnet

ROOT = Path(__file__).resolve().parents[1]
TARGET_OVERHEAD_US = 3.0
TARGET_MLP_RATIO = 2.0
TARGET_CNN_RATIO = 1.1
TARGET_FP16_RATIO = 2.0
CHAIN_STEPS = (("add", "1f"), ("multiply", "0.5f"), ("subtract", "0.25f"))   # stays bounded


@dataclass
class Result:
    case: str
    size: int                   # ops, iterations, elements or calls per run
    unit: str                   # what `size` counts
    runs_ms: list[float] = field(default_factory=list)
    numpy_ms: list[float] = field(default_factory=list)    # the direct version, if any
    baseline: str = "numpy"     # what `numpy_ms` times: NumPy, or the fp32 interpreter
    first_ms: float | None = None                          # the untimed first run
    error: str | None = None    # a wrong result
    crash: str | None = None    # an exception that stopped the runs

    @property
    def median_ms(self) -> float:
        return statistics.median(self.runs_ms) if self.runs_ms else float("nan")

    @property
    def numpy_median_ms(self) -> float:
        return statistics.median(self.numpy_ms) if self.numpy_ms else float("nan")

    @property
    def us_per_unit(self) -> float:
        return self.median_ms * 1000.0 / self.size

    @property
    def ratio(self) -> float:
        return self.median_ms / self.numpy_median_ms if self.numpy_ms else float("nan")

    @property
    def overhead_us(self) -> float:
        """(interpreter - direct) per unit, in µs."""
        return (self.median_ms - self.numpy_median_ms) * 1000.0 / self.size


# --- timing --------------------------------------------------------------------------------------

def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """(fn(), wall ms); the garbage of earlier runs is collected first."""
    gc.collect()
    start = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - start) * 1000.0


def measure(res: Result, interp: Callable[[], Any], direct: Callable[[], Any] | None,
            repeat: int, check: Callable[[Any, Any], str | None]) -> Result:
    """One untimed first run of each, checked, then `repeat` timed runs, interleaved (a
    busy machine slows both alike). An exception is recorded as the crash."""
    try:
        got, res.first_ms = timed(interp)
        want = direct() if direct is not None else None
        res.error = check(got, want)
        for _ in range(repeat):
            res.runs_ms.append(timed(interp)[1])
            if direct is not None:
                res.numpy_ms.append(timed(direct)[1])
    except RecursionError as e:
        res.crash = f"RecursionError: {e}"
    except Exception as e:  # noqa: BLE001  (reported as a failure to run, not a traceback)
        res.crash = f"{type(e).__name__}: {e}"
    return res


def _close(rtol: float, atol: float) -> Callable[[Any, Any], str | None]:
    def check(got: Any, want: Any) -> str | None:
        if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol):
            return f"differs from NumPy (max abs diff {np.max(np.abs(got - want)):.3g})"
        return None
    return check


def _equal_to(expected: int) -> Callable[[Any, Any], str | None]:
    return lambda got, _: None if int(got) == expected else f"got {got}, want {expected}"


def _program(text: str, metadata: dict | None = None) -> Any:
    """An interpreter on the parsed, type-checked module."""
    import relaylang as rl
    from relaylang.backend.interpreter.machine import Interpreter
    from relaylang.typing import infer_types
    return Interpreter(infer_types(rl.parse(text, metadata=metadata)))


# --- chain: per-op overhead ----------------------------------------------------------------------

def chain_text(n: int) -> str:
    """@main(%x) as a graph-form chain of n elementwise calls, each with a constant."""
    lines = ['#[version = "0.0.5"]',
             "def @main(%x: Tensor[(1, 64), float32]) -> Tensor[(1, 64), float32] {"]
    prev = "%x"
    for i in range(n):
        op, const = CHAIN_STEPS[i % len(CHAIN_STEPS)]
        call = f"{op}({prev}, {const})"
        if i == n - 1:
            lines.append(f"  {call}")
        else:
            lines.append(f"  %{i} = {call};")
            prev = f"%{i}"
    return "\n".join(lines + ["}", ""])


def bench_chain(n: int, repeat: int) -> Result:
    from relaylang.ir.expr import Call
    from relaylang.ir.traverse import post_order
    from relaylang.op.numpy_support import fp_errors_ignored
    from relaylang.op.registry import get_op_def
    res = Result("chain of tiny elementwise ops", n, "op")
    interp = _program(chain_text(n))
    main = interp.global_closure("main")
    calls = [c for c in post_order(interp.mod["main"]) if isinstance(c, Call)]
    plan = [(get_op_def(c.op.name).kernel, c.attrs, c.args[1].data) for c in calls]
    x = np.linspace(-1, 1, 64, dtype=np.float32).reshape(1, 64)

    def direct() -> np.ndarray:
        with fp_errors_ignored():
            value = x
            for kernel, attrs, const in plan:
                value = kernel([value, const], attrs)
            return value

    def same(got: Any, want: Any) -> str | None:
        return None if np.array_equal(got, want) else "differs from the direct kernel calls"
    return measure(res, lambda: main(x), direct, repeat, same)


# --- recursion and ADTs --------------------------------------------------------------------------

LOOP = """#[version = "0.0.5"]
def @main(%n: int64) -> int64 {
  let %loop = fn (%i: int64, %acc: int64) -> int64 {
    if (%i > %n) { %acc } else { %loop(%i + 1i64, %acc + %i) }
  };
  %loop(0i64, 0i64)
}
"""

LIST = """#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @range(%lo: int64, %hi: int64) -> List[int64] {
  if (%lo >= %hi) { Nil } else { Cons(%lo, @range(%lo + 1i64, %hi)) }
}

def @foldl[A, B](%f: fn (A, B) -> A, %acc: A, %xs: List[B]) -> A {
  match (%xs) {
    Cons(%x, %rest) => @foldl(%f, %f(%acc, %x), %rest),
    Nil => %acc,
  }
}

def @sum(%xs: List[int64]) -> int64 {
  @foldl(fn (%a: int64, %b: int64) -> int64 { %a + %b }, 0i64, %xs)
}
"""


def bench_loop(n: int, repeat: int) -> Result:
    res = Result("tail-recursive loop", n + 1, "iteration")
    main = _program(LOOP).global_closure("main")
    return measure(res, lambda: main(np.asarray(n, dtype=np.int64)), None, repeat,
                   _equal_to(n * (n + 1) // 2))


def bench_list(n: int, repeat: int) -> list[Result]:
    interp = _program(LIST)
    build, total = interp.global_closure("range"), interp.global_closure("sum")
    lo, hi = np.asarray(0, dtype=np.int64), np.asarray(n, dtype=np.int64)

    def length(xs: Any) -> int:
        count = 0
        while xs.fields:
            count, xs = count + 1, xs.fields[1]
        return count
    built = measure(Result("list build (@range, non-tail)", n, "element"),
                    lambda: build(lo, hi), None, repeat,
                    lambda got, _: None if length(got) == n else f"{length(got)} elements")
    xs = build(lo, hi)
    folded = measure(Result("list fold (@foldl, closure)", n, "element"), lambda: total(xs),
                     None, repeat, _equal_to(n * (n - 1) // 2))
    return [built, folded]


# --- MLP -----------------------------------------------------------------------------------------

def mlp_numpy(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray,
              b2: np.ndarray) -> np.ndarray:
    """examples/mlp.relay written directly: batch_flatten, dense + bias, relu, dense +
    bias, softmax."""
    h = np.maximum(x.reshape(x.shape[0], -1) @ w1.T + b1, np.float32(0))
    y = h @ w2.T + b2
    e = np.exp(y - y.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def bench_mlp(calls: int, repeat: int) -> Result:
    res = Result("MLP 784-128-10, batch 1", calls, "call")
    main = _program((ROOT / "examples" / "mlp.relay").read_text()).global_closure("main")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s, dtype=np.float32) / np.float32(math.sqrt(s[-1]))
            for s in [(1, 1, 28, 28), (128, 784), (128,), (10, 128), (10,)]]

    def many(fn: Callable[..., Any]) -> Callable[[], Any]:
        def run() -> Any:
            for _ in range(calls - 1):
                fn(*args)
            return fn(*args)
        return run
    return measure(res, many(main), many(mlp_numpy), repeat, _close(1e-5, 1e-6))


# --- CNN -----------------------------------------------------------------------------------------

def random_weights(constants: list[np.ndarray], seed: int = 0) -> list[np.ndarray]:
    """Contiguous stand-ins for gen_resnet's broadcast views: kernels and dense weights
    random with std 1/sqrt(fan-in) (activations stay O(1) through 50 layers), batch norm
    parameters as generated (gamma and variance 1, beta and mean 0)."""
    rng = np.random.default_rng(seed)
    out = []
    for c in constants:
        if c.ndim >= 2:
            scale = np.float32(1.0 / math.sqrt(math.prod(c.shape[1:])))
            out.append(rng.standard_normal(c.shape, dtype=np.float32) * scale)
        else:
            out.append(np.array(c))
    return out


def conv2d_numpy(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """NCHW convolution as im2col + matmul."""
    n, c = x.shape[:2]
    o, _, kh, kw = w.shape
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (x.shape[2] - kh) // stride + 1, (x.shape[3] - kw) // stride + 1
    if kh == kw == 1:
        cols = x[:, :, ::stride, ::stride].reshape(n, c, oh * ow)
    else:
        v = sliding_window_view(x, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
        cols = v.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
    return np.matmul(w.reshape(o, -1), cols).reshape(n, o, oh, ow)


def max_pool_numpy(x: np.ndarray) -> np.ndarray:
    """3x3 max pool, stride 2, padding 1."""
    oh, ow = (x.shape[2] - 1) // 2 + 1, (x.shape[3] - 1) // 2 + 1
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    out = padded[:, :, 0:2 * oh:2, 0:2 * ow:2].copy()
    for i in range(3):
        for j in range(3):
            np.maximum(out, padded[:, :, i:i + 2 * oh:2, j:j + 2 * ow:2], out=out)
    return out


def resnet_numpy(x: np.ndarray, weights: list[np.ndarray],
                 units: tuple[int, ...] = gen_resnet.UNITS) -> np.ndarray:
    """gen_resnet's network written directly, taking the weights in the generator's
    order."""
    params = iter(weights)

    def bn(v: np.ndarray, scale: bool = True) -> np.ndarray:
        gamma, beta, mean, var = (next(params) for _ in range(4))
        s = 1 / np.sqrt(var + np.float32(2e-5))
        s = s * gamma if scale else s
        return v * s[:, None, None] + (beta - mean * s)[:, None, None]

    def relu(v: np.ndarray) -> np.ndarray:
        return np.maximum(v, np.float32(0))

    def conv(v: np.ndarray, stride: int = 1, pad: int = 0) -> np.ndarray:
        return conv2d_numpy(v, next(params), stride, pad)

    x = conv(bn(x, scale=False), 2, 3)
    x = max_pool_numpy(relu(bn(x)))
    for stage, count in enumerate(units):
        for i in range(count):
            stride = 2 if stage > 0 and i == 0 else 1
            act1 = relu(bn(x))
            conv1 = conv(act1, stride)
            conv2 = conv(relu(bn(conv1)), pad=1)
            conv3 = conv(relu(bn(conv2)))
            x = conv3 + (conv(act1, stride) if i == 0 else x)
    x = relu(bn(x)).mean(axis=(2, 3))
    x = x @ next(params).T + next(params)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def bench_cnn(batch: int, units: tuple[int, ...], image: int, repeat: int) -> Result:
    name = "ResNet-50" if units == gen_resnet.UNITS else f"ResNet units {units}"
    res = Result(f"{name} {batch}x3x{image}x{image}", 1, "run")
    try:
        text, metadata = gen_resnet.resnet50_module(batch, units, image)
        weights = random_weights(metadata["relay.Constant"])
        main = _program(text, {"relay.Constant": weights}).global_closure("main")
    except Exception as e:  # noqa: BLE001  (as in `measure`)
        res.crash = f"{type(e).__name__}: {e}"
        return res
    x = np.random.default_rng(1).standard_normal((batch, 3, image, image), dtype=np.float32)
    return measure(res, lambda: main(x), lambda: resnet_numpy(x, weights, units), repeat,
                   _close(1e-3, 1e-7))


# --- float16 against float32 ---------------------------------------------------------------------

def _relative_to_largest(tol: float) -> Callable[[Any, Any], str | None]:
    """An fp16 result against the fp32 one: within `tol` of the fp32 result's largest
    magnitude, elementwise (a tuple's first field: the logits)."""
    def check(got: Any, want: Any) -> str | None:
        got, want = (got[0], want[0]) if isinstance(got, tuple) else (got, want)
        if got.dtype != np.float16 or got.shape != want.shape:
            return f"got {got.dtype}{got.shape}, want float16{want.shape}"
        diff = np.max(np.abs(got.astype(np.float32) - want), initial=0.0)
        scale = np.max(np.abs(want), initial=0.0)
        if not np.isfinite(diff) or diff > tol * scale:
            return f"fp16 differs from fp32 by {diff:.3g} (largest |fp32| {scale:.3g})"
        return None
    return check


def _half(values: list[np.ndarray]) -> list[np.ndarray]:
    return [v.astype(np.float16) if v.dtype == np.float32 else v for v in values]


def gpt2_args(mod: Any, seed: int = 0) -> list[np.ndarray]:
    """float32 arguments for gen_models' GPT-2 @main: token ids, positions, a mask of
    ones, the causal lower triangle, layer norms 1 and 0, other weights N(0, 0.02)."""
    rng = np.random.default_rng(seed)
    out = []
    for p in mod["main"].params:
        ty, name = p.type_annotation, p.name_hint
        shape = tuple(int(d) for d in ty.shape)
        if name == "input_ids":
            value = rng.integers(0, gen_models.VOCAB, shape, dtype=np.int64)
        elif name == "position_ids":
            value = np.arange(shape[-1], dtype=np.int64).reshape(shape)
        elif name == "attention_mask":
            value = np.ones(shape, dtype=np.int64)
        elif ty.dtype == "uint8":               # the causal bias
            value = np.tril(np.ones(shape[-2:], dtype=np.uint8)).reshape(shape)
        elif "_ln_" in f"_{name}" and name.endswith("_weight"):
            value = np.ones(shape, dtype=np.float32)
        elif "_ln_" in f"_{name}" and name.endswith("_bias"):
            value = np.zeros(shape, dtype=np.float32)
        else:
            value = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
        out.append(value)
    return out


def bench_gpt2_fp16(layers: int, seq: int, repeat: int) -> Result:
    res = Result(f"GPT-2 {layers}x768 seq {seq} fp16", 1, "run", baseline="fp32 interp")
    try:
        programs = [_program(gen_models.gpt2_module_text(layers=layers, seq=seq, dtype=dtype))
                    for dtype in ("float32", "float16")]
        fp32, fp16 = (p.global_closure("main") for p in programs)
        args32 = gpt2_args(programs[0].mod)
        args16 = _half(args32)
    except Exception as e:  # noqa: BLE001  (as in `measure`)
        res.crash = f"{type(e).__name__}: {e}"
        return res
    return measure(res, lambda: fp16(*args16), lambda: fp32(*args32), repeat,
                   _relative_to_largest(0.05))


def bench_cnn_fp16(batch: int, units: tuple[int, ...], image: int, repeat: int) -> Result:
    name = "ResNet-50" if units == gen_resnet.UNITS else f"ResNet units {units}"
    res = Result(f"{name} {batch}x3x{image}x{image} fp16", 1, "run", baseline="fp32 interp")
    try:
        text, metadata = gen_resnet.resnet50_module(batch, units, image)
        weights = random_weights(metadata["relay.Constant"])
        fp32 = _program(text, {"relay.Constant": weights}).global_closure("main")
        # gen_resnet writes no float literals: the dtype names are all there is to change
        fp16 = _program(text.replace("float32", "float16"),
                        {"relay.Constant": _half(weights)}).global_closure("main")
    except Exception as e:  # noqa: BLE001  (as in `measure`)
        res.crash = f"{type(e).__name__}: {e}"
        return res
    x = np.random.default_rng(1).standard_normal((batch, 3, image, image), dtype=np.float32)
    x16 = x.astype(np.float16)
    return measure(res, lambda: fp16(x16), lambda: fp32(x), repeat, _relative_to_largest(0.05))


# --- verdicts and output -------------------------------------------------------------------------

def check_targets(results: list[Result]) -> list[dict[str, Any]]:
    """PASS/FAIL rows: a target passes when its case ran, its result was right, and the
    figure is within the bound."""
    rows = []
    for r in results:
        if r.case.startswith("chain"):
            target, want, got, bound = (f"overhead us/op, chain {r.size:,}",
                                        f"< {TARGET_OVERHEAD_US:g}", r.overhead_us,
                                        TARGET_OVERHEAD_US)
        elif r.case.startswith("MLP"):
            target, want, got, bound = ("MLP batch 1, interp/numpy",
                                        f"<= {TARGET_MLP_RATIO:g}x", r.ratio, TARGET_MLP_RATIO)
        elif r.case.endswith("fp16"):
            target, want, got, bound = (f"{r.case.removesuffix(' fp16')}, fp16/fp32",
                                        f"<= {TARGET_FP16_RATIO:g}x", r.ratio,
                                        TARGET_FP16_RATIO)
        elif r.case.startswith("ResNet"):
            target, want, got, bound = (f"{r.case}, interp/numpy",
                                        f"<= {TARGET_CNN_RATIO:g}x", r.ratio, TARGET_CNN_RATIO)
        else:
            continue
        ok = r.crash is None and r.error is None and got <= bound
        rows.append({"target": target, "want": want, "got": got, "pass": ok,
                     "note": r.crash or r.error or ""})
    return rows


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:,.{digits}f}"


def format_table(results: list[Result]) -> list[str]:
    head = (f"{'case':<40} {'size':>10} {'runs':>4} {'interp ms':>10} {'base ms':>10} "
            f"{'ratio':>6}  per unit (base: numpy, or the fp32 interpreter for fp16)")
    out = [head, "-" * (len(head) + 26)]
    for r in results:
        per_unit = f"{_fmt(r.us_per_unit)} us/{r.unit}" if r.runs_ms and r.size > 1 else "-"
        if r.case.startswith("chain") and r.numpy_ms:
            per_unit += f" raw, {_fmt(r.overhead_us)} us/op overhead"
        ratio = _fmt(r.ratio) + "x" if r.numpy_ms else "-"
        out.append(f"{r.case:<40} {r.size:>10,} {len(r.runs_ms):>4} {_fmt(r.median_ms):>10} "
                   f"{_fmt(r.numpy_median_ms):>10} {ratio:>6}  {per_unit}")
    for r in results:
        if r.crash or r.error:
            out.append(f"error: {r.case}: {r.crash or r.error}")
    return out


def format_report(report: dict[str, Any], results: list[Result]) -> str:
    out = ["relaylang.backend.interpreter; medians of timed runs after one untimed first run",
           ""] + format_table(results) + [""]
    for row in report["targets"]:
        got = _fmt(row["got"]) + ("x" if row["want"].endswith("x") and row["got"] == row["got"]
                                  else "")
        note = f"  ({row['note']})" if row["note"] else ""
        out.append(f"{row['target']:<48} {row['want']:>8} {got:>8}  "
                   f"{'PASS' if row['pass'] else 'FAIL'}{note}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> tuple[dict[str, Any], list[Result]]:
    results = [bench_chain(args.chain, args.repeat),
               bench_loop(args.loop, args.repeat_large),
               *bench_list(args.list, args.repeat_large),
               bench_mlp(args.mlp_calls, args.repeat),
               bench_cnn(args.batch, args.units, args.image, args.repeat),
               bench_cnn_fp16(args.batch, args.units, args.image, args.repeat),
               bench_gpt2_fp16(args.gpt2_layers, args.gpt2_seq, args.repeat_large)]
    return {"command": args.command, "targets": check_targets(results)}, results


def _units(text: str) -> tuple[int, ...]:
    return tuple(int(u) for u in text.split(",") if u.strip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per case")
    ap.add_argument("--repeat-large", type=int, default=3, help="timed runs of loop and list")
    ap.add_argument("--chain", type=int, default=10_000, help="ops in the chain")
    ap.add_argument("--loop", type=int, default=1_000_000, help="iterations of the loop")
    ap.add_argument("--list", type=int, default=100_000, help="elements of the list")
    ap.add_argument("--mlp-calls", type=int, default=200, help="MLP calls per timed run")
    ap.add_argument("--batch", type=int, default=1, help="ResNet batch size")
    ap.add_argument("--image", type=int, default=224, help="ResNet input height and width")
    ap.add_argument("--units", type=_units, default=gen_resnet.UNITS,
                    help="ResNet bottleneck units per stage, comma-separated")
    ap.add_argument("--gpt2-layers", type=int, default=12, help="GPT-2 blocks (fp16 case)")
    ap.add_argument("--gpt2-seq", type=int, default=1600, help="GPT-2 tokens (fp16 case)")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)
    args.command = " ".join(["python", "benchmarks/interpreter.py",
                             *(sys.argv[1:] if argv is None else argv)])
    report, results = run(args)
    if args.json:
        report["results"] = [dict(asdict(r), median_ms=r.median_ms,
                                  numpy_median_ms=r.numpy_median_ms, us_per_unit=r.us_per_unit,
                                  ratio=r.ratio, overhead_us=r.overhead_us)
                             for r in results]
        print(json.dumps(report, indent=2, default=_json_number))
    else:
        print(format_report(report, results))
    return 1 if any(r.crash for r in results) else 0


def _json_number(value: Any) -> Any:
    return float(value) if isinstance(value, np.floating) else str(value)


if __name__ == "__main__":
    sys.exit(main())
