"""Native programs (program mode) run their large kernels over the native worker pool,
and their kernels get the host's preferred vector width like graph-mode kernels."""
from __future__ import annotations

import re

import numpy as np
import pytest

import relaylang as rl

TEXT = '''#[version = "0.0.5"]
def @main(%x: Tensor[(96, 80), float32], %w: Tensor[(80, 80), float32], %flag: bool) {
  if (%flag) { nn.relu(nn.matmul(%x, %w)) } else { %x }
}'''


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_pooled_kernels_agree_with_the_interpreter(threads: str, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("RELAY_NUM_THREADS", threads)
    mod = rl.parse(TEXT)
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "program"
    assert "relay_parallel_pool" in lib.get_source("ll")     # a pooled call site
    rng = np.random.default_rng(int(threads))
    x = rng.standard_normal((96, 80)).astype(np.float32)
    w = rng.standard_normal((80, 80)).astype(np.float32)
    want = rl.evaluate(mod, x, w, np.array(True))
    for _ in range(3):
        np.testing.assert_allclose(lib(x, w, np.array(True)), want, rtol=1e-5, atol=1e-5)
    path = tmp_path / "prog.rlib"
    lib.export_library(str(path))
    again = rl.runtime.load_module(str(path))
    np.testing.assert_allclose(again(x, w, np.array(True)), want, rtol=1e-5, atol=1e-5)


def test_small_kernels_are_not_pooled() -> None:
    small = TEXT.replace("(96, 80)", "(2, 3)").replace("(80, 80)", "(3, 3)")
    lib = rl.build(rl.parse(small), target="llvm")
    assert "relay_parallel_pool" not in lib.get_source("ll")


def test_program_kernels_prefer_the_widest_vectors() -> None:
    from relaylang.backend.llvm.jit import vector_width
    width = vector_width()
    if not width:
        pytest.skip("the host has no preferred vector width (no AVX-512)")
    lib = rl.build(rl.parse(TEXT), target="llvm")
    ll = lib.get_source("ll")
    kernel = re.search(r"^define [^\n]*@rl_k\d+\([^\n]*#(\d+) \{", ll, re.MULTILINE)
    assert kernel is not None, ll[:2000]
    attrs = re.search(rf"^attributes #{kernel.group(1)} = \{{([^\n]*)\}}", ll, re.MULTILINE)
    assert attrs is not None and f'"prefer-vector-width"="{width}"' in attrs.group(1)
