"""Passes, pipelines and the context that governs them (TVM's include/tvm/ir/transform.h).

A pass is an object called on a module that returns a new module. A concrete
pass derives from `ModulePass` (one method over the whole module) or
`FunctionPass` (one method per function) and registers itself by name with
`@register_pass`; its options are dataclass fields, so `get_pass("FoldConstant
{max_elements=1024}")` builds it from text. `PassContext` decides which passes
of a `Sequential` run (opt level, required and disabled passes) and calls the
instruments before and after each pass: that is how `--print-after-all`,
`--time-passes` and `--verify-each` work, without prints inside passes.

What a pass needs is declared, once, on its class (`required`, TVM's name), and
the context honours it for every pass it runs, inside a `Sequential` or alone:
the required passes run first. A required pass that can tell whether its effect
holds (`already_holds`: InferType on a module whose functions all carry types)
is skipped when it does, and re-established on the result when the pass broke
it: a pass that requires types returns a typed module, as TVM's passes do.
"""
from __future__ import annotations

import dataclasses
import difflib
import gc
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator, Sequence

from ..ir.expr import Function
from ..ir.module import IRModule


@dataclass(frozen=True)
class PassInfo:
    name: str
    opt_level: int
    required: tuple[str, ...] = ()


class Pass:
    """The base of every pass: `pass_(mod)` runs it under the current `PassContext`."""

    name: ClassVar[str] = "Pass"
    opt_level: ClassVar[int] = 0
    # Passes the context runs before this one (TVM's `required`), by name.
    required: ClassVar[tuple[str, ...]] = ()

    @property
    def info(self) -> PassInfo:
        return PassInfo(self.name, self.opt_level, tuple(self.required))

    def already_holds(self, mod: IRModule) -> bool | None:
        """Whether running this pass would change nothing (InferType: every function of
        `mod` is typed), or None when the pass cannot tell, and so always runs."""
        return None

    def __call__(self, mod: IRModule) -> IRModule:
        return PassContext.current().run(self, mod)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise TypeError(f"{type(self).__name__} must define transform_module")

    def __repr__(self) -> str:
        return pass_text(self)


class ModulePass(Pass):
    """A pass over the whole module (`transform_module`)."""


class FunctionPass(Pass):
    """A pass applied to each global function in turn (`transform_function`), except
    those an external codegen compiles (`Compiler="T"`, PartitionGraph's output) or
    marked `SkipOptimization=1`: their bodies are the target's to take as written
    (TVM's `SkipFunction`; SimplifyInference would otherwise rewrite a batch_norm the
    target claimed into ops it never claimed)."""

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        raise TypeError(f"{type(self).__name__} must define transform_function")

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        out = mod.copy()
        for gv, fn in mod.functions.items():
            if not skip_function(fn):
                out.functions[gv] = self.transform_function(fn, mod, ctx)
        return out


def skip_function(fn: Any) -> bool:
    """Whether function passes leave `fn` alone (see FunctionPass)."""
    attrs = getattr(fn, "attrs", None)
    if not attrs:
        return False
    return attrs.get("Compiler") is not None or bool(attrs.get("SkipOptimization", 0))


class Sequential(ModulePass):
    """Passes run in order; the context skips those above its opt level or disabled."""

    name: ClassVar[str] = "Sequential"

    def __init__(self, passes: Sequence[Pass], name: str = "Sequential", opt_level: int = 0):
        self.passes = list(passes)
        self.seq_name = name
        self.seq_opt_level = opt_level

    @property
    def info(self) -> PassInfo:
        return PassInfo(self.seq_name, self.seq_opt_level)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        for p in self.passes:
            if ctx.should_run(p.info):
                mod = ctx.run(p, mod)
        return mod

    def __repr__(self) -> str:
        return ",".join(pass_text(p) for p in self.passes)


# ---------------------------------------------------------------- instruments


class PassInstrument:
    """Hooks around every pass a context runs; override what you need.

    TVM's rules (src/ir/transform.cc), which `PassContext` follows: `enter_pass_ctx` of
    each instrument when a context holding it is entered (or `override_instruments` puts
    it in), `exit_pass_ctx` when it is left; before a pass, `should_run` of every
    instrument (all of them are asked; a pass the context requires is not asked about),
    then, if all said yes, `run_before_pass` of each; `run_after_pass` of each once the
    pass returned (not when it raised). When an instrument raises in `enter_pass_ctx`, the
    instruments entered before it are exited (last first), the context drops its
    instruments and is not entered; when one raises in `exit_pass_ctx`, the rest are not
    exited and the context drops its instruments."""

    def enter_pass_ctx(self) -> None: ...
    def exit_pass_ctx(self) -> None: ...

    def should_run(self, mod: IRModule, info: PassInfo) -> bool:
        return True

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None: ...
    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None: ...


