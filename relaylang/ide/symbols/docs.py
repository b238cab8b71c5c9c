"""Markdown for hovers: op signatures and attributes from the registry, ADT definitions.

Everything an op hover says comes from its `OpDef` (relaylang/op/registry.py):
arity, attribute schema (field order, annotations and defaults, as the printer
uses them), fusion pattern and doc text. Nothing here lists op names.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ... import op as op_registry
from ...ir.text import type_text
from ...ir.types import TypeData
from ...op.signature import op_signature as _op_signature


def _default_text(f: dataclasses.Field) -> str | None:
    if f.default is not dataclasses.MISSING:
        return repr(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return repr(f.default_factory())
    return None


def _annotation(f: dataclasses.Field) -> str:
    return f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))


def attribute_line(f: dataclasses.Field) -> str:
    default = _default_text(f)
    tail = f" = {default}" if default is not None else " (required)"
    return f"{f.name}: {_annotation(f)}{tail}"


def op_signature(name: str) -> str | None:
    """`nn.dense(data, weight, units, out_dtype="")`: the op layer's one signature label."""
    sig = _op_signature(name)
    return sig.label if sig is not None else None


def op_markdown(name: str, call_type: str | None = None) -> str | None:
    opdef = op_registry.get_op_def(name)
    if opdef is None:
        return None
    arity = "any number of" if opdef.num_inputs < 0 else str(opdef.num_inputs)
    out = [f"```relay\n{op_signature(name)}\n```",
           f"operator `{name}`: {arity} input(s), pattern `{opdef.pattern.name}`"
           + (", stateful" if opdef.stateful else "")]
    if call_type:
        out.append(f"this call: `{call_type}`")
    sig = _op_signature(name)
    doc = sig.doc if sig is not None else ""
    if doc:
        out.append(doc)
    if opdef.attrs is not None:
        schema_doc = (opdef.attrs.__doc__ or "").strip()
        lines = [f"- `{attribute_line(f)}`" for f in dataclasses.fields(opdef.attrs)]
        head = f"attributes (`{opdef.attrs.__name__}`)"
        if schema_doc and not schema_doc.startswith(opdef.attrs.__name__ + "("):
            head += f": {schema_doc.splitlines()[0]}"
        out.append(head + "\n" + "\n".join(lines))
    return "\n\n".join(out)


def attribute_markdown(op_name: str, key: str) -> str | None:
    opdef = op_registry.get_op_def(op_name)
    if opdef is None or opdef.attrs is None:
        return None
    for f in dataclasses.fields(opdef.attrs):
        if f.name == key:
            return (f"```relay\n{attribute_line(f)}\n```\n\nattribute of `{op_name}` "
                    f"(`{opdef.attrs.__name__}`)")
    return None


def type_definition_text(data: TypeData) -> str:
    params = f"[{', '.join(tv.name_hint for tv in data.type_params)}]" if data.type_params \
        else ""
    ctors = [constructor_text(c) for c in data.constructors]
    body = " {\n" + "".join(f"  {c},\n" for c in ctors) + "}" if ctors else ""
    return f"type {data.header.name_hint}{params}{body}"


def constructor_text(ctor: Any) -> str:
    fields = ", ".join(type_text(t, none="_") for t in ctor.inputs)
    return f"{ctor.name}({fields})" if ctor.inputs else ctor.name


def constructor_result(data: TypeData) -> str:
    params = ", ".join(tv.name_hint for tv in data.type_params)
    return f"{data.header.name_hint}[{params}]" if params else data.header.name_hint
