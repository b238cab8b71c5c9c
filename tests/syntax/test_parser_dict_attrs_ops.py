"""Operators whose attributes type is TVM's `DictAttrs` take any `key=value`.

TVM registers `vm.invoke_tvm_op` with `.set_attrs_type_key("DictAttrs")` and its VM
lowering hands it the primitive function's attributes, which the text printer writes
as plain keyword attributes: `vm.invoke_tvm_op(%f, %ins, %outs, Primitive=1,
hash="...")`. The parser builds a `DictAttrs` of exactly those entries for an op
declared with `attrs=DictAttrs`."""
from __future__ import annotations

import pytest

from relaylang.ir.attrs import DictAttrs
from relaylang.ir.node import MetaObject
from relaylang.op import registry
from relaylang.syntax.parser import parse, parse_with_diagnostics

HEADER = '#[version = "0.0.5"]\n'
FN = "fn (Tensor[(2), float32]) -> Tensor[(2), float32]"


@pytest.fixture
def dict_attrs_op() -> str:
    name = "vm.invoke_tvm_op"
    assert registry.get_op_def(name).attrs is DictAttrs     # declared as TVM does
    return name


def _text(call: str) -> str:
    return (HEADER + f"def @main(%f: {FN}, %x: Tensor[(2), float32], %o: Tensor[(2), float32]) {{\n"
            f"  {call}\n}}\n")


def test_any_key_value_becomes_the_calls_dict_attrs(dict_attrs_op: str) -> None:
    mod = parse(_text(f'{dict_attrs_op}(%f, (%x,), (%o,), Primitive=1, hash="a5b6", '
                      'reshape_only=True, shape=[2, 1])'))
    call = mod["main"].body
    assert call.attrs == DictAttrs((("Primitive", 1), ("hash", "a5b6"), ("reshape_only", True),
                                    ("shape", (2, 1))))
    assert call.attrs.attrs_type_key is None


def test_without_attributes_the_call_has_none(dict_attrs_op: str) -> None:
    assert parse(_text(f"{dict_attrs_op}(%f, (%x,), (%o,))"))["main"].body.attrs is None


def test_the_printed_call_reads_back(dict_attrs_op: str) -> None:
    from relaylang.syntax.printer import astext
    mod = parse(_text(f'{dict_attrs_op}(%f, (%x,), (%o,), Primitive=1, hash="a5b6")'))
    again = parse(astext(mod))
    assert again["main"].body.attrs == mod["main"].body.attrs


def test_a_meta_value_and_a_one_token_statement(dict_attrs_op: str) -> None:
    obj = MetaObject("Map", '{"type_key":"Map"}')
    text = _text(f"%0 = {dict_attrs_op}(%f, %x, %o, Primitive=1, fn_attrs=meta[Map][0]);\n  %0")
    mod = parse(text, metadata={"Map": [obj]})
    assert mod["main"].body.attrs == DictAttrs((("Primitive", 1), ("fn_attrs", obj)))
    # The graph-binding shape (FAST_CALL_STMT) builds the same attributes.
    mod = parse(_text(f'%0 = {dict_attrs_op}(%f, %x, %o, Primitive=1, hash="h");\n  %0'))
    assert mod["main"].body.attrs == DictAttrs((("Primitive", 1), ("hash", "h")))


def test_a_repeated_key_keeps_the_last_value_as_schema_attributes_do(dict_attrs_op: str) -> None:
    mod, diags = parse_with_diagnostics(_text(f"{dict_attrs_op}(%f, %x, %o, a=1, b=2, a=3)"))
    assert diags == [] and mod["main"].body.attrs == DictAttrs((("a", 3), ("b", 2)))
