"""relaylang/ide/analysis.py: diagnostics, the module of good definitions, the symbol index, and
analysis that survives a broken definition."""
from __future__ import annotations

from lsp_helpers import HEADER, LIST_AND_LENGTH

from relaylang.ide.analysis import analyze

ADT = HEADER + LIST_AND_LENGTH + """\

def @main(%x: Tensor[(2, 3), float32], %y: float32) {
  %0 = nn.relu(%x);
  let %z = add(%0, %y);
  %1 = sum(%z, axis=[1], keepdims=True);
  (%1, @length(Cons(1, Nil)))
}
"""


def occ_at(a, line, col):
    occ = a.index.at(line, col)
    assert occ is not None, f"nothing at {line}:{col}"
    return occ


def where(occ):
    return (occ.span.line, occ.span.column)


def test_clean_module_has_no_diagnostics_and_a_typed_module() -> None:
    a = analyze(ADT, "file:///m.relay", 7)
    assert a.diagnostics == []
    assert a.version == 7 and a.uri == "file:///m.relay" and a.text == ADT
    assert sorted(gv.name_hint for gv in a.module.functions) == ["length", "main"]
    assert [t.name_hint for t in a.module.type_definitions] == ["List"]
    assert {d.status for d in a.definitions.values()} == {"ok"}


def test_every_kind_of_name_is_indexed_with_its_type() -> None:
    a = analyze(ADT, "m")
    kinds = {(o.name, o.kind) for o in a.index.occurrences}
    for expected in [("%x", "local"), ("%0", "graph"), ("@length", "global"), ("List", "type"),
                     ("Cons", "constructor"), ("nn.relu", "op"), ("axis", "attribute"),
                     ("keepdims", "attribute"), ("1", "number"), ("%rest", "local")]:
        assert expected in kinds
    z = occ_at(a, 17, 12)               # %z in sum(%z, ...)
    assert z.name == "%z" and z.type_text == "Tensor[(2, 3), float32]"
    assert occ_at(a, 16, 16).type_text == "Tensor[(2, 3), float32]"      # %0
    assert occ_at(a, 18, 8).type_text == "fn [A](List[A]) -> int32"      # @length
    assert occ_at(a, 17, 8).name == "sum" and occ_at(a, 17, 8).type_text == \
        "Tensor[(2, 1), float32]"
    assert occ_at(a, 18, 16).type_text == "List[int32]"                   # Cons(1, Nil)


def test_at_covers_the_token_and_the_position_just_after_it() -> None:
    a = analyze(ADT, "m")
    assert occ_at(a, 17, 12).name == "%z"
    assert occ_at(a, 17, 14).name == "%z"     # cursor right after `%z`
    assert a.index.at(17, 1) is None          # indentation
    assert a.index.at(999, 1) is None


def test_definitions_and_references_of_locals_graph_ids_globals_types_constructors() -> None:
    a = analyze(ADT, "m")
    z_use = occ_at(a, 17, 12)
    assert where(a.index.definition_of(z_use)) == (16, 7)
    assert [where(o) for o in a.index.references_of(z_use)] == [(16, 7), (17, 12)]
    assert [where(o) for o in a.index.references_of(z_use, include_declaration=False)] == \
        [(17, 12)]
    assert where(a.index.definition_of(occ_at(a, 16, 16))) == (15, 3)     # %0
    length_refs = a.index.references_of(occ_at(a, 18, 8))
    assert [where(o) for o in length_refs] == [(7, 5), (9, 30), (18, 8)]
    assert where(a.index.definition_of(occ_at(a, 7, 20))) == (2, 6)       # List in a type
    cons_refs = a.index.references_of(occ_at(a, 18, 16))
    assert [where(o) for o in cons_refs] == [(3, 3), (9, 5), (18, 16)]
    assert where(a.index.definition_of(occ_at(a, 9, 38))) == (9, 13)      # pattern var %rest
    assert a.index.definition_of(occ_at(a, 15, 8)) is None                # an op


