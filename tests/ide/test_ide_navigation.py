"""relaylang/ide/navigation.py: hover, definition, references, rename, outline, call hierarchy."""
from __future__ import annotations

import pytest
from lsp_helpers import HEADER, LIST_AND_LENGTH

from relaylang.ide import navigation as nav
from relaylang.ide.analysis import analyze

TEXT = HEADER + LIST_AND_LENGTH + """\

def @main(%x: Tensor[(2, 3), float32], %y: float32) {
  %0 = nn.relu(%x);
  let %z = add(%0, %y);
  let %twice = fn (%v: float32) {
    let %inner = fn (%w: float32) { multiply(%w, 2f) };
    %inner(%v)
  };
  %1 = sum(%z, axis=[1], keepdims=True);
  (%1, @length(Cons(1, Nil)), %twice(%y))
}
"""


@pytest.fixture(scope="module")
def a():
    result = analyze(TEXT, "file:///t.relay", 1)
    assert result.diagnostics == []
    return result


def at(span):
    return (span.line, span.column, span.end_column)


def test_hover_local_graph_global_number(a) -> None:
    text, span = nav.hover(a, 21, 12)            # %z in sum(...)
    assert "%z: Tensor[(2, 3), float32]" in text and at(span) == (21, 12, 14)
    text, _ = nav.hover(a, 16, 16)               # %0
    assert "%0: Tensor[(2, 3), float32]" in text
    text, _ = nav.hover(a, 22, 8)                # @length
    assert "def @length: fn [A](List[A]) -> int32" in text
    text, _ = nav.hover(a, 9, 27)                # the literal 1
    assert "1: int32" in text
    assert nav.hover(a, 14, 1) is None           # blank line


def test_hover_op_shows_signature_and_attributes_from_the_registry(a) -> None:
    text, span = nav.hover(a, 21, 9)
    assert at(span) == (21, 8, 11)
    assert "sum(data, axis=None, keepdims=False, exclude=False)" in text
    assert "keepdims: bool = False" in text and "Tensor[(2, 1), float32]" in text
    text, _ = nav.hover(a, 21, 28)               # the attribute keepdims
    assert "keepdims: bool = False" in text and "`sum`" in text


def test_hover_constructor_and_type(a) -> None:
    text, _ = nav.hover(a, 22, 17)               # Cons(1, Nil)
    assert "Cons(A, List[A]): List[A]" in text and "List[int32]" in text
    text, _ = nav.hover(a, 7, 21)                # List in a parameter type
    assert "type List[A] {" in text and "Cons(A, List[A])," in text


def test_definition_references_highlights(a) -> None:
    assert at(nav.definition(a, 21, 12)) == (16, 7, 9)           # %z
    assert at(nav.definition(a, 22, 17)) == (3, 3, 7)            # Cons
    assert at(nav.definition(a, 9, 38)) == (9, 13, 18)           # pattern var %rest
    assert at(nav.definition(a, 22, 8)) == (7, 5, 12)            # @length
    assert nav.definition(a, 15, 8) is None                      # an op
    refs = nav.references(a, 22, 8, include_declaration=True)
    assert [s.line for s in refs] == [7, 9, 22]
    assert [s.line for s in nav.references(a, 22, 8, include_declaration=False)] == [9, 22]
    assert [s.line for s in nav.highlights(a, 16, 7)] == [16, 21]
    assert nav.references(a, 14, 1, True) == []


def test_prepare_rename_only_locals_and_globals(a) -> None:
    assert at(nav.prepare_rename(a, 21, 12)) == (21, 12, 14)
    assert at(nav.prepare_rename(a, 7, 6)) == (7, 5, 12)
    assert nav.prepare_rename(a, 15, 8) is None                  # op
    assert nav.prepare_rename(a, 22, 17) is None                 # constructor
    assert nav.prepare_rename(a, 15, 3) is None                  # graph id


def test_rename_local_and_global(a) -> None:
    edits = nav.rename(a, 16, 8, "zz")
    assert sorted((s.line, s.column, t) for s, t in edits) == [(16, 7, "%zz"), (21, 12, "%zz")]
    assert nav.rename(a, 16, 8, "%zz") == edits
    edits = nav.rename(a, 22, 8, "@len")
    assert sorted((s.line, t) for s, t in edits) == [(7, "@len"), (9, "@len"), (22, "@len")]
    assert nav.rename(a, 16, 8, "%z") == []


