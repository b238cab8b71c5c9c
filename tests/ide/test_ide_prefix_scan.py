"""PrefixScanner (relaylang/ide/prefix_scan.py): reusing the previous scan after an edit
gives exactly what scanning the new text afresh gives, for tokens, scope, enclosing call,
completion and signature help, along random edit sequences."""
from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from bench_helpers import load_benchmark

from relaylang.ide.completion import complete, enclosing_call
from relaylang.ide.prefix_scan import PrefixScanner, _common_prefix
from relaylang.ide.scope import scope_at_end
from relaylang.ide.signature import signature_at
from relaylang.ide.tokens import tokenize

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.relay"))


def _gpt2(layers: int) -> str:
    return load_benchmark("gen_models").gpt2_module_text(layers=layers)


# Fragments that open and close brackets, comments, strings, binders and definitions.
PIECES = ["%", "%x", "%0 = ", "let %y: float32 = ", "(", ")", "{", "}", "[", "]", ",", ";",
          "=", ":", "=>", " ", "\n", "/*", "*/", "//", '"', "fn (%a) {", "match (%x) {",
          "def @g(%p: Tensor[(2), float32]) {", "#[", "nn.conv2d(%x, %w, strides=[1, ",
          "add(", "Cons(%h, %t) => ", "x", "0", "->"]


def _fresh(text: str, end: int):
    scan = tokenize(text[:end])
    return (scan.tokens, scan.ends_in_comment_or_string, scope_at_end(scan.tokens),
            enclosing_call(scan.tokens))


def _check(scanner: PrefixScanner, text: str, end: int) -> None:
    found = scanner.scan(text, end)
    tokens, in_comment, scope, call = _fresh(text, end)
    assert found.tokens == tokens
    assert found.ends_in_comment_or_string == in_comment
    assert found.scope == scope
    assert enclosing_call(found.tokens, found.call_floor) == call


def _edit(rng: random.Random, text: str, near: int) -> tuple[str, int]:
    """A random insertion or deletion, mostly near `near` (typing), sometimes anywhere."""
    at = near if rng.random() < 0.7 else rng.randrange(len(text) + 1)
    at = max(0, min(at + rng.randint(-3, 3), len(text)))
    if rng.random() < 0.3 and at < len(text):
        stop = min(len(text), at + rng.randint(1, 12))
        return text[:at] + text[stop:], at
    piece = rng.choice(PIECES)
    return text[:at] + piece + text[at:], at + len(piece)


def _walk(text: str, seed: int, steps: int, check) -> None:
    rng = random.Random(seed)
    scanner = PrefixScanner()
    cursor = rng.randrange(len(text) + 1)
    for _ in range(steps):
        if rng.random() < 0.8:
            text, cursor = _edit(rng, text, cursor)
        else:
            cursor = rng.randrange(len(text) + 1)     # the cursor jumps, no edit
        check(scanner, text, cursor)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_scan_equals_fresh_scan_on_random_edits(path: Path) -> None:
    text = path.read_text()
    for seed in range(3):
        _walk(text, seed, 60, _check)


def test_scan_equals_fresh_scan_on_gpt2() -> None:
    _walk(_gpt2(1), 7, 80, _check)


def _check_features(scanner: PrefixScanner, text: str, cursor: int) -> None:
    assert complete(text, cursor, scanner=scanner) == complete(text, cursor)
    assert signature_at(text, cursor, scanner) == signature_at(text, cursor)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_completion_and_signature_equal_uncached(path: Path) -> None:
    _walk(path.read_text(), 11, 40, _check_features)


def test_completion_on_gpt2_equal_uncached_at_locals_and_calls() -> None:
    """Positions where the cached scope and call floor matter: after `%`, inside a call."""
    text = _gpt2(1)
    scanner = PrefixScanner()
    rng = random.Random(3)
    for at in sorted(rng.sample([i for i, c in enumerate(text) if c in "%(,"], 40)):
        _check_features(scanner, text, at + 1)
        edited = text[:at + 1] + "x" + text[at + 1:]
        _check_features(scanner, edited, at + 2)


def test_common_prefix() -> None:
    assert _common_prefix("abcdef", "abcxef") == 3
    assert _common_prefix("abc", "abcdef") == 3
    assert _common_prefix("", "abc") == 0
    assert _common_prefix("xbc", "abc") == 0
    assert _common_prefix("abc", "abc") == 3


def test_typing_in_a_long_definition_rescans_only_the_edited_region() -> None:
    """Typing at the end of a 2,000-line definition costs far less than its first scan."""
    text = _gpt2(27)
    cursor = text.index("\n", len(text) // 2) + 1
    scanner = PrefixScanner()
    started = time.perf_counter()
    scanner.scan(text, cursor)
    first = time.perf_counter() - started
    typed = []
    for _ in range(20):
        text = text[:cursor] + " " + text[cursor:]
        cursor += 1
        started = time.perf_counter()
        scanner.scan(text, cursor)
        typed.append(time.perf_counter() - started)
    assert sorted(typed)[10] < first / 5
    _check(scanner, text, cursor)


def test_deep_nesting_scans_in_linear_time() -> None:
    """100,000 nested calls: no recursion, and snapshots do not cost depth x tokens."""
    depth = 100_000
    text = "def @main(%x) {\n  " + "add(%x, " * depth + "%x" + ")" * depth + "\n}\n"
    cursor = text.rindex("%x")
    scanner = PrefixScanner()
    started = time.perf_counter()
    found = scanner.scan(text, cursor)
    assert time.perf_counter() - started < 5
    assert enclosing_call(found.tokens, found.call_floor).name == "add"
    assert [b.name for b in found.scope.locals] == ["x"]
    edited = text[:cursor] + "%y, " + text[cursor:]
    found = scanner.scan(edited, cursor + 4)
    assert enclosing_call(found.tokens, found.call_floor).argument_index == 2
