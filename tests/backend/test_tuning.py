"""Schedule search (relaylang/backend/tuning/): tasks, the search, the database, rl.tune,
rl.build(tuning_db=...), relay tune / relay build --tuning-db."""
from __future__ import annotations

import json
import os
import math

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.tuning import Database, TuningDatabaseWarning, extract_tasks, load
from relaylang.backend.tuning import measure as measure_mod
from relaylang.backend.tuning.database import Record
from relaylang.backend.tuning.search import CostModel, Trial, search
from relaylang.backend.tuning.tasks import NotTunable

MLP = """#[version = "0.0.5"]
def @main(%x: Tensor[(16, 96), float32], %w: Tensor[(64, 96), float32],
          %w2: Tensor[(10, 64), float32]) {
  %0 = nn.relu(nn.dense(%x, %w));
  %1 = nn.relu(nn.dense(%0, %w2));
  nn.softmax(%1)
}
"""


def _mlp():
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((64, 96)).astype("float32"),
              "w2": rng.standard_normal((10, 64)).astype("float32")}
    x = rng.standard_normal((16, 96)).astype("float32")
    return rl.parse(MLP), params, x


def _expected(params, x):
    h = np.maximum(x @ params["w"].T, 0)
    z = np.maximum(h @ params["w2"].T, 0)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- search

def test_search_exhaustive_when_the_space_is_small():
    space = {"a": (1, 2, 3), "b": (10, 20)}
    seen = []

    def measure(values):
        seen.append((values["a"], values["b"]))
        return Trial((), float(values["a"] * values["b"]))
    trials = search(space, {"a": 2, "b": 10}, budget=10, measure=measure)
    assert seen[0] == (2, 10)                       # the default first
    assert sorted(seen) == sorted((a, b) for a in (1, 2, 3) for b in (10, 20))
    assert min(t.ms for t in trials) == 10.0


def test_search_finds_the_optimum_of_a_smooth_space():
    space = {f"k{i}": (1, 2, 4, 8, 16) for i in range(4)}        # 625 points

    def cost(values):
        return sum((math.log2(v) - 2) ** 2 for v in values.values()) + 1.0
    trials = search(space, {k: 1 for k in space}, budget=60,
                    measure=lambda v: Trial((), cost(v)), seed=3)
    assert len(trials) == 60 and len({t.point for t in trials}) == 60
    assert min(t.ms for t in trials) <= 2.0          # the default costs 17


def test_search_stops_when_told():
    calls = []
    trials = search({"a": tuple(range(50))}, {"a": 0}, budget=40,
                    measure=lambda v: calls.append(v) or Trial((), 1.0),
                    stop=lambda: len(calls) >= 5)
    assert len(trials) == 5


def test_cost_model_ranks_what_it_saw():
    model = CostModel([("a", (1, 2, 4))])
    model.fit([Trial((1,), 4.0), Trial((2,), 2.0), Trial((4,), 1.0)])
    assert model.predict((4,)) < model.predict((2,)) < model.predict((1,))


# ---------------------------------------------------------------- tasks

def test_extract_tasks_dedupes_and_weights():
    text = MLP.replace("nn.softmax(%1)", "%2 = nn.relu(nn.dense(%1, %w3));\n  nn.relu(nn.dense(%2, %w3))")
    text = text.replace("%w2: Tensor[(10, 64), float32])",
                        "%w2: Tensor[(10, 64), float32], %w3: Tensor[(10, 10), float32])")
    mod = rl.parse(text)
    tasks = extract_tasks(mod)
    by_ops = {tuple(t.ops): t for t in tasks}
    weights = sorted(t.weight for t in tasks)
    assert weights[-1] == 2                          # the two dense(10x10) share a kernel
    for t in tasks:
        assert t.space and all(t.defaults[k] in t.space[k] for k in t.space)
    assert by_ops


