"""Pass infrastructure: registry, options, Sequential, PassContext, instruments."""
from __future__ import annotations

import io
from dataclasses import dataclass
from typing import ClassVar

import pytest

import relaylang as rl
from relaylang.ir import Function
from relaylang.transform import (FunctionPass, ModulePass, PassContext, PassNotFound,
                                 PassTimingInstrument, PrintIR, Sequential, VerifyEach,
                                 function_pass, get_pass, list_passes, module_pass)
from relaylang.transform.instruments import VerifyError
from relaylang.transform.pass_infra import pass_text

TEXT = '#[version = "0.0.5"]\ndef @main(%x: float32) -> float32 {\n  add(%x, 1f)\n}\n'


@dataclass(frozen=True)
class Counting(ModulePass):
    name: ClassVar[str] = "Counting"
    opt_level: ClassVar[int] = 3
    times: int = 1
    log: list = None  # type: ignore[assignment]

    def transform_module(self, mod, ctx):
        if self.log is not None:
            self.log.append(self.name)
        return mod


def test_registry_finds_passes_by_any_spelling() -> None:
    assert "InferType" in list_passes()
    for spelling in ("InferType", "infertype", "infer-type", "infer_type"):
        assert type(get_pass(spelling)).__name__ == "InferType"
    assert rl.transform.InferType is type(get_pass("InferType"))


def test_unknown_pass_suggests_close_names() -> None:
    with pytest.raises(PassNotFound, match="did you mean InferType"):
        get_pass("InferTyp")
    with pytest.raises(PassNotFound, match="malformed pass"):
        get_pass("Infer Type{")


def test_options_come_from_dataclass_fields() -> None:
    from relaylang.transform.pass_infra import _parse_options
    assert _parse_options(Counting, "times=3") == {"times": 3}
    with pytest.raises(PassNotFound, match="has no option `bogus`"):
        _parse_options(Counting, "bogus=1")
    assert pass_text(Counting(times=2)) == "Counting{times=2}"


def test_context_skips_passes_above_opt_level_or_disabled_unless_required() -> None:
    mod = rl.parse(TEXT)
    log: list[str] = []
    seq = Sequential([Counting(log=log)])
    with PassContext(opt_level=2):
        seq(mod)
    assert log == []
    with PassContext(opt_level=3):
        seq(mod)
    assert log == ["Counting"]
    with PassContext(opt_level=3, disabled_pass=["counting"]):
        seq(mod)
    assert log == ["Counting"]
    with PassContext(opt_level=0, required_pass=["Counting"]):
        seq(mod)
    assert log == ["Counting", "Counting"]


def test_decorators_make_passes_from_functions() -> None:
    @module_pass(opt_level=0, name="Identity")
    def identity(mod, ctx):
        return mod

    @function_pass(opt_level=0, name="Negate")
    def negate(fn: Function, mod, ctx) -> Function:
        body = rl.ir.Call(rl.op.get("negative"), (fn.body,))
        return Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs)

    mod = rl.parse(TEXT)
    assert identity(mod) is mod
    out = negate(mod)
    assert isinstance(negate, FunctionPass)
    assert "negative(%0)" in rl.astext(out)


def test_instruments_print_time_and_verify() -> None:
    mod = rl.parse(TEXT)
    buf = io.StringIO()
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing, PrintIR(after=("*",), stream=buf)]):
        Sequential([get_pass("InferType")])(mod)
    assert "// ----- IR after InferType -----" in buf.getvalue()
    assert [name for name, _ in timing.timings] == ["InferType"]
    assert "total" in timing.report()


def test_verify_each_names_the_pass_that_broke_the_program() -> None:
    @module_pass(opt_level=0, name="Breaker")
    def breaker(mod, ctx):
        fn = mod["main"]
        bad = Function(fn.params, rl.ir.Call(rl.op.get("add"), (fn.body, rl.ir.Var("ghost"))))
        return mod.with_function(mod.get_global_var("main"), bad)

    with pytest.raises(VerifyError, match="after pass Breaker: @main has free variables %ghost"):
        with PassContext(instruments=[VerifyEach()]):
            Sequential([get_pass("InferType"), breaker])(rl.parse(TEXT))


# ------------------------------------------------------------ declared requirements