def test_shadowing_resolves_as_the_parser_does() -> None:
    text = HEADER + ("def @f(%x: float32) {\n  let %y = add(%x, 1f);\n  let %x = negative(%y);\n"
                     "  %x\n}\n")
    a = analyze(text, "m")
    assert a.diagnostics == []
    outer_use, outer_def, inner_def = occ_at(a, 3, 16), occ_at(a, 2, 8), occ_at(a, 4, 7)
    assert a.index.definition_of(outer_use) is outer_def
    assert a.index.definition_of(occ_at(a, 5, 3)) is inner_def
    assert inner_def.symbol_id != outer_def.symbol_id
    # A let's variable is in scope in its own value (LANGUAGE.md: recursion).
    b = analyze(HEADER + "def @g() {\n  let %f = fn (%n: int32) -> int32 { %f(%n) };\n  %f\n}\n", "m")
    assert where(b.index.definition_of(occ_at(b, 3, 40))) == (3, 7)


def test_graph_ids_restart_in_every_definition() -> None:
    text = HEADER + ("def @a(%x: float32) {\n  %0 = negative(%x);\n  %0\n}\n"
                     "def @b(%x: int32) {\n  %0 = negative(%x);\n  %0\n}\n")
    a = analyze(text, "m")
    a0, b0 = occ_at(a, 4, 3), occ_at(a, 8, 3)
    assert a0.symbol_id != b0.symbol_id
    assert (a0.type_text, b0.type_text) == ("float32", "int32")
    assert where(a.index.definition_of(b0)) == (7, 3)


def test_bindings_are_the_definitions_of_locals_and_graph_ids_with_types() -> None:
    a = analyze(ADT, "m")
    got = {(o.name, o.span.line): o.type_text for o in a.index.bindings()}
    assert got[("%0", 15)] == "Tensor[(2, 3), float32]"
    assert got[("%z", 16)] == "Tensor[(2, 3), float32]"
    assert got[("%rest", 9)] == "List[A]"
    assert all(o.is_definition for o in a.index.bindings())


def test_free_var_is_a_definition() -> None:
    text = HEADER + "def @f() {\n  free_var %w: float32;\n  negative(%w)\n}\n"
    a = analyze(text, "m")
    assert where(a.index.definition_of(occ_at(a, 4, 13))) == (3, 12)


def test_syntax_errors_in_two_definitions_are_both_reported() -> None:
    text = HEADER + ("def @a(%x: float32) {\n  add(%x,, 1f)\n}\n"
                     "def @ok(%x: float32) {\n  negative(%x)\n}\n"
                     "def @b(%x: float32) {\n  %x +\n}\n")
    a = analyze(text, "m")
    assert [d.span.line for d in a.diagnostics] == [3, 10]
    assert [gv.name_hint for gv in a.module.functions] == ["ok"]
    assert a.definitions["@ok"].status == "ok"
    assert a.definitions["@a"].status == "syntax_error"
    assert occ_at(a, 6, 12).type_text == "float32"


def test_no_cascade_errors_for_calls_of_a_broken_definition() -> None:
    text = HEADER + ("def @helper(%x: float32) -> float32 {\n  negative(%x\n}\n"
                     "def @main(%y: float32) {\n  @helper(%y)\n}\n")
    a = analyze(text, "m")
    assert len(a.diagnostics) == 1 and a.diagnostics[0].span.line == 4
    # The header of the broken definition still names it.
    assert where(a.index.definition_of(occ_at(a, 6, 3))) == (2, 5)
    assert a.definitions["@main"].status == "type_error"      # no signature to call yet


GOOD = HEADER + """\
def @helper(%x: float32) -> float32 {
  let %h = negative(%x);
  %h
}

def @main(%y: float32) {
  let %r = @helper(%y);
  %r
}
"""


