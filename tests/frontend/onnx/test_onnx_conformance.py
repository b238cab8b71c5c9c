"""ONNX's conformance tests (`onnx.backend.test`) on relaylang's ONNX backend.

- Node tests: every case `onnx.backend.test.case.node.collect_testcases()` builds in
  memory from ONNX's generators (one model of one node, or its function expansion, with
  inputs and expected outputs; no downloads), run on the interpreter.
- Model tests: the models shipped under onnx/backend/test/data/{simple,
  pytorch-converted, pytorch-operator} with their test_data_set_*/input_*.pb and
  output_*.pb, on the interpreter and on the LLVM backend.
  (The light models of data/light are tested in test_onnx_light_models.py, both backends.)

Outputs are compared as ONNX's runner compares them (`Runner.assert_similar_outputs`:
shapes, dtypes, values at the case's rtol/atol, 1e-3/1e-7 unless its data.json says).

Cases listed in conformance_exclusions.txt are skipped with the reason of their group;
every other case must pass. Names there: a node test by its name (`test_abs`), a model
test as `KIND/NAME` (`pytorch-converted/test_Conv1d`), `KIND/NAME[llvm]` when only the
LLVM backend fails it. `python tests/frontend/onnx/test_onnx_conformance.py` runs every case
and writes the file anew from what fails (grouped by reason); it prints the counts.
"""
from __future__ import annotations

import functools
import glob
import io
import os
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

EXCLUSIONS = Path(__file__).with_name("conformance_exclusions.txt")
DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
MODEL_KINDS = ("simple", "pytorch-converted", "pytorch-operator")
TARGETS = ("interp", "llvm")

# The node-test pass rate (cases passing / all cases, excluding nothing) this suite keeps:
# test_node_pass_rate fails below it. Raise it as converters land.
NODE_PASS_RATE_FLOOR = 97.0    # percent: 1833/1884 on 2026-11-25


# ---------------------------------------------------------------- cases

@functools.cache
def node_cases() -> dict[str, Any]:
    """name -> TestCase of every node test ONNX's generators make."""
    from onnx.backend.test.case.node import collect_testcases
    state = np.random.get_state()
    np.random.seed(0)          # the generators draw inputs from NumPy's global generator:
    try:                       # the same data in every run and every xdist worker
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cases = collect_testcases(None)
    finally:
        np.random.set_state(state)
    return {c.name: c for c in cases}


def model_case_dirs() -> list[tuple[str, str]]:
    """(kind, name) of every shipped model test."""
    out = []
    for kind in MODEL_KINDS:
        root = DATA / kind
        if root.is_dir():
            out.extend((kind, d.name) for d in sorted(root.iterdir())
                       if (d / "model.onnx").exists())
    return out


def model_tolerances(kind: str, name: str) -> tuple[float, float]:
    import json
    path = DATA / kind / name / "data.json"
    rtol, atol = 1e-3, 1e-7
    if path.exists():
        data = json.loads(path.read_text())
        rtol, atol = data.get("rtol", rtol), data.get("atol", atol)
    return rtol, atol


def _load_value(path: str, type_proto: Any) -> Any:
    """A test_data_set file as the runner loads it (`Runner._load_proto`)."""
    from onnx import numpy_helper
    data = Path(path).read_bytes()
    if type_proto.HasField("sequence_type"):
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return numpy_helper.to_list(seq)
    if type_proto.HasField("optional_type"):
        opt = onnx.OptionalProto()
        opt.ParseFromString(data)
        return numpy_helper.to_optional(opt)
    tensor = onnx.TensorProto()
    tensor.ParseFromString(data)
    return numpy_helper.to_array(tensor)


