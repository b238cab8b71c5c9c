"""The Pygments lexer for Relay (relaylang/syntax/highlight.py) and `relay opt --color`."""
from __future__ import annotations

from pathlib import Path

import pytest
from pygments.token import Comment, Error, Keyword, Name, Number, Operator, String, Text

from relaylang.cli import main
from relaylang.syntax.highlight import TOKEN_SCOPES, RelayLexer, scope_for

ROOT = Path(__file__).resolve().parents[2]
RELAY_FILES = sorted(p for d in ("examples", "tests/golden") for p in (ROOT / d).rglob("*.relay"))


def tokens(text: str) -> list[tuple[object, str]]:
    return [(t, v) for _, t, v in RelayLexer().get_tokens_unprocessed(text) if v.strip()]


def test_no_error_tokens_in_any_relay_file_of_the_repository():
    assert len(RELAY_FILES) > 20
    lexer = RelayLexer()
    bad = {}
    for path in RELAY_FILES:
        errors = [(i, v) for i, t, v in lexer.get_tokens_unprocessed(path.read_text())
                  if t is Error]
        if errors:
            bad[str(path.relative_to(ROOT))] = errors[:3]
    assert bad == {}


def test_token_classes():
    text = ('#[version = "0.0.5"]\ndef @f(%x: Tensor[(1), float32], %0) -> float32 {\n'
            '  /* a /* nested */ comment */ let %y = nn.conv2d(%x, meta[relay.Constant][0], '
            'padding=[1, 1]); // end\n  match? (%y) { Cons(%h, _) => 2.5f, Nil => -1i64 }\n}\n'
            '#[metadata]\n{"root": 1}\n')
    got = tokens(text)
    assert got[0] == (Comment.Preproc, '#[version = "0.0.5"]')
    expected = [
        (Keyword.Declaration, "def"), (Name.Function, "@f"), (Name.Variable, "%x"),
        (Keyword.Type, "Tensor"), (Keyword.Type, "float32"), (Name.Variable.Anonymous, "%0"),
        (Operator, "->"), (Comment.Multiline, "/*"), (Keyword, "let"),
        (Name.Builtin, "nn.conv2d"), (Name.Constant, "meta[relay.Constant][0]"),
        (Name.Attribute, "padding"), (Comment.Single, "// end"), (Keyword, "match?"),
        (Name.Class, "Cons"), (Name, "_"), (Operator, "=>"), (Number.Float, "2.5f"),
        (Number.Integer, "-1i64"), (String.Other, '\n{"root": 1}\n'),
    ]
    for item in expected:
        assert item in got, item
    comment = "".join(v for t, v in got if t is Comment.Multiline)
    assert comment == "/* a /* nested */ comment */"


def test_every_token_class_has_a_textmate_scope():
    lexer_tokens = {rule[1] for state in RelayLexer.tokens.values() for rule in state}
    assert {t for t in lexer_tokens if scope_for(t) is None} == {Text, Error}
    assert {scope_for(t) for t in lexer_tokens} - {None} == set(TOKEN_SCOPES.values())
    assert len(set(TOKEN_SCOPES.values())) == len(TOKEN_SCOPES)      # one to one


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "m.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: float32) { add(%x, 1f) }\n')
    return path


@pytest.mark.parametrize("flag, colored", [(["--color=always"], True), (["--color"], True),
                                            (["--color=never"], False), ([], False),
                                            (["--color=auto"], False)])
def test_opt_color(model, capsys, flag, colored):
    assert main(["opt", str(model), "-p", "ToANormalForm", *flag]) == 0
    out = capsys.readouterr().out
    assert ("\x1b[" in out) is colored
    plain = out if not colored else __import__("re").sub(r"\x1b\[[0-9;]*m", "", out)
    assert plain.startswith('#[version = "0.0.5"]\ndef @main(%x: float32) {')


def test_opt_color_never_goes_into_files(model, tmp_path, capsys):
    out = tmp_path / "out.relay"
    assert main(["opt", str(model), "-p", "ToANormalForm", "--color=always", "-o", str(out)]) == 0
    assert "\x1b[" not in out.read_text()


def test_pygments_finds_the_lexer_by_its_alias() -> None:
    # the `pygments.lexers` entry point in pyproject.toml (needs an installed package)
    from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
    assert type(get_lexer_by_name("relay")).__name__ == "RelayLexer"
    assert type(get_lexer_for_filename("model.relay")).__name__ == "RelayLexer"