def test_a_program_that_is_not_a_graph_is_not_tunable():
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(4,), float32], %n: int32) -> Tensor[(4,), float32] {
  if (%n > 0) { @main(%x + 1f, %n - 1) } else { %x }
}
"""
    with pytest.raises(NotTunable, match="not a static dataflow graph"):
        extract_tasks(rl.parse(text))


def test_kernel_keys_are_the_same_in_every_process():
    """A database written by one `relay tune` is read by later processes: the kernels'
    keys (structural hashes) must not depend on PYTHONHASHSEED."""
    import os
    import subprocess
    import sys
    code = ("import relaylang as rl\n"
            "from relaylang.backend.tuning.tasks import extract_tasks\n"
            "mod = rl.parse('#[version = \"0.0.5\"]\\n"
            "def @main(%x: Tensor[(8, 32), float32], %w: Tensor[(16, 32), float32]) "
            "{ nn.relu(nn.dense(%x, %w, units=None)) }')\n"
            "print(sorted(t.key for t in extract_tasks(mod)))\n")
    seen = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
        seen.add(out.stdout.strip())
    assert len(seen) == 1, seen


# ---------------------------------------------------------------- tune + build

def _favour(monkeypatch, knob: str, value: int):
    """Kernels lowered with `knob` = `value` time 10x faster, the others slower the
    further their value is from it (a fake clock the cost model can follow: the test
    checks the search, the record and the build, not this machine's timings)."""
    real = measure_mod.Bench.run

    def run(self, values):
        m = real(self, values)
        got = dict(m.schedule).get(knob)
        m.ms = 0.1 if got == value else 1.0 + abs(math.log2(got or 1) - math.log2(value))
        return m
    monkeypatch.setattr(measure_mod.Bench, "run", run)


def test_tune_records_the_best_and_build_applies_it(tmp_path, monkeypatch):
    mod, params, x = _mlp()
    db = tmp_path / "tuning.json"
    _favour(monkeypatch, "schedule.tile_bytes", 128)
    report = rl.tune(mod, params=params, trials=60, db=str(db), seed=1)
    data = json.loads(db.read_text())
    assert data["format"] == "relaylang-tuning" and data["kernels"]
    rec = next(r for r in data["kernels"].values() if r["knobs"].get("schedule.tile_bytes") == 128)
    assert rec["tuned_ms"] < rec["default_ms"] and rec["trials"] >= 2
    table = report.table()
    assert "speedup" in table and rec["name"] in table and "model:" in table
    assert report.model_default_ms > 0 and report.model_tuned_ms > 0

    lib = rl.build(mod, target="llvm", params=params, tuning_db=str(db))
    key = next(k for k, r in data["kernels"].items() if r is rec)
    line = next(ln for ln in lib.get_source("ll").splitlines() if f"[{key}]" in ln)
    assert "schedule.tile_bytes=128" in line
    np.testing.assert_allclose(lib(x), _expected(params, x), rtol=1e-4, atol=1e-5)
    default = rl.build(mod, target="llvm", params=params)
    assert "schedule.tile_bytes=128" not in default.get_source("ll")


def test_a_candidate_with_other_values_is_rejected(tmp_path, monkeypatch):
    """Every candidate but the default "computes other values": none may be recorded,
    however fast, and the report names the rejections."""
    import importlib
    mod, params, _ = _mlp()
    _favour(monkeypatch, "schedule.tile_bytes", 128)
    tune_mod = importlib.import_module("relaylang.backend.tuning.tune")
    monkeypatch.setattr(tune_mod, "same_values", lambda got, want: "output 0 differs")
    db = tmp_path / "t.json"
    report = rl.tune(mod, params=params, trials=20, db=str(db), end_to_end=False)
    assert json.loads(db.read_text())["kernels"] == {}
    assert all(k.tuned_ms == k.default_ms for k in report.kernels)
    assert any(k.rejected for k in report.kernels)
    assert "rejected for" in report.table() and "output 0 differs" in report.table()


def test_an_interrupted_run_keeps_the_kernels_it_finished(tmp_path, monkeypatch):
    mod, params, _ = _mlp()
    _favour(monkeypatch, "schedule.tile_bytes", 128)
    db = tmp_path / "t.json"
    Database(kernels={"feedbeef": Record("old", ["nn.dense"], {"schedule.par_min": 32},
                                         1.0, 0.5, 3)}).save(str(db))
    report = rl.tune(mod, params=params, trials=40, db=str(db), timeout_s=1e-9,
                     end_to_end=False)
    data = json.loads(db.read_text())
    assert "feedbeef" in data["kernels"]            # other kernels' records survive
    assert all(k.trials == 1 for k in report.kernels)   # no time for any search


# ---------------------------------------------------------------- the database

def test_corrupt_and_foreign_databases_are_warnings(tmp_path):
    mod, params, x = _mlp()
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    with pytest.warns(TuningDatabaseWarning, match="not JSON"):
        lib = rl.build(mod, target="llvm", params=params, tuning_db=str(bad))
    np.testing.assert_allclose(lib(x), _expected(params, x), rtol=1e-4, atol=1e-5)

    other = tmp_path / "other.json"
    db = Database(kernels={"k": Record("k", [], {"schedule.tile_bytes": 128}, 1, 0.5, 2)})
    db.host = dict(db.host, cpu="some-other-cpu")
    db.save(str(other))
    with pytest.warns(TuningDatabaseWarning, match="some-other-cpu"):
        rl.build(mod, target="llvm", params=params, tuning_db=str(other))
    with pytest.warns(TuningDatabaseWarning, match="some-other-cpu"):
        assert load(str(other)) is None

    with pytest.warns(TuningDatabaseWarning, match="no such file"):
        rl.build(mod, target="llvm", params=params, tuning_db=str(tmp_path / "absent.json"))
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"format": "relaylang-tuning", "version": 1,
                                 "kernels": {"k": {"knobs": "x"}}}))
    with pytest.warns(TuningDatabaseWarning, match="kernel k"):
        assert load(str(wrong)) is None


