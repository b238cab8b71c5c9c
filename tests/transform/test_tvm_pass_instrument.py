"""Pass instruments against TVM v0.19's tests/python/relay/test_pass_instrument.py: the order
of the hooks, `should_run` skipping passes, the `pass_instrument` decorator, timing, and
what happens when an instrument or a pass raises. TVM's `AnnotateSpans` (relaylang's
parser gives spans; there is no such pass) is replaced by FoldConstant."""
from __future__ import annotations

import pytest

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.transform import (
    FoldConstant,
    InferType,
    PassContext,
    PassTimingInstrument,
    ToANormalForm,
    module_pass,
)
from relaylang.transform.pass_infra import PassInstrument, pass_instrument
from relaylang.transform.tvm_pipeline import optimize


def get_test_model() -> IRModule:
    x, y, z = (rl.var(c, shape=(3, 4), dtype="float32") for c in "xyz")
    e1 = rl.add(x, y)
    e2 = rl.subtract(x, z)
    e3 = rl.multiply(e1, rl.divide(e1, e2))
    return IRModule.from_expr(rl.add(e3, e2))


def three_passes(mod: IRModule) -> IRModule:
    """TVM's AnnotateSpans, ToANormalForm, InferType (FoldConstant for AnnotateSpans)."""
    mod = FoldConstant()(mod)
    mod = ToANormalForm()(mod)
    return InferType()(mod)


@pytest.fixture(autouse=True)
def _default_context_restored():
    """The tests that override the default context's instruments leave it as they found it."""
    yield
    PassContext.current().instruments = []


# TVM's test_pass_timing_instrument
def test_pass_timing_instrument() -> None:
    pass_timing = PassTimingInstrument()
    PassContext.current().override_instruments([pass_timing])
    three_passes(get_test_model())
    profiles = pass_timing.render()
    for name in ("FoldConstant", "ToANormalForm", "InferType"):
        assert name in profiles
    # leaving the instruments clears the profile, as TVM's
    PassContext.current().override_instruments(None)
    three_passes(get_test_model())
    assert pass_timing.render() == ""
    assert not PassContext.current().instruments


class BaseTest:
    def __init__(self) -> None:
        self.events: list[str] = []

    def enter_pass_ctx(self) -> None:
        self.events.append("enter ctx")

    def exit_pass_ctx(self) -> None:
        self.events.append("exit ctx")

    def run_before_pass(self, mod, info) -> None:
        self.events.append("run before " + info.name)

    def run_after_pass(self, mod, info) -> None:
        self.events.append("run after " + info.name)


class SubclassTest(BaseTest, PassInstrument):
    def __init__(self) -> None:
        BaseTest.__init__(self)
        PassInstrument.__init__(self)


# TVM's test_custom_instrument (both of its parameters: decorator and subclass)
@pytest.mark.parametrize("kind", ["decorator", "subclass"])
def test_custom_instrument(kind: str) -> None:
    my_test = (pass_instrument(BaseTest) if kind == "decorator" else SubclassTest)()
    assert isinstance(my_test, PassInstrument)
    with PassContext(instruments=[my_test]):
        InferType()(get_test_model())
    assert "enter ctx" "run before InferType" "run after InferType" "exit ctx" == \
        "".join(my_test.events)


# TVM's test_disable_pass
def test_disable_pass() -> None:
    @pass_instrument
    class CustomPI:
        def __init__(self) -> None:
            self.events: list[str] = []

        def should_run(self, mod, info) -> bool:
            return "InferType" in info.name

        def run_before_pass(self, mod, info) -> None:
            self.events.append(info.name)

    mod = get_test_model()
    custom_pi = CustomPI()
    with PassContext(instruments=[custom_pi]):
        out = three_passes(mod)
    assert "InferType" == "".join(custom_pi.events)
    # FoldConstant and ToANormalForm did not run: the program is not in ANF
    assert rl.structural_equal(out, InferType()(mod))


# TVM's test_multiple_instrument
def test_multiple_instrument() -> None:
    @pass_instrument
    class SkipPass:
        def __init__(self, skip_pass_name: str) -> None:
            self.skip_pass_name = skip_pass_name

        def should_run(self, mod, info) -> bool:
            return self.skip_pass_name not in info.name

    @pass_instrument
    class PrintPassName:
        def __init__(self) -> None:
            self.events: list[str] = []

        def run_before_pass(self, mod, info) -> None:
            self.events.append(info.name)

    print_pass_name = PrintPassName()
    with PassContext(instruments=[SkipPass("FoldConstant"), SkipPass("ToANormalForm"),
                                  print_pass_name]):
        three_passes(get_test_model())
    assert "InferType" == "".join(print_pass_name.events)


