"""`rl.build`: a module to a native library, and the `target=` of `rl.evaluate` /
`rl.create_executor`.

    lib = rl.build(mod, target="llvm", params={"w": w})     # TVM's relay.build
    out = lib(x)                                           # or lib["main"](x)

The params are bound as constants (BindParams), the module goes through the -O3
pipeline (`rl.transform.optimize`, FuseOps included) with the pass context's
`config["target"]` set to the build's target (so AlterOpLayout computes regions of
convolutions as nn.contrib_conv2d_NCHWc, their weights blocked at build time: see
transform/layout/nchwc.py; a context that names a target keeps it, and
`PassContext(disabled_pass=["AlterOpLayout"])` turns it off), then `@main` becomes one of
(`lib.mode`):

- "graph": an execution plan (a static dataflow graph of primitive functions:
  `native/plan.py`, run by `native/graph_runtime.py`);
- "program": a first-order program over tensors with `if`, `let`, tuples and
  recursion through globals, compiled whole by the core's
  `llvm.control.compile_program` (the globals reachable from the entry become native
  functions; self tail calls are loops), run by `native/library.py`'s
  `ProgramRuntime`;
- "mixed", for what the core does not compile (closures, ADTs, references, function
  values, `?` dimensions, an op without a lowering) or when `max_depth` is given (only
  the interpreter's machine counts pending calls): the interpreter's machine runs the
  control part and calls native kernels for primitive functions (`native/mixed.py`);
  `lib.mixed_reason` says why.

Each primitive function is lowered by the core (`backend/llvm/`); in graph and mixed
mode one without a lowering runs its NumPy kernels, and its ops are listed in
`lib.fallback_ops` (a program is compiled whole or not at all: its list is empty).

External targets (BYOC): `rl.build(mod, byoc=["blas"])` partitions the typed module
before the -O3 pipeline (`byoc/runner.partition`: MergeComposite with each target's
pattern table, AnnotateTarget, MergeCompilerRegions, PartitionGraph; an unknown target,
or one without a codegen, is a ValueError listing those with one; the passes' notes, a
pattern that matched nothing, are `lib.notes`). Each partitioned `Compiler="T"` global
is handed to T's codegen once here (`byoc/registry.py`: `rl.register_codegen`; a codegen
that raises is a DiagnosticError at the function), and a call of it in `@main` becomes a
plan step that runs the returned callable through a ctypes callback of the native step
table (`native/extern.py`: NumPy views of the executor's buffers in, the result copied
into the step's outputs); `lib.external_steps` lists them. A native program calls it
the same way through a module global holding the callback's address; in mixed mode the
interpreter's machine calls the codegen's callable for each call of the global. A partitioned module given to the interpreter
(`rl.evaluate`) runs the same callables; a `Compiler=` function whose target has no
codegen (`example`) has its body interpreted, in both (in `rl.build`: mixed mode).
An external function (`call_dps_packed`, an op of `rl.register_extern_op`) alone in its
primitive function is such a callback step too, writing the step's output buffer in
place (graph mode, mixed mode, and native programs, which call it through a module
global holding the callback's address).

In graph mode the core is told which parameters of each primitive function are
constants of the plan (`lower_primitive(..., constant_params=...)`): what a kernel
computes from them alone (a re-laid convolution or dense weight) is made once here by its
packer kernels (compiled in the same module), bound as a new constant of the plan and
passed to the kernel instead; a constant no step reads any more is dropped. An exported
library holds the packed constants, so loading it runs no packer.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..ir.expr import Call, Function
    from ..ir.module import IRModule
    from .native.library import Library

INTERPRETER_TARGETS = ("interp", "interpreter", "debug")
NATIVE_TARGETS = ("llvm",)


class BuildTimer:
    """Seconds per build phase, in the order first seen (`relay build --time`)."""

    def __init__(self, detailed: bool = False) -> None:
        self.phases: dict[str, float] = {}
        self.detailed = detailed         # time LLVM optimisation and codegen apart

    def add(self, phase: str, seconds: float) -> None:
        self.phases[phase] = self.phases.get(phase, 0.0) + seconds


def _check_target(target: str) -> str:
    name = str(target).split()[0] if str(target).strip() else ""
    if name not in NATIVE_TARGETS:
        raise ValueError(f"unknown target {target!r} (expected 'llvm'; the interpreter is "
                         "rl.evaluate / rl.create_executor with target='interp')")
    return name


def build(mod: Any, target: str = "llvm", params: Mapping[str, Any] | None = None,
          cache: bool = True, entry: str = "main", max_depth: int | None = None,
          timer: BuildTimer | None = None, tuning_db: str | None = None,
          byoc: Any = None) -> Library:
    """Compile `mod` (an IRModule, or a Function made `@main`) for `target`.

    `params` are bound as constants to the entry's parameters of those names (and removed
    from its parameters). `cache=False` bypasses the on-disk kernel cache. `max_depth`
    bounds pending calls as the interpreter does: given, a program with control flow
    runs in mixed mode (natively compiled programs are bounded by their stack instead,
    `RecursionTooDeep` when it runs out). `timer` collects the seconds of each phase.
    `tuning_db`: a database written by `rl.tune` / `relay tune`; its kernels are built
    with the knob values found for them, the others with the defaults (a database that
    cannot be read, or one from another CPU, is a `TuningDatabaseWarning`).
    `byoc`: external targets (`["blas"]`, or "blas,onnxruntime") whose regions are
    partitioned out and run by their codegens (see "External targets" above); the
    partitioning passes' notes are `lib.notes`."""
    timer = timer or BuildTimer()
    notes: list[Any] = []
    db = _load_tuning_db(tuning_db)
    optimised = prepare(mod, target, params, entry, timer, byoc=byoc, notes=notes,
                        config=_graph_config(db, mod, entry))
    with _tuned(db):
        lib = build_optimised(optimised, entry=entry, cache=cache, max_depth=max_depth,
                              timer=timer)
    lib.notes = notes
    return lib


