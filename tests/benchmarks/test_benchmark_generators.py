"""Benchmark inputs (benchmarks/gen_models.py) and the report logic of benchmarks/parse.py."""
from __future__ import annotations

import re

import pytest
from bench_helpers import load_benchmark

gm = load_benchmark("gen_models")
bench = load_benchmark("parse")


@pytest.fixture(scope="module")
def gpt2() -> str:
    return gm.gpt2_module_text()


@pytest.fixture(scope="module")
def xdsl_parse():
    pytest.importorskip("xdsl")
    return bench.build_xdsl_parser()[0]


# --- GPT-2 Relay text ----------------------------------------------------------------------------

def test_gpt2_size_is_gpt2_sized(gpt2):
    assert 880 <= gm.count_lines(gpt2) <= 980
    assert 12_000 <= gm.count_tokens(gpt2) <= 15_500
    assert gm.count_bindings(gpt2) == gm.count_lines(gpt2) - 4   # version, def, result, }


def test_scale_20_is_twenty_times_larger(gpt2):
    large = gm.gpt2_module_text(scale=20)
    ratio = gm.count_bindings(large) / gm.count_bindings(gpt2)
    assert 18 <= ratio <= 21
    assert 18 <= gm.count_tokens(large) / gm.count_tokens(gpt2) <= 21
    assert gm.gpt2_module_text(layers=240) == large


def test_generator_is_deterministic(gpt2):
    assert gm.gpt2_module_text() == gpt2
    assert gm.gpt2_module_text(layers=2) == gm.gpt2_module_text(layers=2)
    assert gm.gpt2_module_text(layers=2) != gm.gpt2_module_text(layers=3)


def test_layout_is_tvm_printer_layout(gpt2):
    lines = gpt2.splitlines()
    assert lines[0] == '#[version = "0.0.5"]'
    assert lines[1].startswith("def @main(%input_ids: Tensor[(1, 64), int64] /* ty=")
    assert lines[1].endswith(") {") and lines[-1] == "}"
    assert "meta[" not in gpt2 and "#[metadata]" not in gpt2
    body = lines[2:-2]
    assert all(re.fullmatch(r"  %\d+ = .* /\* ty=[^*]*\*/;", line) for line in body)
    ids = re.search(r"  (%\d+) = reshape\(%input_ids, newshape=\[-1, 64\]\) "
                    r"/\* ty=Tensor\[\(1, 64\), int64\] \*/;", gpt2).group(1)
    assert f"= take(%wte, {ids}, axis=0) /* ty=Tensor[(1, 64, 768), float32] */;" in gpt2
    for needle in ("nn.layer_norm(", "nn.dense(", "nn.batch_matmul(", "transpose(", "tanh(",
                   "split(", "indices_or_sections=3, axis=2", "nn.softmax(", "axis=[-1]",
                   "strided_slice(", "strides=[1], axes=None", "where(", 'cast(', 'dtype="float32"',
                   "power(", "divide(", "multiply(", "0.5f /* ty=float32 */", "3f /*",
                   "1e-05f /*", "stack("):
        assert needle in gpt2, needle
    assert re.search(r"= %\d+\.0 /\*", gpt2)      # projections have their own binding


def test_render_numbers_in_post_order_from_the_result_and_shares_nodes():
    g = gm._GraphText()
    x = g.param("x", (2,))
    shared = g.call("add", [x, x], (2,))
    left = g.call("multiply", [shared, gm.lit("2f")], (2,))
    right = g.call("negative", [shared], (2,))
    lines, result = g.render(g.tuple([left, right]))
    assert lines == [
        "  %0 = add(%x, %x) /* ty=Tensor[(2), float32] */;",
        "  %1 = multiply(%0, 2f /* ty=float32 */) /* ty=Tensor[(2), float32] */;",
        "  %2 = negative(%0) /* ty=Tensor[(2), float32] */;",
    ]
    assert result == "(%1, %2)"


def test_graph_ids_defined_once_in_order_before_use(gpt2):
    body = gpt2.splitlines()[2:-1]
    defined = 0
    for line in body:
        m = re.match(r"  %(\d+) = (.*)", line)
        uses = [int(u) for u in re.findall(r"%(\d+)", m.group(2) if m else line)]
        assert all(u < defined for u in uses), line
        if m:
            assert int(m.group(1)) == defined
            defined += 1


def test_every_local_is_a_parameter_declared_once(gpt2):
    header = re.sub(r"/\*.*?\*/", "", gpt2.splitlines()[1])
    params = re.findall(r"%([A-Za-z_][A-Za-z0-9_/]*):", header)
    assert len(params) == len(set(params)) == gm.count_params(gpt2)
    used = set(re.findall(r"%([A-Za-z_][A-Za-z0-9_/]*)", "\n".join(gpt2.splitlines()[2:])))
    assert used == set(params)      # every weight used, nothing undeclared


def test_brackets_balance(gpt2):
    text = re.sub(r"/\*.*?\*/", "", gpt2)
    for a, b in ("()", "[]", "{}"):
        assert text.count(a) == text.count(b)