# TVM's test_instrument_pass_counts (also through `optimize`, which `build` runs)
def test_instrument_pass_counts() -> None:
    @pass_instrument
    class PassesCounter:
        def __init__(self) -> None:
            self.run_before_count = 0
            self.run_after_count = 0

        def _clear(self) -> None:
            self.run_before_count = 0
            self.run_after_count = 0

        def enter_pass_ctx(self) -> None:
            self._clear()

        def exit_pass_ctx(self) -> None:
            self._clear()

        def run_before_pass(self, mod, info) -> None:
            self.run_before_count += 1

        def run_after_pass(self, mod, info) -> None:
            self.run_after_count += 1

    passes_counter = PassesCounter()
    with PassContext(instruments=[passes_counter]):
        rl.build(get_test_model(), "llvm")
        assert passes_counter.run_after_count != 0
        assert passes_counter.run_after_count == passes_counter.run_before_count
        built = passes_counter.run_after_count
        optimize(get_test_model(), opt_level=3)
        assert passes_counter.run_after_count == 2 * built
    assert passes_counter.run_before_count == 0
    assert passes_counter.run_after_count == 0


def record(events: list[str], ident: str, broken: str = "", indent: str = "") -> PassInstrument:
    """TVM's PI of the exception tests: every hook appends "<id> <hook>" to `events`; the
    hook named `broken` then raises."""
    @pass_instrument
    class PI:
        def _note(self, hook: str, pad: str = "") -> None:
            events.append(pad + ident + " " + hook)
            if hook == broken:
                raise RuntimeError("Just a dummy error")

        def enter_pass_ctx(self) -> None:
            self._note("enter_pass_ctx")

        def exit_pass_ctx(self) -> None:
            self._note("exit_pass_ctx")

        def should_run(self, mod, info) -> bool:
            self._note("should_run", indent)
            return True

        def run_before_pass(self, mod, info) -> None:
            self._note("run_before_pass", indent)

        def run_after_pass(self, mod, info) -> None:
            self._note("run_after_pass", indent)
    return PI()


def after_failure(pass_ctx: PassContext) -> None:
    """TVM's checks that a failed enter or exit left the right context current, with no
    instruments (TVM's `pass_ctx != cur_pass_ctx`: relaylang's contexts compare by value,
    so this is `is not`)."""
    cur_pass_ctx = PassContext.current()
    assert pass_ctx is not cur_pass_ctx
    assert not cur_pass_ctx.instruments
    assert not pass_ctx.instruments


# TVM's test_enter_pass_ctx_exception
def test_enter_pass_ctx_exception() -> None:
    events: list[str] = []
    pass_ctx = PassContext(instruments=[record(events, "%1"),
                                        record(events, "%2", broken="enter_pass_ctx"),
                                        record(events, "%3")])
    with pytest.raises(RuntimeError, match="Just a dummy error"), pass_ctx:
        pass
    assert "%1 enter_pass_ctx" "%2 enter_pass_ctx" "%1 exit_pass_ctx" == "".join(events)
    after_failure(pass_ctx)


# TVM's test_enter_pass_ctx_exception_global
def test_enter_pass_ctx_exception_global() -> None:
    events: list[str] = []
    cur_pass_ctx = PassContext.current()
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        cur_pass_ctx.override_instruments([record(events, "%1", broken="enter_pass_ctx")])
    assert not cur_pass_ctx.instruments


# TVM's test_exit_pass_ctx_exception
def test_exit_pass_ctx_exception() -> None:
    events: list[str] = []
    pass_ctx = PassContext(instruments=[record(events, "%1"),
                                        record(events, "%2", broken="exit_pass_ctx"),
                                        record(events, "%3")])
    with pytest.raises(RuntimeError, match="Just a dummy error"), pass_ctx:
        events.clear()
    assert "%1 exit_pass_ctx" "%2 exit_pass_ctx" == "".join(events)
    after_failure(pass_ctx)


# TVM's test_exit_pass_ctx_exception_global
def test_exit_pass_ctx_exception_global() -> None:
    events: list[str] = []
    cur_pass_ctx = PassContext.current()
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        cur_pass_ctx.override_instruments([record(events, "%1", broken="exit_pass_ctx")])
        cur_pass_ctx.override_instruments([record(events, "%2", broken="exit_pass_ctx")])
    assert not cur_pass_ctx.instruments
    assert events == ["%1 enter_pass_ctx", "%1 exit_pass_ctx"]


@module_pass(opt_level=2)
def transform(mod, ctx):
    """TVM's `transform` of the exception tests (this one returns the module)."""
    EVENTS.append("transform pass")
    return mod


EVENTS: list[str] = []