class _Names(rl.transform.PassInstrument):
    """Records the passes the instruments see."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def run_before_pass(self, mod, info) -> None:
        self.seen.append(info.name)


@dataclass(frozen=True)
class NeedsTypes(ModulePass):
    """Reads checked types and builds a new, untyped function."""

    name: ClassVar[str] = "NeedsTypesForTest"
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod, ctx):
        out = mod.copy()
        for gv, fn in mod.functions.items():
            assert fn.checked_type is not None, "the context did not type the input"
            out.functions[gv] = Function(fn.params, fn.body, fn.ret_type, fn.type_params,
                                         fn.attrs, span=fn.span)
        return out


def test_a_pass_alone_gets_its_requirements_and_a_typed_result() -> None:
    mod = rl.parse(TEXT)
    assert mod["main"].checked_type is None
    names = _Names()
    with PassContext(instruments=[names]):
        out = NeedsTypes()(mod)
    assert all(fn.checked_type is not None for fn in out.functions.values())
    # Requirements are conditions the context sets up, not pipeline steps.
    assert names.seen == ["NeedsTypesForTest"]


def test_a_requirement_that_already_holds_is_not_run_again() -> None:
    typed = rl.transform.InferType()(rl.parse(TEXT))
    runs: list[str] = []

    class CountingInferType(type(get_pass("InferType"))):     # type: ignore[misc]
        def transform_module(self, mod, ctx):
            runs.append("InferType")
            return super().transform_module(mod, ctx)

    import relaylang.transform.pass_infra as infra
    key = infra.canonical_name("InferType")
    real = infra._PASSES[key]
    infra._PASSES[key] = CountingInferType
    try:
        NeedsTypes()(typed)                 # typed input: no run before, one after
        assert runs == ["InferType"]
        runs.clear()
        NeedsTypes()(rl.parse(TEXT))        # untyped input: one run before, one after
        assert runs == ["InferType", "InferType"]
    finally:
        infra._PASSES[key] = real


def test_a_requirement_that_cannot_tell_runs_before_every_use_alone_or_in_sequence() -> None:
    log: list[str] = []

    @dataclass(frozen=True)
    class First(ModulePass):
        name: ClassVar[str] = "FirstForRequirementTest"

        def transform_module(self, mod, ctx):
            log.append("first")
            return mod

    @dataclass(frozen=True)
    class Second(ModulePass):
        name: ClassVar[str] = "SecondForRequirementTest"
        required: ClassVar[tuple[str, ...]] = ("FirstForRequirementTest",)

        def transform_module(self, mod, ctx):
            log.append("second")
            return mod

    import relaylang.transform.pass_infra as infra
    infra.register_pass(First)
    try:
        Second()(rl.parse(TEXT))
        assert log == ["first", "second"]            # honoured outside a Sequential too
        log.clear()
        Sequential([Second()])(rl.parse(TEXT))
        assert log == ["first", "second"]            # not re-run after: it cannot tell
    finally:
        infra._PASSES.pop(infra.canonical_name(First.name))


def test_the_heap_is_frozen_while_passes_run_and_restored_after() -> None:
    """The heap as it was is left out of garbage collection while a pass runs (so that
    collecting costs in proportion to the pass's work, not to the heap) and given back
    afterwards, also when the pass fails; a caller's own freeze is left alone."""
    import gc
    from relaylang.transform.pass_infra import _freeze_survivors
    seen = []

    @module_pass(name="Watch")
    def watch(mod, ctx):
        seen.append((gc.get_freeze_count() > 0, _freeze_survivors in gc.callbacks))
        gc.collect()           # a full collection during a pass: survivors frozen, no error
        return Sequential([Counting()]).transform_module(mod, ctx)

    @module_pass(name="Fail")
    def fail(mod, ctx):
        raise RuntimeError("boom")

    mod = rl.parse(TEXT)
    before = gc.callbacks[:]
    with PassContext(opt_level=3):
        Sequential([watch, watch])(mod)
    assert seen == [(True, True), (True, True)]
    assert gc.get_freeze_count() == 0 and gc.callbacks == before
    with pytest.raises(RuntimeError):
        fail(mod)
    assert gc.get_freeze_count() == 0 and gc.callbacks == before
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        seen.clear()
        watch(mod)
        assert seen == [(True, False)] and gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()
    if gc.isenabled():
        gc.disable()
        try:
            seen.clear()
            watch(mod)
            assert seen == [(False, False)]
        finally:
            gc.enable()


def test_function_passes_leave_partitioned_functions_alone():
    """A `Compiler="T"` global is the external target's to compile as written (TVM's
    SkipFunction): -O3's SimplifyInference rewrites the batch_norm of @main's own copy
    but not the partitioned function's."""
    from pathlib import Path

    import relaylang as rl
    from relaylang.transform import AnnotateTarget, MergeCompilerRegions, PartitionGraph
    from relaylang.transform.tvm_pipeline import optimize
    text = (Path(__file__).resolve().parents[2] / "examples" / "conv_bn_relu.relay").read_text()
    mod = rl.transform.InferType()(rl.parse(text))
    parted = PartitionGraph()(MergeCompilerRegions()(
        AnnotateTarget(targets=("onnxruntime",))(mod)))
    (name,) = [gv.name_hint for gv in parted.functions if gv.name_hint != "main"]
    assert "nn.batch_norm" in str(parted[name])
    optimised = optimize(parted, opt_level=3)
    assert str(optimised[name]) == str(parted[name])
    assert "nn.batch_norm" not in str(optimize(mod, opt_level=3)["main"])
