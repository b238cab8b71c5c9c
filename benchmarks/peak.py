"""The host's fp32 FMA peak, measured: the denominator of `benchmarks/llvm.py`'s
"%peak" column.

    python benchmarks/peak.py [--threads 1,2]

A loop of independent fused multiply-adds on the widest vectors the host has (24
accumulators, so that the FMA latency is hidden as in a GEMM micro-kernel), compiled
with llvmlite for the host CPU and called through ctypes (which releases the GIL) from
`threads` Python threads at once; GFLOPS = threads x iterations x 24 x lanes x 2 / the
slowest thread's seconds, the best of a few runs. The issue assumed 117 GFLOPS per core
(one 512-bit FMA per cycle at 3.6 GHz); a core with two FMA units at its turbo clock
gives more, and this measures what the code can reach.
"""
from __future__ import annotations

import argparse
import ctypes
import threading
import time
from functools import lru_cache

ACCUMULATORS = 24
ITERATIONS = 2_000_000


def _ir(lanes: int) -> str:
    vec = f"<{lanes} x float>"
    lines = [
        f"declare {vec} @llvm.fma.v{lanes}f32({vec}, {vec}, {vec})",
        "define i32 @fma_loop(i64 %n, float %seed) {",
        "entry:",
        f"  %s0 = insertelement {vec} poison, float %seed, i32 0",
        f"  %s = shufflevector {vec} %s0, {vec} poison, <{lanes} x i32> zeroinitializer",
        "  br label %loop",
        "loop:",
        "  %i = phi i64 [0, %entry], [%i1, %loop]",
    ]
    for k in range(ACCUMULATORS):
        lines.append(f"  %a{k} = phi {vec} [%s, %entry], [%b{k}, %loop]")
    for k in range(ACCUMULATORS):
        lines.append(f"  %b{k} = call {vec} @llvm.fma.v{lanes}f32({vec} %a{k}, {vec} %s, "
                     f"{vec} %s)")
    lines += ["  %i1 = add i64 %i, 1", "  %done = icmp eq i64 %i1, %n",
              "  br i1 %done, label %exit, label %loop", "exit:"]
    total = "%b0"
    for k in range(1, ACCUMULATORS):
        lines.append(f"  %t{k} = fadd {vec} {total}, %b{k}")
        total = f"%t{k}"
    lines += [f"  %x = extractelement {vec} {total}, i32 0",
              "  %r = fptosi float %x to i32", "  ret i32 %r", "}"]
    return "\n".join(lines)


@lru_cache(maxsize=1)
def _kernel() -> tuple[object, int]:
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    features = llvm.get_host_cpu_features().flatten()
    lanes = 16 if "+avx512f" in features else 8 if "+avx2" in features else 4
    target = llvm.Target.from_default_triple()
    machine = target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=features,
                                           opt=2)
    mod = llvm.parse_assembly(_ir(lanes))
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, machine)
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_float)(
        engine.get_function_address("fma_loop"))
    return (engine, fn), lanes


def peak_gflops(threads: int = 1, repeat: int = 3) -> float:
    """The fp32 FMA rate `threads` cores reach together (GFLOPS), best of `repeat`."""
    (_, fn), lanes = _kernel()
    fn(1000, 1.0)                           # compiled and warm
    best = 0.0
    for _ in range(repeat):
        seconds = [0.0] * threads

        def run(k: int) -> None:
            start = time.perf_counter()
            fn(ITERATIONS, 1e-7)
            seconds[k] = time.perf_counter() - start
        workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        flops = threads * ITERATIONS * ACCUMULATORS * lanes * 2
        best = max(best, flops / max(seconds) / 1e9)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    for n in (int(t) for t in args.threads.split(",")):
        print(f"{n} thread(s): {peak_gflops(n):.1f} GFLOPS fp32 FMA peak")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
