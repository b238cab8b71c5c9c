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


PADDED = '''#[version = "0.0.5"]
def @main(%x: Tensor[(1, 16, 30, 30), float32], %w: Tensor[(32, 16, 3, 3), float32],
          %flag: bool) {
  if (%flag) {
    nn.relu(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], channels=32,
                      kernel_size=[3, 3]))
  } else {
    %0 = nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]);
    concatenate((%0, %0), axis=1)
  }
}'''


@pytest.mark.parametrize("threads", ["1", "2"])
def test_pooled_kernels_pass_their_ranges_per_thread(threads: str, monkeypatch) -> None:
    """A kernel that computes a prologue (a padded input) in every range asks the pool
    for its own ranges per thread (schedule.PROLOGUE_RANGES_KNOB), as in graph mode;
    the others pass 0, the pool's own count."""
    from relaylang.backend.llvm.schedule import PROLOGUE_RANGES
    monkeypatch.setenv("RELAY_NUM_THREADS", threads)
    mod = rl.parse(PADDED)
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "program"
    ll = lib.get_source("ll")
    ptr = r"(?:ptr|i8\*|i8\*\*|i64\*) (?:nonnull )?[%@]\S+"
    calls = re.findall(rf"call i32 %\S+\({ptr}, {ptr}, {ptr}, i64 \d+, i64 (\d+)\)", ll)
    # the padded convolution's split: the prologue's ranges per thread, not the pool's 4
    assert str(PROLOGUE_RANGES) in calls, ll[:3000]
    rng = np.random.default_rng(int(threads))
    x = rng.standard_normal((1, 16, 30, 30)).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    for flag in (True, False):
        want = rl.evaluate(mod, x, w, np.array(flag))
        np.testing.assert_allclose(lib(x, w, np.array(flag)), want, rtol=1e-4, atol=1e-4)
