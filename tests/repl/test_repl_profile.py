"""The REPL's `:profile EXPR`: the profiler's table for an expression, and errors."""
from __future__ import annotations

from relaylang.ir.timing import read_timing_table
from relaylang.repl.commands import COMMAND_DOCS
from relaylang.repl.session import Session

DEF = ("def @mlp(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) "
       "{ nn.relu(nn.dense(%x, %w)) }")


def test_profile_expression() -> None:
    s = Session()
    assert not s.submit(DEF).error
    reply = s.submit(':profile @mlp(ones(shape=[2, 8], dtype="float32"), '
                     'ones(shape=[4, 8], dtype="float32"))')
    assert not reply.error, reply.output
    header, rows, _ = read_timing_table(reply.output)
    assert header[:2] == ["op", "calls"]
    calls: dict[str, int] = {}
    for r in rows:                      # one row per op and shapes: the two `ones` differ
        calls[r[0]] = calls.get(r[0], 0) + int(r[1])
    assert calls == {"ones": 2, "nn.dense": 1, "nn.relu": 1}
    dense = next(r for r in rows if r[0] == "nn.dense")
    assert dense[5] == "2x8, 4x8 -> 2x4" and float(dense[6]) > 0
    assert "measured:" in reply.output and "for the expression" in reply.output
    assert "op kind" in reply.output
    assert "profile" in COMMAND_DOCS


def test_profile_uses_earlier_results() -> None:
    s = Session()
    s.submit('ones(shape=[3], dtype="float32")')
    reply = s.submit(":profile add(%out1, %out1)")
    assert not reply.error, reply.output
    assert "3, 3 -> 3" in reply.output


def test_profile_errors() -> None:
    s = Session()
    assert s.submit(":profile").error
    s.submit(DEF)
    bad = s.submit(":profile @mlp(1f, 2f)")
    assert bad.error and "type mismatch" in bad.output