def prepare(mod: Any, target: str = "llvm", params: Mapping[str, Any] | None = None,
            entry: str = "main", timer: BuildTimer | None = None, byoc: Any = None,
            notes: list[Any] | None = None,
            config: Mapping[str, Any] | None = None) -> IRModule:
    """`mod` as `build` compiles it: params bound, typed, partitioned for the `byoc`
    targets (their notes appended to `notes`), through the -O3 pipeline for `target`
    with the pass-context options `config` added (a tuning database's graph knobs)
    (the tuner extracts its kernels from the same module)."""
    from ..ir.expr import Function
    from ..ir.module import IRModule
    from ..transform import BindParams
    from ..transform.tvm_pipeline import optimize
    from ..typing import infer_types
    from .interpreter.executor import fully_typed
    _check_target(target)
    timer = timer or BuildTimer()
    if byoc:
        from .byoc.runner import check_targets
        byoc = check_targets(byoc)      # an unknown name fails before any work
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TypeError(f"rl.build expects an IRModule or a Function, not {type(mod).__name__}")
    if entry not in mod:
        names = ", ".join("@" + gv.name_hint for gv in mod.functions) or "none"
        raise ValueError(f"the module has no function @{entry} (functions: {names})")
    start = time.perf_counter()
    if params:
        mod = BindParams(dict(params), entry=entry)(mod)
    typed = mod if fully_typed(mod) else infer_types(mod)
    timer.add("types", time.perf_counter() - start)
    if byoc:
        from .byoc.runner import partition
        start = time.perf_counter()
        typed, found = partition(typed, byoc)
        if notes is not None:
            notes.extend(found)
        timer.add("partitioning (byoc)", time.perf_counter() - start)
    start = time.perf_counter()
    with _target_context(target, config):
        optimised = optimize(typed, opt_level=3)
    if not fully_typed(optimised):
        optimised = infer_types(optimised)
    timer.add("passes", time.perf_counter() - start)
    return optimised


