"""Native control flow (relaylang/backend/llvm/control.py) against the interpreter.

    python benchmarks/llvm_control.py [--n 1000000] [--interp-n 20000] [--repeat 5] [--json]

Each program is parsed, typed, fused (FuseOps) and compiled once (not timed); then
`--repeat` timed runs each, medians reported. The interpreter runs the same program
on `--interp-n` iterations and its time is scaled linearly to `--n` (it is linear:
about 20 µs per iteration); the native result on `--interp-n` is checked against the
interpreter's.

* loop: issue 15's `@loop(%i - 1i64, %acc + %i)` (int64 sum): a self tail call becomes a
  loop; LLVM then replaces that loop by its closed form, so the native time is the
  call overhead. Target: >= 1000x the interpreter.
* lcg: `%x * 6364136223846793005i64 + 1442695040888963407i64` in the same loop shape
  (no closed form: every iteration runs).
* harmonic: `%acc + 1f64 / cast(%i, float64)` (float64; no reassociation allowed).
* tensor: `multiply(add(%x, 1f), 0.5f)` on a 1x16 float32 tensor per iteration.
* fib: non-tail recursion `@fib(%n - 1) + @fib(%n - 2)` over int64 (`--fib`, the
  interpreter on `--fib-interp` scaled by the call counts).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import numpy as np

import relaylang as rl
from relaylang.backend.llvm.control import compile_program

HEAD = '#[version = "0.0.5"]\n'
PROGRAM = HEAD + """
def @loop(%i: int64, %acc: int64) -> int64 {
  if (%i == 0i64) { %acc } else { @loop(%i - 1i64, %acc + %i) }
}
def @lcg(%i: int64, %x: int64) -> int64 {
  if (%i == 0i64) { %x } else {
    @lcg(%i - 1i64, %x * 6364136223846793005i64 + 1442695040888963407i64) }
}
def @harmonic(%i: int64, %acc: float64) -> float64 {
  if (%i == 0i64) { %acc } else { @harmonic(%i - 1i64, %acc + 1f64 / cast(%i, dtype="float64")) }
}
def @tensor(%i: int64, %x: Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32] {
  if (%i == 0i64) { %x } else { @tensor(%i - 1i64, multiply(add(%x, 1f), 0.5f)) }
}
def @fib(%n: int64) -> int64 {
  if (%n < 2i64) { %n } else { @fib(%n - 1i64) + @fib(%n - 2i64) }
}
"""


def fib_calls(n: int) -> int:
    a, b = 1, 1          # calls(0) = calls(1) = 1; calls(n) = 1 + calls(n-1) + calls(n-2)
    for _ in range(n - 1):
        a, b = b, 1 + a + b
    return b if n >= 1 else 1


def median_time(fn: Any, repeat: int) -> tuple[float, Any]:
    out = fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="native iterations")
    ap.add_argument("--interp-n", type=int, default=20_000, help="interpreter iterations")
    ap.add_argument("--fib", type=int, default=27, help="native fib argument")
    ap.add_argument("--fib-interp", type=int, default=15, help="interpreter fib argument")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    mod = rl.transform.FuseOps(fuse_opt_level=2)(rl.transform.InferType()(rl.parse(PROGRAM)))
    t = time.perf_counter()
    prog = compile_program(mod, cache=False)
    compile_s = time.perf_counter() - t
    x = np.linspace(-1, 1, 16, dtype="float32").reshape(1, 16)
    cases = {
        "loop": lambda n: (n, 0),
        "lcg": lambda n: (n, 1),
        "harmonic": lambda n: (n, 0.0),
        "tensor": lambda n: (n, x),
    }
    rows = []
    ok = True
    for name, make in cases.items():
        big, few = make(args.n), make(args.interp_n)
        nat_s, _ = median_time(lambda name=name, big=big: prog.call(name, *big), args.repeat)
        small_native = prog.call(name, *few)
        int_s, small = median_time(lambda name=name, few=few: rl.evaluate(mod, *few, entry=name),
                                   max(1, args.repeat // 2))
        agree = bool(np.allclose(np.asarray(small_native), np.asarray(small), rtol=1e-6))
        ok &= agree
        scaled = int_s * args.n / args.interp_n
        rows.append({"case": name, "n": args.n, "native_s": nat_s,
                     "interpreter_s_scaled": scaled, "interpreter_n": args.interp_n,
                     "ratio": scaled / nat_s, "agree": agree})
    nat_s, _ = median_time(lambda: prog.call("fib", args.fib), args.repeat)
    int_s, small = median_time(lambda: rl.evaluate(mod, args.fib_interp, entry="fib"), 1)
    agree = int(prog.call("fib", args.fib_interp)) == int(small)
    ok &= agree
    scaled = int_s * fib_calls(args.fib) / fib_calls(args.fib_interp)
    rows.append({"case": "fib", "n": args.fib, "native_s": nat_s, "interpreter_s_scaled": scaled,
                 "interpreter_n": args.fib_interp, "ratio": scaled / nat_s, "agree": agree})
    if args.json:
        print(json.dumps({"compile_s": compile_s, "rows": rows}, indent=1))
    else:
        print(f"compile (parse excluded, no cache): {compile_s * 1e3:.0f} ms")
        print(f"{'case':10} {'n':>9} {'native median':>14} {'interp (scaled)':>16} {'ratio':>10}"
              "  agree")
        for r in rows:
            print(f"{r['case']:10} {r['n']:>9} {r['native_s'] * 1e3:>11.3f} ms "
                  f"{r['interpreter_s_scaled']:>14.2f} s {r['ratio']:>9.0f}x  {r['agree']}")
        loop = rows[0]
        print(f"tail-recursive loop, {args.n:,} iterations: {loop['ratio']:.0f}x the interpreter "
              f"(target >= 1000x: {'met' if loop['ratio'] >= 1000 else 'NOT met'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
