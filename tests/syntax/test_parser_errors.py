"""Every diagnostic the parser produces (LANGUAGE.md §12), with its position.

Each case checks a fragment of the message and the 1-based line and column of
the span. Then: several broken definitions in one text give one diagnostic
each, and no input at all — random mutations of valid programs included —
ever escapes as anything but `DiagnosticError`.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutation_fuzz import META, TOKENS, check_only_diagnostics, fuzz_cases, mutated

import relaylang as rl
from relaylang.ir.diagnostics import Diagnostic, Severity
from relaylang.syntax.parser import parse_with_diagnostics

HEADER = '#[version = "0.0.5"]\n'
LIST = "type List[A] { Cons(A, List[A]), Nil, }\n"


def expr_errors(text: str, **kw) -> list[Diagnostic]:
    with pytest.raises(rl.DiagnosticError) as info:
        rl.parse_expr(text, **kw)
    diags = info.value.diagnostics
    assert diags, "DiagnosticError without diagnostics"
    return diags


def module_errors(text: str, header: bool = True, **kw) -> list[Diagnostic]:
    with pytest.raises(rl.DiagnosticError) as info:
        rl.parse((HEADER if header else "") + text, **kw)
    diags = info.value.diagnostics
    assert diags, "DiagnosticError without diagnostics"
    return diags


def one(diags: list[Diagnostic], fragment: str, line: int, column: int) -> Diagnostic:
    """The only diagnostic: an error at line:column whose message contains `fragment`."""
    assert len(diags) == 1, [d.short() for d in diags]
    d = diags[0]
    assert d.severity is Severity.ERROR
    assert fragment in d.message, d.message
    assert (d.span.line, d.span.column) == (line, column), d.short()
    assert d.span.end_line > d.span.line or d.span.end_column > d.span.column
    return d


def col(text: str, needle: str, nth: int = 0) -> int:
    """1-based column of the nth occurrence of `needle` in a one-line text."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    return pos + 1


# ---------------------------------------------------------------- version header

@pytest.mark.parametrize("text", ["def @main() { 0 }", "", "   \n", "// only a comment\n"])
def test_missing_version_header(text: str) -> None:
    d = one(module_errors(text, header=False), "version header", 1, 1)
    assert '#[version = "0.0.5"]' in d.message


def test_wrong_version() -> None:
    d = one(module_errors('#[version = "0.0.4"]\ndef @main() { 0 }', header=False),
            "unsupported text format version", 1, 1)
    assert '"0.0.4"' in d.message and '"0.0.5"' in d.message


def test_wrong_version_after_comments() -> None:
    one(module_errors('// c\n  #[version = "1.0"]\n', header=False),
        "unsupported text format version", 2, 3)


def test_wrong_version_in_expression_text() -> None:
    one(expr_errors('#[version = "0.0.4"]\n1'), "unsupported text format version", 1, 1)


def test_version_header_after_a_definition() -> None:
    one(module_errors('def @main() { 0 }\n#[version = "0.0.5"]'),
        "version header must come first", 3, 1)


# ---------------------------------------------------------------- lexical errors

def test_unterminated_string() -> None:
    text = 'fn (%x, Compiler="abc) { %x }'
    one(expr_errors(text), "unterminated string", 1, col(text, '"'))


def test_unterminated_block_comment_at_start() -> None:
    one(expr_errors("/* abc"), "unterminated block comment", 1, 1)
    one(expr_errors("/* a /* b */ c"), "unterminated block comment", 1, 1)


def test_unterminated_block_comment_after_a_token() -> None:
    one(expr_errors("1 /* c"), "unterminated block comment", 1, 3)


def test_unterminated_block_comment_in_module() -> None:
    diags = module_errors("def @main() { 0 }\n/* trailing")
    assert "unterminated block comment" in diags[0].message
    assert (diags[0].span.line, diags[0].span.column) == (3, 1)


