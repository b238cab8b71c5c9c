"""The `#[metadata]` section: TVM's JSON object graph <-> the meta table (LANGUAGE.md §10).

`decode_metadata` turns the JSON after `#[metadata]` into `{type_key: [objects]}`:
`relay.Constant` objects become numpy arrays, every other object an opaque
`MetaObject` whose payload is its node subtree with references inlined, as
canonical JSON. `encode_metadata` writes such a table back in TVM's layout.

Mirrors apache/tvm src/node/serialization.cc (`SaveJSON`/`LoadJSON`: node list,
references as decimal strings, `b64ndarrays`). The tensor blobs are in
ndarray_blob.py (src/runtime/ndarray.cc); the JSON text itself (errors and their
positions, the iterative reader, dmlc-core's `JSONWriter` layout) in metadata_json.py.

The JSON does not say which `attrs` values are references: TVM knows from its
reflection tables. `_REF_FIELDS` lists the reference fields of the object kinds
Relay text carries in its meta table; for other kinds a decimal value is taken
as a reference when it points forward (TVM numbers objects in pre-order, so a
first reference always points to a larger index) or when the field has a
well-known reference name such as `span`; the writer numbers objects so that
this reading of its own output is right (`_Writer.pad`).

Nothing here recurses over the node graph or over payloads: node graphs and
payloads can be as deep as the IR (a TIR expression chain), so both directions
use explicit stacks, and a payload too deep for `json.loads` (which recurses in C
and stops at the recursion limit) is read by the iterative `parse_json`.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from typing import TYPE_CHECKING, Any, NoReturn

from ..ir.expr import Constant
from ..ir.node import MetaObject
from .metadata_json import TVM_VERSION, MetadataError, format_graph, locate, parse_json
from .ndarray_blob import decode_blob, encode_blob

if TYPE_CHECKING:
    import numpy as np

__all__ = ["TVM_VERSION", "MetadataError", "decode_metadata", "encode_metadata"]

_parse_json = parse_json   # the name tests/syntax/test_metadata.py imports


# ---------------------------------------------------------------- what is a reference

_EXPR = ("span", "virtual_device_", "_checked_type_")
_VAR = ("name_hint", "type_annotation", "span")
_REF_FIELDS: dict[str, frozenset[str]] = {key: frozenset(fields) for key, fields in {
    "relay.Constant": _EXPR,
    "relay.Var": ("vid", "type_annotation", *_EXPR),
    "relay.Id": ("name_hint",),
    "GlobalVar": ("name_hint", *_EXPR),
    "VirtualDevice": ("target", "memory_scope"),
    "Target": ("kind", "tag", "keys", "attrs", "host", "features"),
    "Span": ("source_name",),
    "DictAttrs": ("__dict__",),
    "relay.TensorType": ("shape", "span"),
    "TupleType": ("fields", "span"),
    "FuncType": ("arg_types", "ret_type", "type_params", "type_constraints", "span"),
    "TypeVar": ("name_hint", "span"),
    "GlobalTypeVar": ("name_hint", "span"),
    "IncompleteType": ("span",),
    "PrimType": ("span",),
    "PointerType": ("element_type", "storage_scope", "span"),
    "relay.RefType": ("value", "span"),
    "TypeCall": ("func", "args", "span"),
    "IntImm": ("span",),
    "FloatImm": ("span",),
    "tir.Var": _VAR,
    "tir.SizeVar": _VAR,
    "tir.Not": ("a", "span"),
    "tir.Cast": ("value", "span"),
    "tir.Select": ("condition", "true_value", "false_value", "span"),
    "tir.Call": ("op", "args", "span"),
}.items()}
_REF_FIELDS.update((f"tir.{op}", frozenset(("a", "b", "span"))) for op in (
    "Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max",
    "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or"))
# Tensor fields hold an index into `b64ndarrays`, not into `nodes`.
_NDARRAY_FIELDS: dict[str, frozenset[str]] = {"relay.Constant": frozenset({"data"})}
# For kinds not listed above: names that are references / scalars wherever TVM uses them.
_GENERIC_REFS = frozenset({"span", "_checked_type_", "virtual_device_", "source_name",
                           "type_annotation"})
_GENERIC_SCALARS = frozenset({"dtype", "value", "axis", "groups", "num_outputs", "num_newaxis",
                              "batch_dims", "index", "kind", "ndim", "line", "column",
                              "end_line", "end_column", "device_type_int", "virtual_device_id"})
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_TYPE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_NODE_KEYS = frozenset({"type_key", "repr_str", "repr_b64", "attrs", "keys", "data"})
_MAX_PAYLOAD = 1 << 26   # inlining a DAG can blow up exponentially; refuse beyond 64M chars
_MAX_PADDING = 1 << 12   # null nodes the writer may insert to keep scalars from looking like refs


# ---------------------------------------------------------------- decoding

def decode_metadata(text: str) -> dict[str, list[object]]:
    """TVM's metadata JSON -> `{type_key: [numpy array | MetaObject | None]}`."""
    try:
        doc = json.loads(text, strict=False)
    except json.JSONDecodeError as e:
        raise MetadataError(f"malformed metadata JSON: {e.msg}", e.lineno, e.colno) from None
    except RecursionError:
        raise MetadataError("metadata JSON is nested too deeply") from None
    return _Reader(text, doc).table()