# --- token counting ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, n", [
    ("%0 = nn.dense(%x, %w, units=16);", 15),          # nn . dense: three tokens
    ("add(%1, 0.5f /* ty=float32 */)", 6),
    ("/* a /* nested */ still comment */ %x", 1),
    ("// line comment\n%x // trailing", 1),
    ("multiply(%6, -10000f)", 6),                      # the minus belongs to the literal
    ("%a - 1", 3),
    ("%t.0", 3),
    ("fn (%x: Tensor[(2, 3), float32]) -> float32 { %x }", 20),
    ('cast(%5, dtype="float32")', 8),
    ('#[version = "0.0.5"]\ndef @f() { 1f }', 8),
    ("meta[relay.Constant][0]", 1),
    ("1f #[metadata]\n{\"root\": 1, ]]]}", 2),         # JSON after the directive is not Relay
])
def test_count_tokens(text, n):
    assert gm.count_tokens(text) == n


def test_count_tokens_rejects_non_relay_characters():
    with pytest.raises(ValueError):
        gm.count_tokens("%a $ %b")


# --- MLIR for xDSL -------------------------------------------------------------------------------

def test_mlir_module_has_exact_op_count_and_verifies(xdsl_parse):
    for ops in (1, 13, 40):
        module = xdsl_parse(gm.mlir_module_text(ops, num_args=5))
        module.verify()
        func = module.body.block.first_op
        body_ops = [op.name for op in func.body.block.ops]
        assert len(body_ops) == ops + 1 and body_ops[-1] == "func.return"
        assert len(func.body.block.args) == 5


def test_mlir_matches_gpt2_op_count(gpt2, xdsl_parse):
    ops = gm.count_bindings(gpt2)
    text = gm.mlir_module_text(ops, gm.count_params(gpt2))
    assert text.startswith('"builtin.module"() ({')          # generic form
    assert len(re.findall(r"^    %\d+ = \"", text, re.MULTILINE)) == ops
    func = xdsl_parse(text).body.block.first_op
    names = {op.name for op in func.body.block.ops}
    assert {"arith.addf", "tensor.expand_shape", "math.tanh", "tensor.extract_slice"} <= names


# --- report logic of benchmarks/parse.py ---------------------------------------------------------

def _result(parser, ms, ops=1000, tokens=15_000, cpu=None):
    cpu = ms if cpu is None else cpu
    return bench.Result(parser, "m", 1000, tokens, ops, runs_ms=[ms * 2, ms, ms / 2],
                        cpu_ms=[cpu, cpu / 2, cpu * 2])


def test_targets_pass_and_fail():
    ours, theirs = _result("relaylang", 40.0), _result("xdsl", 200.0, tokens=None)
    rows = {r["target"]: r for r in bench.check_targets(ours, theirs)}
    assert rows["tokens/s into IR, GPT-2-sized"]["got"] == pytest.approx(375_000)
    assert all(r["pass"] for r in rows.values())
    assert rows["per-op speed-up over xDSL (min)"]["got"] == pytest.approx(5.0)


def test_speedup_verdict_takes_the_lower_of_wall_and_cpu():
    ours = _result("relaylang", 40.0, ops=1000)
    busy_xdsl = _result("xdsl", 400.0, ops=500, cpu=60.0)     # wall inflated by load
    assert bench.speedups(ours, busy_xdsl) == pytest.approx({"wall": 20.0, "cpu": 3.0})
    row = bench.check_targets(ours, busy_xdsl)[-1]
    assert row["got"] == pytest.approx(3.0) and not row["pass"]
    slow = {r["target"]: r["pass"] for r in bench.check_targets(_result("relaylang", 70.0),
                                                               _result("xdsl", 200.0))}
    assert slow == {"tokens/s into IR, GPT-2-sized": False, "median ms, GPT-2-sized": False,
                    "per-op speed-up over xDSL (min)": False}


def test_median_and_rates():
    r = _result("relaylang", 10.0)
    assert r.median_ms == 10.0
    assert r.rates()["lines_per_s"] == pytest.approx(100_000)
    assert r.rates()["tokens_per_s"] == pytest.approx(1_500_000)
    assert r.us_per_op == pytest.approx(10.0)


def test_time_runs_counts_calls():
    calls = []
    wall, cpu = bench.time_runs(lambda: calls.append(1), 4)
    assert len(wall) == len(cpu) == 4 == len(calls) and all(t >= 0 for t in wall + cpu)


def test_time_runs_separates_wall_from_cpu():
    import time
    wall, cpu = bench.time_runs(lambda: time.sleep(0.02), 1)
    assert wall[0] >= 19 and cpu[0] < 10


def _parser_or_skip():
    import relaylang
    if not hasattr(relaylang, "parse"):
        pytest.skip("relaylang.parse not available yet")
    return relaylang


def test_text_is_what_our_printer_prints():
    """Our printer follows TVM's; parsed and printed again, the text comes back
    unchanged except for the `ty=` comments (the parse is untyped)."""
    relaylang = _parser_or_skip()
    text = gm.gpt2_module_text(layers=2)
    printed = relaylang.astext(relaylang.parse(text))
    untyped = re.sub(r" /\* ty=[^*]*\*/", "", text)
    assert re.sub(r" /\* ty=[^*]*\*/", "", printed) == untyped


def test_benchmark_runs_end_to_end(capsys):
    _parser_or_skip()
    code = bench.main(["--repeat", "1", "--repeat-large", "1", "--layers", "1", "--scale", "2",
                       "--no-xdsl-large", "--json"])
    assert code == 0
    import json
    report = json.loads(capsys.readouterr().out)
    mine = report["results"][0]
    assert mine["ir_ops"] == mine["ops"] + 1
    assert mine["tokens_per_s"] > 0 and len(report["targets"]) == 3
    assert report["command"].startswith("python benchmarks/parse.py --repeat 1")
