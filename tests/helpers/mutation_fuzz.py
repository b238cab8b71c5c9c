"""Mutations of valid Relay text for fuzzing (tests/syntax/test_parser_errors.py, tests/fuzz/).

`mutated(seeds)` is a hypothesis strategy: a seed program with one to four edits
(characters and tokens deleted, inserted, duplicated or replaced by `TOKENS`).
`check_only_diagnostics` asserts that parsing never raises anything but a
`DiagnosticError` whose diagnostics are located. `fuzz_cases(default)` is the
number of cases a fuzz test runs: `default` in CI, `RELAY_FUZZ_CASES` when set.
"""
from __future__ import annotations

import os
import re

import numpy as np
from hypothesis import strategies as st

import relaylang as rl
from relaylang.syntax.parser import parse_with_diagnostics


def fuzz_cases(default: int) -> int:
    return int(os.environ.get("RELAY_FUZZ_CASES") or default)


TOKENS = ["(", ")", "{", "}", "[", "]", ",", ";", "=", "==", "=>", "->", ".", ":", "%", "@",
          "%0", "%9", "%x", "@main", "@nope", "let", "fn", "if", "else", "match", "match?",
          "type", "def", "extern", "ref", "ref_read", "ref_write", "free_var", "Tensor", "_", "?",
          "meta[relay.Constant][0]", "meta[relay.Constant][9]", "meta[VirtualDevice][0]",
          "meta[relay.attrs.DenseAttrs][0]", "meta[tir.SizeVar][0]", "1", "1.5", "-", "--5",
          "1i8", "65505f16", "inff", '"s"', '"', "/*", "*/", "//", "#[", "#[metadata]",
          '#[version = "0.0.5"]', "\r", "\n", "\t", "Nil", "Cons", "Some", "add", "cast",
          "nn.conv2d", "float32", "int32x", "List", "True", "Primitive=1", "k=1", "units=?",
          "attrs_type_key=\"K\"", "\\", "$", "\x00", "é"]
META = {"relay.Constant": [np.zeros((2,), "float32")], "VirtualDevice": ["cpu"],
        "relay.attrs.DenseAttrs": ["dense"], "tir.SizeVar": ["n"]}


@st.composite
def mutated(draw: st.DrawFn, seeds: list[str]) -> str:
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = min(n, i + draw(st.integers(1, 12)))
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "char", "replace",
                                     "dup_token", "del_token"]))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif kind == "duplicate":
            text = text[:i] + text[i:j] + text[i:]
        elif kind == "char":
            text = text[:i] + draw(st.characters(max_codepoint=0x17F)) + text[i:]
        elif kind == "replace":
            text = text[:i] + " " + draw(st.sampled_from(TOKENS)) + " " + text[j:]
        else:
            tokens = re.findall(r"\S+|\s+", text)
            if tokens:
                k = draw(st.integers(0, len(tokens) - 1))
                if kind == "dup_token":
                    tokens.insert(k, tokens[draw(st.integers(0, len(tokens) - 1))])
                else:
                    del tokens[k]
                text = "".join(tokens)
    return text


def check_only_diagnostics(text: str, expression: bool) -> None:
    for metadata in (META, None):
        try:
            if expression:
                rl.parse_expr(text, metadata=metadata)
            else:
                rl.parse(text, metadata=metadata)
        except rl.DiagnosticError as e:
            assert e.diagnostics
            for d in e.diagnostics:
                assert d.span is not None and d.span.line >= 1 and d.span.column >= 1, d
                assert d.message
    if not expression:
        _, diags = parse_with_diagnostics(text, metadata=META)
        assert all(d.span is not None for d in diags)