def model_data_sets(model: Any, case_dir: Path) -> list[tuple[list[Any], list[Any]]]:
    sets = []
    for d in sorted(glob.glob(str(case_dir / "test_data_set*"))):
        n_in = len(glob.glob(os.path.join(d, "input_*.pb")))
        n_out = len(glob.glob(os.path.join(d, "output_*.pb")))
        ins = [_load_value(os.path.join(d, f"input_{i}.pb"), model.graph.input[i].type)
               for i in range(n_in)]
        outs = [_load_value(os.path.join(d, f"output_{i}.pb"), model.graph.output[i].type)
                for i in range(n_out)]
        sets.append((ins, outs))
    return sets


def _normalize(value: Any) -> Any:
    if isinstance(value, onnx.TensorProto):
        from onnx import numpy_helper
        return numpy_helper.to_array(value)
    return value


def run_case(model: Any, data_sets: Any, rtol: float, atol: float,
             target: str = "interp") -> None:
    """Prepare `model` on relaylang's backend and check each data set as ONNX's runner
    does; raises on any difference (or when the model cannot be imported)."""
    from onnx.backend.test.runner import Runner

    from relaylang.frontend.onnx_backend import RelayBackend
    rep = RelayBackend.prepare(model, "CPU", target=target)
    for inputs, outputs in data_sets:
        got = rep.run([_normalize(i) for i in inputs])
        Runner.assert_similar_outputs([_normalize(o) for o in outputs], got,
                                      rtol=rtol, atol=atol)


def run_node_case(name: str) -> None:
    case = node_cases()[name]
    run_case(case.model, case.data_sets, case.rtol, case.atol)


def run_model_case(kind: str, name: str, target: str) -> None:
    case_dir = DATA / kind / name
    model = onnx.load(str(case_dir / "model.onnx"))
    rtol, atol = model_tolerances(kind, name)
    run_case(model, model_data_sets(model, case_dir), rtol, atol, target)


# ---------------------------------------------------------------- exclusions

def read_exclusions(path: Path = EXCLUSIONS) -> dict[str, str]:
    """test name -> the reason of its group (the `# reason` header above it)."""
    out: dict[str, str] = {}
    reason = "excluded"
    if not path.exists():
        return out
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            reason = line.lstrip("#").strip() or reason
            continue
        if line in out:
            raise ValueError(f"{path.name}: {line} is listed twice")
        out[line] = reason
    return out


EXCLUDED = read_exclusions()


def model_key(kind: str, name: str, target: str) -> list[str]:
    """The exclusion names that skip a model test on `target`."""
    keys = [f"{kind}/{name}"]
    if target != "interp":
        keys.append(f"{kind}/{name}[{target}]")
    return keys


# ---------------------------------------------------------------- the tests

@pytest.mark.parametrize("name", sorted(node_cases()))
def test_node(name: str) -> None:
    if name in EXCLUDED:
        pytest.skip(EXCLUDED[name])
    run_node_case(name)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind,name", model_case_dirs(), ids=lambda v: v)
def test_model(kind: str, name: str, target: str) -> None:
    for key in model_key(kind, name, target):
        if key in EXCLUDED:
            pytest.skip(EXCLUDED[key])
    run_model_case(kind, name, target)


def test_node_pass_rate() -> None:
    """The share of node tests that pass (all of those not excluded: test_node checks
    each) is at least the floor recorded above."""
    total = len(node_cases())
    excluded = sum(1 for n in node_cases() if n in EXCLUDED)
    passed = total - excluded
    rate = 100.0 * passed / total
    print(f"ONNX node tests: {passed}/{total} pass ({rate:.1f}%), {excluded} excluded")
    assert total > 1000, f"only {total} node test cases were generated"
    assert rate >= NODE_PASS_RATE_FLOOR, \
        f"node-test pass rate {rate:.1f}% is below the floor {NODE_PASS_RATE_FLOOR}%"


def test_exclusions_name_real_cases() -> None:
    """Every exclusion names a case that exists (a stale name hides nothing)."""
    known = set(node_cases())
    for kind, name in model_case_dirs():
        known.add(f"{kind}/{name}")
        known.update(f"{kind}/{name}[{t}]" for t in TARGETS if t != "interp")
    stale = sorted(n for n in EXCLUDED if n not in known)
    assert not stale, f"conformance_exclusions.txt names unknown cases: {stale[:10]}"


