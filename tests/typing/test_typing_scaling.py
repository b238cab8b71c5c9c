"""Type inference stays linear in program size, and errors keep their locations.

Coarse algorithmic checks, never timings: the work done (source searches, type nodes
walked) is counted on programs of two sizes.
"""
from __future__ import annotations

import pytest

import relaylang as rl
from relaylang.ir.diagnostics import Severity
from relaylang.typing import check_module, report, solver

HEADER = '#[version = "0.0.5"]\n'


def nested_ifs(n: int) -> str:
    cond = "if (" * n + "%c" + ") {\n  %c\n} else {\n  %c\n}" * n
    return HEADER + f"def @main(%c: bool, %x: float32) {{\n  if ({cond}) {{ %x }} else {{ %x }}\n}}\n"


def nested_tuples(n: int) -> str:
    body = "(" * n + "%x" + "".join(", %x)" if i % 2 else ", add(%x, 1f))" for i in range(n))
    return HEADER + f"def @main(%x: float32) {{\n  {body}\n}}\n"


def let_tuples(n: int) -> str:
    lines = [f"  let %t{i + 1} = (%t{i}, %x);" for i in range(n)]
    return HEADER + "def @main(%x: float32) {\n  let %t0 = (%x,);\n" + "\n".join(lines) \
        + f"\n  %t{n}\n}}\n"


def ok(text: str) -> rl.IRModule:
    mod, diags = check_module(rl.parse(text))
    assert not [d for d in diags if d.severity is Severity.ERROR], [d.short() for d in diags]
    return mod


def test_a_well_typed_program_never_searches_the_source(monkeypatch) -> None:
    """Where a variable is used is looked up in the source text only for an error: doing it
    for every check made `if`s nested in conditions and let chains quadratic."""
    calls = []
    real = report.use_span
    monkeypatch.setattr(report, "use_span", lambda *a: calls.append(a) or real(*a))
    ok(nested_ifs(50))
    ok(HEADER + "def @main(%x: float32) {\n  let %y = add(%x, 1f);\n  let %z = %y;\n"
       "  (fn (%a: float32) { %a })(%z)\n}\n")
    assert calls == []


def test_mismatches_are_still_located_at_the_use() -> None:
    """The same locations as before, found only when the error is reported."""
    text = HEADER + "def @main(%c: bool, %x: float32, %i: int32) {\n" \
        "  if (%c) { %x } else {\n    %i\n  }\n}\n"
    _, diags = check_module(rl.parse(text))
    [d] = [d for d in diags if d.severity is Severity.ERROR]
    assert "else-branch" in d.message
    assert (d.span.line, d.span.column) == (4, 5)
    assert [(n.span.line, n.span.column) for n in d.notes] == [(3, 13)]


def _type_nodes_walked(monkeypatch, text: str) -> int:
    """How many times inference asked for a type's children."""
    count = [0]
    real = solver.type_children

    def counting(t):
        count[0] += 1
        return real(t)
    monkeypatch.setattr(solver, "type_children", counting)
    ok(text)
    monkeypatch.setattr(solver, "type_children", real)
    return count[0]


@pytest.mark.parametrize("shape", [nested_tuples, let_tuples])
def test_nested_tuple_types_are_walked_a_bounded_number_of_times(monkeypatch, shape) -> None:
    """Every node's type is resolved, and every binding occurs-checked, against types that
    share their fields' types: walked again for each node, that was quadratic."""
    small = _type_nodes_walked(monkeypatch, shape(200))
    large = _type_nodes_walked(monkeypatch, shape(800))
    assert large < 6 * small, (small, large)       # 4x the program; quadratic is 16x


def test_nested_tuple_types_are_right() -> None:
    mod = ok(nested_tuples(3))
    assert rl.astext(mod.get_global_var("main").checked_type) == \
        "fn (float32) -> (((float32, float32), float32), float32)"
    mod = ok(let_tuples(2))
    assert rl.astext(mod.get_global_var("main").checked_type) == \
        "fn (float32) -> (((float32,), float32), float32)"


def test_an_operator_that_is_not_called_is_located() -> None:
    """`multiply;` is `let %_ = multiply; ...`: the error names the operator and points
    at it, not at a made-up variable without a location."""
    text = HEADER + "def @main(%x: float32) {\n  multiply;\n  %x\n}\n"
    _, diags = check_module(rl.parse(text))
    [d] = [d for d in diags if d.severity is Severity.ERROR]
    assert "`multiply` is not called" in d.message and "%_" not in d.message
    assert d.span is not None and (d.span.line, d.span.column) == (3, 3)
    assert (d.span.end_line, d.span.end_column) == (3, 11)


@pytest.mark.parametrize("stmt", ["@id", "(@id)"])
def test_a_polymorphic_global_that_is_not_called_is_located(stmt: str) -> None:
    """`@id;` (found by the fuzzer): the error had no location at all."""
    text = (HEADER + "def @id[A](%v: A) -> A { %v }\n"
            f"def @main(%x: int32) -> int32 {{\n  {stmt};\n  %x\n}}\n")
    _, diags = check_module(rl.parse(text))
    [d] = [d for d in diags if d.severity is Severity.ERROR]
    assert d.span is not None and d.span.line == 4 and d.span.column in (3, 4)


def test_an_operator_bound_by_let_is_reported_at_the_variable() -> None:
    text = HEADER + "def @main(%x: float32) {\n  let %f = nn.relu;\n  %x\n}\n"
    _, diags = check_module(rl.parse(text))
    [d] = [d for d in diags if d.severity is Severity.ERROR]
    assert "`nn.relu` is not called" in d.message
    assert (d.span.line, d.span.column) == (3, 7)