@pytest.mark.parametrize("text, fragment", [
    ("#[foo]\n1", "unknown directive `#[foo]`"),
    ("#x", "`#` must start a directive"),
    ("# comment", "`#` must start a directive"),
])
def test_bad_directives(text: str, fragment: str) -> None:
    one(expr_errors(text), fragment, 1, 1)


def test_bad_directive_inside_module() -> None:
    one(module_errors("def @main() {\n  #[foo] 0\n}"), "unknown directive", 3, 3)


@pytest.mark.parametrize("text, column", [("1\r2", 2), ("1 +\r 2", 4), ("\r", 1)])
def test_lone_carriage_return(text: str, column: int) -> None:
    one(expr_errors(text), "carriage return", 1, column)


def test_lone_carriage_return_on_a_later_line() -> None:
    one(expr_errors("1 +\n\r2"), "carriage return", 2, 1)


@pytest.mark.parametrize("text, sigil", [("% x", "%"), ("@ f", "@"), ("add(1, %)", "%"),
                                         ("@", "@"), ("%", "%")])
def test_sigil_without_name(text: str, sigil: str) -> None:
    one(expr_errors(text), f"`{sigil}` must be followed immediately by a name", 1,
        col(text, sigil))


@pytest.mark.parametrize("ch", ["$", "&", "|", "^", "~", "'", "`", "\\", "\x0c", "\x00", "é"])
def test_unknown_characters(ch: str) -> None:
    text = f"add(1, 2) {ch} 3"
    d = one(expr_errors(text), "unexpected character", 1, 11)
    assert f"U+{ord(ch):04X}" in d.message


# ---------------------------------------------------------------- syntax errors

def test_identifier_where_a_local_is_expected() -> None:
    d = one(expr_errors("let x = 1; x"), "expected a local variable, found identifier `x`", 1, 5)
    assert "`%x`" in d.message


def test_global_where_a_local_is_expected() -> None:
    d = one(expr_errors("let @g = 1; 0"), "unexpected global `@g`", 1, 5)
    assert "local variable" in d.message


def test_missing_closing_brace_before_next_def() -> None:
    diags = module_errors("def @f() { 0\ndef @g() { 1 }")
    assert "is a `}` missing" in diags[0].message
    assert (diags[0].span.line, diags[0].span.column) == (3, 1)


def test_block_as_operand() -> None:
    one(expr_errors("1 + { 2 }"), "block `{ ... }` cannot appear here", 1, 5)


def test_block_as_return_type() -> None:
    one(expr_errors("fn (%x) -> { %x }"), "block `{ ... }` cannot appear here", 1, 12)


def test_match_as_operand() -> None:
    # `match` is an item, not an atom (§7.1): it needs parentheses as an operand.
    diags = expr_errors("1 + match (1) { _ => 1 }")
    d = diags[0]
    assert (d.span.line, d.span.column) == (1, 5)
    assert "match" in d.message and "parenthes" in d.message


def test_unexpected_end_of_input() -> None:
    d = one(expr_errors("1 +"), "unexpected end of input", 1, 4)
    assert "expected" in d.message
    one(expr_errors("(1, 2"), "unexpected end of input", 1, 6)
    one(expr_errors(""), "unexpected end of input", 1, 1)


def test_unexpected_end_of_input_on_later_line() -> None:
    one(module_errors("def @f(%x: Tensor[(2), float32]\n  "), "unexpected end of input", 3, 3)


def test_if_without_else() -> None:
    d = one(expr_errors("if (True) { 1 }"), "unexpected end of input", 1, 16)
    assert "`else`" in d.message
    one(expr_errors("if (True) { 1 } 2"), "unexpected number `2`", 1, 17)


def test_missing_comma_between_arguments() -> None:
    # TVM accepted `f(%a, %b %c)`; a conforming reader may reject it (§13.1).
    text = "free_var %f; %f(1, 2 3)"
    one(expr_errors(text), "unexpected number `3`", 1, col(text, "3"))


def test_adjacent_expressions() -> None:
    one(expr_errors("1\n2"), "unexpected number `2`", 2, 1)
    text = "let %x = 1; %x %x"
    one(expr_errors(text), "unexpected local variable `%x`", 1, 16)