def pass_instrument(cls: type | None = None) -> Any:
    """TVM's `@tvm.instrument.pass_instrument`: a class defining any of the hooks
    (`enter_pass_ctx`, `should_run`, ...) becomes a `PassInstrument` subclass, the hooks
    it leaves out doing nothing. Used as `@pass_instrument` or `@pass_instrument()`."""
    def wrap(c: type) -> type:
        if issubclass(c, PassInstrument):
            return c
        return type(c.__name__, (c, PassInstrument),
                    {"__module__": c.__module__, "__qualname__": c.__qualname__,
                     "__doc__": c.__doc__})
    return wrap(cls) if cls is not None else wrap


_local = threading.local()


@dataclass
class PassContext:
    """What passes may run and what watches them; `with PassContext(...):` makes it current."""

    opt_level: int = 2
    required_pass: Sequence[str] = ()
    disabled_pass: Sequence[str] = ()
    instruments: Sequence[PassInstrument] = ()
    config: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def current() -> PassContext:
        """The innermost context entered in this thread, else the thread's default one."""
        stack = getattr(_local, "stack", None)
        if stack:
            return stack[-1]
        default = getattr(_local, "default", None)
        if default is None:
            default = _local.default = PassContext()
        return default

    def __enter__(self) -> PassContext:
        self._enter_instruments()          # raises before the context is entered (TVM's)
        _local.__dict__.setdefault("stack", []).append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _local.stack.pop()
        self._exit_instruments()

    @contextmanager
    def derived(self, **changes: Any) -> Iterator[PassContext]:
        """A copy of this context with `changes` (`opt_level=3`, `config=...`), current
        for the `with` block. Its instruments are this context's, already entered: their
        enter/exit hooks are not run again (TVM's relay.build runs the caller's
        instruments in the caller's context; `optimize` and `build` need their own opt
        level and target, not a new context to watch)."""
        ctx = dataclasses.replace(self, **changes)
        _local.__dict__.setdefault("stack", []).append(ctx)
        try:
            yield ctx
        finally:
            _local.stack.pop()

    def override_instruments(self, instruments: Sequence[PassInstrument] | None) -> None:
        """TVM's `PassContext.override_instruments`: the current instruments are exited,
        `instruments` (None: none) put in their place and entered."""
        self._exit_instruments()
        self.instruments = list(instruments or ())
        self._enter_instruments()

    def _enter_instruments(self) -> None:
        entered: list[PassInstrument] = []
        try:
            for inst in self.instruments:
                inst.enter_pass_ctx()
                entered.append(inst)
        except BaseException:
            self.instruments = []
            for inst in reversed(entered):
                inst.exit_pass_ctx()
            raise

    def _exit_instruments(self) -> None:
        try:
            for inst in self.instruments:
                inst.exit_pass_ctx()
        except BaseException:
            self.instruments = []
            raise

    def _names(self, names: Sequence[str]) -> set[str]:
        return {canonical_name(n) for n in names}

    def should_run(self, info: PassInfo) -> bool:
        name = canonical_name(info.name)
        if name in self._names(self.required_pass):
            return True
        return info.opt_level <= self.opt_level and name not in self._names(self.disabled_pass)

    def _establish(self, names: Sequence[str], mod: IRModule, after: bool = False) -> IRModule:
        """`mod` with the required passes `names` run, except those whose effect already
        holds; `after` a pass, only those that can tell and no longer hold. They are
        conditions the context sets up, not steps of the pipeline: the instruments
        (print-after-all, timing) see only the passes that were asked for."""
        for name in names:
            required = get_pass(name)
            holds = required.already_holds(mod)
            if holds is False or (holds is None and not after):
                mod = self._apply(required, mod)
        return mod

    def _apply(self, p: Pass, mod: IRModule) -> IRModule:
        """`p` on `mod` with its requirements true before and (where checkable) after."""
        out = p.transform_module(self._establish(p.required, mod), self)
        return self._establish(p.required, out, after=True)

    def run(self, p: Pass, mod: IRModule) -> IRModule:
        """Run `p` on `mod`: its requirements first, then the pass between the
        instruments' hooks (which see its result with the requirements re-established).
        The heap as it was when the outermost pass started is left out of garbage
        collection until it ends (`_heap_frozen`)."""
        with _heap_frozen():
            return self._run(p, mod)

    def _run(self, p: Pass, mod: IRModule) -> IRModule:
        if isinstance(p, Sequential):      # a container: instruments see the passes inside
            return p.transform_module(mod, self)
        info = p.info
        if not self._instruments_allow(mod, info):
            return mod
        mod = self._establish(p.required, mod)
        for inst in self.instruments:
            inst.run_before_pass(mod, info)
        out = p.transform_module(mod, self)
        out = self._establish(p.required, out, after=True)
        for inst in self.instruments:
            inst.run_after_pass(out, info)
        return out

    def _instruments_allow(self, mod: IRModule, info: PassInfo) -> bool:
        """Every instrument's `should_run` (all are asked, as TVM's `&=`), unless the
        context requires the pass."""
        if canonical_name(info.name) in self._names(self.required_pass):
            return True
        allow = True
        for inst in self.instruments:
            allow = bool(inst.should_run(mod, info)) and allow
        return allow


