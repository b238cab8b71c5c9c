"""benchmarks/tvm_corpus.py: Relay programs are found in TVM-style test files by `ast`
(nothing is run or downloaded) and checked: parse, round trip, type check."""
from __future__ import annotations

from pathlib import Path

from bench_helpers import load_benchmark

TEST_FILE = '''
import pytest
import tvm
from tvm import relay

SEMVER = '#[version = "0.0.5"]\\n'
core = tvm.IRModule()
core.import_from_std("core.rly")


def parse_module(code):
    return tvm.relay.parse(SEMVER + code)


def test_helper():
    parse_module("def @main(%x: float32) { add(%x, %x) }")


def test_expr():
    tvm.relay.parse_expr("let %x = 1f; %x")


def test_negative():
    with pytest.raises(tvm.error.DiagnosticError):
        parse_module("def @main( {")


def test_storage_and_table():
    shape = np.array([3, 2])
    metatable = {"relay.Constant": [relay.const(shape, dtype="int64")]}

    def inner():
        return tvm.relay.parse(
            """
            #[version = "0.0.5"]
            def @main(%sto: Storage[]) {
              memory.alloc_tensor(%sto, 0i64, meta[relay.Constant][0],
                                  const_shape=meta[relay.Constant][0], assert_shape=[])
            }
            """, "from_string", core, metatable)


def test_lowered():
    mod = tvm.IRModule()
    tvm.relay.parse("""
        #[version = "0.0.5"]
        def @main(%x: Tensor[(2), float32]) { call_lowered(@prim, (%x,)) }
    """, "from_string", mod)


def test_dynamic(n):
    text = f"#[version = \\"0.0.5\\"] def @main() {{ {n} }}"
    tvm.relay.parse(text)
    mod = """
        #[version = "0.0.5"]
        def @main() {
    """
    mod += "1 }"
    tvm.relay.parse(mod)
'''


def test_extracts_and_checks_a_tvm_style_test_file(tmp_path: Path) -> None:
    corpus = load_benchmark("tvm_corpus")
    (tmp_path / "test_example.py").write_text(TEST_FILE)
    programs, dynamic = corpus.extract(tmp_path / "test_example.py", tmp_path)
    assert dynamic == 2
    assert [(p.kind, p.negative) for p in programs] == [
        ("module", False), ("expr", False), ("module", True), ("module", False),
        ("module", False)]
    helper, expr, negative, storage, lowered = programs
    assert helper.text.startswith('#[version = "0.0.5"]\ndef @main(%x: float32)')
    assert storage.prelude == "extern type Storage\n" and storage.constants is not None
    assert storage.constants[1][0].tolist() == [3, 2] and lowered.opaque_init
    report = corpus.run(tmp_path)
    assert (report.programs, report.negative, report.negative_rejected) == (4, 1, 1)
    assert (report.parsed, report.round_tripped, report.type_checked) == (3, 3, 3)
    assert [f.stage for f in report.failures] == ["parse"]
    assert "initial module is built in Python" in report.failures[0].message


def test_main_needs_a_directory(tmp_path: Path, capsys) -> None:
    corpus = load_benchmark("tvm_corpus")
    assert corpus.main([str(tmp_path / "missing")]) == 2
    assert corpus.main([str(tmp_path)]) == 0
    assert "0 programs" in capsys.readouterr().out