class _View:
    """One validated node: attrs classified as ("ref", node) / ("nd", blob) / ("str", text)."""

    __slots__ = ("type_key", "attrs", "keys", "data", "reprs")

    def __init__(self, type_key: str, attrs: list[tuple[str, str, Any]], keys: list[str] | None,
                 data: list[int], reprs: list[tuple[str, str]]):
        self.type_key, self.attrs, self.keys, self.data, self.reprs = (
            type_key, attrs, keys, data, reprs)


class _Reader:
    def __init__(self, text: str, doc: Any):
        self.text = text
        if not isinstance(doc, dict) or "root" not in doc or "nodes" not in doc:
            self.fail("metadata must be a JSON object with 'root' and 'nodes'", ())
        for key in doc.keys() - {"root", "nodes", "b64ndarrays", "attrs"}:
            self.fail(f"unknown metadata field {key!r}", (key,))
        self.nodes = doc["nodes"]
        if not isinstance(self.nodes, list) or not self.nodes:
            self.fail("'nodes' must be a non-empty array", ("nodes",))
        self.root = self.index(doc["root"], ("root",))
        self.blob_texts = doc.get("b64ndarrays", [])
        if not isinstance(self.blob_texts, list):
            self.fail("'b64ndarrays' must be an array of strings", ("b64ndarrays",))
        self.arrays = [self.blob(k, s) for k, s in enumerate(self.blob_texts)]
        self.views: dict[int, _View] = {}
        self.texts: dict[int, str] = {}   # payloads of table entries

    def fail(self, message: str, path: tuple[Any, ...]) -> NoReturn:
        raise MetadataError(message, *locate(self.text, path))

    def index(self, value: Any, path: tuple[Any, ...]) -> int:
        if type(value) is not int or not 0 <= value < len(self.nodes):
            self.fail(f"bad node index {value!r} (there are {len(self.nodes)} nodes)", path)
        return value

    def blob(self, k: int, text: Any) -> np.ndarray:
        path = ("b64ndarrays", k)
        try:
            if not isinstance(text, str):
                raise ValueError("a tensor blob must be a string")
            return decode_blob(base64.b64decode(text, validate=True))
        except binascii.Error as e:
            return self.fail(f"bad base64 in tensor blob {k}: {e}", path)
        except ValueError as e:
            return self.fail(f"tensor blob {k}: {e}", path)

    def table(self) -> dict[str, list[object]]:
        root = self.view(self.root)
        if root.type_key != "Map" or (root.data and root.keys is None):
            self.fail("the metadata root must be a map from type keys to arrays",
                      ("nodes", self.root))
        table: dict[str, list[object]] = {}
        for pos, (key, array) in enumerate(zip(root.keys or [], root.data)):
            entries = self.view(array)
            if entries.type_key != "Array" or key in table:
                problem = "is listed twice" if key in table else "is not an array"
                self.fail(f"metadata entry {key!r} {problem}", ("nodes", self.root, "data", pos))
            table[key] = [self.entry(i) for i in entries.data]
        return table

    def entry(self, i: int) -> object:
        view = self.view(i)
        if not view.type_key:
            return None
        if view.type_key == "relay.Constant":
            blob = next((v for kind, name, v in view.attrs if kind == "nd"), None)
            if blob is None:
                self.fail(f"relay.Constant node {i} has no 'data' tensor", ("nodes", i))
            return self.arrays[blob]
        return MetaObject(view.type_key, self.payload(i))

    def view(self, i: int) -> _View:
        if i not in self.views:
            self.views[i] = self.make_view(i)
        return self.views[i]

    def make_view(self, i: int) -> _View:
        node, path = self.nodes[i], ("nodes", i)
        if not isinstance(node, dict):
            self.fail(f"node {i} is not an object", path)
        for key in node.keys() - _NODE_KEYS:
            self.fail(f"node {i} has unknown field {key!r}", (*path, key))
        type_key = node.get("type_key", "")
        attrs, keys, data = node.get("attrs", {}), node.get("keys"), node.get("data", [])
        reprs = [(k, node[k]) for k in ("repr_b64", "repr_str") if node.get(k)]
        if not isinstance(type_key, str) or not all(isinstance(v, str) for _, v in reprs):
            self.fail(f"node {i} has a non-string type_key or repr", path)
        if type_key and not _TYPE_KEY.fullmatch(type_key):
            # TVM's type keys are dotted names; another string could not be written back
            # as `meta[<type_key>][i]`.
            self.fail(f"node {i} has an invalid type_key {type_key!r}", (*path, "type_key"))
        if not isinstance(attrs, dict) or not isinstance(data, list):
            self.fail(f"node {i}: 'attrs' must be an object and 'data' an array", path)
        if keys is not None and (not isinstance(keys, list) or len(keys) != len(data)
                                 or not all(isinstance(k, str) for k in keys)):
            self.fail(f"node {i}: 'keys' must be strings, one per 'data' entry", (*path, "keys"))
        if type_key == "Map" and keys is None and len(data) % 2:
            self.fail(f"map node {i} has an odd number of keys and values", (*path, "data"))
        data = [self.index(d, (*path, "data", j)) for j, d in enumerate(data)]
        fields = [self.classify(i, type_key, name, value) for name, value in sorted(attrs.items())]
        return _View(type_key, fields, keys or None, data, reprs)

    def classify(self, i: int, type_key: str, name: str, value: Any) -> tuple[str, str, Any]:
        path = ("nodes", i, "attrs", name)
        if not isinstance(value, str):
            self.fail(f"attribute {name!r} of node {i} must be a string", path)
        if name in _NDARRAY_FIELDS.get(type_key, ()):
            if not _DECIMAL.fullmatch(value) or int(value) >= len(self.arrays):
                self.fail(f"bad tensor index {value!r} (there are {len(self.arrays)})", path)
            return "nd", name, int(value)
        known, decimal = _REF_FIELDS.get(type_key), _DECIMAL.fullmatch(value)
        if known is not None:
            is_ref = name in known
        elif name in _GENERIC_REFS:
            is_ref = bool(decimal) or value == "null"
        else:   # TVM's pre-order numbering: an object's first reference to a child points forward
            is_ref = bool(decimal) and name not in _GENERIC_SCALARS and i < int(value) < len(
                self.nodes)
        if not is_ref:
            return "str", name, value
        if value == "null":
            return "ref", name, 0
        return "ref", name, self.index(int(value) if decimal else value, path)

    def payload(self, i: int) -> str:
        """Canonical JSON of node `i` with references inlined (`json.dumps(..., sort_keys=True,
        separators=(",", ":"))` of the inlined tree), written by one explicit-stack walk:
        linear in the output, where memoising each node's text would be quadratic on chains."""
        if i in self.texts:
            return self.texts[i]
        out: list[str] = []
        size, on_path = 0, set()
        stack: list[str | int] = [i]     # text to emit, node to expand, or ~node when it is done
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
                size += len(item)
            elif item < 0:
                on_path.discard(~item)
            elif not self.view(item).type_key:
                out.append("null")
            elif item in on_path:
                self.fail(f"cyclic reference to node {item}", ("nodes", item))
            elif size > _MAX_PAYLOAD:
                self.fail(f"object graph under node {i} is too large to inline", ("nodes", i))
            else:
                on_path.add(item)
                stack.append(~item)
                stack.extend(reversed(self.pieces(self.view(item))))
        self.texts[i] = text = "".join(out)
        return text

    def pieces(self, view: _View) -> list[str | int]:
        """One node's canonical text, with child node indices where their text goes."""
        dump = json.dumps
        out: list[str | int] = ["{"]
        if view.attrs:
            out.append('"attrs":{')
            for n, (kind, name, v) in enumerate(view.attrs):
                out.append(("," if n else "") + dump(name) + ":")
                out.append(v if kind == "ref" else dump(self.blob_texts[v] if kind == "nd" else v))
            out.append("},")
        if view.data:
            out.append('"data":[')
            for n, d in enumerate(view.data):
                out += [",", d] if n else [d]
            out.append("],")
        if view.keys:
            out.append('"keys":' + dump(view.keys, separators=(",", ":")) + ",")
        out += [f"{dump(k)}:{dump(v)}," for k, v in view.reprs]
        out.append(f'"type_key":{dump(view.type_key)}}}')
        return out


