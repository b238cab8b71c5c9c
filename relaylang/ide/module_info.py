"""Names a completion can offer, from the text being edited and from a parsed module.

The text may not parse, so its globals and ADTs are found lexically (`def @name (...)`,
`type Name[..] { Ctor(..), ... }`); a module, when given, adds its definitions with the
types inference gave them (`checked_type`) or their annotations.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..ir.text import type_text
from .tokens import Token, token_text, tokenize

if TYPE_CHECKING:
    from ..ir.expr import Function
    from ..ir.module import IRModule
    from ..ir.types import Type


@dataclass
class ADTNames:
    types: dict[str, str] = field(default_factory=dict)          # name -> "[T]" params text
    constructors: dict[str, str] = field(default_factory=dict)   # name -> "(T, ...) : Name[T]"


def _bracketed(tokens: list[Token], i: int) -> tuple[str, int]:
    """The text of the balanced bracket group starting at tokens[i], and the index after it."""
    depth, text, j = 0, "", i
    while j < len(tokens):
        t = tokens[j].text
        depth += (t in "([{") - (t in ")]}") if tokens[j].kind == "punct" else 0
        text += token_text(tokens[j])
        j += 1
        if depth == 0:
            break
    return text, j


def text_globals(text: str) -> list[tuple[str, str]]:
    """(name, header) of each `def @name` in `text`; header is `(params) -> R` as written."""
    tokens = tokenize(text).tokens
    out: list[tuple[str, str]] = []
    for i, tok in enumerate(tokens[:-1]):
        if tok.text == "def" and tokens[i + 1].kind == "global" and len(tokens[i + 1].text) > 1:
            j, header = i + 2, ""
            while j < len(tokens) and tokens[j].text in ("[", "("):
                part, j = _bracketed(tokens, j)
                header += part
            if j < len(tokens) and tokens[j].text == "->":
                ret, k = [], j + 1
                while k < len(tokens) and tokens[k].text != "{":
                    part, k = _bracketed(tokens, k)
                    ret.append(part)
                header += " -> " + "".join(ret)
            out.append((tokens[i + 1].text[1:], header))
    return out


def text_adts(text: str) -> ADTNames:
    """Type names and constructors declared by `type` items in `text`."""
    tokens = tokenize(text).tokens
    found = ADTNames()
    for i, tok in enumerate(tokens[:-1]):
        if tok.text != "type" or tokens[i + 1].kind != "name":
            continue
        name, j, params = tokens[i + 1].text, i + 2, ""
        if j < len(tokens) and tokens[j].text == "[":
            params, j = _bracketed(tokens, j)
        found.types[name] = params
        if j >= len(tokens) or tokens[j].text != "{":
            continue
        j += 1
        while j < len(tokens) and tokens[j].text != "}":
            if tokens[j].kind == "name":
                fields = ""
                if j + 1 < len(tokens) and tokens[j + 1].text == "(":
                    fields, after = _bracketed(tokens, j + 1)
                else:
                    after = j + 1
                found.constructors[tokens[j].text] = f"{fields} : {name}{params}"
                j = after
            else:
                j += 1
    return found


def module_adts(module: IRModule) -> ADTNames:
    found = ADTNames()
    for gtv, data in module.type_definitions.items():
        params = "[" + ", ".join(type_text(p) for p in data.type_params) + "]" \
            if data.type_params else ""
        found.types[gtv.name_hint] = params
        for ctor in data.constructors:
            fields = "(" + ", ".join(type_text(t) for t in ctor.inputs) + ")" if ctor.inputs else ""
            found.constructors[ctor.name] = f"{fields} : {gtv.name_hint}{params}"
    return found


def _function_header(fn: Function) -> str:
    params = ", ".join(f"%{p.name_hint}" + (f": {type_text(_var_type(p))}" if _var_type(p) else "")
                       for p in fn.params)
    ret = fn.ret_type
    checked = fn.checked_type
    if ret is None and checked is not None and hasattr(checked, "ret_type"):
        ret = checked.ret_type
    return f"({params})" + (f" -> {type_text(ret)}" if ret is not None else "")


def global_details(module: IRModule) -> dict[str, str]:
    """`name -> (params) -> R` for each global function of `module`."""
    return {gv.name_hint: _function_header(fn) for gv, fn in module.functions.items()}


def _var_type(var: object) -> Type | None:
    checked = getattr(var, "checked_type", None)
    return checked if checked is not None else getattr(var, "type_annotation", None)


def local_types(module: IRModule, definition: str | None) -> dict[str, str]:
    """Type text of each named local of `@definition` in `module` (inferred, else annotated)."""
    from ..ir.analysis import all_vars
    from ..ir.expr import Function
    if definition is None or definition not in module:
        return {}
    fn = module[definition]
    if not isinstance(fn, Function):
        return {}
    out: dict[str, str] = {}
    for var in list(fn.params) + all_vars(fn):
        ty = _var_type(var)
        if ty is not None and var.name_hint not in out:
            out[var.name_hint] = type_text(ty)
    return out
