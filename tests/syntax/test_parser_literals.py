"""Literals (LANGUAGE.md §2.5 numbers, §2.6 strings, §5.2 dtypes).

Each form is checked twice: through `relaylang.syntax.literals` directly, and
through the parser, where a number becomes a scalar `Constant` whose numpy
dtype must be the one the suffix names and a bad literal becomes a diagnostic
at the literal's position.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import relaylang as rl
from relaylang.ir.expr import Call, Constant, Function
from relaylang.ir.types import TensorType, TypeCall
from relaylang.syntax.literals import (LiteralError, is_dtype_name, parse_dtype, parse_index,
                                       parse_number, parse_string, quote_string)

HEADER = '#[version = "0.0.5"]\n'


def const(text: str) -> Constant:
    expr = rl.parse_expr(text)
    assert isinstance(expr, Constant), type(expr)
    assert expr.data.shape == ()
    return expr


def errors(text: str, expression: bool = True) -> list[rl.Diagnostic]:
    with pytest.raises(rl.DiagnosticError) as info:
        rl.parse_expr(text) if expression else rl.parse(HEADER + text)
    return info.value.diagnostics


# ---------------------------------------------------------------- integers

@pytest.mark.parametrize("text, value, dtype", [
    ("0", 0, "int32"),
    ("7", 7, "int32"),
    ("-7", -7, "int32"),
    ("007", 7, "int32"),
    ("2147483647", 2147483647, "int32"),
    ("-2147483648", -2147483648, "int32"),
    # Unsuffixed integers that do not fit int32 are promoted to int64 (§2.5).
    ("2147483648", 2147483648, "int64"),
    ("-2147483649", -2147483649, "int64"),
    ("9223372036854775807", 9223372036854775807, "int64"),
    ("-9223372036854775808", -9223372036854775808, "int64"),
    ("7i", 7, "int32"),
    ("7i32", 7, "int32"),
    ("-2147483648i32", -2147483648, "int32"),
    ("7i16", 7, "int16"),
    ("32767i16", 32767, "int16"),
    ("-32768i16", -32768, "int16"),
    ("7i64", 7, "int64"),
    ("2147483648i64", 2147483648, "int64"),
    ("-9223372036854775808i64", -9223372036854775808, "int64"),
])
def test_integer_literals(text: str, value: int, dtype: str) -> None:
    assert parse_number(text) == (value, dtype)
    c = const(text)
    assert c.data.dtype == np.dtype(dtype)
    assert int(c.data) == value


@pytest.mark.parametrize("text, value, dtype", [
    ("--5", 5, "int32"),
    ("---5", -5, "int32"),
    ("----5", 5, "int32"),
    ("--5i64", 5, "int64"),
    ("---2.5f", -2.5, "float32"),
    ("--inff", math.inf, "float32"),
    ("---inff", -math.inf, "float32"),
])
def test_minus_runs_fold_into_the_literal(text: str, value: float, dtype: str) -> None:
    # An odd number of leading minus signs means negative (§2.5).
    assert parse_number(text) == (value, dtype)
    c = const(text)
    assert c.data.dtype == np.dtype(dtype)
    assert float(c.data) == value


def test_minus_run_as_call_argument() -> None:
    call = rl.parse_expr("add(--5, ---5)")
    assert isinstance(call, Call)
    assert [int(a.data) for a in call.args] == [5, -5]


# ---------------------------------------------------------------- floats

@pytest.mark.parametrize("text, value, dtype", [
    ("7f", 7.0, "float32"),
    ("7.5f", 7.5, "float32"),
    ("-7.5f", -7.5, "float32"),
    ("2.5e-3f", 2.5e-3, "float32"),
    ("1E+2f", 100.0, "float32"),
    ("1e-05f", 1e-05, "float32"),
    ("3.f", 3.0, "float32"),
    ("7f32", 7.0, "float32"),
    ("0.5f32", 0.5, "float32"),
    ("3.4e38f32", 3.4e38, "float32"),
    ("7f16", 7.0, "float16"),
    ("1e-05f16", 1e-05, "float16"),
    ("65504f16", 65504.0, "float16"),
    ("-65504f16", -65504.0, "float16"),
    ("7f64", 7.0, "float64"),
    ("0.1f64", 0.1, "float64"),
    ("1e300f64", 1e300, "float64"),
])
def test_float_literals(text: str, value: float, dtype: str) -> None:
    v, d = parse_number(text)
    assert d == dtype
    assert isinstance(v, float)
    assert v == pytest.approx(value)
    c = const(text)
    assert c.data.dtype == np.dtype(dtype)
    assert float(c.data) == pytest.approx(float(np.array(value, dtype=dtype)))


def test_float32_constant_is_rounded_to_float32() -> None:
    c = const("0.1f")
    assert c.data.dtype == np.float32
    assert c.data == np.float32(0.1)


@pytest.mark.parametrize("text, sign, dtype", [
    ("inff", 1, "float32"),
    ("-inff", -1, "float32"),
    # The printer's forms (§11.9): a width after inff/nanf.
    ("inff16", 1, "float16"),
    ("inff32", 1, "float32"),
    ("inff64", 1, "float64"),
    ("-inff16", -1, "float16"),
])
def test_infinity_literals(text: str, sign: int, dtype: str) -> None:
    value, d = parse_number(text)
    assert d == dtype and value == sign * math.inf
    c = const(text)
    assert c.data.dtype == np.dtype(dtype)
    assert np.isinf(c.data) and np.sign(c.data) == sign


@pytest.mark.parametrize("text, dtype", [
    ("nanf", "float32"), ("nanf16", "float16"), ("nanf32", "float32"), ("nanf64", "float64"),
])
def test_nan_literals(text: str, dtype: str) -> None:
    value, d = parse_number(text)
    assert d == dtype and math.isnan(value)
    c = const(text)
    assert c.data.dtype == np.dtype(dtype)
    assert np.isnan(c.data)


def test_special_floats_as_call_arguments_and_attribute_values() -> None:
    call = rl.parse_expr("clip(add(inff, -inff), a_min=-inff, a_max=inff)")
    assert call.attrs.a_min == -math.inf and call.attrs.a_max == math.inf
    inner = call.args[0]
    assert [float(a.data) for a in inner.args] == [math.inf, -math.inf]


def test_booleans_are_scalar_bool_constants() -> None:
    for text, value in (("True", True), ("False", False)):
        c = const(text)
        assert c.data.dtype == np.bool_
        assert bool(c.data) is value


# ---------------------------------------------------------------- rejected numbers

@pytest.mark.parametrize("text, fragment", [
    # A float needs the `f` suffix (§2.5).
    ("1.5", "invalid integer literal `1.5`"),
    ("1e5", "invalid integer literal `1e5`"),
    ("3.", "invalid integer literal `3.`"),
    ("1-2", "invalid integer literal `1-2`"),
    ("1.5i32", "invalid integer literal"),
    ("1e5i64", "invalid integer literal"),
    ("1.2.3f", "invalid floating point literal"),
    ("1ef", "invalid floating point literal"),
    ("1e+f", "invalid floating point literal"),
    # Only widths 16, 32 and 64 exist.
    ("1i8", "invalid width `8`"),
    ("1f8", "invalid width `8`"),
    ("1i128", "invalid width `128`"),
    ("1f1", "invalid width `1`"),
    # Range errors.
    ("2147483648i32", "unrepresentable in width 32"),
    ("-2147483649i32", "unrepresentable in width 32"),
    ("32768i16", "unrepresentable in width 16"),
    ("-32769i16", "unrepresentable in width 16"),
    ("9223372036854775808i64", "unrepresentable in width 64"),
    ("9223372036854775808", "does not fit in 64 bits"),
    ("-9223372036854775809", "does not fit in 64 bits"),
    ("65505f16", "unrepresentable in width 16"),
    ("-65505f16", "unrepresentable in width 16"),
    ("1e5f16", "unrepresentable in width 16"),
    ("3.5e38f32", "unrepresentable in width 32"),
    ("-3.5e38f", "unrepresentable in width 32"),
])
def test_bad_numbers_are_rejected(text: str, fragment: str) -> None:
    with pytest.raises(LiteralError) as info:
        parse_number(text)
    assert fragment in str(info.value)
    diags = errors(text)
    assert len(diags) == 1
    d = diags[0]
    assert fragment in d.message
    assert (d.span.line, d.span.column) == (1, 1)
    assert d.span.end_column == 1 + len(text)


def test_float_without_suffix_hint_names_the_fix() -> None:
    d = errors("1.5")[0]
    assert "`1.5f`" in d.message


def test_bad_number_position_inside_a_program() -> None:
    diags = errors("def @main() {\n  add(1,   1.5)\n}", expression=False)
    assert [d.short() for d in diags] == [
        "3:12: invalid integer literal `1.5` (a float needs the `f` suffix: `1.5f`)"]


@pytest.mark.parametrize("text, bad", [
    ("nn.leaky_relu(1f, alpha=1.5)", "1.5"),
    ("nn.leaky_relu(1f, alpha=65505f16)", "65505f16"),
    ("sum(1f, axis=[2147483648i32])", "2147483648i32"),
    ("nn.pad(1f, pad_width=[[0, 1i8]])", "1i8"),
])
def test_bad_numbers_in_attribute_values(text: str, bad: str) -> None:
    diags = errors(text)
    assert [(d.span.line, d.span.column) for d in diags] == [(1, text.index(bad) + 1)]
    assert f"`{bad}`" in diags[0].message


def test_bad_numbers_in_shapes() -> None:
    diags = errors("fn (%x: Tensor[(2, 1.5), float32]) { %x }")
    assert [d.short() for d in diags] == [
        "1:20: invalid integer literal `1.5` (a float needs the `f` suffix: `1.5f`)"]


def test_every_literal_error_is_reported_not_just_the_first() -> None:
    diags = errors("(1.5, 1i8, 32768i16, 65505f16)")
    assert [d.span.column for d in diags] == [2, 7, 12, 22]


# ---------------------------------------------------------------- projection indices

def test_parse_index() -> None:
    assert parse_index("0") == 0
    assert parse_index("12") == 12
    assert parse_index("007") == 7
    for bad in ("1.5", "1i", "-1", "1f", "0.1"):
        with pytest.raises(LiteralError, match="non-negative integer"):
            parse_index(bad)


# ---------------------------------------------------------------- strings

@pytest.mark.parametrize("token, value", [
    ('""', ""),
    ('"NCHW"', "NCHW"),
    ('"a b"', "a b"),
    ('"line1\nline2"', "line1\nline2"),        # a raw newline inside a string
    ('"a\\"b"', 'a"b'),
    ('"a\\\\b"', "a\\b"),
    ('"\\n\\t\\r"', "\n\t\r"),
    ('"\\x41\\x7a"', "Az"),
    ('"\\101\\7"', "A\x07"),
    ('"\\0"', "\0"),
    ("\"\\'\"", "'"),
    ('"\\q"', "\\q"),                          # unknown escape: backslash kept
    ('"x\\x"', "x\\x"),                        # `\x` without a hex digit (found by fuzzing)
    ('"C:\\\\dir"', "C:\\dir"),
])
def test_parse_string(token: str, value: str) -> None:
    assert parse_string(token) == value


@pytest.mark.parametrize("value", ["", "plain", 'quote"d', "back\\slash", "new\nline",
                                   "tab\tcr\r", "\x01\x7f", "ünïcode"])
def test_quote_string_round_trips(value: str) -> None:
    quoted = quote_string(value)
    assert quoted.startswith('"') and quoted.endswith('"')
    assert "\n" not in quoted
    assert parse_string(quoted) == value


@given(st.text(max_size=40))
def test_quote_string_round_trips_any_text(value: str) -> None:
    assert parse_string(quote_string(value)) == value


def test_string_escapes_through_the_parser() -> None:
    fn = rl.parse_expr(r'fn (%x, Compiler="a\"b\\c\n", Composite="") { %x }')
    assert isinstance(fn, Function)
    assert fn.attrs.get("Compiler") == 'a"b\\c\n'
    assert fn.attrs.get("Composite") == ""


def test_string_attribute_value() -> None:
    call = rl.parse_expr('free_var %x; free_var %w; nn.conv2d(%x, %w, data_layout="NHWC", '
                         'out_dtype="float16")')
    assert call.attrs.data_layout == "NHWC"
    assert call.attrs.out_dtype == "float16"


def test_multiline_string_attribute_keeps_following_positions() -> None:
    text = 'fn (%x, Compiler="a\nb") {\n  %y\n}'
    diags = errors(text)
    assert [(d.span.line, d.span.column) for d in diags] == [(3, 3)]


# ---------------------------------------------------------------- dtypes

@pytest.mark.parametrize("name, canonical", [
    ("int8", "int8"), ("int16", "int16"), ("int32", "int32"), ("int64", "int64"),
    ("uint1", "uint1"), ("uint8", "uint8"), ("uint16", "uint16"), ("uint32", "uint32"),
    ("uint64", "uint64"),
    ("float16", "float16"), ("float32", "float32"), ("float64", "float64"),
    ("bfloat16", "bfloat16"), ("bool", "bool"),
    # A missing width means 32 (§5.2).
    ("int", "int32"), ("uint", "uint32"), ("float", "float32"),
    # Vector lanes.
    ("float16x4", "float16x4"), ("int8x4", "int8x4"), ("uint1x4", "uint1x4"),
    ("floatx4", "float32x4"),
])
def test_parse_dtype(name: str, canonical: str) -> None:
    assert parse_dtype(name) == canonical


@pytest.mark.parametrize("name", ["int32x", "floaty", "int7", "float12", "bfloat32", "bfloat",
                                  "uint3", "float16x0", "Tensor", "", "handle2", "int32 "])
def test_parse_dtype_rejects(name: str) -> None:
    assert parse_dtype(name) is None


def test_is_dtype_name_is_a_prefix_test() -> None:
    # Bare names that start with int/uint/float/bool are dtypes in type position (§5.2).
    for name in ("int32", "uint8", "float16x4", "bool", "int", "integer", "floaty"):
        assert is_dtype_name(name)
    for name in ("bfloat16", "Tree", "List", "A", "Int32", "_"):
        assert not is_dtype_name(name)


@pytest.mark.parametrize("spelling, dtype", [
    ("float32", "float32"), ("float16", "float16"), ("float64", "float64"),
    ("int8", "int8"), ("int16", "int16"), ("int64", "int64"), ("uint8", "uint8"),
    ("uint1", "uint1"), ("bool", "bool"), ("int", "int32"), ("float", "float32"),
    ("uint", "uint32"), ("float16x4", "float16x4"), ("int8x4", "int8x4"),
])
def test_dtype_spellings_as_bare_scalar_types(spelling: str, dtype: str) -> None:
    fn = rl.parse_expr(f"fn (%x: {spelling}) {{ %x }}")
    ty = fn.params[0].type_annotation
    assert isinstance(ty, TensorType)
    assert ty.shape == () and ty.dtype == dtype


@pytest.mark.parametrize("spelling, dtype", [
    ("float32", "float32"), ("bfloat16", "bfloat16"), ("uint8", "uint8"),
    ("int", "int32"), ("float16x4", "float16x4"), ("bool", "bool"),
])
def test_dtype_spellings_inside_tensor_types(spelling: str, dtype: str) -> None:
    fn = rl.parse_expr(f"fn (%x: Tensor[(2, 3), {spelling}]) {{ %x }}")
    ty = fn.params[0].type_annotation
    assert isinstance(ty, TensorType)
    assert ty.shape == (2, 3) and ty.dtype == dtype


def test_bare_bfloat16_is_an_adt_name() -> None:
    # Only names starting with int/uint/float/bool are dtypes when bare (§5.2).
    mod_text = HEADER + "type bfloat16 { B }\ndef @f(%x: bfloat16) { %x }"
    mod = rl.parse(mod_text)
    ty = mod["f"].params[0].type_annotation
    assert isinstance(ty, TypeCall)
    assert ty.func is mod.get_global_type_var("bfloat16")


@pytest.mark.parametrize("text, column, name", [
    ("fn (%x: int32x) { %x }", 9, "int32x"),
    ("fn (%x: floaty) { %x }", 9, "floaty"),
    ("fn (%x: integer) { %x }", 9, "integer"),
    ("fn (%x: Tensor[(2), int7]) { %x }", 21, "int7"),
    ("fn (%x: Tensor[(2), Foo]) { %x }", 21, "Foo"),
])
def test_unknown_dtypes_are_diagnostics(text: str, column: int, name: str) -> None:
    diags = errors(text)
    assert [d.short() for d in diags] == [f"1:{column}: unknown dtype `{name}`"]


def test_dimension_literals() -> None:
    fn = rl.parse_expr("fn (%x: Tensor[(2i64, 3i32, 4i16, 0), float32]) { %x }")
    shape = fn.params[0].type_annotation.shape
    assert shape == (2, 3, 4, 0)
    assert all(type(d) is int for d in shape)


def test_dimension_must_be_an_integer() -> None:
    diags = errors("fn (%x: Tensor[(2f), float32]) { %x }")
    assert [d.short() for d in diags] == ["1:17: a dimension must be an integer, got `2f`"]
