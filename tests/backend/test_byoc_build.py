"""`rl.build(mod, byoc=[...])`: partitioning for external targets and running their
regions with the codegens' callables (relaylang/backend/byoc/), in the graph executor,
the interpreter, mixed mode, an exported library and `relay build --byoc`."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.build import prepare
from relaylang.backend.byoc import get_codegen, registered_codegens, unregister_codegen
from relaylang.backend.interpreter.machine import InterpreterError
from relaylang.cli import main
from relaylang.dataflow_pattern import is_op, wildcard
from relaylang.ir.diagnostics import DiagnosticError, Severity
from relaylang.transform.byoc.registry import (
    register_pattern_table,
    register_target_op,
    unregister_target,
)
from relaylang.transform.byoc.targets.example import conv2d_bias_relu

TARGET = "pytarget_h21"
HEADER = '#[version = "0.0.5"]\n'

CHAIN = HEADER + """
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w1: Tensor[(4, 3, 3, 3), float32],
          %b1: Tensor[(4), float32], %w2: Tensor[(4, 4, 3, 3), float32],
          %b2: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w2, padding=[1, 1, 1, 1]);
  %4 = nn.bias_add(%3, %b2);
  %5 = nn.relu(%4);
  tanh(%5)
}
"""

# Two regions that must not merge (tanh between them): the first has two outputs, one
# going round the second region into the final add (a diamond).
DIAMOND = HEADER + """
def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(4, 4, 3, 3), float32],
          %b: Tensor[(4), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = tanh(%2);
  %4 = nn.conv2d(%3, %w, padding=[1, 1, 1, 1]);
  %5 = nn.relu(%4);
  %6 = nn.conv2d(%2, %w, padding=[1, 1, 1, 1]);
  add(%5, %6)
}
"""


class Codegen:
    """A Python codegen: each partitioned function run by the interpreter; counts the
    functions compiled and the calls made."""

    def __init__(self) -> None:
        self.compiled: list[str] = []
        self.calls: list[str] = []
        self.fail_compile = False
        self.fail_run = False
        self.seen_attrs: list[tuple[str, str]] = []

    def __call__(self, func, symbol):
        if self.fail_compile:
            raise RuntimeError("cannot compile this region")
        self.compiled.append(symbol)
        self.seen_attrs.append((func.attrs.get("Compiler"), func.attrs.get("global_symbol")))
        ex = rl.create_executor(rl.IRModule.from_expr(rl.Function(func.params, func.body)))

        def run(*arrays):
            assert all(a.flags.c_contiguous for a in arrays)
            if self.fail_run:
                raise ValueError("the library said no")
            self.calls.append(symbol)
            return ex(*arrays)
        return run


@pytest.fixture()
def target():
    for op in ("nn.conv2d", "nn.bias_add", "nn.relu"):
        register_target_op(TARGET, op)
    register_pattern_table(TARGET, lambda: [
        (f"{TARGET}.conv2d_bias_relu", conv2d_bias_relu()),
        (f"{TARGET}.dense", is_op("nn.dense")(wildcard(), wildcard()))])
    codegen = Codegen()
    rl.register_codegen(TARGET)(codegen)
    yield codegen
    unregister_target(TARGET)
    unregister_codegen(TARGET)


def _args(mod, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal([int(d) for d in p.type_annotation.shape]).astype("float32")
            for p in mod["main"].params]


@pytest.mark.parametrize("text", [CHAIN, DIAMOND], ids=["chain", "diamond"])
def test_byoc_build_gives_the_plain_build_values(target, text):
    mod = rl.parse(text)
    args = _args(mod)
    want = rl.build(mod)(*args)
    lib = rl.build(mod, target="llvm", byoc=[TARGET])
    assert lib.mode == "graph"
    kinds = [kind for _, kind in lib.external_steps]
    assert kinds and set(kinds) == {TARGET}
    assert all(attrs[0] == TARGET and attrs[1] in target.compiled
               for attrs in target.seen_attrs)
    got = lib(*args)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert len(target.calls) == len(kinds)
    # the regions run as steps of the one native step table: no fallback op
    assert lib.fallback_ops == []
    got = lib(*args)          # twice: the views over the executor's buffers are reused
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert len(target.calls) == 2 * len(kinds)


def test_the_diamond_makes_two_regions_one_with_two_outputs(target):
    mod = rl.parse(DIAMOND)
    part = prepare(mod, byoc=[TARGET])
    externs = {gv.name_hint: fn for gv, fn in part.functions.items()
               if fn.attrs is not None and fn.attrs.get("Compiler") == TARGET}
    assert len(externs) == 2
    assert any(isinstance(fn.body.checked_type, rl.TupleType) for fn in externs.values())


def test_interpreter_runs_a_partitioned_module_through_the_codegen(target):
    mod = rl.parse(CHAIN)
    args = _args(mod, 1)
    part = prepare(mod, byoc=[TARGET])
    want = rl.evaluate(mod, *args)
    np.testing.assert_allclose(rl.evaluate(part, *args), want, rtol=1e-4, atol=1e-5)
    assert target.calls, "the interpreter called the codegen's callable"


def test_without_a_codegen_the_interpreter_runs_the_body():
    """`example` has patterns and no codegen: its partitioned functions are interpreted
    (and rl.build runs them in mixed mode)."""
    from relaylang.transform import (
        AnnotateTarget,
        MergeCompilerRegions,
        MergeComposite,
        PartitionGraph,
        Sequential,
    )
    mod = rl.parse(CHAIN)
    args = _args(mod, 2)
    part = Sequential([MergeComposite(pattern_table="example"),
                       AnnotateTarget(targets=["example"]), MergeCompilerRegions(),
                       PartitionGraph()])(mod)
    assert get_codegen("example") is None
    want = rl.evaluate(mod, *args)
    np.testing.assert_allclose(rl.evaluate(part, *args), want, rtol=1e-5, atol=1e-6)
    lib = rl.build(part)
    assert lib.mode == "mixed"
    np.testing.assert_allclose(lib(*args), want, rtol=1e-4, atol=1e-5)


def test_control_flow_with_partitioned_functions(target, tmp_path):
    """Not a dataflow graph: a native program calls the region through a module global
    holding the callback's address; with max_depth, mixed mode calls it from the
    interpreter's machine."""
    text = HEADER + """
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
          %b: Tensor[(4), float32], %c: bool) {
  if (%c) {
    %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
    nn.relu(nn.bias_add(%0, %b))
  } else {
    zeros(shape=[1, 4, 8, 8], dtype="float32")
  }
}
"""
    mod = rl.parse(text)
    x, w, b = _args(rl.parse(CHAIN))[:3]
    yes, no = np.array(True), np.array(False)
    want = rl.evaluate(mod, x, w, b, yes)
    lib = rl.build(mod, byoc=[TARGET])
    assert lib.mode == "program"
    assert [kind for _, kind in lib.external_steps] == [TARGET]
    target.calls.clear()
    np.testing.assert_allclose(lib(x, w, b, yes), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(lib(x, w, b, no), np.zeros((1, 4, 8, 8), "float32"))
    assert len(target.calls) == 1
    path = str(tmp_path / "if.rlib")
    lib.export_library(path)
    loaded = rl.runtime.load_module(path)
    np.testing.assert_allclose(loaded(x, w, b, yes), want, rtol=1e-4, atol=1e-5)
    assert len(target.calls) == 2
    target.fail_run = True
    with pytest.raises(InterpreterError, match="pytarget_h21\\) failed: ValueError"):
        lib(x, w, b, yes)
    target.fail_run = False
    mixed = rl.build(mod, byoc=[TARGET], max_depth=50)
    assert mixed.mode == "mixed"
    np.testing.assert_allclose(mixed(x, w, b, yes), want, rtol=1e-4, atol=1e-5)
    assert len(target.calls) == 3


def test_an_exported_library_runs_the_codegen_again_at_load(target, tmp_path):
    mod = rl.parse(CHAIN)
    args = _args(mod, 3)
    lib = rl.build(mod, byoc=[TARGET])
    want = lib(*args)
    path = str(tmp_path / "chain.rlib")
    lib.export_library(path)
    compiled = len(target.compiled)
    loaded = rl.runtime.load_module(path)
    assert len(target.compiled) > compiled
    np.testing.assert_allclose(loaded(*args), want, rtol=1e-6)


# ---------------------------------------------------------------- bad input

def test_an_unknown_target_is_an_error_listing_the_registered_ones(target):
    mod = rl.parse(CHAIN)
    with pytest.raises(ValueError, match="unknown BYOC target `nosuch`") as info:
        rl.build(mod, byoc=["nosuch"])
    assert TARGET in str(info.value)
    assert TARGET in registered_codegens()


def test_a_target_without_a_codegen_is_refused_by_build():
    with pytest.raises(ValueError, match="no codegen is registered"):
        rl.build(rl.parse(CHAIN), byoc="example")


def test_a_codegen_that_raises_is_a_diagnostic_at_the_partitioned_function(target):
    target.fail_compile = True
    mod = rl.parse(CHAIN, source_name="chain.relay")
    with pytest.raises(DiagnosticError) as info:
        rl.build(mod, byoc=[TARGET])
    (d,) = info.value.diagnostics
    assert d.severity is Severity.ERROR and d.code == "codegen"
    assert "@tvmgen_default_pytarget_h21_main_0" in d.message
    assert "cannot compile this region" in d.message
    assert d.span is not None and d.span.source_name == "chain.relay"


def test_a_callable_that_raises_at_run_time_names_the_function(target):
    mod = rl.parse(CHAIN)
    lib = rl.build(mod, byoc=[TARGET])
    target.fail_run = True
    with pytest.raises(InterpreterError, match=r"@tvmgen_default_pytarget_h21_main_0 "
                                               r"\(pytarget_h21\) failed: ValueError"):
        lib(*_args(mod))
    target.fail_run = False          # the library still works afterwards
    lib(*_args(mod))


def test_a_callable_returning_the_wrong_shape_is_an_error(target):
    mod = rl.parse(CHAIN)

    def bad(func, symbol):
        return lambda *arrays: np.zeros((2, 2), "float32")
    rl.register_codegen(TARGET)(bad)
    lib = rl.build(mod, byoc=[TARGET])
    with pytest.raises(InterpreterError, match=r"result 0 has shape \[2, 2\]"):
        lib(*_args(mod))


def test_a_pattern_that_matches_nothing_is_a_note(target):
    lib = rl.build(rl.parse(CHAIN), byoc=[TARGET])
    notes = [d for d in lib.notes if d.severity is Severity.NOTE]
    assert any(f"`{TARGET}.dense`" in d.message and "matched nothing" in d.message
               for d in notes)


# ---------------------------------------------------------------- relay build --byoc

def _cli(capsys, *argv):
    status = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return status, out.err


def test_relay_build_byoc_end_to_end(target, tmp_path, capsys):
    src = tmp_path / "chain.relay"
    src.write_text(CHAIN)
    out = str(tmp_path / "chain.rlib")
    status, err = _cli(capsys, "build", str(src), "--byoc", TARGET, "-o", out)
    assert status == 0, err
    assert "matched nothing" in err and "note" in err      # the .dense pattern
    assert target.compiled
    mod = rl.parse(CHAIN)
    args = _args(mod, 4)
    lib = rl.runtime.load_module(out)
    assert [kind for _, kind in lib.external_steps] == [TARGET]
    np.testing.assert_allclose(lib(*args), rl.build(mod)(*args), rtol=1e-4, atol=1e-5)


def test_relay_build_byoc_bad_input(target, tmp_path, capsys):
    src = tmp_path / "chain.relay"
    src.write_text(CHAIN)
    out = str(tmp_path / "chain.rlib")
    status, err = _cli(capsys, "build", str(src), "--byoc", "nosuch", "-o", out)
    assert status == 1 and "unknown BYOC target `nosuch`" in err and TARGET in err
    target.fail_compile = True
    status, err = _cli(capsys, "build", str(src), "--byoc", TARGET, "-o", out)
    assert status == 1
    assert "codegen failed on @tvmgen_default_pytarget_h21_main_0" in err
    assert f"{src}:" in err or "chain.relay:" in err


def test_evaluate_and_create_executor_take_byoc(target):
    mod = rl.parse(CHAIN)
    args = _args(mod, 5)
    want = rl.evaluate(mod, *args)
    np.testing.assert_allclose(rl.evaluate(mod, *args, byoc=[TARGET]), want,
                               rtol=1e-4, atol=1e-5)
    assert target.calls
    calls = len(target.calls)
    ex = rl.create_executor(mod, target="llvm", byoc=TARGET)
    np.testing.assert_allclose(ex(*args), want, rtol=1e-4, atol=1e-5)
    assert len(target.calls) == calls + 1


def test_shipped_targets_register_on_first_lookup():
    """`import relaylang` loads no target; the first `get_codegen(name)` imports
    relaylang/backend/byoc/<name>.py, which registers itself."""
    import subprocess
    import sys
    from pathlib import Path

    import relaylang.backend.byoc as pkg
    shipped = sorted(p.stem for p in Path(pkg.__file__).parent.glob("*.py")
                     if not p.stem.startswith("_") and p.stem not in ("registry", "runner"))
    if not shipped:
        pytest.skip("no shipped BYOC target")
    name = shipped[0]
    code = (f"import sys, relaylang as rl\n"
            f"from relaylang.backend.byoc import get_codegen, registered_codegens\n"
            f"mod = 'relaylang.backend.byoc.{name}'\n"
            f"assert {name!r} in registered_codegens() and mod not in sys.modules\n"
            f"assert callable(get_codegen({name!r})) and mod in sys.modules\n"
            f"assert get_codegen('no_such_target') is None\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
