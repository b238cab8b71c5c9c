"""`relay fmt`: the canonical layout of a module, keeping the comments people wrote.

The layout is the printer's (syntax/printer.py). Comments are not part of the
IR, so the formatter carries them over itself: the comment block before the
version header and the comment block right before each `def`/`type` travel
with that definition. Comments inside a definition's body cannot be placed
reliably after reprinting and are dropped; `dropped_comments` says how many.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir.expr import Function
from ..ir.module import IRModule
from ..ir.types import TypeData
from .parser import parse
from .printer import astext

_COMMENT_LINE = re.compile(r"^\s*(//.*|/\*.*\*/\s*)$")
_ITEM_LINE = re.compile(r"^(def @|type |extern type )([A-Za-z_][A-Za-z0-9_/.]*)")
_ANY_COMMENT = re.compile(r"//|/\*")
# `#[import "NAME"]` lines (imports.py): the imported definitions print as the directive.
_IMPORT_LINE = re.compile(r'^[ \t]*#\[\s*import\s+"([^"\]]*)"\s*\]', re.MULTILINE)


@dataclass
class Formatted:
    text: str
    dropped_comments: int


def _leading_comments(lines: list[str], first_line: int) -> list[str]:
    """The comment lines directly above 1-based line `first_line` (blank lines allowed)."""
    out: list[str] = []
    i = first_line - 2
    while i >= 0 and (_COMMENT_LINE.match(lines[i]) or not lines[i].strip()):
        out.append(lines[i].rstrip())
        i -= 1
    while out and not out[-1].strip():
        out.pop()
    return list(reversed(out))


def _item_starts(module: IRModule) -> dict[str, int]:
    starts = {gv.name_hint: fn.span.line for gv, fn in module.functions.items() if fn.span}
    for gtv, data in module.type_definitions.items():
        if data.span:
            starts[gtv.name_hint] = data.span.line
    return starts


def _own_definitions(module: IRModule, source_name: str) -> IRModule:
    """`module` without the definitions `#[import]` brought in from other files."""
    def own(node: Function | TypeData) -> bool:
        return node.span is None or node.span.source_name == source_name
    return IRModule({gv: fn for gv, fn in module.functions.items() if own(fn)},
                    {gtv: d for gtv, d in module.type_definitions.items() if own(d)},
                    module.source_name, module.sources)


def format_text(text: str, source_name: str = "from_string") -> Formatted:
    """Parse `text` and print it canonically; DiagnosticError if it does not parse."""
    module = _own_definitions(parse(text, source_name=source_name), source_name)
    imports = [f'#[import "{name}"]' for name in dict.fromkeys(_IMPORT_LINE.findall(text))]
    lines = text.splitlines()
    kept = 0
    header: list[str] = []
    version_line = next((i for i, line in enumerate(lines) if "#[version" in line), None)
    if version_line is not None:
        header = _leading_comments(lines, version_line + 1)
        kept += len(header)
    attached = {name: _leading_comments(lines, line) for name, line in _item_starts(module).items()}
    kept += sum(len(c) for c in attached.values())
    out: list[str] = header[:]
    printed = astext(module).splitlines()
    printed[1:1] = imports      # after the version header
    for line in printed:
        m = _ITEM_LINE.match(line)
        if m and attached.get(m.group(2)):
            out.extend(attached.pop(m.group(2)))
        out.append(line)
    total = sum(len(_ANY_COMMENT.findall(line)) for line in lines
                if not line.lstrip().startswith("#[metadata]"))
    dropped = max(0, total - sum(len(_ANY_COMMENT.findall(c)) for c in out if _COMMENT_LINE.match(c)))
    return Formatted("\n".join(out) + "\n", dropped)
