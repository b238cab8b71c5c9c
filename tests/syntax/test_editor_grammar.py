"""Editor integration (lsp/editors): the TextMate grammar classifies Relay text as the
Pygments lexer does, scope for token; the VS Code and Neovim files are well formed."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from relaylang.syntax.highlight import RelayLexer, scope_for, textmate_grammar

ROOT = Path(__file__).resolve().parents[2]
EDITORS = ROOT / "lsp" / "editors"
GRAMMARS = [EDITORS / "relay.tmLanguage.json", EDITORS / "vscode" / "syntaxes" / "relay.tmLanguage.json"]

SAMPLE = '''// a comment
#[version = "0.0.5"]
type List[T] { Cons(T, List[T]), Nil }
def @f(%x: Tensor[(1, ?), float32], %p: fn (int32) -> bool, Primitive=1) -> float32 {
  /* outer /* nested */ still */ %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1]);
  let %t = (%0, 1i64, -2.5e-3f, inff, True, -3);
  match? (Cons(1f, Nil)) { Cons(%h, _) => %h, _ => %t.0 }
  if (%x == 1f) { ref_read(ref(%x)) } else { cast(%x, dtype="int8") }
}
#[metadata]
{"root": 1, "nodes": []}
'''


class TextMate:
    """Enough of a TextMate tokenizer to check a grammar: `match` rules, `begin`/`end` rules
    with `patterns`, `contentName`, `beginCaptures[0]` and `#repository` includes; lines one
    at a time; earliest match wins, ties go to the end pattern and then to rule order."""

    def __init__(self, grammar: dict[str, Any]):
        self.grammar = grammar

    def _resolve(self, patterns: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for p in patterns:
            out.append(self.grammar["repository"][p["include"][1:]] if "include" in p else p)
        return out

    def scopes(self, text: str) -> list[str | None]:
        """The innermost scope of each character of `text` (None: no scope)."""
        result: list[str | None] = []
        stack: list[dict[str, Any]] = []
        for line in text.split("\n"):
            scopes: list[str | None] = [None] * len(line)
            pos = 0
            while pos <= len(line):
                rule = stack[-1] if stack else None
                content = (rule.get("contentName") or rule.get("name")) if rule else None
                candidates: list[tuple[str, dict[str, Any]]] = []
                if rule is not None:
                    candidates.append(("end", rule))
                patterns = rule.get("patterns", []) if rule else self.grammar["patterns"]
                candidates += [("rule", p) for p in self._resolve(patterns)]
                best = None
                for kind, cand in candidates:
                    regex = cand["end"] if kind == "end" else cand.get("match") or cand["begin"]
                    m = re.compile(regex).search(line, pos)
                    if m and (best is None or m.start() < best[2].start()):
                        best = (kind, cand, m)
                if best is None:
                    scopes[pos:] = [content] * (len(line) - pos)
                    break
                kind, cand, m = best
                scopes[pos:m.start()] = [content] * (m.start() - pos)
                if kind == "end":
                    scopes[m.start():m.end()] = [rule["name"] if rule else None] * len(m.group())
                    stack.pop()
                elif "begin" in cand:
                    begin = cand.get("beginCaptures", {}).get("0", {}).get("name", cand.get("name"))
                    scopes[m.start():m.end()] = [begin] * len(m.group())
                    stack.append(cand)
                else:
                    scopes[m.start():m.end()] = [cand["name"]] * len(m.group())
                pos = m.end() if m.end() > pos else pos + 1
            result += scopes + [None]
        return result[:len(text)]


def pygments_scopes(text: str) -> list[str | None]:
    out: list[str | None] = []
    for _, token, value in RelayLexer().get_tokens_unprocessed(text):
        out += [scope_for(token)] * len(value)
    return out


def assert_same_classes(text: str) -> None:
    tm, pyg = TextMate(textmate_grammar()).scopes(text), pygments_scopes(text)
    differences = [(i, text[i], t, p) for i, (t, p) in enumerate(zip(tm, pyg))
                   if not text[i].isspace() and t != p]
    assert differences == []


def test_grammar_files_are_generated_from_the_lexer_table():
    for path in GRAMMARS:
        assert json.loads(path.read_text()) == textmate_grammar(), f"{path}: regenerate with " \
            "python -m relaylang.syntax.highlight"


def test_grammar_regexes_classify_the_sample_as_pygments():
    assert_same_classes(SAMPLE)
    tm = TextMate(textmate_grammar()).scopes(SAMPLE)
    assert tm[SAMPLE.index("nn.conv2d")] == "support.function.operator.relay"
    assert tm[SAMPLE.index("nested")] == "comment.block.relay"
    assert tm[SAMPLE.index("still")] == "comment.block.relay"      # nesting is kept
    assert tm[SAMPLE.index('"nodes"')] == "string.unquoted.metadata.relay"


def test_grammar_regexes_classify_the_examples_as_pygments():
    for path in sorted((ROOT / "examples").glob("*.relay")):
        assert_same_classes(path.read_text())


def test_vscode_extension_is_consistent():
    folder = EDITORS / "vscode"
    package = json.loads((folder / "package.json").read_text())
    assert (folder / package["main"]).is_file()
    (language,) = package["contributes"]["languages"]
    assert language["id"] == "relay" and language["extensions"] == [".relay"]
    assert json.loads((folder / language["configuration"]).read_text())["comments"] == {
        "lineComment": "//", "blockComment": ["/*", "*/"]}
    (grammar,) = package["contributes"]["grammars"]
    assert grammar["scopeName"] == textmate_grammar()["scopeName"]
    assert (folder / grammar["path"]).resolve() == GRAMMARS[1].resolve()
    assert "vscode-languageclient" in package["dependencies"]
    source = (folder / "extension.js").read_text()
    assert '"lsp"' in source and "vscode-languageclient/node" in source


def test_neovim_snippet_starts_the_server():
    lua = (EDITORS / "nvim" / "relay.lua").read_text()
    assert 'extension = { relay = "relay" }' in lua
    assert 'cmd = { "relay", "lsp" }' in lua