def _load_tuning_db(tuning_db: str | None) -> Any:
    """The database at `tuning_db` (None without one, or when it was ignored with a
    warning: unreadable, another CPU's)."""
    if tuning_db is None:
        return None
    from .tuning.database import load
    return load(str(tuning_db))


def _graph_config(db: Any, mod: Any, entry: str) -> dict[str, Any]:
    """The pass-context options `db` recorded for this model (its graph knobs)."""
    if db is None or not db.graphs:
        return {}
    from .tuning.database import model_key
    try:
        key = model_key(mod, entry)
    except (KeyError, TypeError):
        return {}                   # no such entry: prepare reports it
    return db.graph_config(key)


def _tuned(db: Any) -> Any:
    """The knob settings of the tuning database `db` on top of those in force (None: a
    no-op)."""
    import contextlib

    from .llvm import knobs
    if db is None:
        return contextlib.nullcontext()
    outer = knobs.current_settings()
    tuned = db.settings()
    return knobs.using(knobs.Settings(every=outer.every,
                                      per_kernel={**outer.per_kernel, **tuned.per_kernel}))


def _target_context(target: str, config: Mapping[str, Any] | None = None) -> Any:
    """The current pass context with `config["target"]` set to the build's target (a
    target the caller's context already names is kept): AlterOpLayout then computes
    convolutions in the layouts the llvm kernels prefer (nn.contrib_conv2d_NCHWc,
    transform/layout/nchwc.py; ResNet-50 b1 one thread 60.9 ms -> 52-56 ms, see its
    docstring). `config` adds options (a tuning database's graph knobs) the caller's
    context does not set itself. The caller's instruments are not entered again
    (`PassContext.derived`)."""
    from ..transform.pass_infra import PassContext
    ctx = PassContext.current()
    merged = {**(config or {}), **ctx.config}
    if not ctx.config.get("target"):
        merged["target"] = str(target)
    if merged == ctx.config:
        import contextlib
        return contextlib.nullcontext()
    return ctx.derived(config=merged)


def build_optimised(optimised: IRModule, entry: str = "main", cache: bool = True,
                    max_depth: int | None = None, timer: BuildTimer | None = None) -> Library:
    """The library of an already optimised, typed module."""
    from .native.plan import NotAGraph, make_plan
    timer = timer or BuildTimer()
    main = optimised[entry]
    externals = external_globals(optimised)
    try:
        plan, functions = make_plan(main, _wrap_op, externals)
    except NotAGraph:
        pass
    else:
        return _build_graph(optimised, entry, plan, functions, cache, timer, externals)
    if max_depth is not None:
        reason = (f"max_depth={max_depth:,} was given: only the interpreter's machine "
                  "counts pending calls (a native program is bounded by its stack)")
        return _build_mixed(optimised, entry, cache, max_depth, timer, reason)
    from .llvm.control import NoLowering
    try:
        return _build_program(optimised, entry, cache, timer)
    except NoLowering as e:
        where = f" (at {e.span})" if e.span is not None else ""
        return _build_mixed(optimised, entry, cache, max_depth, timer, f"{e}{where}")
    except (RuntimeError, ValueError, KeyError, TypeError, AttributeError) as e:
        # a failure of the program compiler itself: the program still runs (mixed mode
        # lowers each primitive function on its own), and the reason says what broke
        reason = f"the native program compiler failed ({type(e).__name__}: {e})"
        return _build_mixed(optimised, entry, cache, max_depth, timer, reason)


def external_globals(mod: IRModule) -> dict[str, Function]:
    """The partitioned `Compiler=` globals of `mod` whose target has a codegen, by name
    (one of a target without a codegen runs in mixed mode, its body interpreted)."""
    from .byoc.registry import get_codegen
    from .byoc.runner import compiler_of
    out: dict[str, Function] = {}
    for gv, fn in mod.functions.items():
        target = compiler_of(fn)
        if target is not None and get_codegen(target) is not None:
            out[gv.name_hint] = fn
    return out


