"""Parser and printer defects found by the mutation fuzzer (issue 14), one test each."""
from __future__ import annotations

import random
import time

import pytest

import relaylang as rl
from relaylang.syntax.parser import MAX_SYNTAX_ERRORS, parse_with_diagnostics

HEADER = '#[version = "0.0.5"]\n'


def _nest(depth: int) -> str:
    return "/* a " * depth + "b" + " */" * depth


@pytest.mark.parametrize("depth", [8, 9, 40])
def test_block_comments_nest_without_a_depth_limit(depth: int) -> None:
    text = HEADER + f"def @main() {{\n  {_nest(depth)}\n  %0 = 1 {_nest(depth)};\n  %0\n}}\n"
    mod = rl.parse(text)
    assert rl.structural_equal(mod, rl.parse(HEADER + "def @main() { %0 = 1; %0 }"))
    assert rl.parse_expr(f"1 {_nest(depth)} + /* x */ 2") is not None


def test_positions_after_a_deep_comment_are_exact() -> None:
    text = HEADER + "def @main() {\n" + _nest(12).replace("b", "b\n\n") + "\n  %a\n}\n"
    [d] = [d for d in parse_with_diagnostics(text)[1] if "unknown local" in d.message]
    line = text.count("\n", 0, text.index("%a")) + 1
    assert (d.span.line, d.span.column) == (line, 3)


def test_deep_comment_that_does_not_end_is_reported_where_it_starts() -> None:
    text = HEADER + "def @main() {\n  1 /* " + _nest(10) + "\n}\n"
    with pytest.raises(rl.DiagnosticError) as info:
        rl.parse(text)
    [d] = info.value.diagnostics
    assert "unterminated block comment" in d.message
    assert (d.span.line, d.span.column) == (3, 5)


def test_comment_openers_inside_strings_and_names_are_not_comments() -> None:
    text = HEADER + ('def @main(%a/: int32) {\n  ' + _nest(9) + '\n  %0 = add(%a/, 1) /* */;\n'
                     '  %1 = "s/*";\n  %0\n}\n')
    with pytest.raises(rl.DiagnosticError) as info:
        rl.parse(text)
    # Only the string binding is wrong (a string is not an expression); no comment error.
    assert all("comment" not in d.message for d in info.value.diagnostics)


def test_scalar_bfloat16_prints_as_text_that_parses_back() -> None:
    mod = rl.parse(HEADER + "def @main(%x: Tensor[(), bfloat16]) -> Tensor[(), bfloat16] { %x }")
    text = rl.astext(mod)
    assert "Tensor[(), bfloat16]" in text
    assert rl.structural_equal(rl.parse(text), mod)
    typed = rl.transform.InferType()(mod)
    assert rl.structural_equal(rl.parse(rl.astext(typed)), typed)


def _random_definitions(size: int) -> str:
    rng = random.Random(1)
    pieces = ["def @f() {", "}", "\n", "%x", "let", "=", ";", "1", "(", ")", "add", ",", "@g",
              "\ndef @h(%a) { %a }\n", "\n"]
    out, n = [HEADER], 0
    while n < size:
        piece = rng.choice(pieces)
        out.append(piece + " ")
        n += len(piece) + 1
    return "".join(out)


def test_syntax_errors_are_capped() -> None:
    _, diags = parse_with_diagnostics(_random_definitions(100_000))
    syntax = [d for d in diags if d.code == "syntax"]
    assert len(syntax) == MAX_SYNTAX_ERRORS + 1
    assert "too many syntax errors" in syntax[-1].message


def test_error_recovery_is_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    from relaylang.syntax import parser
    monkeypatch.setattr(parser, "MAX_SYNTAX_ERRORS", 1 << 30)
    text = _random_definitions(300_000)
    start = time.process_time()           # CPU time: a busy machine does not fail it
    _, diags = parse_with_diagnostics(text)
    elapsed = time.process_time() - start
    assert len([d for d in diags if d.code == "syntax"]) > 4000
    assert elapsed < 15, elapsed          # 0.4 s; 160 s when every error re-read all the text


def test_errors_after_recovery_keep_their_positions() -> None:
    text = HEADER + "def @f() { 1 + }\n\n  def @g() { ( }\ndef @h() {\n  %x }\n"
    _, diags = parse_with_diagnostics(text)
    assert [(d.span.line, d.span.column) for d in diags] == [(2, 16), (4, 16), (6, 3)], \
        [d.short() for d in diags]