def test_a_record_outside_the_kernels_choices_is_ignored(tmp_path):
    mod, params, x = _mlp()
    tasks = extract_tasks(mod, params)
    db = Database(kernels={t.key: Record(t.name, t.ops, {"schedule.tile_bytes": 12345}, 1, 0.5, 2)
                           for t in tasks})
    path = tmp_path / "odd.json"
    db.save(str(path))
    lib = rl.build(mod, target="llvm", params=params, tuning_db=str(path))
    assert "12345" not in lib.get_source("ll")
    np.testing.assert_allclose(lib(x), _expected(params, x), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- the command line

def test_relay_tune_and_build_with_the_database(tmp_path, capsys):
    from relaylang.cli import main
    mod, params, _ = _mlp()
    src = tmp_path / "mlp.relay"
    src.write_text(MLP)
    np.savez(tmp_path / "p.npz", **params)
    db = tmp_path / "tuning.json"
    code = main(["tune", str(src), "--params", str(tmp_path / "p.npz"), "--trials", "6",
                 "--db", str(db), "-q"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "default ms" in out and "tuned ms" in out and "model:" in out
    assert json.loads(db.read_text())["format"] == "relaylang-tuning"
    code = main(["build", str(src), "--params", str(tmp_path / "p.npz"), "-o",
                 str(tmp_path / "m.rlib"), "--tuning-db", str(db), "-q"])
    assert code == 0, capsys.readouterr().err

    (tmp_path / "bad.json").write_text("[]")
    code = main(["build", str(src), "--params", str(tmp_path / "p.npz"), "-o",
                 str(tmp_path / "m.rlib"), "--tuning-db", str(tmp_path / "bad.json"), "-q"])
    err = capsys.readouterr().err
    assert code == 0 and "warning: tuning database" in err and "Traceback" not in err


def test_relay_tune_bad_input(tmp_path, capsys):
    from relaylang.cli import main
    code = main(["tune", str(tmp_path / "missing.relay")])
    assert code == 1
    src = tmp_path / "rec.relay"
    src.write_text("""#[version = "0.0.5"]
def @main(%x: Tensor[(4,), float32], %n: int32) -> Tensor[(4,), float32] {
  if (%n > 0) { @main(%x + 1f, %n - 1) } else { %x }
}
""")
    code = main(["tune", str(src), "--db", str(tmp_path / "t.json"), "-q"])
    err = capsys.readouterr().err
    assert code == 1 and "nothing to tune" in err and "Traceback" not in err
    code = main(["tune", str(src), "--trials", "0"])
    assert code == 1 and "at least 1" in capsys.readouterr().err


# ---------------------------------------------------------------- graph knobs (layouts)

_TWO_CONVS = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, 64, 10, 10), float32], %w1: Tensor[(64, 64, 3, 3), float32],
          %w2: Tensor[(64, 64, 1, 1), float32]) {
  %0 = nn.relu(nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]));
  nn.relu(nn.conv2d(%0, %w2))
}
"""


def _two_convs():
    rng = np.random.default_rng(3)
    params = {"w1": rng.standard_normal((64, 64, 3, 3)).astype("float32") * 0.1,
              "w2": rng.standard_normal((64, 64, 1, 1)).astype("float32") * 0.1}
    return rl.parse(_TWO_CONVS), params


def _blocks(optimised) -> set[str]:
    import re
    return set(re.findall(r"NCHW(\d+)c", optimised.astext()))


def test_tune_chooses_the_channel_block_and_build_applies_it(tmp_path, monkeypatch):
    """The NCHWc channel block is a graph knob: tune times the model with each choice
    (here a fake clock favours 32), records it for the model, tunes the kernels in that
    layout, and a build with the database -- in another process too -- computes in it
    with the interpreter's values."""
    import json
    import subprocess
    import sys

    from relaylang.backend.build import _graph_config, prepare
    from relaylang.backend.tuning import layouts
    mod, params = _two_convs()
    real = layouts.time_builds

    def favour_32(libs, entry, args, rounds):
        times = real(libs, entry, args, 1)
        return {c: (1.0 if c == 32 else 2.0) for c in times}
    monkeypatch.setattr(layouts, "time_builds", favour_32)
    db = tmp_path / "t.json"
    report = rl.tune(mod, params=params, trials=3, db=str(db), end_to_end=False)
    assert report.layout is not None and report.layout.config == {
        "relay.AlterOpLayout.nchwc_max_block": 32}
    assert "kept 32" in report.table()
    data = json.loads(db.read_text())
    (record,) = data["graphs"].values()
    assert record["config"] == {"relay.AlterOpLayout.nchwc_max_block": 32}
    loaded = load(str(db))
    assert _blocks(prepare(mod, "llvm", params, config=_graph_config(loaded, mod, "main"))) \
        == {"32"}
    assert _blocks(prepare(mod, "llvm", params)) == {"64"}
    x = np.random.default_rng(0).standard_normal((1, 64, 10, 10)).astype("float32")
    want = rl.evaluate(rl.transform.BindParams(params)(mod), x)
    lib = rl.build(mod, target="llvm", params=params, tuning_db=str(db))
    np.testing.assert_allclose(lib(x), want, rtol=1e-4, atol=1e-4)
    code = ("import sys, relaylang as rl\n"
            "from relaylang.backend.build import _graph_config\n"
            "from relaylang.backend.tuning import load\n"
            "mod = rl.parse(sys.stdin.read())\n"
            "print(_graph_config(load(sys.argv[1]), mod, 'main'))\n")
    out = subprocess.run([sys.executable, "-c", code, str(db)], input=_TWO_CONVS,
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "7"})
    assert "nchwc_max_block': 32" in out.stdout


def test_a_graph_record_outside_the_choices_is_ignored(tmp_path):
    from relaylang.backend.build import _graph_config
    from relaylang.backend.tuning.database import Database, GraphRecord
    from relaylang.backend.tuning.layouts import model_key
    mod, _ = _two_convs()
    db = Database()
    db.graphs[model_key(mod)] = GraphRecord("main", {
        "relay.AlterOpLayout.nchwc_max_block": 48, "no.such.option": 1}, 1.0, 0.5)
    db.save(str(tmp_path / "d.json"))
    assert _graph_config(load(str(tmp_path / "d.json")), mod, "main") == {}


def test_a_model_without_blocked_convolutions_has_no_layout_choice():
    from relaylang.backend.tuning.layouts import tune_layout
    mod = rl.parse('#[version = "0.0.5"]\n'
                   "def @main(%x: Tensor[(4, 8), float32]) { nn.relu(%x) }\n")
    assert tune_layout(mod, None) is None
