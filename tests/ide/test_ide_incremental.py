"""Incremental analysis (relaylang/ide/symbols/incremental.py): after any edit, `analyze(text,
previous=...)` must give what the full analysis of the same text (with the same
`previous`) gives: diagnostics, occurrences with their types and symbols, the
definitions, and the module of good definitions with its inferred types."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from bench_helpers import load_benchmark

from relaylang.ide import navigation as nav
from relaylang.ide.analysis import analyze
from relaylang.ide.symbols.incremental import changed_line, patch_statement
from relaylang.ide.symbols.ir import SourceText
from relaylang.ir.equal import structural_equal
from relaylang.ir.text import type_text
from relaylang.ir.traverse import post_order

ROOT = Path(__file__).resolve().parents[2]


def _gen_models():
    return load_benchmark("gen_models")


GPT2_SMALL = _gen_models().gpt2_module_text(layers=1)
EXAMPLES = sorted((ROOT / "examples").glob("*.relay"))


def _span(s):
    return None if s is None else (s.line, s.column, s.end_line, s.end_column)


def summary(a) -> dict:
    """Everything a client can observe, with symbol ids replaced by the position of the
    symbol's first occurrence (ids are fresh per parse)."""
    first: dict[str, int] = {}
    occs = []
    for i, o in enumerate(a.index.occurrences):
        symbol = None if o.symbol_id is None else first.setdefault(o.symbol_id, i)
        occs.append((_span(o.span), o.name, o.kind, o.is_definition, o.type_text, o.container,
                     symbol))
    diags = [(d.severity, d.message, _span(d.span),
              tuple((n.message, _span(n.span)) for n in d.notes)) for d in a.diagnostics]
    defs = {name: (d.status, d.range) for name, d in a.definitions.items()}
    outline, stack = [], list(nav.document_symbols(a))
    while stack:
        sym = stack.pop()
        outline.append((sym.name, sym.kind, _span(sym.span), _span(sym.selection_span),
                        sym.detail))
        stack.extend(sym.children)
    return {"diagnostics": diags, "occurrences": occs, "definitions": defs,
            "folding": nav.folding_ranges(a), "outline": outline,
            "functions": sorted(gv.name_hint for gv in a.module.functions),
            "types": sorted(t.name_hint for t in a.module.type_definitions)}


def assert_same_module(incr, full) -> None:
    by_name = {gv.name_hint: fn for gv, fn in full.module.functions.items()}
    for gv, fn in incr.module.functions.items():
        other = by_name[gv.name_hint]
        assert structural_equal(fn, other)
        nodes, other_nodes = post_order(fn), post_order(other)
        assert len(nodes) == len(other_nodes)
        for x, y in zip(nodes, other_nodes):
            # IR spans keep the lines they were parsed at; the line map says where those are.
            assert _span(x.span and incr.line_map.span(x.span)) == \
                _span(y.span and full.line_map.span(y.span))
            assert (x.checked_type is None) == (y.checked_type is None)
            if x.checked_type is not None:
                assert type_text(x.checked_type) == type_text(y.checked_type), (x, y)


def statement_lines(text: str) -> list[int]:
    return [i for i, line in enumerate(text.split("\n")) if re.match(r"\s*%\d+ = ", line)]


def mutate(rng: random.Random, text: str, original: str) -> str:
    lines = text.split("\n")
    candidates = statement_lines(text) or list(range(len(lines)))
    i = rng.choice(candidates if rng.random() < 0.85 else range(len(lines)))
    line = lines[i]
    kind = rng.choice(["digit", "digit", "space", "comment", "ref", "delete", "insert",
                       "drop_line", "dup_line", "revert", "blank_line", "comment_line",
                       "drop_blank", "blank_line"])
    value = line.find("= ") + 2          # past the statement's `%N = `
    if kind == "digit" and re.search(r"\d", line[value:]):
        spots = [m.start() + value for m in re.finditer(r"\d", line[value:])]
        at = rng.choice(spots)
        line = line[:at] + rng.choice("0123456789") + line[at + 1:]
    elif kind == "space":
        at = rng.randrange(len(line) + 1)
        line = line[:at] + " " + line[at:]
    elif kind == "comment" and ";" in line:
        at = line.rindex(";")
        line = line[:at] + " /* note */" + line[at:]
    elif kind == "ref" and re.search(r"[(,] ?%\d+", line):
        m = rng.choice(list(re.finditer(r"(?<=[(, ])%(\d+)", line)))
        n = max(0, int(m.group(1)) + rng.choice([-1, 1]))
        line = line[:m.start()] + f"%{n}" + line[m.end():]
    elif kind == "delete" and line:
        at = rng.randrange(len(line))
        line = line[:at] + line[at + 1:]
    elif kind == "insert":
        at = rng.randrange(len(line) + 1)
        line = line[:at] + rng.choice("%,()1f;a ") + line[at:]
    elif kind == "drop_line":
        return "\n".join(lines[:i] + lines[i + 1:])
    elif kind == "dup_line":
        return "\n".join(lines[:i + 1] + lines[i:])
    elif kind == "revert":
        return original
    elif kind in ("blank_line", "comment_line"):
        at = rng.randrange(len(lines) + 1)
        return "\n".join(lines[:at] + ["" if kind == "blank_line" else "  // note"] + lines[at:])
    elif kind == "drop_blank":
        blank = [j for j, x in enumerate(lines) if not x.strip() or x.strip().startswith("//")]
        if blank:
            j = rng.choice(blank)
            return "\n".join(lines[:j] + lines[j + 1:])
    lines[i] = line
    return "\n".join(lines)


