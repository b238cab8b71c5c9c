"""Pass pipelines from text: what `relay opt -p`, the REPL's `:opt` and the language
server's pass preview run (xDSL's `PassPipeline`; TVM's `Sequential` under a `PassContext`).

    pipeline = Pipeline.parse("FoldConstant,FuseOps{fuse_opt_level=2}",
                              PipelineOptions(opt_level=3, print_after=("*",)))
    result = pipeline.run(mod)     # result.module; result.log, result.timing: text

The text is `NAME[{option=value,...}]` items separated by commas (commas inside braces
belong to the options); each item is a registered pass (`pass_infra.get_pass`). The
options make the `PassContext`: the opt level (a pass above it is skipped, as in TVM;
`skipped()` names the ones the text asked for), disabled passes, the standard pipeline
first (`standard=N`: `relay opt -O N`), and instruments. What the instruments write (the
module before or after passes, the time of each pass) is returned as text, never printed:
the caller decides where it goes.

Errors are exceptions for the caller to show: `PipelineError` when the text names no
pipeline (malformed, unknown pass or option), `PassFailed` when a pass raised; it names
the pass and carries the cause, its diagnostics and the instruments' text up to then.
"""
from __future__ import annotations

import dataclasses
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..ir import progress
from .pass_infra import (
    Pass,
    PassContext,
    PassInfo,
    PassInstrument,
    PassNotFound,
    Sequential,
    get_pass,
)

if TYPE_CHECKING:
    from ..ir.diagnostics import Diagnostic
    from ..ir.module import IRModule

class PipelineError(Exception):
    """A pipeline that cannot be built: malformed text, unknown pass or option. The message
    says what is wrong, for people (`unknown pass `InferTipe`, did you mean InferType?`)."""


def split_pipeline(text: str) -> list[str]:
    """`A,B{x=1,y=2},C` -> `["A", "B{x=1,y=2}", "C"]`: commas split only outside braces."""
    items: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"malformed pipeline `{text}`: unbalanced `}}`")
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise PipelineError(f"malformed pipeline `{text}`: unbalanced `{{`")
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def parse_pipeline(text: str | Sequence[str]) -> list[Pass]:
    """The passes a pipeline text names, in order (a sequence of texts: one after the other,
    as repeated `-p` flags give them)."""
    passes: list[Pass] = []
    for spec in [text] if isinstance(text, str) else text:
        for item in split_pipeline(spec):
            try:
                passes.append(get_pass(item))
            except PassNotFound as e:
                raise PipelineError(e.message) from e
            except (TypeError, ValueError) as e:       # an option of the wrong kind
                raise PipelineError(f"bad options in `{item}`: {e}") from e
    return passes