def test_division_without_space_after_name() -> None:
    # `%x/` is a name (§2.3), so `%x/%y` is two adjacent names.
    text = "free_var %x/; free_var %y; %x/%y"
    one(expr_errors(text), "unexpected local variable `%y`", 1, col(text, "%y", 1))


@pytest.mark.parametrize("text, column", [
    ("1 = = 2", 3),
    ("1 < = 2", 5),
    ("match (1) { _ = > 1 }", 15),
])
def test_two_character_operators_cannot_be_split(text: str, column: int) -> None:
    diags = expr_errors(text)
    assert diags[0].message.startswith("unexpected `=`")
    assert diags[0].span.column == column


def test_partial_match_needs_adjacent_question_mark() -> None:
    one(expr_errors("match ? (1) { _ => 1 }"), "unexpected `?`", 1, 7)


def test_tensor_shape_needs_parentheses() -> None:
    one(expr_errors("fn (%x: Tensor[2, float32]) { 0 }"), "unexpected number `2`", 1, 16)


def test_module_items_in_expression_text() -> None:
    diags = expr_errors("def @f() { 0 }")
    assert diags[0].span.line == 1 and diags[0].span.column in (1, 5)


def test_extern_type_with_constructors() -> None:
    # §4.3: "an external type may not have any constructors".
    diags = module_errors("extern type T { A }")
    d = diags[0]
    assert (d.span.line, d.span.column) == (2, 15)
    assert "extern" in d.message or "constructor" in d.message


def test_graph_binding_as_parameter() -> None:
    text = "fn (%0) { 0 }"
    assert expr_errors(text)[0].span.column == 5


def test_reserved_word_as_local_name_after_let() -> None:
    one(expr_errors("let True = 1; 0"), "found identifier `True`", 1, 5)


# ---------------------------------------------------------------- names and scopes

def test_undeclared_local() -> None:
    d = one(module_errors("def @main(%x) {\n  add(%x, %q)\n}"), "unknown local variable `%q`",
            3, 11)
    assert d.span.end_column == 13


def test_branch_scopes() -> None:
    text = "if (True) { let %a = 1; %a } else { %a }"
    one(expr_errors(text), "unknown local variable `%a`", 1, col(text, "%a", 2))


def test_match_arm_scopes() -> None:
    text = "match (1) { %a => 1, _ => %a }"
    one(expr_errors(text), "unknown local variable `%a`", 1, col(text, "%a", 1))


def test_let_in_call_argument_does_not_leak() -> None:
    # TVM leaked the first let of a chain out of a call argument (§6.8); we do not.
    text = "add((let %y = 1; %y), %y)"
    one(expr_errors(text), "unknown local variable `%y`", 1, col(text, "%y", 2))


def test_let_in_block_does_not_leak() -> None:
    text = "{ let %y = 1; %y }; %y"
    diags = expr_errors(text)
    assert [d.span.column for d in diags] == [col(text, "%y", 2)]


def test_parameter_out_of_scope_after_fn() -> None:
    text = "(fn (%x) { %x }, %x)"
    one(expr_errors(text), "unknown local variable `%x`", 1, col(text, "%x", 2))


def test_function_parameters_are_not_visible_in_other_definitions() -> None:
    one(module_errors("def @f(%x) { %x }\ndef @g() { %x }"), "unknown local variable `%x`", 3, 12)


def test_graph_binding_used_before_definition() -> None:
    one(expr_errors("%9"), "graph binding `%9` is used before it is defined", 1, 1)
    one(expr_errors("%0 = add(%0, 1); %0"), "`%0` is used before", 1, 10)


def test_graph_binding_of_another_definition() -> None:
    one(module_errors("def @a() { %0 = 1; %0 }\ndef @b() { %0 }"), "`%0` is used before", 3, 12)


def test_unknown_operator_with_suggestion() -> None:
    d = one(expr_errors("nn.conv2e(1)"), "unknown operator or constructor `nn.conv2e`", 1, 1)
    assert "`nn.conv2d`" in d.message


