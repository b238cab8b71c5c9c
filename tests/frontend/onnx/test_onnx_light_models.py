"""The light models ONNX ships (onnx/backend/test/data/light: AlexNet, DenseNet-121,
Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512; weights made by
ConstantOfShape): each imported, run on the interpreter and on the LLVM backend to the
expected output (light_*_output_0.pb), and its program text checked: printed as
`relay import` prints it, `relay fmt --check`-clean, and parsed back structurally equal.

The input is what ONNX's runner feeds these models (`Runner.generate_dummy_data(x,
seed=0, random=False)`: arange(n) / n in the input's shape, unknown dims 1) and the
tolerances are those of onnx/backend/test/data/real/test_<model>/data.json.

The text of a model's constants is large (VGG-19's is 770 MB of base64), so the text
round trip runs on the model's program with each constant replaced by a one-element
constant of its dtype (the structure exactly; constant contents are the metadata codec's
tests), and on the whole program, constants included, for SqueezeNet.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import numpy_helper
from onnx.backend.test.runner import Runner

import relaylang as rl
from relaylang.cli.import_cmd import program_text
from relaylang.frontend.onnx_backend import RelayBackendRep
from relaylang.ir.expr import Constant
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import rewrite
from relaylang.syntax.format import format_text

DATA = Path(onnx.__file__).parent / "backend" / "test" / "data"
LIGHT = DATA / "light"
NAMES = sorted(p.name[len("light_"):-len(".onnx")] for p in LIGHT.glob("light_*.onnx"))
FULL_TEXT = ["squeezenet"]          # small enough to print, format and parse whole

# Models that cannot import yet: op -> why (expected failures, strict=False).
MISSING: dict[str, str] = {}


def _params(names: list[str], *targets: str) -> list[Any]:
    out = []
    for name in names:
        marks = [pytest.mark.xfail(reason=MISSING[name], strict=False)] \
            if name in MISSING else []
        for target in targets or (None,):
            values = (name, target) if targets else (name,)
            out.append(pytest.param(*values, marks=marks,
                                    id=f"{name}-{target}" if targets else name))
    return out


def tolerances(name: str) -> tuple[float, float]:
    path = DATA / "real" / f"test_{name}" / "data.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    return data.get("rtol", 1e-3), data.get("atol", 1e-7)


@functools.lru_cache(maxsize=1)
def imported(name: str) -> tuple[Any, IRModule, dict[str, np.ndarray]]:
    model = onnx.load(str(LIGHT / f"light_{name}.onnx"))
    mod, params = rl.frontend.from_onnx(model)
    return model, mod, params


def dummy_inputs(model: Any) -> list[np.ndarray]:
    """The runner's inputs for a light model (`generate_dummy_data`, random=False)."""
    inits = {i.name for i in model.graph.initializer}
    return [Runner.generate_dummy_data(vi, seed=0, random=False)
            for vi in model.graph.input if vi.name not in inits]


def expected(name: str) -> list[np.ndarray]:
    tensor = onnx.load_tensor(str(LIGHT / f"light_{name}_output_0.pb"))
    return [numpy_helper.to_array(tensor)]


@pytest.mark.parametrize("name,target", _params(NAMES, "interp", "llvm"))
def test_light_model_runs_to_the_expected_output(name: str, target: str) -> None:
    model, mod, params = imported(name)
    rep = RelayBackendRep(model, mod, params, target=target)
    got = rep.run(dummy_inputs(model))
    rtol, atol = tolerances(name)
    Runner.assert_similar_outputs(expected(name), got, rtol=rtol, atol=atol)


def shrink_constants(mod: IRModule) -> IRModule:
    """`mod` with each non-scalar constant replaced by a one-element one of its dtype."""
    def small(old: Any, new: Any) -> Any:
        if isinstance(old, Constant) and np.asarray(old.data).ndim > 0:
            data = np.asarray(old.data)
            return rl.const(np.arange(1, dtype=data.dtype) if data.dtype.kind != "b"
                            else np.zeros(1, bool))
        return None
    functions = {gv: rewrite(fn, small) for gv, fn in mod.functions.items()}
    return IRModule(functions, dict(mod.type_definitions))


def check_text_round_trip(mod: IRModule) -> None:
    text = program_text(mod)
    formatted = format_text(text)
    assert formatted.dropped_comments == 0
    assert formatted.text == text, "relay fmt --check would rewrite the imported text"
    back = rl.parse(text)
    assert rl.structural_equal(back, mod), "the text does not parse back to the program"


@pytest.mark.parametrize("name", _params(NAMES))
def test_light_model_text_round_trip(name: str) -> None:
    mod = imported(name)[1]
    check_text_round_trip(shrink_constants(mod))


@pytest.mark.parametrize("name", _params(FULL_TEXT))
def test_light_model_whole_text_round_trip(name: str) -> None:
    model, mod, params = imported(name)
    text = program_text(mod)
    assert "#[metadata]" in text
    check_text_round_trip(mod)
    back = rl.parse(text)
    got = RelayBackendRep(model, back, params).run(dummy_inputs(model))
    rtol, atol = tolerances(name)
    Runner.assert_similar_outputs(expected(name), got, rtol=rtol, atol=atol)


def test_every_light_model_is_listed() -> None:
    assert len(NAMES) == 9 and {"resnet50", "vgg19", "squeezenet"} <= set(NAMES)
