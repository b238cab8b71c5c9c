"""100,000-deep programs through the whole front end: parse, print, parse, compare, hash.

No stage may recurse on program depth (DESIGN.md). The time per node must stay
flat: the 100k case may take at most ~20x the 10k case (linear is 10x; the
slack absorbs a noisy machine).
"""
from __future__ import annotations

import time

import pytest

import relaylang as rl

HEADER = '#[version = "0.0.5"]\n'


def nested_calls(n: int) -> str:
    return HEADER + "def @main(%x: float32) {\n  " + "negative(" * n + "%x" + ")" * n + "\n}\n"


def let_chain(n: int) -> str:
    lines = [f"  let %v{i} = add(%v{i - 1}, 1f);" for i in range(1, n)]
    return HEADER + "def @main(%v0: float32) {\n" + "\n".join(lines) + f"\n  %v{n - 1}\n}}\n"


def _pipeline(text: str) -> float:
    start = time.perf_counter()
    mod = rl.parse(text)
    printed = rl.astext(mod)
    again = rl.parse(printed)
    assert rl.structural_equal(mod, again)
    assert rl.structural_hash(mod) == rl.structural_hash(again)
    assert rl.astext(again) == printed
    return time.perf_counter() - start


@pytest.mark.parametrize("make", [nested_calls, let_chain], ids=["nested-calls", "let-chain"])
def test_100k_deep_front_end_is_linear(make) -> None:
    small = _pipeline(make(10_000))
    large = _pipeline(make(100_000))
    assert large < 20 * small + 1.0, (small, large)