@pytest.mark.parametrize("name, message", [
    ("1abc", "not a valid name"), ("a b", "not a valid name"), ("", "not a valid name"),
    ("let", "reserved word"), ("%y", "already used"), ("%twice", "already used")])
def test_rename_rejects_bad_names(a, name, message) -> None:
    with pytest.raises(ValueError, match=message):
        nav.rename(a, 16, 8, name)


def test_rename_rejects_an_existing_global_and_non_renameable_tokens(a) -> None:
    with pytest.raises(ValueError, match="already exists"):
        nav.rename(a, 22, 8, "main")
    with pytest.raises(ValueError, match="can be renamed"):
        nav.rename(a, 15, 8, "foo")


def test_document_symbols_nest_constructors_and_local_functions(a) -> None:
    symbols = nav.document_symbols(a)
    assert [(s.name, s.kind) for s in symbols] == [("List", "type"), ("@length", "function"),
                                                   ("@main", "function")]
    ty, length, main = symbols
    assert [(c.name, c.detail) for c in ty.children] == [("Cons", "Cons(A, List[A])"),
                                                         ("Nil", "Nil")]
    assert (ty.span.line, ty.span.end_line) == (2, 5)
    assert length.detail == "fn [A](List[A]) -> int32" and at(length.selection_span) == (7, 5, 12)
    assert [c.name for c in main.children] == ["%twice"]
    assert [c.name for c in main.children[0].children] == ["%inner"]
    assert main.children[0].detail == "fn (float32) -> float32"


def test_folding_ranges(a) -> None:
    folds = nav.folding_ranges(a)
    assert (2, 5) in folds and (7, 12) in folds and (14, 23) in folds
    assert (8, 10) in folds                      # the match
    assert (17, 20) in folds                     # the local function


def test_call_hierarchy(a) -> None:
    assert nav.calls_from(a, "@main") == [("@length", [a.index.at(22, 8).span])]
    assert nav.calls_from(a, "length") == [("@length", [a.index.at(9, 30).span])]
    incoming = dict(nav.calls_to(a, "length"))
    assert sorted(incoming) == ["@length", "@main"]
    assert [s.line for s in incoming["@main"]] == [22]
    name, whole, selection = nav.prepare_call_hierarchy(a, 22, 8)
    assert name == "@length" and (whole.line, whole.end_line) == (7, 12)
    assert at(selection) == (7, 5, 12)
    assert nav.prepare_call_hierarchy(a, 15, 8) is None


def test_workspace_symbols_across_documents(a) -> None:
    other = analyze(HEADER + "def @mainline() { () }\ntype Tree { Leaf }\n", "file:///o.relay")
    found = nav.workspace_symbols([a, other], "main")
    assert [(s.name, s.uri) for s in found] == [("@main", "file:///t.relay"),
                                                ("@mainline", "file:///o.relay")]
    assert [s.name for s in nav.workspace_symbols([a, other], "lf")] == ["Leaf"]
    kinds = {s.name: s.kind for s in nav.workspace_symbols([a, other], "")}
    assert kinds["Leaf"] == "constructor" and kinds["Tree"] == "type" and \
        kinds["@length"] == "function"
    assert [s.name for s in nav.workspace_symbols([a, other], "lngth")] == ["@length"]


def test_navigation_in_a_broken_definition_next_to_a_working_one() -> None:
    good = analyze(TEXT, "m", 1)
    broken = TEXT.replace("Nil => 0,", "Nil => 0 +,")
    a = analyze(broken, "m", 2, previous=good)
    assert a.definitions["@length"].status == "syntax_error"
    text, _ = nav.hover(a, 9, 38)                # kept: %rest in the broken definition
    assert "List[A]" in text
    assert at(nav.definition(a, 9, 38)) == (9, 13, 18)
    text, _ = nav.hover(a, 21, 12)               # the working definition
    assert "Tensor[(2, 3), float32]" in text
    assert [s.name for s in nav.document_symbols(a)] == ["List", "@length", "@main"]
