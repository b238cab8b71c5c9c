"""benchmarks/gen_resnet.py (ResNet-50 text + meta constants) and benchmarks/typecheck.py."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from bench_helpers import load_benchmark

import relaylang as rl
from relaylang.ir.expr import Constant
from relaylang.ir.traverse import post_order
from relaylang.typing import check_module

gm = load_benchmark("gen_models")
gr = load_benchmark("gen_resnet")
tc = load_benchmark("typecheck")

BINDING = re.compile(r"^  %\d+ = .* /\* ty=([^*]*) \*/;$", re.MULTILINE)


@pytest.fixture(scope="module")
def resnet() -> tuple[str, dict]:
    return gr.resnet50_module()


@pytest.fixture(scope="module")
def resnet_mod(resnet):
    text, metadata = resnet
    return rl.parse(text, metadata=metadata)


# --- the ResNet-50 generator -------------------------------------------------------------------

def test_resnet_sizes(resnet):
    text, metadata = resnet
    assert gm.count_lines(text) == 230       # the "~230 lines"
    assert gm.count_bindings(text) == 226    # the softmax is the inlined result
    assert text.count("nn.conv2d(") == 53     # 1 stem + 16 units x 3 + 4 projections
    assert text.count("nn.batch_norm(") == 51 == len(re.findall(r"= %\d+\.0 /\*", text))
    assert len(re.findall(r"= add\(", text)) == 16
    for op in ("nn.max_pool2d(", "nn.global_avg_pool2d(", "nn.batch_flatten(", "nn.dense(",
               "nn.bias_add(", "nn.softmax("):
        assert text.count(op) == 1, op
    weights = metadata["relay.Constant"]
    assert len(weights) == 53 + 51 * 4 + 2
    assert 25_500_000 < sum(w.size for w in weights) < 25_700_000     # ResNet-50's 25.6M


def test_resnet_parses_with_metadata(resnet, resnet_mod):
    _, metadata = resnet
    assert tc.ir_counts(resnet_mod) == (498, 227)    # ~500 nodes; 176 calls + 51 projections
    consts = [n for n in post_order(resnet_mod["main"]) if isinstance(n, Constant)]
    assert [c.data.shape for c in consts] == [w.shape for w in metadata["relay.Constant"]]
    assert {c.data.dtype for c in consts} == {np.dtype("float32")}
    params = resnet_mod["main"].params
    assert [(p.name_hint, p.type_annotation.shape) for p in params] == [("data", (1, 3, 224, 224))]


def test_resnet_needs_its_metadata(resnet):
    with pytest.raises(rl.DiagnosticError, match="metadata"):
        rl.parse(resnet[0])


def test_meta_constants_are_numbered_in_print_order(resnet):
    text, metadata = resnet
    indices = [int(i) for i in re.findall(r"meta\[relay\.Constant\]\[(\d+)\]", text)]
    assert indices == list(range(len(metadata["relay.Constant"])))
    annotated = re.findall(r"meta\[relay\.Constant\]\[\d+\] /\* ty=([^*]*) \*/", text)
    assert annotated == [gm.tensor_type(w.shape) for w in metadata["relay.Constant"]]


def test_resnet_layers_are_resnet50(resnet):
    text, metadata = resnet
    weights = metadata["relay.Constant"]
    assert weights[4].shape == (64, 3, 7, 7) and weights[-2].shape == (1000, 2048)
    assert ("nn.conv2d(%1, meta[relay.Constant][4] /* ty=Tensor[(64, 3, 7, 7), float32] */, "
            "strides=[2, 2], padding=[3, 3, 3, 3], channels=64, kernel_size=[7, 7]) "
            "/* ty=Tensor[(1, 64, 112, 112), float32] */;") in text
    assert "epsilon=2e-05f, scale=False)" in text and text.count("scale=False") == 1
    assert "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 64, 56, 56)" \
        in text
    assert "nn.global_avg_pool2d(%221) /* ty=Tensor[(1, 2048, 1, 1), float32] */" in text
    assert text.splitlines()[-2] == "  nn.softmax(%225) /* ty=Tensor[(1, 1000), float32] */"
    # batch norm parameters: gamma and moving variance 1, beta and moving mean 0
    assert [float(w.flat[0]) for w in weights[5:9]] == [1.0, 0.0, 0.0, 1.0]


def test_resnet_batch_and_units():
    text, metadata = gr.resnet50_module(batch=2, units=(1, 1, 1, 1))
    assert gm.count_bindings(text) == 14 + 13 * 4 + 4    # stem+head 14, 13 a unit, projections
    assert "def @main(%data: Tensor[(2, 3, 224, 224), float32]" in text
    assert text.splitlines()[1].endswith("-> Tensor[(2, 1000), float32] {")
    assert rl.parse(text, metadata=metadata)["main"] is not None
    assert gr.resnet50_module()[0] == gr.resnet50_module()[0]


# --- chains ------------------------------------------------------------------------------------

@pytest.mark.parametrize("let", [False, True])
def test_chain_text(let):
    text = tc.chain_text(300, let)
    mod = rl.parse(text)
    assert tc.ir_counts(mod)[1] == 300
    assert gm.count_bindings(text) == (0 if let else 299)
    assert text.count("let %v") == (300 if let else 0)
    typed, diagnostics = check_module(mod)
    assert diagnostics == []
    assert rl.astext(typed["main"].checked_type) == \
        "fn (Tensor[(1, 64), float32]) -> Tensor[(1, 64), float32]"


def test_chain_sizes_parse():
    assert tc._sizes("100_000,1000, 10000,") == [1000, 10000, 100000]


# --- verdicts and report -----------------------------------------------------------------------

def _row(kind: str, size: int, ms: float, cpu: float | None = None, **kw) -> object:
    r = tc.Result(f"{kind} {size}", kind, size + 3, size * 2, size, size, **kw)
    r.runs_ms, r.cpu_ms = [ms, ms, ms], [cpu if cpu is not None else ms] * 3
    return r


def test_flat_scaling_passes_and_superlinear_fails():
    flat = [_row("graph chain", 1000, 20.0), _row("graph chain", 100_000, 2_400.0)]
    steep = [_row("let chain", 1000, 20.0), _row("let chain", 100_000, 8_000.0)]
    scale = tc.scaling(flat + steep)
    assert scale["graph chain"]["ratio"]["wall"] == pytest.approx(1.2)
    assert scale["let chain"]["us_per_op"] == [20.0, 80.0]
    rows = {r["target"]: r for r in tc.check_targets(flat + steep, scale)}
    assert rows["us/op ratio, graph chain 1,000..100,000"]["pass"]
    assert not rows["us/op ratio, let chain 1,000..100,000"]["pass"]


def test_ratio_verdict_takes_the_lower_of_wall_and_cpu():
    rows = [_row("graph chain", 1000, 20.0, 20.0), _row("graph chain", 100_000, 8_000.0, 2_500.0)]
    target, = tc.check_targets(rows, tc.scaling(rows))
    assert target["got"] == pytest.approx(1.25) and target["pass"]


def test_model_verdicts():
    fast, slow, wrong = (tc.Result(n, "model", 10, 20, 10) for n in ("fast", "slow", "wrong"))
    fast.runs_ms, slow.runs_ms, wrong.runs_ms = [120.0], [650.0], [1.0]
    wrong.error_count, wrong.errors = 3, ["3:8: operator `nn.conv2d` has no type relation yet"]
    rows = tc.check_targets([fast, slow, wrong], {})
    assert [r["pass"] for r in rows] == [True, False, False]
    assert rows[1]["got"] == pytest.approx(0.65) and rows[2]["note"] == "3 type errors"
    report = tc.format_report({"scaling": {}, "targets": rows}, [fast, slow, wrong])
    assert re.search(r"check s, fast +< 0\.5 +0\.120  PASS", report)
    assert re.search(r"check s, slow +< 0\.5 +0\.650  FAIL", report)
    assert "    3:8: operator `nn.conv2d` has no type relation yet" in report


def test_recursion_error_is_a_failure_to_run(monkeypatch, capsys):
    def deep(text, metadata):
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(tc, "_check_once", deep)
    res = tc.bench(tc.Result("let chain 10", "let chain", 13, size=10), "", None, 3)
    assert res.crash.startswith("RecursionError") and res.runs_ms == []
    target, = tc.check_targets([res], tc.scaling([res]))
    assert not target["pass"] and "RecursionError" in target["note"]
    assert tc.main(["--no-models", "--sizes", "10", "--repeat", "1"]) == 1
    assert "FAIL  (RecursionError" in capsys.readouterr().out


# --- end to end (needs the op type relations) ----------------------------------------------------

def test_resnet_type_checks_to_its_annotations(resnet, resnet_mod):
    """Every `/* ty=... */` the generator wrote is the type inference gives that node."""
    typed, diagnostics = check_module(resnet_mod)
    assert [d.short() for d in diagnostics] == []
    nodes = [n for n in post_order(typed["main"].body)
             if not isinstance(n, Constant) and n.children()]
    text = resnet[0]
    written = BINDING.findall(text) + [re.search(r"\) /\* ty=([^*]*) \*/\n}", text).group(1)]
    assert [rl.astext(n.checked_type) for n in nodes] == written


def test_gpt2_type_checks():
    _, diagnostics = check_module(rl.parse(gm.gpt2_module_text(layers=1)))
    assert [d.short() for d in diagnostics] == []


def test_benchmark_json_end_to_end(capsys):
    argv = ["--sizes", "100,1000", "--repeat", "1", "--repeat-large", "1", "--layers", "1",
            "--json"]
    assert tc.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    by_name = {r["module"]: r for r in report["results"]}
    assert set(by_name) == {"resnet50 (meta constants)", "gpt2 1 layers", "graph chain 100",
                            "graph chain 1,000", "let chain 100", "let chain 1,000"}
    assert all(r["error_count"] == 0 and r["crash"] is None for r in report["results"])
    assert by_name["resnet50 (meta constants)"]["ops"] == 227
    assert report["scaling"]["let chain"]["sizes"] == [100, 1000]
    assert [t["target"] for t in report["targets"]] == [
        "check s, resnet50 (meta constants)", "check s, gpt2 1 layers",
        "us/op ratio, graph chain 100..1,000", "us/op ratio, let chain 100..1,000"]
    assert report["command"].startswith("python benchmarks/typecheck.py --sizes 100,1000")
