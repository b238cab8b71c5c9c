"""An endless non-tail recursion stops at `max_depth` pending calls with a located error
naming the function, instead of growing the memory without limit."""
from __future__ import annotations

import pytest

import relaylang as rl
from relaylang.backend.interpreter.machine import (InterpreterError, RecursionTooDeep,
                                                   default_max_depth)

VERSION = '#[version = "0.0.5"]\n'
ENDLESS = VERSION + """def @loop(%n: int64) -> int64 {
  add(%n, @loop(add(%n, 1i64)))
}
"""
COUNT = VERSION + """def @count(%n: int64) -> int64 {
  if (less(%n, 1i64)) { 0i64 } else { add(1i64, @count(subtract(%n, 1i64))) }
}
"""
# The recursion grows through a non-tail `if` whose branch calls in tail position.
THROUGH_IF = VERSION + """def @f(%n: int64) -> int64 {
  let %r = if (less(%n, 0i64)) { 0i64 } else { @f(add(%n, 1i64)) };
  %r
}
"""
LOCAL = VERSION + """def @main(%n: int64) -> int64 {
  let %g = fn (%k: int64) -> int64 { add(%k, %g(%k)) };
  %g(%n)
}
"""


def test_endless_recursion_stops_at_the_call_naming_the_function() -> None:
    with pytest.raises(RecursionTooDeep) as info:
        rl.evaluate(rl.parse(ENDLESS), 0, entry="loop", max_depth=500)
    e = info.value
    assert isinstance(e, InterpreterError)
    assert "recursion too deep" in e.message and "@loop" in e.message and "500" in e.message
    assert e.span is not None and (e.span.line, e.span.column) == (3, 11)


def test_recursion_through_a_non_tail_if_is_bounded_too() -> None:
    with pytest.raises(RecursionTooDeep) as info:
        rl.evaluate(rl.parse(THROUGH_IF), 0, entry="f", max_depth=300)
    assert "@f" in info.value.message and info.value.span.line == 3


def test_local_recursive_closure_is_named() -> None:
    with pytest.raises(RecursionTooDeep) as info:
        rl.evaluate(rl.parse(LOCAL), 0, max_depth=300)
    assert "%g" in info.value.message


def test_recursion_within_the_limit_runs() -> None:
    mod = rl.parse(COUNT)
    assert int(rl.evaluate(mod, 1000, entry="count", max_depth=1001)) == 1000
    with pytest.raises(RecursionTooDeep):
        rl.evaluate(mod, 1000, entry="count", max_depth=999)
    # an executor keeps working after a too-deep call
    run = rl.create_executor(mod, "count", max_depth=100)
    with pytest.raises(RecursionTooDeep):
        run(1000)
    assert int(run(50)) == 50


def test_default_depth_is_far_above_a_million() -> None:
    assert default_max_depth() >= 2_000_000
    assert rl.create_executor(rl.parse(COUNT), "count").interpreter.max_depth == \
        default_max_depth()


def test_max_depth_must_be_positive() -> None:
    with pytest.raises(ValueError):
        rl.create_executor(rl.parse(COUNT), "count", max_depth=0)