def _wrap_op(call: Call) -> Function:
    """A typed primitive function of one op call found outside any (FuseOps leaves some)."""
    from ..ir.attrs import DictAttrs
    from ..ir.expr import Call, Function, Var
    from ..ir.module import IRModule
    from ..typing import infer_types
    params = tuple(Var(f"p{i}", a.checked_type) for i, a in enumerate(call.args))
    body = Call(call.op, params, call.attrs, call.type_args, span=call.span)
    fn = Function(params, body, None, (), DictAttrs((("Primitive", 1),)), span=call.span)
    typed = infer_types(IRModule.from_expr(fn))["main"]
    assert isinstance(typed, Function)
    return typed


def _build_graph(optimised: IRModule, entry: str, plan: Any, functions: list[Function],
                 cache: bool, timer: BuildTimer,
                 externals: dict[str, Function] | None = None) -> Library:
    from ..ir.equal import structural_equal
    from .native import kernels as native_kernels
    from .native.graph_runtime import GraphRuntime
    from .native.kernels import (
        Fallback,
        NativeCall,
        function_key,
        is_refusal,
        kernel_name,
        op_names,
    )
    from .native.library import Library
    from .native.library_file import export_graph
    from .native.plan import constant_params, plan_slots
    from .profiler import function_flops
    lower = native_kernels.lower         # looked up at each build (tests replace it)
    # One kernel per distinct primitive function (structurally equal ones share it) and
    # set of constant parameters.
    unique: dict[tuple[str, frozenset[int]], list[tuple[Function, str]]] = {}
    name_of: list[str] = []
    lowered: dict[str, Any] = {}
    fallbacks: dict[str, Function] = {}
    refusals: dict[str, Any] = {}
    # steps run by Python code through a callback (native/extern.py): a partitioned
    # function by its codegen, or an external function writing its output in place
    from .byoc.runner import external_function
    from .native.extern import codegen_call, dps_call
    externs: dict[int, Any] = {}
    extern_fns: dict[str, Function] = {}
    names = {id(f): n for n, f in (externals or {}).items()}
    by_codegen: dict[int, Any] = {}            # one codegen run per partitioned function
    for i, fn in enumerate(functions):
        if id(fn) in names:
            if id(fn) not in by_codegen:       # a codegen that raises: a DiagnosticError
                ext = external_function(fn, names[id(fn)])
                assert ext is not None
                by_codegen[id(fn)] = codegen_call(ext)
            call = by_codegen[id(fn)]
        else:
            call = dps_call(fn, f"extern_{len(extern_fns)}")
        if call is not None:
            externs[i] = call
            extern_fns[call.name] = fn
    start = time.perf_counter()
    from ..ir.progress import track
    for i, (fn, step) in enumerate(track(zip(functions, plan.steps), "lowering kernels",
                                         total=len(functions), unit="kernel")):
        if i in externs:
            name_of.append(externs[i].name)
            continue
        consts = constant_params(plan, step)
        key = (function_key(fn), consts)
        name = next((n for f, n in unique.get(key, ()) if f is fn or structural_equal(f, fn)),
                    None)
        if name is None:
            name = kernel_name(fn, sum(len(v) for v in unique.values()))
            unique.setdefault(key, []).append((fn, name))
            prim = lower(fn, name, consts)
            if is_refusal(prim):
                fallbacks[name] = fn
                refusals[name] = prim
            else:
                lowered[name] = prim
        name_of.append(name)
    timer.add("lowering", time.perf_counter() - start)
    packers = [p.packer for prim in lowered.values() for p in getattr(prim, "packed", ())]
    modules = _compile(list(lowered.values()) + packers, cache, timer) if lowered else []
    kernels = {n: k for m in modules for n, k in m.kernels.items()}
    if packers:
        start = time.perf_counter()
        _bind_packed(plan, name_of, lowered, kernels)
        timer.add("packing constants", time.perf_counter() - start)
    runners: list[Any] = []
    inplace: dict[int, set[int]] = {}
    fallback_ops: set[str] = set()
    made: dict[str, Any] = {}
    for i, (step, fn, name) in enumerate(zip(plan.steps, functions, name_of)):
        step.kernel = name
        if i in externs:
            runner = externs[i]
            expected = len(_leaf_ids(step.inputs)) + len(step.outputs)
            if len(runner.params) != expected:       # the callback reads that many
                raise RuntimeError(f"internal error: {name} takes {len(runner.params)} "
                                   f"arguments, the plan passes {expected}")
            step.native = True
            step.extern = runner.target or "dps"
            step.ops = list(runner.ops)
            step.flops = 0 if runner.target else function_flops(fn)
            runners.append(runner)
            continue
        step.native = name in lowered
        step.ops = op_names(fn)
        step.flops = function_flops(fn)          # the profiler's GFLOPS
        if name not in made:
            made[name] = (NativeCall(name, kernels[name], fn.body.checked_type, step.ops,
                                     fn.body.span or fn.span)
                          if step.native else Fallback(fn, refusals[name]))
        runner = made[name]
        if step.native:
            expected = len(_leaf_ids(step.inputs)) + len(step.outputs)
            if len(runner.params) != expected:
                raise RuntimeError(f"internal error: kernel {name} takes {len(runner.params)} "
                                   f"arguments, the plan passes {expected}")
        else:
            fallback_ops.update(runner.ops)
            # The NumPy result is computed whole, then copied into the output's buffer:
            # that buffer may be an input's that dies here. (Native kernels declare their
            # arguments noalias: never in place.)
            if all(isinstance(a, int) for a in step.inputs):
                inplace[i] = set(range(len(step.inputs)))
        runners.append(runner)
    plan_slots(plan, inplace)
    graph = GraphRuntime(plan, runners)
    lib = Library(entry=entry, graph=graph, fallback_ops=fallback_ops, modules=modules,
                  kernel_names=sorted(lowered))
    lib._export = lambda path: export_graph(path, lib, {**fallbacks, **extern_fns})
    return lib


