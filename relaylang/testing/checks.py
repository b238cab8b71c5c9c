"""What a golden case checks beyond its expected files: FileCheck directives (the `filecheck`
package, a Python FileCheck), and, for every `relay opt` run, the automatic pass checks of
TVM's tests/python/relay/test_pass_plan_devices.py `exercise`:

  reparse     the output parses and type-checks;
  idempotent  the same pipeline on the output prints the output again;
  interp      `@main` gives the same result before and after, on random inputs.
"""
from __future__ import annotations

import contextlib
import difflib
import io
from pathlib import Path
from typing import Any

from .runner import RunResult, call_relay

SEEDS = (0, 1)


def filecheck(check_text: str, output: str, prefixes: tuple[str, ...], name: str) -> str | None:
    """None if `output` satisfies the CHECK directives of `check_text`, else the report."""
    try:
        from filecheck.finput import FInput
        from filecheck.matcher import Matcher
        from filecheck.options import Options
        from filecheck.parser import Parser, pattern_for_opts
    except ImportError:
        return "CHECK directives need the `filecheck` package: pip install 'relaylang[test]'"
    opts = Options(match_filename=name, check_prefixes=list(prefixes))
    parser = Parser(opts, io.StringIO(check_text), *pattern_for_opts(opts))
    matcher = Matcher(opts, FInput("<output>", FInput.canonicalize_line_ends(output)), parser)
    report = io.StringIO()
    matcher.stderr = report
    with contextlib.redirect_stdout(io.StringIO()):    # filecheck 1.0.6 prints debug lines
        status = matcher.run()
    if status == 0:
        return None
    return report.getvalue().rstrip() + "\n--- the output was:\n" + output


def text_diff(a: str, b: str, a_name: str, b_name: str) -> str:
    lines = difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                 a_name, b_name)
    return "".join(lines)


def pass_checks(result: RunResult, input_text: str, source: Path, skip: frozenset[str]
                ) -> list[str]:
    """Problems with a successful `relay opt` run's output (empty when all is well)."""
    argv = result.argv
    if argv[:1] != ["opt"] or result.exit_code != 0 or "-o" in argv or "--output" in argv \
            or result.run.merge_stderr or not result.stdout.strip():
        return []
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    from ..typing import infer_types
    where = f"the output of `relay {' '.join(result.run.argv)}`"
    try:
        out_mod = infer_types(parse(result.stdout, source_name="output"))
    except DiagnosticError as e:
        if "reparse" in skip:
            return []
        return [f"{where} does not parse and type-check: {e}\n--- the output was:\n"
                + result.stdout]
    problems: list[str] = []
    if "idempotent" not in skip:
        problems += _idempotent(result, source, where)
    if "interp" not in skip:
        problems += _same_results(input_text, out_mod, where)
    return problems


def _idempotent(result: RunResult, source: Path, where: str) -> list[str]:
    again = source.with_name(source.stem + ".again.relay")
    again.write_text(result.stdout, encoding="utf-8")
    argv = [str(again) if a == str(source) else a for a in result.argv]
    code, out, err = call_relay(argv)
    if code != 0:
        return [f"{where} fails when the pipeline runs on it again (not idempotent):\n{err}"]
    if out != result.stdout:
        return [f"the pipeline is not idempotent: running it on {where} changes it:\n"
                + text_diff(result.stdout, out, "output", "output of the second run")]
    return []


def _same_results(input_text: str, out_mod: Any, where: str) -> list[str]:
    import numpy as np

    from ..backend.interpreter.executor import evaluate
    from ..backend.interpreter.machine import InterpreterError
    from ..backend.params import InputSourceError, random_input
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    from ..typing import infer_types
    try:
        in_mod = infer_types(parse(input_text, source_name="input"))
    except DiagnosticError:
        return []                  # an ill-typed input has no results to compare
    main = _main(in_mod)
    if main is None or _main(out_mod) is None:
        return []
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        try:
            args = [random_input(p.name_hint, p.checked_type, rng) for p in main.params]
        except InputSourceError:
            return []              # parameters that are not tensors: no random inputs
        try:
            before = evaluate(in_mod, *args)
        except (InterpreterError, RecursionError, MemoryError):
            return []
        try:
            after = evaluate(out_mod, *args)
        except Exception as e:     # noqa: BLE001 -- any failure of the output is the finding
            return [(f"@main of {where} fails on inputs that the input runs on (seed {seed}): "
                     f"{type(e).__name__}: {e}")]
        why = value_difference(before, after)
        if why is not None:
            return [(f"@main of {where} gives a different result on random inputs "
                     f"(seed {seed}): {why}")]
    return []


def _main(mod: Any) -> Any:
    for gv, fn in mod.functions.items():
        if gv.name_hint == "main":
            return fn
    return None


def value_difference(a: Any, b: Any, *, rtol: float = 1e-5, atol: float = 1e-6,
                     equal_nan: bool = True) -> str | None:
    """None if interpreter values `a` and `b` agree (closures are not compared), else why."""
    import numpy as np

    from ..backend.interpreter.values import Closure, ConstructorValue, RefValue
    stack: list[tuple[str, Any, Any]] = [("result", a, b)]
    while stack:                                      # values nest: walk them with a stack
        path, x, y = stack.pop()
        if isinstance(x, (np.ndarray, np.generic)):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape or x.dtype != y.dtype:
                return f"{path}: {x.dtype}{list(x.shape)} vs {y.dtype}{list(y.shape)}"
            if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan):
                return f"{path}: {x!r} vs {y!r}"
        elif isinstance(x, tuple):
            if not isinstance(y, tuple) or len(x) != len(y):
                return f"{path}: {x!r} vs {y!r}"
            stack += [(f"{path}[{i}]", u, v) for i, (u, v) in enumerate(zip(x, y))]
        elif isinstance(x, ConstructorValue):
            if not isinstance(y, ConstructorValue) or x.name != y.name:
                return f"{path}: {x!r} vs {y!r}"
            stack += [(f"{path}.{i}", u, v) for i, (u, v) in enumerate(zip(x.fields, y.fields))]
        elif isinstance(x, RefValue):
            if not isinstance(y, RefValue):
                return f"{path}: {x!r} vs {y!r}"
            stack.append((f"{path}.value", x.value, y.value))
        elif isinstance(x, Closure):
            if not callable(y):
                return f"{path}: a closure vs {y!r}"
        elif x != y:
            return f"{path}: {x!r} vs {y!r}"
    return None