# ---------------------------------------------------------------- garbage collection

_gc_lock = threading.Lock()
_gc_depth = 0            # passes running (any thread), nested ones included
_gc_froze = False        # whether the outermost of them froze the heap


@contextmanager
def _heap_frozen() -> Iterator[None]:
    """Everything alive when the outermost pass starts is moved out of the collector's
    reach (`gc.freeze`) until it returns (`gc.unfreeze`).

    A pass allocates in proportion to the program, and CPython's full collections
    (one each time the objects surviving young collections reach a quarter of the
    old heap) each scan the whole heap: the input module, its source text and spans,
    and whatever else the process holds, none of which a pass changes (nodes are
    immutable). Frozen, the input is not scanned again and again; a full collection
    during the pass scans what the pass made, so collection costs in proportion to
    the pass's own work (it had made FastMath and Inline on 100k-node programs 2-3x
    slower, and their growth from 10k to 100k nodes quadratic-looking); what survives
    such a collection is frozen in turn (`_freeze_survivors`). Young collections run
    as usual, so the cycles a pass makes and drops (most die young) are collected
    while it runs; a cycle that was garbage before the outermost pass started, or
    that was frozen alive and dropped later, is collected after it returns. Nothing
    is done when the collector is off or when the caller froze objects itself
    (`gc.get_freeze_count()`): unfreezing would undo their freeze."""
    global _gc_depth, _gc_froze
    with _gc_lock:
        _gc_depth += 1
        if _gc_depth == 1 and gc.isenabled() and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.callbacks.append(_freeze_survivors)
            _gc_froze = True
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_froze:
                if _freeze_survivors in gc.callbacks:
                    gc.callbacks.remove(_freeze_survivors)
                gc.unfreeze()
                _gc_froze = False


def _freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """After a full collection while passes run, freeze what survived it, so that the next
    one scans only what was made since: each object a pass makes is scanned by at most
    one full collection (not by one every time the heap grows by a quarter)."""
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()


# ---------------------------------------------------------------- the registry

_PASSES: dict[str, type[Pass]] = {}


def canonical_name(name: str) -> str:
    """`ToANormalForm`, `to-a-normal-form` and `toanormalform` are one pass."""
    return name.replace("-", "").replace("_", "").lower()


def register_pass(cls: type[Pass]) -> type[Pass]:
    key = canonical_name(cls.name)
    if key in _PASSES and _PASSES[key] is not cls:
        raise ValueError(f"pass {cls.name} registered twice")
    _PASSES[key] = cls
    return cls


def list_passes() -> list[str]:
    _load_passes()
    return sorted(cls.name for cls in _PASSES.values())


class PassNotFound(KeyError):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


_SPEC = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(?:\{(.*)\})?\s*\Z", re.S)