def test_broken_definition_keeps_its_last_good_analysis_moved_by_the_edit() -> None:
    first = analyze(GOOD, "m", 1)
    # Two new lines above, and @helper broken mid-edit.
    broken = GOOD.replace(HEADER, HEADER + "// notes\n// more\n").replace(
        "let %h = negative(%x);", "let %h = negative(%x;")
    second = analyze(broken, "m", 2, previous=first)
    assert [d.span.line for d in second.diagnostics] == [7]
    assert second.definitions["@helper"].status == "syntax_error"
    # The kept entries moved down two lines, with their types.
    h = occ_at(second, 5, 7)
    assert h.name == "%h" and h.type_text == "float32"
    assert where(second.index.definition_of(occ_at(second, 6, 3))) == (5, 7)
    # The module keeps the last good @helper, and @main still type-checks against it.
    assert sorted(gv.name_hint for gv in second.module.functions) == ["helper", "main"]
    assert second.definitions["@main"].status == "ok"
    assert occ_at(second, 10, 7).type_text == "float32"         # %r
    assert occ_at(second, 10, 12).type_text == "fn (float32) -> float32"
    # Kept again through a further broken version.
    third = analyze(broken.replace("negative(%x;", "negative(%x;;"), "m", 3, previous=second)
    assert occ_at(third, 5, 7).type_text == "float32"


def test_kept_entries_whose_token_is_gone_are_dropped() -> None:
    first = analyze(GOOD, "m", 1)
    broken = GOOD.replace("let %h = negative(%x);\n  %h", "let %q = negative(%x;\n  %q")
    second = analyze(broken, "m", 2, previous=first)
    names = {o.name for o in second.index.occurrences if o.container == "@helper"}
    assert "%h" not in names and "@helper" in names


def test_type_error_in_one_definition_leaves_the_others_typed() -> None:
    text = GOOD.replace("def @main(%y: float32)", "def @main(%y: int32)")
    a = analyze(text, "m")
    assert len(a.diagnostics) == 1
    d = a.diagnostics[0]
    assert d.span.line == 8 and "float32" in d.message and "int32" in d.message
    assert d.notes and d.notes[0].span.line == 2          # where the parameter type comes from
    assert a.definitions["@helper"].status == "ok"
    assert a.definitions["@main"].status == "type_error"
    assert occ_at(a, 3, 7).type_text == "float32"
    assert [gv.name_hint for gv in a.module.functions] == ["helper"]


def test_definition_with_a_type_error_keeps_types_of_its_last_good_version() -> None:
    first = analyze(GOOD, "m", 1)
    second = analyze(GOOD.replace("let %r = @helper(%y);", "let %r = @helper((%y, %y));"),
                     "m", 2, previous=first)
    assert second.definitions["@main"].status == "type_error"
    assert occ_at(second, 8, 7).type_text == "float32"        # %r, from the last good version
    assert [gv.name_hint for gv in second.module.functions] == ["helper", "main"]


def test_non_ascii_text_before_a_diagnostic_counts_code_points() -> None:
    line = "  /* größe → ü */ add(%x, %nope)"
    text = HEADER + "def @f(%x: float32) {\n" + line + "\n}\n"
    a = analyze(text, "m")
    assert len(a.diagnostics) == 1
    assert a.diagnostics[0].span.column == line.index("%nope") + 1
    assert occ_at(a, 3, line.index("%x") + 1).name == "%x"


def test_undefined_names_are_diagnostics_not_crashes() -> None:
    text = HEADER + "def @f() {\n  %nope\n}\ndef @g() { @missing(1) }\n"
    a = analyze(text, "m")
    messages = [d.message for d in a.diagnostics]
    assert any("%nope" in m for m in messages) and any("@missing" in m for m in messages)


def test_empty_and_header_only_documents() -> None:
    assert analyze("", "m").module.functions == {}
    a = analyze(HEADER, "m")
    assert a.diagnostics == [] and a.index.occurrences == []


def test_deep_chain_is_indexed_without_recursion() -> None:
    depth = 30_000
    assert depth > 10 * 1000          # ten times deeper than Python's default recursion limit
    text = HEADER + "def @main(%x: float32) {\n  " + "negative(" * depth + "%x" + \
        ")" * depth + "\n}\n"
    a = analyze(text, "m")
    assert a.diagnostics == []
    ops = [o for o in a.index.occurrences if o.kind == "op"]
    assert len(ops) == depth
    assert ops[0].type_text == "float32"
    assert where(a.index.definition_of(occ_at(a, 3, 3 + 9 * depth))) == (2, 11)