def run_edits(text: str, steps: int, seed: int) -> int:
    """Random edits; each step checks incremental == full. Returns how many steps took
    the incremental path."""
    rng = random.Random(seed)
    original = text
    previous = analyze(text, "file:///t.relay", 0)
    patched = 0
    history: list[str] = []
    for step in range(1, steps + 1):
        # A broken text is often undone (a typo, then its fix), so that broken and clean
        # texts alternate: the incremental path starts from a clean one.
        if history and previous.diagnostics and rng.random() < 0.8:
            text = history.pop()
        else:
            history.append(text)
            text = mutate(rng, text, original)
        if patch_statement(previous, SourceText(text, "file:///t.relay")) is not None:
            patched += 1
        incr = analyze(text, "file:///t.relay", step, previous)
        full = analyze(text, "file:///t.relay", step, previous, incremental=False)
        assert summary(incr) == summary(full), f"step {step} of seed {seed}"
        assert_same_module(incr, full)
        previous = incr
    return patched


def test_random_edits_of_a_gpt2_module_match_the_full_analysis() -> None:
    patched = run_edits(GPT2_SMALL, 60, seed=1)
    assert patched >= 5          # the edits did exercise the incremental path


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_random_edits_of_the_examples_match_the_full_analysis(path: Path) -> None:
    run_edits(path.read_text(), 25, seed=len(path.name))


def test_a_literal_edit_is_patched_with_types_and_references() -> None:
    text = (ROOT / "examples" / "conv_bn_relu.relay").read_text()
    first = analyze(text, "m", 1)
    edited = text.replace("epsilon=2e-05f", "epsilon=3e-05f")
    assert patch_statement(first, SourceText(edited, "m")) is not None
    second = analyze(edited, "m", 2, first)
    assert second.diagnostics == [] and second.version == 2
    line = edited.split("\n").index(next(s for s in edited.split("\n") if "3e-05f" in s)) + 1
    call = second.index.at(line, 8)
    assert call.name == "nn.batch_norm" and call.type_text.startswith("(Tensor[(1, 16, 32, 32)")
    # %1 is defined on the edited line and used on the next: still one symbol.
    use = second.index.at(line + 1, 8)
    assert use.name == "%1" and second.index.definition_of(use).span.line == line
    # The module holds the new constant.
    fn = next(iter(second.module.functions.values()))
    assert any(getattr(n, "attrs", None) is not None and "3e-05" in repr(n.attrs)
               for n in post_order(fn))


def test_a_type_changing_edit_takes_the_full_analysis() -> None:
    text = (ROOT / "examples" / "conv_bn_relu.relay").read_text()
    first = analyze(text, "m", 1)
    edited = text.replace("channels=16, kernel_size=[3, 3]", "channels=8, kernel_size=[3, 3]")
    assert patch_statement(first, SourceText(edited, "m")) is None
    assert analyze(edited, "m", 2, first).diagnostics      # the mismatch is reported


def test_changed_line_finds_exactly_one_changed_line() -> None:
    assert changed_line(["a", "b", "c"], ["a", "x", "c"]) == 2
    assert changed_line(["a", "b", "c"], ["x", "b", "y"]) is None
    assert changed_line(["a", "b"], ["a", "b", "c"]) is None
    assert changed_line(["a"], ["a"]) is None


