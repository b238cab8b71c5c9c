"""JSON text of the `#[metadata]` section: errors, a depth-free reader, positions, layout.

metadata.py works on the decoded node graph; this module holds what deals with
the text itself:
- `MetadataError`, with the 1-based line and column it points at;
- `parse_json`, an iterative JSON reader for payloads too deep for `json.loads`
  (which recurses in C and stops at the recursion limit);
- `locate`, the position of the value at a path of keys and indices, so that an
  error in the decoded graph points at its text;
- `format_graph`, the node list in the layout of dmlc-core's `JSONWriter`, as
  apache/tvm src/node/serialization.cc (`SaveJSON`) writes it.
"""
from __future__ import annotations

import json
import re
from typing import Any

TVM_VERSION = "0.19.0"


class MetadataError(Exception):
    """Bad metadata; `line`/`column` are 1-based positions inside the JSON text."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


# ---------------------------------------------------------------- writing

def format_graph(nodes: list[dict[str, Any]], blobs: list[str]) -> str:
    """dmlc::JSONWriter's layout: 2-space indent per open scope; string maps inline when
    they hold one entry, integer arrays inline up to 10 entries, string arrays never."""
    body = "[\n" + ",\n".join(_format_node(n) for n in nodes) + "\n  ]"
    arrays = _list(_q(b) for b in blobs)
    return (f'{{\n  "root": 1,\n  "nodes": {body},\n  "b64ndarrays": {arrays},\n'
            f'  "attrs": {{"tvm_version": "{TVM_VERSION}"}}\n}}')


def _format_node(node: dict[str, Any]) -> str:
    fields = [f'"type_key": {_q(node["type_key"])}']
    fields += [f'"{k}": {_q(node[k])}' for k in ("repr_str", "repr_b64") if node.get(k)]
    entries = [f"{_q(k)}: {_q(v)}" for k, v in node.get("attrs", {}).items()]
    if len(entries) == 1:
        fields.append('"attrs": {' + entries[0] + "}")
    elif entries:
        fields.append('"attrs": {\n' + ",\n".join(" " * 8 + e for e in entries) + "\n      }")
    if node.get("keys"):
        fields.append('"keys": ' + _list((_q(k) for k in node["keys"]), indent=6))
    if node.get("data"):
        data = [str(d) for d in node["data"]]
        fields.append('"data": ' + (_list(data, indent=6) if len(data) > 10 else
                                    "[" + ", ".join(data) + "]"))
    return "    {\n" + ",\n".join(" " * 6 + f for f in fields) + "\n    }"


def _list(items: Any, indent: int = 2) -> str:
    items = list(items)
    if not items:
        return "[]"
    pad = " " * indent
    return "[\n" + ",\n".join(pad + "  " + item for item in items) + "\n" + pad + "]"


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# ---------------------------------------------------------------- iterative reading

_TOKEN = re.compile(r'[ \t\n\r]*(?:("[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|true|false|null'
                    r"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|\Z)", re.S)
_LITERALS: dict[str, Any] = {"null": None, "true": True, "false": False}


def _tokens(text: str, context: str = "") -> Any:
    """(token, offset) pairs; raises MetadataError at a character no token starts with."""
    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() != pos:   # finditer skipped something that is not JSON
            raise MetadataError(f"{context}unexpected character", *line_col(text, pos))
        if match.group(1) is None:
            return
        yield match.group(1), match.start(1)
        pos = match.end()


def _scalar(tok: str) -> Any:
    if tok[0] == '"' and "\\" not in tok:
        return tok[1:-1]
    return _LITERALS[tok] if tok in _LITERALS else json.loads(tok, strict=False)


def parse_json(text: str, owner: str) -> Any:
    """Read JSON with an explicit stack of open containers (no depth limit)."""
    stack: list[list[Any]] = []   # [container, pending key]
    result: list[Any] = []
    state = "value"               # value | first | key | firstkey | colon | after
    for tok, pos in _tokens(text, f"bad {owner} payload: "):
        c, closing = tok[0], False
        if state == "colon" and c == ":":
            state = "value"
            continue
        if state in ("key", "firstkey") and c == '"':
            stack[-1][1], state = _scalar(tok), "colon"
            continue
        if state == "after" and stack and c == ",":
            state = "key" if isinstance(stack[-1][0], dict) else "value"
            continue
        if c in "}]":
            top = stack[-1][0] if stack else None
            closing = (c == "}") == isinstance(top, dict) and state in (
                "after", "firstkey" if c == "}" else "first")
        elif state in ("value", "first") and c in "{[":
            stack.append([{} if c == "{" else [], None])
            state = "firstkey" if c == "{" else "first"
            continue
        if not closing and (state not in ("value", "first") or c in ":,}]"):
            raise MetadataError(f"bad {owner} payload: unexpected {tok[:20]!r}",
                                *line_col(text, pos))
        value = stack.pop()[0] if closing else _scalar(tok)
        if stack:
            parent, key = stack[-1]
            if isinstance(parent, dict):
                parent[key] = value
            else:
                parent.append(value)
        else:
            result.append(value)
        state = "after" if stack else "end"
    if state != "end":
        raise MetadataError(f"bad {owner} payload: unexpected end", *line_col(text, len(text)))
    return result[0]


def locate(text: str, path: tuple[Any, ...]) -> tuple[int, int]:
    """Line and column of the JSON value at `path` (keys and array indices), else (1, 1)."""
    target, frames = list(path), []   # frames: [key or index, is_object, wants_key]
    try:
        for tok, pos in _tokens(text):
            c = tok[0]
            if frames and frames[-1][2] and c == '"':
                frames[-1][0], frames[-1][2] = _scalar(tok), False
            elif c == ",":
                if frames[-1][1]:
                    frames[-1][2] = True
                else:
                    frames[-1][0] += 1
            elif c in "}]":
                frames.pop()
            elif c != ":":
                if [f[0] for f in frames] == target:
                    return line_col(text, pos)
                if c in "{[":
                    frames.append([0 if c == "[" else None, c == "{", c == "{"])
    except (MetadataError, IndexError, TypeError):
        pass
    return 1, 1


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1