def test_unsupported_op_exclusions_are_still_unsupported() -> None:
    """A case excluded as `unsupported op X` still has an op without a converter: when one
    lands, the case must be run again (regenerate the file: see the module docstring)."""
    from relaylang.frontend.onnx.importer import model_opset, unsupported_nodes
    stale = []
    for name, reason in EXCLUDED.items():
        if not reason.startswith("unsupported op") or name not in node_cases():
            continue
        model = node_cases()[name].model
        if not unsupported_nodes(model.graph, model_opset(model)):
            stale.append(name)
    assert not stale, ("converters exist now for these cases excluded as unsupported; run "
                       f"them and update conformance_exclusions.txt: {stale[:20]}")


# ---------------------------------------------------------------- the backend itself

def _add_model() -> Any:
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [onnx.numpy_helper.from_array(np.arange(3, dtype=np.float32), "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("target", TARGETS)
def test_backend_prepare_and_run(target: str) -> None:
    from relaylang.frontend.onnx_backend import RelayBackend
    x = np.ones((2, 3), np.float32)
    rep = RelayBackend.prepare(_add_model(), "CPU", target=target)
    assert rep.input_names == ["x"]
    for inputs in ([x], {"x": x}, x):
        (y,) = rep.run(inputs)
        np.testing.assert_array_equal(y, x + np.arange(3, dtype=np.float32))
        assert y.dtype == np.float32
    with pytest.raises(ValueError, match="takes 1 inputs"):
        rep.run([x, x])


def test_backend_devices_run_node_and_unsupported_ops() -> None:
    from onnx import TensorProto, helper

    from relaylang.frontend.onnx import UnsupportedOps
    from relaylang.frontend.onnx_backend import RelayBackend
    assert RelayBackend.supports_device("CPU") and not RelayBackend.supports_device("CUDA")
    node = helper.make_node("Relu", ["a"], ["b"])
    a = np.array([-1.0, 2.0], np.float32)
    np.testing.assert_array_equal(RelayBackend.run_node(node, [a])[0], [0.0, 2.0])
    graph = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"], name="n7",
                                                domain="my.domain")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("my.domain", 1)])
    with pytest.raises(UnsupportedOps, match=r"my.domain.NoSuchOp \(node n7, opset 13\)"):
        RelayBackend.prepare(model)


def test_backend_with_onnx_backend_test_runner() -> None:
    """ONNX's own runner (`onnx.backend.test.BackendTest`) drives the backend: a node test
    that passes here passes there."""
    import unittest

    import onnx.backend.test

    from relaylang.frontend.onnx_backend import RelayBackend
    backend_test = onnx.backend.test.BackendTest(RelayBackend, __name__)
    backend_test.include(r"^test_(relu|add_bcast|softmax_axis_0)_cpu$")
    result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(
        backend_test.test_suite)
    assert result.testsRun - len(result.skipped) == 3        # the rest: not included
    assert result.wasSuccessful(), result.failures + result.errors


# ---------------------------------------------------------------- regenerating exclusions