# ---------------------------------------------------------------- encoding

def encode_metadata(table: dict[str, list[object]]) -> str:
    """`{type_key: [numpy array | MetaObject | None]}` -> TVM's metadata JSON."""
    return _Writer().write(table)


class _Writer:
    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = [{"type_key": ""}]
        self.blobs: list[str] = []
        self.memo: dict[Any, int] = {}
        self.keep: list[object] = []   # keeps memoised arrays alive so ids stay unique

    def write(self, table: dict[str, list[object]]) -> str:
        root: dict[str, Any] = {"type_key": "Map"}
        self.nodes.append(root)
        keys, data = [], []
        for key, objects in table.items():
            if not isinstance(key, str):
                raise MetadataError(f"metadata keys must be strings, not {key!r}")
            array: dict[str, Any] = {"type_key": "Array"}
            keys.append(key)
            data.append(len(self.nodes))
            self.nodes.append(array)
            array["data"] = [self.entry(obj) for obj in objects]
        root.update({"keys": keys, "data": data})
        return format_graph(self.nodes, self.blobs)

    def entry(self, obj: object) -> int:
        if obj is None:
            return 0
        key = obj if isinstance(obj, MetaObject) else id(obj)
        if key not in self.memo:
            self.keep.append(obj)
            if isinstance(obj, MetaObject):
                self.memo[key] = self.emit(obj)
            else:
                self.memo[key] = self.constant(obj.data if isinstance(obj, Constant) else obj)
        return self.memo[key]

    def constant(self, value: object) -> int:
        import numpy as np
        if not isinstance(value, (np.ndarray, np.generic)):
            raise MetadataError(f"a {type(value).__name__} cannot be stored as metadata")
        self.blobs.append(encode_blob(value))
        attrs = {"_checked_type_": "0", "data": str(len(self.blobs) - 1), "span": "0",
                 "virtual_device_": "0"}
        self.nodes.append({"type_key": "relay.Constant", "attrs": attrs})
        return len(self.nodes) - 1

    def emit(self, obj: MetaObject) -> int:
        """Re-expand a payload into nodes, numbered in pre-order as TVM's NodeIndexer does."""
        try:   # C json is fast but recurses; deep payloads take the iterative reader
            tree = json.loads(obj.payload)
        except RecursionError:
            tree = parse_json(obj.payload, obj.type_key)
        except json.JSONDecodeError as e:
            raise MetadataError(f"bad {obj.type_key} payload: {e.msg}", e.lineno, e.colno) from None
        holder = [0]
        stack: list[tuple[Any, Any, Any]] = [(tree, holder, 0)]
        while stack:
            tree, parent, slot = stack.pop()
            node, children = self.node_of(tree, obj.type_key)
            self.pad(node)
            parent[slot] = len(self.nodes) if isinstance(parent, list) else str(len(self.nodes))
            self.nodes.append(node)
            stack.extend(reversed(children))
        return holder[0]

    def node_of(self, tree: Any, owner: str) -> tuple[dict[str, Any], list[tuple[Any, Any, Any]]]:
        """One payload object -> its JSON node (child slots still "0"/0) and its children."""
        type_key, attrs, keys, data = _payload_parts(tree, owner)
        node: dict[str, Any] = {"type_key": type_key}
        node.update((k, tree[k]) for k in ("repr_str", "repr_b64") if tree.get(k))
        children: list[tuple[Any, Any, Any]] = []
        out: dict[str, str] = {}
        for name in sorted(attrs):
            value = attrs[name]
            if isinstance(value, dict):
                children.append((value, out, name))
            elif value is not None and name in _NDARRAY_FIELDS.get(type_key, ()):
                value = self.blob(value, owner)
            out[name] = value if isinstance(value, str) else "0"
        node.update({"attrs": out} if out else {})
        node.update({"keys": list(keys)} if keys else {})
        node.update({"data": [0] * len(data)} if data else {})
        children += [(d, node["data"], j) for j, d in enumerate(data) if d is not None]
        return node, children

    def pad(self, node: dict[str, Any]) -> None:
        """Keep the reader's guess right for kinds it has no schema for: it would take a
        decimal scalar pointing past the object's own index for a reference, so number the
        object at or above its largest decimal scalar. Null nodes (like node 0) fill the gap."""
        if node["type_key"] in _REF_FIELDS:
            return
        scalars = [int(v) for k, v in node.get("attrs", {}).items() if _DECIMAL.fullmatch(v)
                   and k not in _GENERIC_SCALARS and k not in _GENERIC_REFS]
        gap = max(scalars, default=0) - len(self.nodes)
        if 0 < gap <= _MAX_PADDING:
            self.nodes.extend({"type_key": ""} for _ in range(gap))

    def blob(self, text: str, owner: str) -> str:
        try:
            decode_blob(base64.b64decode(text, validate=True))
        except (binascii.Error, ValueError) as e:
            raise MetadataError(f"bad {owner} payload: bad tensor: {e}") from None
        self.blobs.append(text)
        return str(len(self.blobs) - 1)


def _payload_parts(tree: Any, owner: str) -> tuple[str, dict[str, Any], list[Any], list[Any]]:
    """Check one object of a payload: TVM's node layout with references inlined."""
    if not isinstance(tree, dict) or not isinstance(tree.get("type_key"), str):
        raise MetadataError(f"bad {owner} payload: every object needs a string 'type_key'")
    unknown = sorted(tree.keys() - _NODE_KEYS)
    if unknown:
        raise MetadataError(f"bad {owner} payload: unknown fields {unknown}")
    attrs, keys, data = tree.get("attrs", {}), tree.get("keys", []), tree.get("data", [])
    if not (isinstance(attrs, dict) and isinstance(keys, list) and isinstance(data, list)
            and all(v is None or isinstance(v, (str, dict)) for v in attrs.values())
            and all(isinstance(k, str) for k in keys)
            and all(d is None or isinstance(d, dict) for d in data)
            and all(isinstance(tree.get(k, ""), str) for k in ("repr_str", "repr_b64"))):
        raise MetadataError(f"bad {owner} payload: malformed {tree['type_key']} object (attrs hold "
                            "strings, null or objects; keys strings; data objects or null)")
    return tree["type_key"], attrs, keys, data