# TVM's test_pass_exception
def test_pass_exception() -> None:
    events: list[str] = []

    @module_pass(opt_level=2)
    def broken(mod, ctx):
        events.append("transform pass")
        raise RuntimeError("Just a dummy error")

    @pass_instrument
    class PI:
        def enter_pass_ctx(self) -> None:
            events.append("enter_pass_ctx")

        def exit_pass_ctx(self) -> None:
            events.append("exit_pass_ctx")

        def should_run(self, mod, info) -> bool:
            events.append("should_run")
            return True

        def run_before_pass(self, mod, info) -> None:
            events.append("run_before_pass")

        def run_after_pass(self, mod, info) -> None:
            events.append("run_after_pass")

    with pytest.raises(RuntimeError, match="Just a dummy error"), \
            PassContext(instruments=[PI()]):
        broken(get_test_model())
    assert "enter_pass_ctx" "should_run" "run_before_pass" "transform pass" "exit_pass_ctx" \
        == "".join(events)


# TVM's test_should_run_exception
def test_should_run_exception() -> None:
    events = run_with_transform("should_run")
    assert "%1 enter_pass_ctx" "%2 enter_pass_ctx" "%1 should_run" "%1 exit_pass_ctx" \
        "%2 exit_pass_ctx" == "".join(events)


# TVM's test_run_before_exception
def test_run_before_exception() -> None:
    events = run_with_transform("run_before_pass")
    assert "%1 enter_pass_ctx" "%2 enter_pass_ctx" "%1 should_run" "%2 should_run" \
        "%1 run_before_pass" "%1 exit_pass_ctx" "%2 exit_pass_ctx" == "".join(events)


# TVM's test_run_after_exception (TVM's model here is add(x, y))
def test_run_after_exception() -> None:
    x, y = (rl.var(c, shape=(3, 4), dtype="float32") for c in "xy")
    events = run_with_transform("run_after_pass", IRModule.from_expr(rl.add(x, y)))
    assert "%1 enter_pass_ctx" "%2 enter_pass_ctx" "%1 should_run" "%2 should_run" \
        "%1 run_before_pass" "%2 run_before_pass" "transform pass" "%1 run_after_pass" \
        "%1 exit_pass_ctx" "%2 exit_pass_ctx" == "".join(events)


def run_with_transform(broken: str, mod: IRModule | None = None) -> list[str]:
    """Two recording instruments whose hook `broken` raises, around `transform`: the
    events, the transform's included, in order."""
    EVENTS.clear()
    with pytest.raises(RuntimeError, match="Just a dummy error"), \
            PassContext(instruments=[record(EVENTS, "%1", broken=broken),
                                     record(EVENTS, "%2", broken=broken)]):
        transform(mod or get_test_model())
    return list(EVENTS)


# TVM's test_instrument_call_sequence
def test_instrument_call_sequence() -> None:
    EVENTS.clear()

    @module_pass(opt_level=2)
    def transform1(mod, ctx):
        EVENTS.append("    transform1 pass")
        return mod

    @module_pass(opt_level=2)
    def transform2(mod, ctx):
        EVENTS.append("    transform2 pass")
        return mod

    with PassContext(instruments=[record(EVENTS, "%1", indent="  "),
                                  record(EVENTS, "%2", indent="  ")]):
        mod = transform1(get_test_model())
        transform2(mod)
    assert (
        "%1 enter_pass_ctx" "%2 enter_pass_ctx"
        "  %1 should_run" "  %2 should_run" "  %1 run_before_pass" "  %2 run_before_pass"
        "    transform1 pass"
        "  %1 run_after_pass" "  %2 run_after_pass"
        "  %1 should_run" "  %2 should_run" "  %1 run_before_pass" "  %2 run_before_pass"
        "    transform2 pass"
        "  %1 run_after_pass" "  %2 run_after_pass"
        "%1 exit_pass_ctx" "%2 exit_pass_ctx" == "".join(EVENTS))


# Beyond TVM's file: every instrument is asked `should_run` even after one said no (TVM's
# `&=`), and a pass the context requires is not asked about.
def test_should_run_asks_all_and_required_passes_run() -> None:
    asked: list[str] = []

    @pass_instrument
    class No:
        def __init__(self, ident: str) -> None:
            self.ident = ident

        def should_run(self, mod, info) -> bool:
            asked.append(self.ident)
            return False

    mod = get_test_model()
    with PassContext(instruments=[No("a"), No("b")]):
        assert ToANormalForm()(mod) is mod
    assert asked == ["a", "b"]
    asked.clear()
    with PassContext(instruments=[No("a")], required_pass=["ToANormalForm"]):
        out = ToANormalForm()(mod)
    assert asked == [] and out is not mod