@dataclass(frozen=True)
class PipelineOptions:
    """How a pipeline runs. Pass names may be written as `get_pass` reads them
    (`ToANormalForm`, `to-a-normal-form`); a `disabled` entry may be a comma list."""

    opt_level: int | None = None     # passes above it are skipped (default: `standard`, else
    #                                  PassContext's default, 2 as in TVM)
    standard: int | None = None      # run the standard pipeline at this level first (-O N)
    disabled: Sequence[str] = ()     # never run these passes
    print_before: Sequence[str] = ()  # log the module before these passes ("*": every pass)
    print_after: Sequence[str] = ()   # ... after these
    print_changed: bool = False      # log after a pass only when it changed the module
    #                                  (with no `print_after`: after every pass that does)
    time_passes: bool = False        # `timing`: the wall time of each pass
    verify_each: bool = False        # after each pass: no free variables, still type-checks

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> PipelineOptions:
        """The options among `values`, other keys ignored (`vars()` of a command line's
        namespace whose destinations are named as these fields)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})

    @property
    def level(self) -> int:
        if self.opt_level is not None:
            return self.opt_level
        return self.standard if self.standard is not None else PassContext.opt_level


@dataclass(frozen=True)
class PipelineResult:
    module: IRModule
    log: str = ""       # what print_before / print_after wrote, in order
    timing: str = ""    # the time_passes table (empty without it)
    notes: tuple = ()   # diagnostics the passes reported without failing (byoc/notes.py)

    def text(self) -> str:
        """The module as Relay text ending with a newline, as `relay opt` prints it."""
        from ..syntax.printer import astext
        text = astext(self.module)
        return text if text.endswith("\n") else text + "\n"


class PassFailed(Exception):
    """A pass raised while the pipeline ran. `pass_name` is the pass that was running (None
    when the failure was outside one), `cause` what it raised, `log` what the instruments
    wrote before. `user_error`: the program is at fault, and `diagnostics` say why (a type
    error found by a pass, a module `verify_each` rejected); otherwise a pass has a bug."""

    def __init__(self, pass_name: str | None, cause: Exception, log: str = ""):
        where = f"pass {pass_name}" if pass_name else "the pipeline"
        super().__init__(f"{where} failed: {type(cause).__name__}: {cause}")
        self.pass_name, self.cause, self.log = pass_name, cause, log

    @property
    def user_error(self) -> bool:
        from ..ir.diagnostics import DiagnosticError
        from .instruments import VerifyError
        return isinstance(self.cause, (DiagnosticError, VerifyError))

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return list(getattr(self.cause, "diagnostics", None) or [])

    def sources(self, mod: IRModule) -> dict[str, str]:
        """The texts the diagnostics point into: the input module's and the cause's own."""
        return {**mod.sources, **getattr(self.cause, "sources", {})}


class _CurrentPass(PassInstrument):
    """Remembers which pass is running, so a failure inside one can be blamed on it."""

    def __init__(self) -> None:
        self.name: str | None = None

    def run_before_pass(self, mod: Any, info: PassInfo) -> None:
        self.name = info.name

    def run_after_pass(self, mod: Any, info: PassInfo) -> None:
        self.name = None


class Pipeline:
    """Passes and the options they run under; run it on any number of modules.
    PipelineError when a `disabled` entry is malformed."""

    def __init__(self, passes: Sequence[Pass], options: PipelineOptions = PipelineOptions()):
        self.passes = list(passes)
        self.options = options
        self._disabled = [name for spec in options.disabled for name in split_pipeline(spec)]

    @classmethod
    def parse(cls, text: str | Sequence[str],
              options: PipelineOptions = PipelineOptions()) -> Pipeline:
        """The pipeline a text names (see `parse_pipeline`); PipelineError if none."""
        return cls(parse_pipeline(text), options)

    def __repr__(self) -> str:
        return f"Pipeline({Sequential(self.passes)!r})"

    def _context(self, instruments: Sequence[PassInstrument]) -> PassContext:
        return PassContext(opt_level=self.options.level, disabled_pass=self._disabled,
                           instruments=list(instruments))

    def skipped(self) -> list[PassInfo]:
        """The passes of the text that will not run: above the opt level, or disabled."""
        ctx = self._context(())
        return [p.info for p in self.passes if not ctx.should_run(p.info)]

    def _instruments(self, log: io.StringIO) -> list[PassInstrument]:
        from .instruments import PassTimingInstrument, PrintIR, VerifyEach
        o = self.options
        after = list(o.print_after) or (["*"] if o.print_changed else [])
        found: list[PassInstrument] = []
        if after or o.print_before:
            found.append(PrintIR(before=tuple(o.print_before), after=tuple(after),
                                 changed_only=o.print_changed, stream=log))
        if o.verify_each:
            found.append(VerifyEach())
        if o.time_passes:
            found.append(PassTimingInstrument())
        return found

    def _all_passes(self) -> list[Pass]:
        """The standard pipeline (one Sequential: its skipped passes are not reported)
        before the passes of the text."""
        if self.options.standard is None:
            return self.passes
        from .tvm_pipeline import default_pipeline
        return [default_pipeline(self.options.standard), *self.passes]

    def run(self, mod: IRModule) -> PipelineResult:
        """`mod` through the passes; PassFailed when one raises (KeyboardInterrupt goes by)."""
        from .instruments import PassTimingInstrument
        log = io.StringIO()
        current = _CurrentPass()
        instruments = self._instruments(log)
        passes = self._all_passes()
        from .byoc.notes import CollectDiagnostics
        heard = CollectDiagnostics()     # notes such as a pattern that matched nothing
        watch: list[PassInstrument] = [current, heard]
        if progress.active():          # a tool draws progress: the passes as a task
            from .instruments import PassProgress, planned_steps
            watch.append(PassProgress(planned_steps(passes, self._context(()))))
        try:
            with self._context([*watch, *instruments]):
                out = Sequential(passes)(mod)
        except Exception as e:       # noqa: BLE001 -- handed to the caller, with the pass
            raise PassFailed(current.name, e, log.getvalue()) from e
        timing = "".join(i.report() for i in instruments if isinstance(i, PassTimingInstrument))
        return PipelineResult(out, log.getvalue(), timing, tuple(heard.diagnostics))


def run_pipeline(mod: IRModule, text: str | Sequence[str], **options: Any) -> PipelineResult:
    """`Pipeline.parse(text, PipelineOptions(**options)).run(mod)`."""
    return Pipeline.parse(text, PipelineOptions(**options)).run(mod)