def test_deep_statement_is_patched_without_recursion() -> None:
    depth = 10_500
    assert depth > 10 * 1000          # ten times deeper than Python's default recursion limit
    chain = "negative(" * depth + "%x" + ")" * depth
    text = ('#[version = "0.0.5"]\ndef @main(%x: float32) {\n  %0 = ' + chain +
            ";\n  %1 = add(%0, 1f);\n  %1\n}\n")
    first = analyze(text, "m", 1)
    assert first.diagnostics == []
    edited = text.replace("add(%0, 1f)", "add(%0, 2f)")
    assert patch_statement(first, SourceText(edited, "m")) is not None
    second = analyze(edited, "m", 2, first)
    assert [(o.name, o.type_text) for o in second.index.occurrences if o.span.line == 4] == \
        [("%1", "float32"), ("add", "float32"), ("%0", "float32"), ("2f", "float32")]
    # The deep line itself, edited: its fragment is walked and typed without recursion.
    deeper = text.replace("%0 = negative(", "%0 = negative( ", 1)
    third = analyze(deeper, "m", 3, first)
    assert third.parse_state is first.parse_state        # patched, not parsed again
    assert third.diagnostics == [] and len(third.index.occurrences) == \
        len(first.index.occurrences)
    assert third.index.at(3, 18).name == "negative" and third.index.at(3, 18).type_text == \
        "float32"


def test_line_map_composes_moves_and_inverts_on_token_lines() -> None:
    from relaylang.ide.symbols.lines import LineMap
    m = LineMap().moved(10, 2)               # two lines added after line 10
    assert [m.to_text(x) for x in (3, 10, 11, 20)] == [3, 10, 13, 22]
    m = m.moved(5, -1)                       # then line 5 (a blank line) removed
    assert [m.to_text(x) for x in (3, 6, 7, 10, 11)] == [3, 5, 6, 9, 12]
    assert [m.to_parsed(y) for y in (3, 5, 6, 9, 12)] == [3, 6, 7, 10, 11]
    assert m.moves == 2 and LineMap().moves == 0


def test_enter_moves_the_analysis_and_a_later_edit_below_is_still_patched() -> None:
    text = GPT2_SMALL
    lines = text.split("\n")
    middle = statement_lines(text)[len(statement_lines(text)) // 2]
    first = analyze(text, "m", 1)
    entered = "\n".join(lines[:middle] + [""] + lines[middle:])     # Enter above a statement
    second = analyze(entered, "m", 2, first)
    assert second.line_map.moves == 1 and second.parse_state is first.parse_state
    assert summary(second) == summary(analyze(entered, "m", 2, first, incremental=False))
    # The statement now one line lower, edited: patched in the lines of the parse.
    moved = entered.split("\n")
    moved[middle + 1] = moved[middle + 1].replace(" = ", " =  ", 1)
    edited = "\n".join(moved)
    assert patch_statement(second, SourceText(edited, "m")) is not None
    third = analyze(edited, "m", 3, second)
    full = analyze(edited, "m", 3, second, incremental=False)
    assert summary(third) == summary(full)
    assert_same_module(third, full)
    hovered = [o for o in third.index.occurrences if o.span.line == middle + 2]
    assert hovered and all(o.type_text for o in hovered if o.kind in ("graph", "op"))


def test_lines_that_could_change_tokens_are_not_moved() -> None:
    text = (ROOT / "examples" / "conv_bn_relu.relay").read_text()
    first = analyze(text, "m", 1)
    at = text.index("  %0 = ")
    for inserted in ("  /*\n", "  // */\n", '  // "\n', "  %9 = 1f;\n"):
        second = analyze(text[:at] + inserted + text[at:], "m", 2, first)
        assert second.line_map.moves == 0          # a full analysis
    unchanged = analyze(text, "m", 3, first)
    assert unchanged.version == 3 and unchanged.index is first.index


def test_parser_hooks_parse_into_a_given_state() -> None:
    from relaylang.syntax.builder_state import ParseState
    from relaylang.syntax.parser import parse_fragment, parse_with_diagnostics
    text = '#[version = "0.0.5"]\ndef @f(%x: float32) { negative(%x) }\n'
    state = ParseState("m", text)
    module, diagnostics = parse_with_diagnostics(text, "m", state=state)
    assert diagnostics == [] and [gv.name_hint for gv in module.functions] == ["f"]
    call = parse_fragment("\n\n  @f(1f)", state)          # placed on line 3, column 3
    assert call.op is state.globals["f"] and (call.span.line, call.span.column) == (3, 3)
    assert parse_fragment("@f(", state) is None and state.diag.has_errors