def test_unknown_operator_without_suggestion() -> None:
    text = "free_var %x; qqqqqqqq(%x)"
    d = one(expr_errors(text), "unknown operator or constructor `qqqqqqqq`", 1, 14)
    assert "did you mean" not in d.message


def test_constructor_before_its_type() -> None:
    # Constructors are recognised only after their `type` (§4.2).
    one(module_errors("def @f() { Nil }\n" + LIST), "unknown operator or constructor `Nil`", 2, 12)


def test_unknown_constructor_in_pattern() -> None:
    d = one(expr_errors("match (1) { Some(%x) => 0 }"), "unknown constructor `Some`", 1, 13)
    assert "`%Some`" in d.message


def test_unknown_constructor_in_nested_pattern() -> None:
    text = "match (1) { (_, Nope) => 0 }"
    one(expr_errors(text), "unknown constructor `Nope`", 1, col(text, "Nope"))


def test_duplicate_global_function() -> None:
    d = one(module_errors("def @f() { 0 }\ndef @f() { 1 }"), "duplicate definition of global "
            "function `@f`", 3, 5)
    assert d.notes and d.notes[0].span.line == 2
    assert "first defined" in d.notes[0].message


def test_duplicate_type() -> None:
    d = one(module_errors("type A { X }\ntype A { Y }"), "duplicate definition of type `A`", 3, 6)
    assert d.notes and d.notes[0].span.line == 2


def test_duplicate_constructor() -> None:
    d = one(module_errors("type A { X }\ntype B {\n  Y,\n  X(int32),\n}"),
            "a constructor named `X` was already defined", 5, 3)
    assert d.notes and (d.notes[0].span.line, d.notes[0].span.column) == (2, 10)


def test_duplicate_constructor_in_one_type() -> None:
    one(module_errors("type A { X, X }"), "constructor named `X`", 2, 13)


def test_undefined_global() -> None:
    d = one(module_errors("def @f() {\n  @g(@g)\n}"), "undefined global function `@g`", 3, 3)
    assert d.span.end_column == 5


def test_unknown_type() -> None:
    # Reported once, at the first reference.
    one(module_errors("def @f(%x: Foo, %y: Foo) { %x }"), "unknown type `Foo`", 2, 12)
    diags = module_errors("def @f(%x: List[Foo]) { %x }")
    assert [d.short()[:25] for d in diags] == ["2:12: unknown type `List`",
                                               "2:17: unknown type `Foo`:"]


def test_global_of_expression_text_is_not_checked() -> None:
    # Expression text has no module; a global is just a name.
    assert rl.parse_expr("@f").name_hint == "f"


# ---------------------------------------------------------------- attributes

def test_unknown_parameter_attribute() -> None:
    one(module_errors("def @f(%x {foo=1}) { %x }"),
        "unknown parameter attribute `foo` (only `virtual_device`)", 2, 12)


def test_bare_identifier_attribute_value() -> None:
    text = "free_var %x; nn.conv2d(%x, %x, data_layout=NCHW)"
    d = one(expr_errors(text), "bare identifier `NCHW` is not an attribute value", 1,
            col(text, "NCHW"))
    assert '"NCHW"' in d.message


def test_operator_takes_no_attributes() -> None:
    text = "add(1, 2, k=1)"
    one(expr_errors(text), "operator `add` takes no attributes", 1, col(text, "k"))


def test_unknown_attribute() -> None:
    text = "free_var %x; nn.conv2d(%x, %x, groups=1, layout=1)"
    d = one(expr_errors(text), "unknown attribute `layout` for `nn.conv2d`", 1, col(text, "layout"))
    assert "kernel_size" in d.message


