"""Partitioning for external targets and running their functions (the backend's side).

`partition(mod, ["blas"])` is the flow `rl.build(mod, byoc=[...])` and `relay build
--byoc` run before the -O3 pipeline, as TVM's `partition_for_<target>` does:

    SimplifyInference, FoldConstant, FoldScaleAxis, FoldConstant     (batch norms folded
        into the weights, so that a target's patterns see conv/dense + bias + activation)
    MergeComposite(pattern_table=T) for each target T that has a table
    AnnotateTarget(targets), MergeCompilerRegions, PartitionGraph

Each region becomes a global `Compiler="T"` function; the -O3 pipeline leaves those alone
(they are `Primitive=1`, opened by no pass). The passes' notes (a pattern that matched
nothing) come back as `Diagnostic`s; `rl.build` keeps them as `lib.notes`.

`external_function(fn, symbol)` runs the target's codegen on one partitioned function
(`registry.py` states the contract) and returns an `ExternalFunction`, a callable over
argument values that checks and converts what the codegen's callable returns. A target
without a codegen gives None: the caller then runs the function's body as an ordinary
function (the interpreter interprets it; `rl.build` runs it in mixed mode). A codegen
that raises is a `DiagnosticError` naming the function and its span; a callable that
raises or returns the wrong shape is an `ExternalFunctionError`, which the interpreter
and the executors raise as an `InterpreterError` at the function's span.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ...ir.types import from_tuple_leaves, tuple_leaves
from .registry import get_codegen, registered_codegens

if TYPE_CHECKING:
    from ...ir.diagnostics import Diagnostic
    from ...ir.expr import Function
    from ...ir.module import IRModule

# What runs before MergeComposite (TVM's partition_for_dnnl runs the same).
PRE_PASSES = ("SimplifyInference", "FoldConstant", "FoldScaleAxis", "FoldConstant")


def compiler_of(fn: Any) -> str | None:
    """The `Compiler` attribute of a function (a partitioned function's target), or None."""
    attrs = getattr(fn, "attrs", None)
    if attrs is None:
        return None
    name = attrs.get("Compiler")
    return str(name) if name is not None else None


def check_targets(targets: Any) -> list[str]:
    """`targets` (a name, "a,b" or a list of names) as a list, each a target with a
    codegen; a ValueError listing the registered ones otherwise."""
    if isinstance(targets, str):
        names = [t.strip() for t in targets.split(",") if t.strip()]
    else:
        names = [str(t).strip() for t in targets or () if str(t).strip()]
    if not names:
        raise ValueError("byoc: no target named (e.g. byoc=['blas'])")
    for name in names:
        if get_codegen(name) is None:
            known = ", ".join(registered_codegens()) or "none"
            raise ValueError(f"unknown BYOC target `{name}`: no codegen is registered for it "
                             f"(targets with a codegen: {known}; a new one is registered "
                             f"with rl.register_codegen)")
    seen: list[str] = []
    for name in names:
        if name not in seen:
            seen.append(name)
    return seen


def partition(mod: IRModule, targets: Sequence[str]) -> tuple[IRModule, list[Diagnostic]]:
    """`mod` (typed) with the regions `targets` take lifted into `Compiler=` globals, and
    the passes' notes and warnings (see the module docstring)."""
    from ...transform.byoc import (
        AnnotateTarget,
        MergeCompilerRegions,
        MergeComposite,
        PartitionGraph,
    )
    from ...transform.byoc.registry import get_pattern_table
    from ...transform.pass_infra import PassContext, Sequential, get_pass
    names = check_targets(targets)
    outer = PassContext.current()
    notes: list[Diagnostic] = []
    ctx = dataclasses.replace(outer, opt_level=max(outer.opt_level, 3),
                              config={**outer.config, "diagnostics": notes})
    passes: list[Any] = [get_pass(name) for name in PRE_PASSES]
    passes += [MergeComposite(pattern_table=t) for t in names
               if get_pattern_table(t) is not None]
    passes += [AnnotateTarget(targets=tuple(names)), MergeCompilerRegions(), PartitionGraph()]
    with ctx:
        out = Sequential(passes)(mod)
    return out, notes


class ExternalFunctionError(RuntimeError):
    """A partitioned function's callable failed or returned the wrong thing; its callers
    (the interpreter's machine, `native/extern.py`) raise it as the run-time error of the
    program: `InterpreterError(message, span)`."""

    def __init__(self, message: str, span: Any):
        super().__init__(f"{span}: {message}" if span else message)
        self.message = message
        self.span = span


class ExternalFunction:
    """A partitioned function run by its target's codegen: `ext(args)` (a list of argument
    values, one per parameter) returns the result value (a tensor or tuple of tensors)."""

    def __init__(self, fn: Function, symbol: str, target: str, run: Callable[..., Any]):
        self.function = fn
        self.symbol = symbol
        self.target = target
        self.run = run
        self.span = region_span(fn)
        self.param_types = [tuple_leaves(p.checked_type) for p in fn.params]
        self.result_type = fn.body.checked_type if fn.body.checked_type is not None \
            else fn.ret_type
        self.result_leaves = tuple_leaves(self.result_type)

    def __repr__(self) -> str:
        return f"<{self.target} function @{self.symbol}>"

    def fail(self, message: str, cause: BaseException | None = None) -> Exception:
        error = ExternalFunctionError(f"@{self.symbol} ({self.target}) failed: {message}",
                                      self.span)
        error.__cause__ = cause
        return error

    def call_arrays(self, arrays: Sequence[Any]) -> list[Any]:
        """The callable on the arguments' tensors (flattened), its result's tensors
        checked against the result type (shape) and converted (dtype, C order)."""
        import numpy as np
        try:
            result = self.run(*arrays)
        except Exception as e:
            raise self.fail(f"{type(e).__name__}: {e}", e) from e
        leaves = value_leaves(result)
        if len(leaves) != len(self.result_leaves):
            raise self.fail(f"returned {len(leaves)} tensor(s), the function's type has "
                            f"{len(self.result_leaves)}")
        out = []
        for i, (leaf, ty) in enumerate(zip(leaves, self.result_leaves)):
            a = np.asarray(leaf)
            shape = tuple(int(d) for d in ty.shape)
            if a.shape != shape:
                raise self.fail(f"result {i} has shape {list(a.shape)}, the function's type "
                                f"says {list(shape)}")
            out.append(a)
        return out

    def __call__(self, args: Sequence[Any]) -> Any:
        """Run on argument values (the interpreter's): C-contiguous arrays of the
        parameters' dtypes in, the result value out."""
        import numpy as np

        from ...op.numpy_support import carrier_dtype
        arrays = []
        for arg, types in zip(args, self.param_types):
            for leaf, ty in zip(value_leaves(arg), types):
                # np.asarray, not np.ascontiguousarray: the latter makes a 0-d array 1-d
                arrays.append(np.asarray(leaf, dtype=carrier_dtype(ty.dtype), order="C"))
        leaves = self.call_arrays(arrays)
        converted = [np.asarray(a, dtype=carrier_dtype(ty.dtype), order="C")
                     for a, ty in zip(leaves, self.result_leaves)]
        return from_tuple_leaves(self.result_type, converted)


def value_leaves(value: Any) -> list[Any]:
    """The tensors of a value in order: an array, or (nested) tuples/lists of them (a
    codegen's result; arguments, where a tuple parameter may come as a tuple or, as the
    executors pass it, as its tensors one by one)."""
    out: list[Any] = []
    stack = [value]
    while stack:
        r = stack.pop()
        if isinstance(r, (tuple, list)):
            stack.extend(reversed(r))
        else:
            out.append(r)
    return out


def region_span(fn: Function) -> Any:
    """Where to blame a partitioned function: its own span, else the first (in source
    order) of the spans in its body (PartitionGraph makes the function; the operators it
    holds keep theirs)."""
    if fn.span is not None:
        return fn.span
    from ...ir.traverse import post_order
    spans = [n.span for n in post_order(fn.body) if getattr(n, "span", None) is not None]
    if not spans:
        return None
    return min(spans, key=lambda s: (s.line, s.column))


def external_function(fn: Function, symbol: str) -> ExternalFunction | None:
    """The codegen of `fn`'s target run on `fn` (None: `fn` is not partitioned, or its
    target has no codegen). A codegen that raises, or returns something that is not
    callable, is a `DiagnosticError` at the function's span."""
    from ...ir.diagnostics import Diagnostic, DiagnosticError
    target = compiler_of(fn)
    if target is None:
        return None
    codegen = get_codegen(target)
    if codegen is None:
        return None
    attrs = fn.attrs
    symbol = str(attrs.get("global_symbol") or symbol) if attrs is not None else symbol
    try:
        run = codegen(fn, symbol)
    except Exception as e:
        raise DiagnosticError([Diagnostic.error(
            f"the `{target}` codegen failed on @{symbol}: {type(e).__name__}: {e}",
            region_span(fn), code="codegen")]) from e
    if not callable(run):
        raise DiagnosticError([Diagnostic.error(
            f"the `{target}` codegen returned {type(run).__name__} for @{symbol}, not a "
            "callable", region_span(fn), code="codegen")])
    return ExternalFunction(fn, symbol, target, run)