def classify(error: BaseException, target: str = "interp") -> str:
    """The exclusion group of a failure."""
    from relaylang.frontend.onnx import OnnxImportError, UnsupportedOps
    if isinstance(error, UnsupportedOps):
        return f"unsupported op {error.missing[0][0]}"     # the first in graph order
    prefix = "LLVM backend: " if target != "interp" else ""
    if isinstance(error, OnnxImportError):
        message = re.sub(r"^\S+ node '[^']*': ", "", str(error))
        message = re.sub(r"^\S+ node: ", "", message)
        if "must be a constant" in message or "known at import" in message:
            return prefix + "needs dynamic shapes: an input the op needs at import (shape, " \
                            "axes, pads, ...) is a run-time value"
        if "batched MatMul needs static shapes" in message:
            return prefix + "needs dynamic shapes: batched MatMul over dims unknown at import"
        if "does not type-check" in message:
            return prefix + "importer: the imported program does not type-check"
        found = re.search(r"ONNX element type (\d+) is not supported", message)
        if found:
            name = onnx.TensorProto.DataType.Name(int(found.group(1)))
            return prefix + f"needs dtype {name} in relaylang (no such dtype)"
        found = re.search(r"there is no ([^)]*?) op", message)
        if found:
            return prefix + f"needs op {found.group(1)} in relaylang"
        if "not a tensor" in message:
            return prefix + "needs sequence/optional values in relaylang (graph input)"
        return prefix + "converter refuses: " + _short(message)
    if isinstance(error, AssertionError):
        text = str(error)
        if "incorrect shape" in text:
            return prefix + "wrong output shape"
        if "Not equal to tolerance" in text:
            return prefix + "numerics: outside the runner's rtol/atol"
        if "dtype(" in text:
            return prefix + "wrong output dtype"
        if "Arrays are not equal" in text:
            return prefix + "wrong values (exact dtypes)"
        return prefix + "wrong output count"
    return prefix + f"backend bug: {type(error).__name__}: {_short(str(error))}"


def _short(text: str) -> str:
    text = text.strip().splitlines()[0] if text.strip() else ""
    text = re.sub(r"'[^']*'", "'...'", text)
    text = re.sub(r"\d+", "N", text)
    text = re.sub(r"\((?:N|\?)(?:, (?:N|\?))*,?\)", "(shape)", text)
    return text[:100]


def _outcome(run: Callable[[], None], target: str = "interp") -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                run()
    except Exception as e:  # noqa: BLE001 -- every failure is classified
        return classify(e, target)
    return None


def regenerate(path: Path = EXCLUSIONS) -> None:
    """Run every case (nothing excluded) and write the exclusion file from the failures."""
    failures: dict[str, list[str]] = {}
    node_total = 0
    node_pass = 0
    for name in sorted(node_cases()):
        node_total += 1
        reason = _outcome(functools.partial(run_node_case, name))
        if reason is None:
            node_pass += 1
        else:
            failures.setdefault(reason, []).append(name)
    model_total = {t: 0 for t in TARGETS}
    model_pass = {t: 0 for t in TARGETS}
    for kind, name in model_case_dirs():
        interp_reason = None
        for target in TARGETS:
            model_total[target] += 1
            reason = _outcome(functools.partial(run_model_case, kind, name, target), target)
            if reason is None:
                model_pass[target] += 1
                continue
            if target == "interp":
                interp_reason = reason
                failures.setdefault(reason, []).append(f"{kind}/{name}")
                break                     # excluded on every target
            if interp_reason is None:
                failures.setdefault(reason, []).append(f"{kind}/{name}[{target}]")
    lines = ["# ONNX conformance cases relaylang does not pass yet, grouped by reason",
             "# (tests/frontend/onnx/test_onnx_conformance.py skips them; written by running it",
             "# as a script). Node tests by name; model tests as KIND/NAME, KIND/NAME[llvm]",
             "# when only the LLVM backend fails.", ""]
    for reason in sorted(failures, key=lambda r: (-len(failures[r]), r)):
        lines.append(f"# {reason}")
        lines.extend(sorted(failures[reason]))
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    rate = 100.0 * node_pass / node_total
    print(f"node tests: {node_pass}/{node_total} pass ({rate:.1f}%)")
    for t in TARGETS:
        print(f"model tests on {t}: {model_pass[t]}/{model_total[t]} pass")
    for reason in sorted(failures, key=lambda r: (-len(failures[r]), r)):
        print(f"{len(failures[reason]):5d}  {reason}")


if __name__ == "__main__":
    regenerate(Path(sys.argv[1]) if len(sys.argv) > 1 else EXCLUSIONS)