@pytest.mark.parametrize("attr, what", [
    ('groups="a"', "expects an integer, got a string"),
    ("groups=1.5f", "expects an integer, got a float"),
    ("groups=True", "expects an integer, got a boolean"),
    ("strides=1", "got an integer"),
    ("data_layout=1", "expects a string, got an integer"),
    ("kernel_size=[1, [2]]", "kernel_size"),
])
def test_attribute_value_of_wrong_kind(attr: str, what: str) -> None:
    text = f"free_var %x; nn.conv2d(%x, %x, {attr})"
    one(expr_errors(text), what, 1, col(text, attr.split("=")[0]))


def test_missing_required_attribute() -> None:
    text = "free_var %x;\ncast(%x)"
    d = one(expr_errors(text), "missing required attribute `dtype`", 2, 1)
    assert d.span is not None


@pytest.mark.parametrize("attr, what", [("dtype=1", "expects a dtype string, got an integer"),
                                        ('type="int8"', "unknown attribute `type` for `cast`")])
def test_bad_attribute_of_operator_with_required_fields(attr: str, what: str) -> None:
    # The error path must not fall back to building default attributes: `cast` has none.
    text = f"free_var %x; cast(%x, {attr})"
    one(expr_errors(text), what, 1, col(text, attr.split("=")[0]))


def test_non_operator_call_needs_attrs_type_key() -> None:
    text = "fn (%x) { %x }(1, k=1)"
    one(expr_errors(text), "need `attrs_type_key=", 1, col(text, "k="))


def test_meta_attrs_object_must_be_last_argument() -> None:
    table = {"relay.attrs.DenseAttrs": ["attrs"]}
    text = "free_var %x; nn.dense(meta[relay.attrs.DenseAttrs][0], %x)"
    one(expr_errors(text, metadata=table), "can only be the last argument of a call", 1,
        col(text, "meta"))


def test_meta_attrs_object_outside_a_call() -> None:
    table = {"relay.attrs.DenseAttrs": ["attrs"]}
    one(expr_errors("(1, meta[relay.attrs.DenseAttrs][0])", metadata=table),
        "can only be the last argument of a call", 1, 5)


def test_meta_attrs_object_and_keyword_attributes() -> None:
    table = {"relay.attrs.DenseAttrs": ["attrs"]}
    text = "free_var %x; nn.dense(%x, %x, meta[relay.attrs.DenseAttrs][0], units=1)"
    one(expr_errors(text, metadata=table), "both keyword attributes and an attributes object",
        1, col(text, "units"))


# ---------------------------------------------------------------- meta references

def test_meta_reference_without_table() -> None:
    d = one(expr_errors("add(1, meta[relay.Constant][0])"), "refers to the metadata table", 1, 8)
    assert "#[metadata]" in d.message and "metadata=" in d.message


def test_meta_reference_unknown_key() -> None:
    table = {"relay.Constant": [np.zeros(1)]}
    one(expr_errors("meta[relay.Foo][0]", metadata=table),
        "the metadata table has no entry for `relay.Foo`", 1, 1)


def test_meta_reference_out_of_bounds() -> None:
    table = {"relay.Constant": [np.zeros(1), np.ones(1)]}
    d = one(expr_errors("(meta[relay.Constant][1],\n meta[relay.Constant][2])", metadata=table),
            "out of bounds", 2, 2)
    assert "2 `relay.Constant` objects" in d.message


def test_meta_dimension_must_be_an_index_expression() -> None:
    table = {"relay.Constant": [np.zeros(1)]}
    text = "fn (%x: Tensor[(3, meta[relay.Constant][0]), float32]) { %x }"
    one(expr_errors(text, metadata=table), "must be an index expression", 1, col(text, "meta"))


def test_malformed_metadata_section() -> None:
    text = '1\n#[metadata]\n{"root": 1,\n "nodes": [}'
    d = one(expr_errors(text), "malformed metadata section", 4, 12)
    assert d.span.line == 4


def test_empty_metadata_section_is_fine() -> None:
    assert rl.parse_expr("1\n#[metadata]\n").data.item() == 1


# ---------------------------------------------------------------- types and literals

