"""`lib.export_library` and `rl.runtime.load_module`: one file, loaded without rebuilding."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.native.library_file import LibraryLoadError

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'
PROGRAM = HEADER + """
def @main(%x: Tensor[(3, 5), float32], %w: Tensor[(3, 5), float32]) {
  %0 = add(%x, %w);
  %1 = reinterpret(expand_dims(%0, axis=0), dtype="int32");
  (exp(%0), squeeze(%1, axis=[0]))
}
"""


def _x(seed=0, shape=(3, 5)):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def _equal(a, b):
    if isinstance(a, tuple):
        for x, y in zip(a, b, strict=True):
            _equal(x, y)
        return
    np.testing.assert_array_equal(a, b)


def test_graph_round_trip_identical(tmp_path, monkeypatch):
    w = _x(1)
    lib = rl.build(rl.parse(PROGRAM), target="llvm", params={"w": w})
    path = tmp_path / "m.rlib"
    lib.export_library(str(path))
    names = zipfile.ZipFile(path).namelist()
    assert {"manifest.json", "plan.json"} <= set(names)
    assert any(n.startswith("constants/") for n in names)
    assert any(n.endswith(".o") for n in names) == bool(lib.kernel_names)
    # loading runs no pass and no LLVM optimisation
    import relaylang.transform.tvm_pipeline as pipeline
    from relaylang.backend.llvm import jit
    monkeypatch.setattr(jit, "optimize", lambda mod: pytest.fail("LLVM optimisation at load"))
    monkeypatch.setattr(pipeline, "optimize", lambda *a, **k: pytest.fail("passes at load"))
    loaded = rl.runtime.load_module(str(path))
    x = _x()
    _equal(loaded(x), lib(x))
    assert loaded.fallback_ops == lib.fallback_ops
    assert loaded.kernel_names == lib.kernel_names
    # and it exports again
    loaded.export_library(str(tmp_path / "again.rlib"))
    _equal(rl.runtime.load_module(str(tmp_path / "again.rlib"))(x), lib(x))


def test_mixed_round_trip(tmp_path):
    mod = rl.parse((ROOT / "examples" / "closures.relay").read_text())
    lib = rl.build(mod, target="llvm")
    path = tmp_path / "rec.rlib"
    lib.export_library(str(path))
    loaded = rl.runtime.load_module(str(path))
    assert loaded.mode == "mixed"
    _equal(loaded(np.int32(7)), lib(np.int32(7)))
    assert sorted(loaded.kernel_names) == sorted(lib.kernel_names)


def test_mixed_round_trip_keeps_kernels_of_shapes_met(tmp_path, monkeypatch):
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32] { exp(add(%x, %x)) }""")
    lib = rl.build(mod, target="llvm")
    xs = [_x(2, (n, 3)) for n in (1, 4)]
    expected = [lib(x) for x in xs]
    path = tmp_path / "dyn.rlib"
    lib.export_library(str(path))
    from relaylang.backend.llvm import jit
    monkeypatch.setattr(jit, "optimize", lambda mod: pytest.fail("LLVM optimisation at load"))
    loaded = rl.runtime.load_module(str(path))
    for x, e in zip(xs, expected):
        _equal(loaded(x), e)
    assert sorted(loaded.kernel_names) == sorted(lib.kernel_names)


def _rewrite_manifest(src: Path, dst: Path, change) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.namelist():
            data = zin.read(item)
            if item == "manifest.json":
                manifest = json.loads(data)
                change(manifest)
                data = json.dumps(manifest).encode()
            zout.writestr(item, data)


def test_foreign_cpu_is_refused(tmp_path):
    text = HEADER + "def @main(%x: Tensor[(4), float32]) { exp(%x) }"
    lib = rl.build(rl.parse(text), target="llvm")
    path = tmp_path / "m.rlib"
    lib.export_library(str(path))

    def foreign(manifest):
        manifest["target"]["cpu"] = "future-cpu"
        manifest["target"]["features"] += ",+imaginary-ext,+avx9000"
    other = tmp_path / "foreign.rlib"
    _rewrite_manifest(path, other, foreign)
    with pytest.raises(LibraryLoadError, match=r"future-cpu.*lacks: avx9000, imaginary-ext"):
        rl.runtime.load_module(str(other))

    def other_triple(manifest):
        manifest["target"]["triple"] = "aarch64-unknown-linux-gnu"
    arm = tmp_path / "arm.rlib"
    _rewrite_manifest(path, arm, other_triple)
    with pytest.raises(LibraryLoadError, match="aarch64"):
        rl.runtime.load_module(str(arm))


def test_bad_files(tmp_path):
    with pytest.raises(LibraryLoadError, match="no such file"):
        rl.runtime.load_module(str(tmp_path / "missing.rlib"))
    junk = tmp_path / "junk.rlib"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(LibraryLoadError, match="not a relaylang library"):
        rl.runtime.load_module(str(junk))
    empty = tmp_path / "empty.rlib"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("other.txt", "hello")
    with pytest.raises(LibraryLoadError, match="no manifest"):
        rl.runtime.load_module(str(empty))
