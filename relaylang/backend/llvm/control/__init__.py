"""First-order Relay programs with `if` and recursion through globals -> native code.

    prog = compile_program(mod)              # mod: typed, through FuseOps
    prog(*args)                              # @main natively -> numpy array(s)
    prog.call("loop", np.int64(10), ...)     # any compiled global

Raises `NoLowering` (reason and span) for what is not first-order over tensors:
closures, ADTs / `match`, references, function values, `?` dimensions, polymorphism.

Design (one LLVM module per program, through the kernel cache):
- Kernels: every primitive function (and a bare op call, wrapped in one) is lowered
  with `lower_primitive` and generated into the same llvmlite module by the core's
  `codegen.build_module`; a call site calls the kernel's public entry
  `i32 k(i8** args, i64 0, i64 parallel_extent)`, so O3 inlines small kernels (scalar
  arithmetic becomes registers) and a kernel's non-zero status propagates.
- ABI, destination-passing: a global `@f` becomes `i32 rl_f<k>(i64 stack_limit,
  out pointers..., in pointers...)` (tuples flattened to their tensor leaves; pointers
  to the leaves' data, 64-byte aligned). Every intermediate has one slot per
  activation: an `alloca` in the entry block up to `STACK_SLOT_LIMIT` bytes (scalars:
  promoted to registers by LLVM), else `aligned_alloc`'d in the second block and freed
  at the single exit. A call in tail position writes straight into the caller's
  destination; `let` is SSA (a name for a value); `if` on a 0-d bool is a branch (a
  phi of pointers when not in tail position).
- Self tail calls become loops: the body starts at a `header` block; a tail call
  evaluates the new arguments, copies those that may alias a parameter through
  temporaries, copies them into per-parameter buffers and jumps to `header`. Small
  parameters are copied into their buffers once at entry (so they live in registers);
  large ones are a phi of the caller's pointer and the buffer.
- Depth bound: each function compares the address of a stack probe with
  `stack_limit` at entry and returns `STATUS_STACK` when the stack is used up. A call
  runs first in the calling thread with a budget of `CALLER_STACK_BUDGET` bytes; on
  `STATUS_STACK` (programs are pure, so re-running is safe) it runs again on a fresh
  thread with a `BIG_STACK` byte stack, and if that is not enough the call raises the
  interpreter's `RecursionTooDeep` ("recursion too deep"), never a segfault.
- Other non-zero statuses (a kernel's, or `STATUS_OOM`) become `NativeProgramError`.
- Threads: a kernel that `compile_program(parallel=...)` marks (the executor's
  `prim_worth_splitting`) is called through the module globals `relay_parallel_pool` /
  `relay_parallel_run`: the worker pool the caller lends with
  `NativeProgram.set_parallel` before each call (the native pool's `pool_run_ranges`,
  given the kernel's ranges per thread: one for a kernel that repeats a prologue in
  every range, `schedule.PROLOGUE_RANGES_KNOB`), or inline when none is lent.
Arguments are validated (count, tuple structure, shape, dtype) in Python first.

Modules: `analysis` (first-order check, primitive functions, type helpers), `emit` (LLVM IR
of the control part, `compile_program`), `runtime` (calling, the stack retry: its
`CALLER_STACK_BUDGET` / `BIG_STACK` are read at call time; export and `load_program`).
"""
from __future__ import annotations

from ..lower import NoLowering
from .emit import INLINE_KERNEL_BYTES, SMALL_PARAM, STACK_SLOT_LIMIT, compile_program
from .runtime import (
    STATUS_OOM,
    STATUS_STACK,
    NativeFunction,
    NativeProgram,
    NativeProgramError,
    ProgramCallError,
    Signature,
    load_program,
)

__all__ = [
    "INLINE_KERNEL_BYTES",
    "SMALL_PARAM",
    "STACK_SLOT_LIMIT",
    "STATUS_OOM",
    "STATUS_STACK",
    "NativeFunction",
    "NativeProgram",
    "NativeProgramError",
    "NoLowering",
    "ProgramCallError",
    "Signature",
    "compile_program",
    "load_program",
]