def test_unknown_dtype() -> None:
    one(expr_errors("fn (%x: Tensor[(2), floaty]) { %x }"), "unknown dtype `floaty`", 1, 21)
    one(expr_errors("fn (%x: int32x) { %x }"), "unknown dtype `int32x`", 1, 9)


def test_dimension_must_be_an_integer() -> None:
    one(expr_errors("fn (%x: Tensor[(1.5f), float32]) { %x }"), "dimension must be an integer",
        1, 17)


def test_literal_errors() -> None:
    one(expr_errors("add(1, 1.5)"), "invalid integer literal `1.5`", 1, 8)
    one(expr_errors("add(1, 1i8)"), "invalid width `8`", 1, 8)
    one(expr_errors("add(1,\n 65505f16)"), "unrepresentable in width 16", 2, 2)


def test_projection_index_errors() -> None:
    text = "free_var %t; %t.0.1"
    one(expr_errors(text), "non-negative integer index, got `0.1`", 1, col(text, "0.1"))
    text = "(1, 2).-1"
    one(expr_errors(text), "got `-1`", 1, col(text, "-1"))
    text = "free_var %t; %t.1i"
    one(expr_errors(text), "got `1i`", 1, col(text, "1i"))


# ---------------------------------------------------------------- several errors at once

BROKEN_MODULE = HEADER + """\
def @f() { let %x = 1 }
def @g() { %y }
def @h() { (1, }
def @ok() { 0 }
type T { A(Foo) }
def @i() { add(1, 1.5) }
"""


def test_one_error_per_broken_definition() -> None:
    with pytest.raises(rl.DiagnosticError) as info:
        rl.parse(BROKEN_MODULE)
    shorts = [d.short() for d in info.value.diagnostics]
    lines = [d.span.line for d in info.value.diagnostics]
    assert lines == [2, 3, 4, 6, 7], shorts
    assert "expected `;`" in shorts[0]
    assert "unknown local variable `%y`" in shorts[1]
    assert "unknown type `Foo`" in shorts[3]
    assert "invalid integer literal `1.5`" in shorts[4]


def test_parse_with_diagnostics_keeps_what_parsed() -> None:
    m, diags = parse_with_diagnostics(BROKEN_MODULE)
    assert [d.span.line for d in diags] == [2, 3, 4, 6, 7]
    assert "ok" in m and m["ok"].body.data.item() == 0
    assert "T" in m


def test_parse_with_diagnostics_is_sorted_and_never_raises() -> None:
    text = HEADER + "def @b() { %q }\ndef @a() { @nope }\n#[foo]\n"
    m, diags = parse_with_diagnostics(text)
    positions = [(d.span.line, d.span.column) for d in diags]
    assert positions == sorted(positions) and len(diags) >= 3


def test_error_after_syntax_error_in_same_definition_is_not_reported_twice() -> None:
    m, diags = parse_with_diagnostics(HEADER + "def @f() { ( }\ndef @g() { 1 }")
    assert len(diags) == 1 and "g" in m


def test_syntax_errors_in_consecutive_definitions() -> None:
    text = HEADER + "".join(f"def @f{i}() {{ let }}\n" for i in range(5))
    _, diags = parse_with_diagnostics(text)
    assert [d.span.line for d in diags] == [2, 3, 4, 5, 6]


def test_diagnostic_error_message_and_render() -> None:
    with pytest.raises(rl.DiagnosticError) as info:
        rl.parse(HEADER + "def @f() { %a }\ndef @g() { %b }", source_name="m.relay")
    err = info.value
    assert str(err).startswith("m.relay:2:12: error: unknown local variable `%a`")
    assert "1 more" in str(err)
    rendered = err.render()
    assert "def @f() { %a }" in rendered and "^^" in rendered


def test_short_form() -> None:
    d = expr_errors("free_var %x;\n  %y")[0]
    assert d.short().startswith("2:3: unknown local variable `%y`")


# ---------------------------------------------------------------- no tracebacks, ever