def _bind_packed(plan: Any, name_of: list[str], lowered: dict[str, Any],
                 kernels: dict[str, Any]) -> None:
    """Run the packers of the native steps' kernels on the plan's constants, bind each
    result as a new constant and pass it to the step (the step's inputs become the
    kernel's flat input list), then drop the constants no step reads any more. A packer
    run on the same constants as another one computing the same loop IR is run once (a
    weight shared by two convolutions)."""
    from .llvm.jit import aligned_empty
    from .native.kernels import NativeCall, pointer_array
    from .native.memory import as_aligned
    from .native.plan import CONST, Value, drop_unused_constants, leaves
    done: dict[tuple[str, tuple[int, ...]], int] = {}
    for step, name in zip(plan.steps, name_of):
        prim = lowered.get(name)
        if prim is None or not getattr(prim, "packed", ()):
            continue
        flat = leaves(step.inputs)
        new_inputs = [flat[k] for k in prim.leaf_inputs]
        for packed in prim.packed:
            packer = packed.packer
            sources = tuple(flat[k] for k in packed.sources)
            text = str(packer)
            key = (text[text.index("("):], sources)      # the loop IR without its name
            vid = done.get(key)
            if vid is None:
                (out,) = packer.outputs
                array = aligned_empty(out.shape, out.dtype)
                # through NativeCall: a large re-layout is split over the thread pool
                runner = NativeCall(packer.name, kernels[packer.name])
                args = [as_aligned(plan.constants[plan.values[v].ref]) for v in sources]
                runner.run(pointer_array(args + [array]))
                plan.constants.append(array)
                plan.values.append(Value(tuple(out.shape), out.dtype, CONST,
                                         len(plan.constants) - 1))
                vid = done[key] = len(plan.values) - 1
            new_inputs.append(vid)
        step.inputs = new_inputs
    drop_unused_constants(plan)