def get_pass(spec: str) -> Pass:
    """A registered pass from its name and options: `FoldConstant{max_elements=1024}`."""
    _load_passes()
    m = _SPEC.match(spec)
    if m is None:
        raise PassNotFound(f"malformed pass `{spec}`: expected NAME or NAME{{option=value,...}}")
    name, options = m.group(1), m.group(2)
    cls = _PASSES.get(canonical_name(name))
    if cls is None:
        close = difflib.get_close_matches(canonical_name(name), list(_PASSES), n=3, cutoff=0.6)
        hint = (", did you mean " + ", ".join(_PASSES[c].name for c in close) + "?") if close \
            else f"; known passes: {', '.join(list_passes())}"
        raise PassNotFound(f"unknown pass `{name}`{hint}")
    return cls(**_parse_options(cls, options or ""))


def _parse_options(cls: type[Pass], text: str) -> dict[str, Any]:
    fields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in fields:
            known = ", ".join(fields) or "none"
            raise PassNotFound(f"pass {cls.name} has no option `{key}` (its options: {known})")
        out[key] = _option_value(value.strip(), fields[key].type)
    return out


def _option_value(text: str, annotation: Any) -> Any:
    kind = str(annotation)
    if "bool" in kind:
        return text.lower() in ("1", "true", "yes")
    if "int" in kind:
        return int(text)
    if "float" in kind:
        return float(text)
    return text


def pass_text(p: Pass) -> str:
    """A pass as `get_pass` reads it back: its name and non-default options."""
    if not dataclasses.is_dataclass(p):
        return p.name
    options = [f"{f.name}={getattr(p, f.name)}" for f in dataclasses.fields(p)
               if getattr(p, f.name) != f.default]
    return p.name + ("{" + ",".join(options) + "}" if options else "")


def _load_passes() -> None:
    # Every module of this package registers its passes on import; importing them all
    # here means no other list of passes exists anywhere.
    if getattr(_load_passes, "done", False):
        return
    _load_passes.done = True       # type: ignore[attr-defined]
    import importlib
    import os
    import pkgutil
    # This package's folder, and subpackages grouping one pass family (layout/, fusion/, ...).
    here = [os.path.dirname(__file__)]
    for info in pkgutil.walk_packages(here, prefix=f"{__package__}."):
        importlib.import_module(info.name)


# ---------------------------------------------------------------- TVM's decorators


def module_pass(pass_func: Any = None, opt_level: int = 0, name: str | None = None,
                required: Sequence[str] = ()) -> Any:
    """TVM's `@tvm.transform.module_pass`: turn `f(mod, ctx) -> mod` into a pass object, or a
    class with `transform_module(self, mod, ctx)` into a class whose instances are passes
    (`@module_pass(opt_level=1) class P: ...; P(args)(mod)`). Used as a decorator, or
    called with the function or class first: `module_pass(f, opt_level=3)`."""
    def wrap(f: Any) -> Any:
        return _make_pass(f, ModulePass, "transform_module", opt_level, name, required)
    return wrap(pass_func) if pass_func is not None else wrap


def function_pass(pass_func: Any = None, opt_level: int = 0, name: str | None = None,
                  required: Sequence[str] = ()) -> Any:
    """TVM's `@relay.transform.function_pass`: turn `f(fn, mod, ctx) -> fn` into a pass
    applied to every function, or a class with `transform_function(self, fn, mod, ctx)`
    into a class of such passes; a decorator, or called with the function or class."""
    def wrap(f: Any) -> Any:
        return _make_pass(f, FunctionPass, "transform_function", opt_level, name, required)
    return wrap(pass_func) if pass_func is not None else wrap


def _make_pass(f: Any, base: type[Pass], method: str, opt_level: int, name: str | None,
               required: Sequence[str]) -> Any:
    pass_name = name or f.__name__
    attrs: dict[str, Any] = {"name": pass_name, "opt_level": opt_level,
                             "required": tuple(required)}
    if isinstance(f, type):            # a class: its instances do the work (TVM's
        def init(self: Any, *args: Any, **kwargs: Any) -> None:   # _wrap_class_*_pass)
            self.inst = f(*args, **kwargs)
        attrs["__init__"] = init
        attrs[method] = lambda self, *args: getattr(self.inst, method)(*args)
        attrs["__getattr__"] = lambda self, key: getattr(self.__dict__["inst"], key)
        return type(pass_name, (base,), attrs)
    attrs[method] = lambda self, *args: f(*args)
    return type(pass_name, (base,), attrs)()


def iter_passes(p: Pass) -> Iterator[Pass]:
    """`p` itself, or the passes of a Sequential, flattened."""
    if isinstance(p, Sequential):
        for q in p.passes:
            yield from iter_passes(q)
    else:
        yield p
