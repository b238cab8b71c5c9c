"""`str(expr)` is Relay text (as `print(expr)` in TVM); `repr` stays short and shallow."""
from __future__ import annotations

import relaylang as rl


def test_str_of_an_expression_is_relay_text() -> None:
    expr = rl.parse_expr("free_var %x: float32; add(%x, 1f)")
    assert str(expr).splitlines()[-2:] == ["free_var %x: float32;", "add(%x, 1f)"]
    assert repr(expr) == "<Call at string:1:23>"


def test_str_of_a_built_expression_reparses() -> None:
    x = rl.var("x", shape=(2,), dtype="float32")
    fn = rl.Function([x], rl.add(x, x))
    assert rl.structural_equal(rl.parse_expr(str(fn)), fn)