def _leaf_ids(structure: Any) -> list[int]:
    from .native.plan import leaves
    return leaves(structure)


def _compile(prims: list[Any], cache: bool, timer: BuildTimer) -> list[Any]:
    """The kernels' compiled modules (a large set in parallel parts)."""
    from .native.kernels import compile_native
    if timer.detailed:
        return compile_native(prims, cache=cache, timer=timer, parts=True)
    start = time.perf_counter()
    modules = compile_native(prims, cache=cache, parts=True)
    timer.add("LLVM optimisation and codegen", time.perf_counter() - start)
    return modules


def _build_program(optimised: IRModule, entry: str, cache: bool,
                   timer: BuildTimer) -> Library:
    """The globals reachable from `@entry` compiled natively (NoLowering when the core
    cannot: the caller falls back to mixed mode)."""
    from .llvm.control import compile_program
    from .native.library import Library, ProgramRuntime
    from .native.library_file import export_program
    start = time.perf_counter()
    from .native.extern import program_extern
    from .native.kernels import prim_worth_splitting
    program = compile_program(optimised, entry=entry, cache=cache,
                              parallel=prim_worth_splitting, externs=program_extern)
    timer.add("lowering and LLVM codegen (program)", time.perf_counter() - start)
    functions = program_functions(optimised, sorted(program.functions))
    runtime = ProgramRuntime(program, functions, module=optimised, cache=cache)
    lib = Library(entry=entry, program=runtime, kernel_names=sorted(program.functions))
    lib._export = lambda path: export_program(path, lib)
    return lib


def program_functions(mod: IRModule, names: list[str]) -> dict[str, Any]:
    """`ProgramFunction`s of the globals `names` of `mod`: parameters, result type, and
    where to blame a native stack overflow when calling each."""
    from ..ir.expr import Function
    from ..ir.types import FuncType
    from .native.library import ProgramFunction
    calls = {name: _global_calls(mod[name]) for name in names}
    reach = {name: _reachable(calls, name) for name in names}
    out: dict[str, Any] = {}
    for name in names:
        fn = mod[name]
        assert isinstance(fn, Function)
        ft = mod.get_global_var(name).checked_type
        types = ft.arg_types if isinstance(ft, FuncType) else [p.checked_type
                                                               for p in fn.params]
        result = ft.ret_type if isinstance(ft, FuncType) else fn.body.checked_type
        overflow = None
        # breadth first from `name`: the first call, in source order, that recurses and
        # is not a self tail call (those are loops) is what runs out of stack
        order = sorted(reach[name], key=lambda f: (f != name, f))
        for f in order:
            for callee, span, tail in calls.get(f, ()):
                if callee in reach and f in reach[callee] and not (callee == f and tail):
                    overflow = (callee, span)
                    break
            if overflow is not None:
                break
        out[name] = ProgramFunction([(p.name_hint, t) for p, t in zip(fn.params, types)],
                                    result, fn.span, overflow)
    return out


def _reachable(calls: dict[str, list[tuple[str, Any, bool]]], name: str) -> set[str]:
    seen, stack = {name}, [name]
    while stack:
        for callee, _, _ in calls.get(stack.pop(), ()):
            if callee not in seen:
                seen.add(callee)
                stack.append(callee)
    return seen