SEEDS = [
    HEADER + LIST + """\
type Option[A] { Some(A), None_, }
extern type Handle[T]
def @main(%x: Tensor[(2, 3), float32], %y {virtual_device=meta[VirtualDevice][0]}: float32,
          Primitive=1) -> float32 {
  %0 = add(%x, %y) /* ty=float32 */;
  let %z: (int32, fn (int8) -> Option[bool]) = (%0, %0.1, (1,), ());
  %1 = nn.conv2d(%0, %0, padding=[1, 1], channels=16, kernel_size=[3, 3], out_dtype="float16");
  let %f = fn [A](%a: A) -> A { if (%a == 1) { %a } else { %f(%a - 1) } };
  %2 = match (%z) { Cons(%h, _) => %h, Nil => 0i64, (%p, %q: int32) => %p, };
  ref_write(ref(1f), -2.5e-3f); ref_read(ref(inff)) // comment
}
def @g[T](%t: List[T]) { match? (%t) { Cons(%h, %tl) => @g(%tl), Some(None_) => 0 } }
""",
    HEADER + """\
def @h(%a: Tensor[(?, 3), float16x4], %conv1/weight: float32, %bn.gamma, %f) {
  %f(%a, k=[[1], []], s="x\\"y", attrs_type_key="relay.attrs.X");
  nn.dense(%a, %a, meta[relay.attrs.DenseAttrs][0]);
  cast(%a, dtype="int8");
  /* a /* nested */ comment */ (meta[relay.Constant][0], meta[relay.Constant][0].0)
}
#[metadata]
{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map", "keys": [], "data": []}],
 "b64ndarrays": [], "attrs": {"tvm_version": "0.19.0"}}
""",
]
EXPR_SEEDS = [
    "free_var %x: float32;\nlet %y = 1 == 1 < 1 + 1 * 1;\n(fn (%a) { %a })(%x) - --5",
    "let %x = match (1) { _ => 2 };\n%3 = match? (%x) { %v => { %v }, };\n(%3, nanf, inff16)",
]
def test_seeds_are_valid() -> None:
    for seed in SEEDS:
        _, diags = parse_with_diagnostics(seed, metadata=META)
        assert diags == [], [d.short() for d in diags] if diags else None


FUZZ = settings(max_examples=fuzz_cases(250), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(mutated(SEEDS))
def test_mutated_modules_raise_only_diagnostic_errors(text: str) -> None:
    check_only_diagnostics(text, expression=False)


@FUZZ
@given(mutated(EXPR_SEEDS))
def test_mutated_expressions_raise_only_diagnostic_errors(text: str) -> None:
    check_only_diagnostics(text, expression=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TOKENS + list("()%@{}[],;=.:x0 \n")), max_size=30).map("".join))
def test_random_token_soup_raises_only_diagnostic_errors(text: str) -> None:
    check_only_diagnostics(text, expression=True)
    check_only_diagnostics(HEADER + text, expression=False)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40))
def test_random_text_raises_only_diagnostic_errors(text: str) -> None:
    check_only_diagnostics(text, expression=True)
    check_only_diagnostics(HEADER + "def @main() {\n" + text + "\n}", expression=False)


# ---------------------------------------------------------------- names and graph ids

@pytest.mark.parametrize("text,name,column", [
    ("def @main(%type) { 0 }", "type", 11),
    ("def @if() { 0 }", "if", 5),
    ("def @main() { let %ref = 1; 0 }", "ref", 19),
])
def test_reserved_word_after_a_sigil(text: str, name: str, column: int) -> None:
    diags = module_errors(text)
    assert any(f"`{name}` is a reserved word" in d.message and d.span.column == column
               for d in diags), [d.short() for d in diags]


def test_graph_id_bound_twice_in_one_definition() -> None:
    text = "def @main() { %0 = 1; %0 = 2; %0 }"
    one(module_errors(text), "`%0` is bound twice", 2, col(text, "%0", 1))


def test_graph_ids_may_repeat_across_definitions() -> None:
    mod = rl.parse(HEADER + "def @f() { %0 = 1; %0 }\ndef @g() { %0 = 2; %0 }")
    assert len(mod.functions) == 2
