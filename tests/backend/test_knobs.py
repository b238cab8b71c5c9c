"""Scheduling knobs as data (relaylang/backend/llvm/knobs.py): the host model, settings,
what a kernel records, and the CLI's --knob / --show-schedule."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.llvm import knobs


def test_cache_sizes_from_sysfs(tmp_path):
    for idx, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"),
                                               (2, "Unified", "2048K"), (3, "Unified", "32M")]):
        d = tmp_path / f"index{idx}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    assert knobs._cache_sizes(str(tmp_path)) == {1: 48 * 1024, 2: 2 * 1024 * 1024,
                                                 3: 32 * 1024 * 1024}


def test_cache_sizes_without_sysfs(tmp_path):
    assert knobs._cache_sizes(str(tmp_path / "absent")) == knobs.TYPICAL_CACHES
    (tmp_path / "index0").mkdir()           # unreadable entries: the typical sizes
    assert knobs._cache_sizes(str(tmp_path)) == knobs.TYPICAL_CACHES


def test_host_model_is_consistent():
    h = knobs.host()
    assert h.vector_bytes in (16, 32, 64) and h.vector_registers in (16, 32)
    assert 0 < h.l1d <= h.l2 <= max(h.l2, h.l3)
    assert h.cpu in h.describe()
    defaults = knobs.schedule_defaults(h)
    for name, (default, choices) in defaults.items():
        assert name.startswith("schedule.") and default in choices, name
    assert defaults["schedule.tile_bytes"][0] == 4 * h.vector_bytes


def test_schedule_defaults_follow_the_host():
    avx2 = knobs.Host("haswell", 32, 16, 32 * 1024, 256 * 1024, 8 << 20)
    d = knobs.schedule_defaults(avx2)
    assert d["schedule.tile_bytes"][0] == 128
    assert d["schedule.accumulator_vectors"][0] == 8
    assert max(d["schedule.accumulator_vectors"][1]) <= 12
    assert 128 * 1024 in d["schedule.k_chunk_bytes"][1]


def test_parse_assignments():
    assert knobs.parse_assignments("a.b=3, c=0x10,") == {"a.b": 3, "c": 16}
    for bad in ("a", "=3", "a=x"):
        with pytest.raises(ValueError, match="expected NAME=INTEGER|not an integer"):
            knobs.parse_assignments(bad)


def test_chooser_answers_from_settings_within_choices():
    settings = knobs.Settings(every={"k": 4, "j": 99}, per_kernel={"key1": {"k": 8}})
    with knobs.using(settings):
        with knobs.lowering("key0") as c0:
            assert knobs.ask("k", 2, (2, 4, 8)) == 4
            assert knobs.ask("j", 1, (1, 2)) == 1          # 99 is not a choice: default
            assert knobs.ask("k", 2, (2, 4, 8)) == 4        # asked twice: one answer
        with knobs.lowering("key1") as c1:
            assert knobs.ask("k", 2, (2, 4, 8)) == 8        # the kernel's own value wins
    assert c0.chosen == {"k": 4, "j": 1}
    assert c0.space == {"k": (2, 4, 8), "j": (1, 2)} and c0.defaults == {"k": 2, "j": 1}
    assert c1.chosen == {"k": 8}
    assert knobs.ask("k", 2, (2, 4, 8)) == 2                # outside a lowering: default
    with knobs.lowering("key0"):
        assert knobs.ask("k", 2, (2, 4, 8)) == 2            # settings left with the block


def test_default_is_always_a_choice():
    with knobs.lowering("x") as c:
        assert knobs.ask("k", 5, (1, 2)) == 5
    assert c.space["k"] == (5, 1, 2)


MLP = """#[version = "0.0.5"]
def @main(%x: Tensor[(8, 64), float32], %w: Tensor[(128, 64), float32]) {
  nn.relu(nn.dense(%x, %w))
}
"""


def _mlp():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 64)).astype("float32")
    w = rng.standard_normal((128, 64)).astype("float32")
    return rl.parse(MLP), x, w


def test_kernels_record_their_knobs_and_the_source_states_them():
    mod, x, w = _mlp()
    lib = rl.build(mod, target="llvm", params={"w": w})
    schedules = lib.kernel_schedules
    assert schedules, "a dense kernel asks for scheduling knobs"
    (name, (key, values)), = schedules.items()
    assert "schedule.tile_bytes" in values and len(key) >= 16
    assert f"; schedule {name} [{key}]: " in lib.get_source("ll")
    np.testing.assert_allclose(lib(x), np.maximum(x @ w.T, 0), rtol=1e-5, atol=1e-5)


def test_settings_change_the_kernel_and_keep_its_values():
    mod, x, w = _mlp()
    default = rl.build(mod, target="llvm", params={"w": w}, cache=False)
    (name, (key, values)), = default.kernel_schedules.items()
    tile = values["schedule.tile_bytes"]
    other = next(t for t in knobs.schedule_defaults(knobs.host())["schedule.tile_bytes"][1]
                 if t != tile)
    with knobs.using(knobs.Settings(per_kernel={key: {"schedule.tile_bytes": other}})):
        tuned = rl.build(mod, target="llvm", params={"w": w}, cache=False)
    (_, (key2, values2)), = tuned.kernel_schedules.items()
    assert key2 == key and values2["schedule.tile_bytes"] == other
    assert tuned.get_source("ll") != default.get_source("ll")
    np.testing.assert_allclose(tuned(x), default(x), rtol=1e-5, atol=1e-5)


def test_cli_knob_and_show_schedule(tmp_path, capsys):
    from relaylang.cli import main
    src = tmp_path / "mlp.relay"
    src.write_text(MLP)
    out = tmp_path / "mlp.rlib"
    code = main(["build", str(src), "-o", str(out), "-q", "--knob", "schedule.tile_bytes=128",
                 "--knob", "no.such_knob=1", "--show-schedule"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "schedule.tile_bytes=128" in err
    assert "warning: no kernel has the knob no.such_knob" in err
    code = main(["build", str(src), "-o", str(out), "--knob", "schedule.tile_bytes"])
    err = capsys.readouterr().err
    assert code == 1 and "expected NAME=INTEGER" in err and "Traceback" not in err


def test_vector_bits_knob_reaches_the_code_generator():
    if knobs.host().vector_bytes != 64:
        pytest.skip("the vector width is a choice on AVX-512 hosts only")
    mod, x, w = _mlp()
    with knobs.using(knobs.Settings(every={"schedule.vector_bits": 256})):
        lib = rl.build(mod, target="llvm", params={"w": w}, cache=False)
    (name, (_, values)), = lib.kernel_schedules.items()
    assert values["schedule.vector_bits"] == 256
    raw = "\n".join(m.get_source("ll-raw") for m in lib.modules)
    define = next(ln for ln in raw.splitlines() if ln.startswith("define") and f'@"{name}"' in ln
                  or ln.startswith("define") and f"@{name}(" in ln)
    assert '"prefer-vector-width"="256"' in define
    np.testing.assert_allclose(lib(x), np.maximum(x @ w.T, 0), rtol=1e-5, atol=1e-5)


def test_threads_knob_keeps_a_kernel_on_the_caller():
    from relaylang.backend.native.kernels import NativeCall
    mod = rl.parse('#[version = "0.0.5"]\ndef @main(%x: Tensor[(512, 1024), float32]) '
                   "{ exp(%x) }")
    x = np.random.default_rng(0).standard_normal((512, 1024)).astype("float32")
    default = rl.build(mod, target="llvm", cache=False)
    with knobs.using(knobs.Settings(every={"schedule.threads": 1})):
        serial = rl.build(mod, target="llvm", cache=False)
    (_, (_, values)), = serial.kernel_schedules.items()
    assert values["schedule.threads"] == 1
    calls = [r for r in serial.graph.runners if isinstance(r, NativeCall)]
    assert calls and not any(c.parallel for c in calls)
    assert any(r.parallel for r in default.graph.runners if isinstance(r, NativeCall))
    np.testing.assert_allclose(serial(x), np.exp(x), rtol=1e-5)
