"""One converter per ONNX operator (per opset range where its semantics changed).

    @converter("Softmax", since=1)          # opsets 1..12: 2-D coercion at `axis`
    def softmax_1(ctx, node): ...
    @converter("Softmax", since=13)         # opset 13 on: one axis
    def softmax_13(ctx, node): ...

The importer picks, for a node of the model's opset N, the converter with the largest
`since` <= N. A converter receives the importer's `Context` and the `Node` (inputs as
Relay expressions, attributes as Python values) and returns the node's outputs: one
expression, or a sequence of them for a node with several outputs (None for an output
the node does not produce). Converters live in `ops/<family>.py`; this module holds the
table and nothing else.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

Converter = Callable[[Any, Any], Any]

# (domain, op_type) -> [(since, converter)] sorted by since
_TABLE: dict[tuple[str, str], list[tuple[int, Converter]]] = {}

ONNX_DOMAINS = ("", "ai.onnx")


def _domain(domain: str) -> str:
    return "" if domain in ONNX_DOMAINS else domain


def converter(op_type: str, since: int = 1, domain: str = "") -> Callable[[Converter], Converter]:
    """Register `fn` as the converter of `op_type` from opset `since` on."""
    def register(fn: Converter) -> Converter:
        entries = _TABLE.setdefault((_domain(domain), op_type), [])
        if any(s == since for s, _ in entries):
            raise ValueError(f"two ONNX converters for {op_type} since opset {since}")
        entries.append((since, fn))
        entries.sort(key=lambda e: e[0])
        return fn
    return register


def lookup(op_type: str, opset: int, domain: str = "") -> Converter | None:
    """The converter of `op_type` for a model of opset `opset`, or None."""
    _load()
    entries = _TABLE.get((_domain(domain), op_type))
    if not entries:
        return None
    found = None
    for since, fn in entries:
        if since <= opset:
            found = fn
    return found


def supported_ops() -> dict[str, list[int]]:
    """op_type -> the opsets where its converter changes (domain-qualified when not ONNX's)."""
    _load()
    return {(f"{d}." if d else "") + op: [s for s, _ in entries]
            for (d, op), entries in sorted(_TABLE.items())}


_LOADED = False


def _load() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        from . import ops  # noqa: F401 -- registers every family's converters