def _global_calls(fn: Any) -> list[tuple[str, Any, bool]]:
    """(callee, span, in tail position) of each call of a global in `fn`'s body (not
    inside nested functions), in source order."""
    from ..ir.expr import Call, Function, GlobalVar, If, Let, Tuple, TupleGetItem
    out: list[tuple[str, Any, bool]] = []
    stack: list[tuple[Any, bool]] = [(fn.body, True)]
    seen: set[tuple[int, bool]] = set()
    while stack:
        e, tail = stack.pop()
        if (id(e), tail) in seen:
            continue
        seen.add((id(e), tail))
        if isinstance(e, Call):
            if isinstance(e.op, GlobalVar):
                out.append((e.op.name_hint, e.span, tail))
            elif not isinstance(e.op, Function):
                stack.append((e.op, False))
            stack.extend((a, False) for a in e.args)
        elif isinstance(e, If):
            stack.extend([(e.cond, False), (e.true_branch, tail), (e.false_branch, tail)])
        elif isinstance(e, Let):
            stack.extend([(e.value, False), (e.body, tail)])
        elif isinstance(e, Tuple):
            stack.extend((f, False) for f in e.fields)
        elif isinstance(e, TupleGetItem):
            stack.append((e.tuple_value, False))
    out.sort(key=lambda c: (c[1] is None, tuple(c[1][1:3]) if c[1] is not None else ()))
    return out


def _build_mixed(optimised: IRModule, entry: str, cache: bool, max_depth: int | None,
                 timer: BuildTimer, reason: str = "") -> Library:
    from .native.library import Library
    from .native.library_file import export_mixed
    from .native.mixed import MixedRuntime, PrimitiveKernels
    kernels = PrimitiveKernels(cache=cache)
    kernels.prebuild(optimised, timer=timer)
    runtime = MixedRuntime(optimised, kernels, max_depth=max_depth)
    lib = Library(entry=entry, mixed=runtime, modules=kernels.modules,
                  kernel_names=kernels.native_names, mixed_reason=reason)
    lib._export = lambda path: export_mixed(path, lib)
    return lib


# ---------------------------------------------------------------- rl.evaluate / create_executor

class NativeExecutor:
    """`rl.create_executor(mod, target="llvm")`: the built library, called like the
    interpreter's executor (`ex(*args)`, `ex(*args, entry="f")`)."""

    def __init__(self, lib: Library):
        self.lib = lib
        self.entry = lib.entry

    def __call__(self, *args: Any, entry: str | None = None) -> Any:
        return self.lib[entry or self.entry](*args)


def create_executor(mod: IRModule, entry: str = "main", max_depth: int | None = None,
                    target: str = "interp", params: Mapping[str, Any] | None = None,
                    byoc: Any = None) -> Any:
    """An executor for `mod`: the reference interpreter (`target="interp"`) or the
    native library (`target="llvm"`, built once here). `byoc`: external targets whose
    regions are partitioned out first and run by their codegens (with the interpreter
    too: it calls a partitioned function's codegen, see the module docstring)."""
    if target in INTERPRETER_TARGETS:
        from .interpreter.executor import create_executor as interpreter_executor
        if params:
            from ..transform import BindParams
            mod = BindParams(dict(params), entry=entry)(mod)
        if byoc:
            from ..ir.expr import Function as Fn
            from ..ir.module import IRModule as Module
            from ..typing import infer_types
            from .byoc.runner import partition
            from .interpreter.executor import fully_typed
            if isinstance(mod, Fn):
                mod = Module.from_expr(mod)
            mod, _ = partition(mod if fully_typed(mod) else infer_types(mod), byoc)
        return interpreter_executor(mod, entry, max_depth=max_depth)
    _check_target(target)
    return NativeExecutor(build(mod, target=target, params=params, entry=entry,
                                max_depth=max_depth, byoc=byoc))


def evaluate(mod: IRModule, *args: Any, entry: str = "main", max_depth: int | None = None,
             target: str = "interp", byoc: Any = None) -> Any:
    """Run `@entry` of `mod` on `args` with the interpreter or natively (`target`),
    partitioned for the `byoc` targets when given."""
    return create_executor(mod, entry, max_depth=max_depth, target=target, byoc=byoc)(*args)
