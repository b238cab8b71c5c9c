"""`extern type Storage` (a type without constructors, TVM's opaque declaration) prints as
`extern type Storage` and reads back as the same definition."""
from __future__ import annotations

import pytest

import relaylang as rl
from relaylang.syntax.format import format_text

HEADER = '#[version = "0.0.5"]\n'


def test_extern_type_prints_as_extern_and_round_trips():
    text = HEADER + "extern type Storage\n\ndef @main(%x: Storage) -> Storage {\n  %x\n}\n"
    mod = rl.parse(text)
    assert rl.astext(mod) == text
    again = rl.parse(rl.astext(mod))
    (data,) = again.type_definitions.values()
    assert data.header.name_hint == "Storage" and data.constructors == ()


def test_extern_type_with_parameters():
    text = HEADER + "extern type Box[A]\n\ndef @f(%b: Box[int32]) -> Box[int32] {\n  %b\n}\n"
    assert rl.astext(rl.parse(text)) == text


def test_a_type_without_constructors_is_extern():
    """`type T {}` is the same TypeData: it prints as the declaration TVM writes."""
    mod = rl.parse(HEADER + "type T {}\n")
    assert rl.astext(mod) == HEADER + "extern type T\n"


def test_fmt_keeps_extern_types():
    text = HEADER + "extern type Storage  // opaque\n"
    assert format_text(text).text == text


def test_storage_is_a_known_type_name_without_a_definition() -> None:
    """core.rly's `extern type Storage` (memory.alloc_storage's result) needs no
    declaration: a program a pass printed with a storage-typed binder parses back (ToCPS
    on TVM's test_impure_op gave continuations `fn (%x: Storage[])`). Other unknown names
    stay errors."""
    import relaylang as rl
    mod = rl.parse('#[version = "0.0.5"]\ndef @main(%s: Storage[]) { memory.kill(%s) }\n')
    typed = rl.transform.InferType()(mod)
    assert rl.structural_equal(rl.parse(rl.astext(typed)), typed)
    with pytest.raises(rl.DiagnosticError, match="unknown type `Storag`"):
        rl.parse('#[version = "0.0.5"]\ndef @main(%s: Storag[]) { %s }\n')
