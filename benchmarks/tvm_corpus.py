"""Conformance with TVM's own Relay test programs: parse, round trip, type check.

    python benchmarks/tvm_corpus.py PATH/TO/tvm/tests/python/relay [--json] [--list]

Reads the Python test files under the given directory (a TVM checkout's
`tests/python/relay`, e.g. tag v0.19.0; nothing is downloaded) and extracts,
with `ast` and without running anything, every Relay program written as text:

* the first argument of `tvm.relay.parse` / `fromtext` / `parse_expr` (and
  `tvm.parser.*`) calls, when it is a string built statically (literals,
  `+`, module- or function-level string variables such as `SEMVER`);
* calls of a file's own helper functions that hand a parameter to one of those
  (test_ir_parser.py's `parse_module(code)` -> `tvm.relay.parse(SEMVER + code)`);
* any other static string holding `#[version = "0.0.5"]`.

Programs inside `with pytest.raises(...)` are TVM's negative tests: they are
counted apart ("expected to fail") and pass when they are rejected. Programs
built with f-strings or `%`-formatting are counted as "dynamic" and skipped.

The tests pass `meta[...]` tables as Python objects; where a program refers to
`meta[VirtualDevice][i]` or `meta[relay.Constant][i]` without a `#[metadata]`
section, a stand-in table is built: distinct virtual devices, and zero tensors
of the shape and dtype of the `/* ty=Tensor[...] */` comment after the reference
(float32 scalars without one).

For each program: parse (a module, or an expression for `parse_expr`); round
trip (`astext` -> parse -> `structural_equal`, free variables mapped for
expressions); type check (`InferType`). The exit status is 0 when the corpus was
read, whatever the figures.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

VERSION_HEADER = '#[version = "0.0.5"]'
PARSE_CALLS = {
    "tvm.relay.parse": "module", "relay.parse": "module", "tvm.parser.parse": "module",
    "tvm.relay.fromtext": "module", "relay.fromtext": "module", "tvm.parser.fromtext": "module",
    "tvm.relay.parse_expr": "expr", "relay.parse_expr": "expr", "tvm.parser.parse_expr": "expr",
}


@dataclass
class Program:
    file: str
    line: int
    kind: str                 # "module" | "expr"
    text: str
    negative: bool = False    # inside `with pytest.raises(...)`
    prelude: str = ""         # definitions of the initial module the test parses with
    opaque_init: bool = False  # an initial module built in Python (TIR functions)
    constants: tuple[str, list[Any]] | None = None   # the test's meta table: shapes/arrays


@dataclass
class Outcome:
    program: str              # file:line
    stage: str                # "parse" | "roundtrip" | "typecheck" | "ok"
    message: str = ""


@dataclass
class Report:
    files: int = 0
    programs: int = 0
    dynamic: int = 0
    negative: int = 0
    negative_rejected: int = 0
    parsed: int = 0
    round_tripped: int = 0
    type_checked: int = 0
    failures: list[Outcome] = field(default_factory=list)


# ------------------------------------------------------------------ extraction

def _dotted(node: ast.AST) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


class _Static:
    """Evaluates an expression to a string when it is built from literals, `+` and names
    bound once to such strings (module level, or the enclosing function)."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        self.dynamic = False

    def eval(self, node: ast.AST, extra: dict[str, str] | None = None) -> str | None:
        stack: list[ast.AST] = [node]
        values: dict[int, str | None] = {}
        order: list[ast.AST] = []
        while stack:                          # operands of `+` in post order, no recursion
            n = stack.pop()
            order.append(n)
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
                stack += [n.left, n.right]
        for n in reversed(order):
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                values[id(n)] = n.value
            elif isinstance(n, ast.Name):
                values[id(n)] = (extra or {}).get(n.id, self.env.get(n.id))
            elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
                a, b = values.get(id(n.left)), values.get(id(n.right))
                values[id(n)] = a + b if a is not None and b is not None else None
            else:
                if isinstance(n, ast.JoinedStr) or (isinstance(n, ast.BinOp)
                                                    and isinstance(n.op, ast.Mod)):
                    self.dynamic = True
                values[id(n)] = None
        return values.get(id(node))


def _string_env(body: list[ast.stmt]) -> dict[str, str]:
    env: dict[str, str] = {}
    names: dict[str, int] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            names[name] = names.get(name, 0) + 1
            value = _Static(env).eval(stmt.value)
            if value is not None:
                env[name] = value
    return {k: v for k, v in env.items() if names[k] == 1}


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def _context(node: ast.AST, parents: dict[int, ast.AST]) -> tuple[ast.AST | None, bool]:
    """The enclosing function of `node`, and whether it sits in `with pytest.raises`."""
    negative, fn = False, None
    cur = parents.get(id(node))
    while cur is not None:
        if isinstance(cur, ast.With) and any(
                isinstance(i.context_expr, ast.Call)
                and _dotted(i.context_expr.func).endswith("raises") for i in cur.items):
            negative = True
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn is None:
            fn = cur
        cur = parents.get(id(cur))
    return fn, negative


class _Bindings:
    """What the file binds to names, as far as the corpus needs: each name's last simple
    assignment (module level and per function), the modules made from core.rly, and the
    functions that return `make_consts(dtype, [shapes])` (collage/menangerie.py)."""

    def __init__(self, tree: ast.Module, parents: dict[int, ast.AST]):
        self.parents = parents
        self.assigns: dict[tuple[int, str], ast.AST] = {}   # (id of scope, name) -> value
        self.core: set[str] = set()
        self.augmented: set[str] = set()
        self.const_fns: dict[str, list[tuple[int, ...]]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], ast.Name):
                self.assigns[(id(self.scope(node)), node.targets[0].id)] = node.value
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self.augmented.add(node.target.id)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "import_from_std" and isinstance(node.func.value,
                                                                         ast.Name)):
                self.core.add(node.func.value.id)
            elif isinstance(node, ast.FunctionDef) and len(node.body) == 1 and isinstance(
                    node.body[0], ast.Return) and node.body[0].value is not None:
                shapes = self.make_consts(node.body[0].value, allow_param=True)
                if shapes is not None:
                    self.const_fns[node.name] = shapes[1]

    def make_consts(self, node: ast.AST, allow_param: bool = False
                    ) -> tuple[str, list[tuple[int, ...]]] | None:
        if not (isinstance(node, ast.Call) and _dotted(node.func) == "make_consts"
                and len(node.args) == 2):
            return None
        dtype = node.args[0].value if isinstance(node.args[0], ast.Constant) else ""
        if not dtype and not (allow_param and isinstance(node.args[0], ast.Name)):
            return None
        try:
            return dtype, [tuple(s) for s in ast.literal_eval(node.args[1])]
        except (ValueError, TypeError):
            return None

    def scope(self, node: ast.AST) -> ast.AST | None:
        """The function `node` is in (None: module level)."""
        cur = self.parents.get(id(node))
        while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cur = self.parents.get(id(cur))
        return cur

    def resolve(self, node: ast.AST | None) -> ast.AST | None:
        """A name's value: its assignment in the enclosing function, else at module level."""
        for _ in range(3):
            if not isinstance(node, ast.Name):
                break
            scope, value = self.scope(node), None
            while value is None:             # enclosing functions outwards, then the module
                value = self.assigns.get((id(scope), node.id))
                if scope is None:
                    break
                scope = self.scope(scope)
            if value is None:
                break
            node = value
        return node

    def constants(self, table: ast.AST | None) -> tuple[str, list[Any]] | None:
        table = self.resolve(table)
        if not isinstance(table, ast.Dict):
            return None
        for key, value in zip(table.keys, table.values):
            if isinstance(key, ast.Constant) and key.value == "relay.Constant":
                value = self.resolve(value)
                if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                        and value.func.id in self.const_fns and value.args
                        and isinstance(value.args[0], ast.Constant)):
                    return value.args[0].value, self.const_fns[value.func.id]
                if isinstance(value, ast.List):
                    return self.relay_consts(value)
                return self.make_consts(value) if value is not None else None
        return None

    def relay_consts(self, items: ast.List) -> tuple[str, list[Any]] | None:
        """`[relay.const(np.array([3, 2]), dtype="int64")]`: the arrays themselves."""
        import numpy as np
        arrays: list[Any] = []
        for item in items.elts:
            if not (isinstance(item, ast.Call) and _dotted(item.func).endswith("const")
                    and item.args):
                return None
            value = self.resolve(item.args[0])
            if isinstance(value, ast.Call) and _dotted(value.func) in ("np.array",
                                                                       "numpy.array"):
                value = value.args[0] if value.args else None
            dtype = next((k.value.value for k in item.keywords if k.arg == "dtype"
                          and isinstance(k.value, ast.Constant)), None)
            try:
                arrays.append(np.array(ast.literal_eval(value), dtype=dtype))  # type: ignore
            except (ValueError, TypeError, SyntaxError):
                return None
        return "", arrays


def _call_arg(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def extract(path: Path, root: Path) -> tuple[list[Program], int]:
    """The Relay programs of one test file, and how many were built dynamically."""
    source = path.read_text(encoding="utf-8", errors="replace")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [], 0
    rel = str(path.relative_to(root))
    menv = _string_env(tree.body)
    parents = _parents(tree)
    fenvs: dict[int, dict[str, str]] = {}

    def env_of(fn: ast.AST | None) -> dict[str, str]:
        if fn is None:
            return menv
        if id(fn) not in fenvs:
            fenvs[id(fn)] = {**menv, **_string_env(fn.body)}  # type: ignore[attr-defined]
        return fenvs[id(fn)]

    binds = _Bindings(tree, parents)
    texts: dict[int, str] = {}           # parse calls with static text, by node id

    def init_and_table(call: ast.Call, program: Program) -> Program:
        init = _call_arg(call, 2, "init_module")
        if isinstance(init, ast.Name):
            value = binds.resolve(init)
            if init.id in binds.core:
                program.prelude = "extern type Storage\n"      # core.rly's
            elif value is not None and id(value) in texts:
                program.prelude = texts[id(value)].replace(VERSION_HEADER, "")
            else:
                program.opaque_init = True
        program.constants = binds.constants(_call_arg(call, 3, "init_meta_table"))
        return program

    programs: dict[int, Program] = {}    # keyed by the id of the argument node
    seen_strings: set[int] = set()
    dynamic = 0
    helpers: dict[str, tuple[str, str, ast.AST, dict[str, str]]] = {}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.args]
    for call in calls:
        kind = PARSE_CALLS.get(_dotted(call.func))
        if kind is None:
            continue
        fn, negative = _context(call, parents)
        arg = call.args[0]
        seen_strings.update(id(n) for n in ast.walk(arg))
        if isinstance(arg, ast.Name) and arg.id in binds.augmented:
            continue              # built piece by piece (`mod += ...`): its first piece counts
        static = _Static(env_of(fn))
        text = static.eval(arg)
        if text is not None:
            programs[id(arg)] = init_and_table(call, Program(rel, arg.lineno, kind, text,
                                                             negative))
            texts[id(call)] = text
            continue
        params = [a.arg for a in fn.args.args] if isinstance(fn, ast.FunctionDef) else []
        used = [p for p in params if any(isinstance(n, ast.Name) and n.id == p
                                         for n in ast.walk(arg))]
        if used and isinstance(fn, ast.FunctionDef):
            helpers[fn.name] = (used[0], kind, arg, env_of(fn))
        elif static.dynamic:
            dynamic += 1
    for call in calls:                    # the file's helpers: parse_module(code) etc.
        name = call.func.id if isinstance(call.func, ast.Name) else ""
        if name not in helpers:
            continue
        param, kind, body_arg, henv = helpers[name]
        fn, negative = _context(call, parents)
        arg = call.args[0]
        static = _Static(env_of(fn))
        code = static.eval(arg)
        seen_strings.update(id(n) for n in ast.walk(arg))
        if code is None:
            dynamic += static.dynamic
            continue
        text = _Static(henv).eval(body_arg, {param: code})
        if text is not None:
            programs[id(arg)] = Program(rel, arg.lineno, kind, text, negative)
            texts[id(call)] = text
    for node in ast.walk(tree):           # other programs: strings with the version header
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and VERSION_HEADER in node.value and id(node) not in seen_strings
                and node.value.strip() != VERSION_HEADER):     # not `SEMVER` itself
            parent = parents.get(id(node))
            if isinstance(parent, ast.JoinedStr) or (
                    isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mod)) or (
                    isinstance(parent, ast.Assign) and isinstance(parent.targets[0], ast.Name)
                    and parent.targets[0].id in binds.augmented):
                dynamic += 1
                continue
            _, negative = _context(node, parents)
            programs[id(node)] = Program(rel, node.lineno, "module", node.value, negative)
    return sorted(programs.values(), key=lambda p: p.line), dynamic


# ------------------------------------------------------------------ stand-in metadata

_CONST_REF = re.compile(
    r"meta\[relay\.Constant\]\[(\d+)\]\s*(?:/\*\s*ty=Tensor\[\(([^)]*)\),\s*(\w+)\])?")
_DEVICE_REF = re.compile(r"meta\[VirtualDevice\]\[(\d+)\]")


def stand_in_metadata(text: str, constants: tuple[str, list[Any]] | None = None
                      ) -> dict[str, list[object]] | None:
    if "#[metadata]" in text:
        return None
    table: dict[str, list[object]] = {}
    devices = [int(m.group(1)) for m in _DEVICE_REF.finditer(text)]
    if devices:
        from relaylang.syntax.metadata import decode_metadata
        n = max(devices) + 1
        nodes: list[dict[str, Any]] = [{"type_key": ""}, {"type_key": "Map", "keys": [
            "VirtualDevice"], "data": [2]}, {"type_key": "Array", "data": []}]
        for i in range(n):
            nodes[2]["data"].append(len(nodes))
            nodes.append({"type_key": "VirtualDevice", "attrs": {
                "device_type_int": str(1 + i % 2), "virtual_device_id": str(i // 2),
                "target": "0", "memory_scope": str(len(nodes) + 1)}})
            nodes.append({"type_key": "runtime.String", "repr_str": f"scope{i}"})
        table.update(decode_metadata(json.dumps({"root": 1, "nodes": nodes})))
    consts: dict[int, Any] = {}
    if constants is not None:         # the test's own table: its shapes and dtype
        import numpy as np
        dtype, shapes = constants
        table["relay.Constant"] = [s if isinstance(s, np.ndarray) else
                                   np.broadcast_to(np.zeros((), dtype), s) for s in shapes]
        return table
    for m in _CONST_REF.finditer(text):
        index = int(m.group(1))
        if index in consts and m.group(2) is None:
            continue
        import numpy as np
        dims = tuple(int(d) for d in (m.group(2) or "").replace(" ", "").split(",") if d)
        consts[index] = np.zeros(dims, dtype=m.group(3) or "float32")
    if consts:
        import numpy as np
        table["relay.Constant"] = [consts.get(i, np.zeros((), "float32"))
                                   for i in range(max(consts) + 1)]
    return table or None


# ------------------------------------------------------------------ checking

def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:200]


def check(program: Program) -> Outcome:
    import relaylang as rl
    where = f"{program.file}:{program.line}"
    meta = stand_in_metadata(program.text, program.constants)
    source = program.text
    if program.prelude:
        source = source.replace(VERSION_HEADER, VERSION_HEADER + "\n" + program.prelude, 1) \
            if VERSION_HEADER in source else program.prelude + source
    try:
        if program.kind == "expr":
            node: Any = rl.parse_expr(source)
        else:
            node = rl.parse(source, source_name=where, metadata=meta)
    except rl.DiagnosticError as e:
        why = " (its initial module is built in Python)" if program.opaque_init else ""
        return Outcome(where, "parse", _first_line(e) + why)
    except Exception as e:               # noqa: BLE001  (an internal error is a finding)
        return Outcome(where, "parse", "internal " + _first_line(e))
    try:
        text = rl.astext(node)
        again = rl.parse_expr(text) if program.kind == "expr" else rl.parse(text)
        if not rl.structural_equal(node, again, map_free_vars=program.kind == "expr"):
            return Outcome(where, "roundtrip", "printed text parses back structurally different")
    except rl.DiagnosticError as e:
        return Outcome(where, "roundtrip", _first_line(e))
    except Exception as e:               # noqa: BLE001
        return Outcome(where, "roundtrip", "internal " + _first_line(e))
    try:
        mod = node if program.kind == "module" else rl.IRModule.from_expr(node)
        rl.transform.InferType()(mod)
    except rl.DiagnosticError as e:
        return Outcome(where, "typecheck", _first_line(e))
    except Exception as e:               # noqa: BLE001
        return Outcome(where, "typecheck", "internal " + _first_line(e))
    return Outcome(where, "ok")


def run(root: Path) -> Report:
    report = Report()
    for path in sorted(root.rglob("*.py")):
        programs, dynamic = extract(path, root)
        report.files += bool(programs)
        report.dynamic += dynamic
        for program in programs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outcome = check(program)
            if program.negative:
                report.negative += 1
                report.negative_rejected += outcome.stage != "ok"
                continue
            report.programs += 1
            report.parsed += outcome.stage != "parse"
            report.round_tripped += outcome.stage not in ("parse", "roundtrip")
            report.type_checked += outcome.stage == "ok"
            if outcome.stage != "ok":
                report.failures.append(outcome)
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("relay_tests", type=Path, help="a TVM checkout's tests/python/relay")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--list", action="store_true", help="list every failure (default: 40)")
    args = ap.parse_args(argv)
    if not args.relay_tests.is_dir():
        print(f"error: {args.relay_tests} is not a directory", file=sys.stderr)
        return 2
    report = run(args.relay_tests)
    if args.json:
        print(json.dumps(asdict(report), indent=2))
        return 0
    n = report.programs
    print(f"{n} programs in {report.files} files ({report.dynamic} dynamic ones skipped)")
    print(f"  parse       {report.parsed:4d} / {n}")
    print(f"  round trip  {report.round_tripped:4d} / {report.parsed}")
    print(f"  type check  {report.type_checked:4d} / {report.round_tripped}")
    print(f"  negative tests rejected {report.negative_rejected} / {report.negative}")
    shown = report.failures if args.list else report.failures[:40]
    for f in shown:
        print(f"  [{f.stage}] {f.program}: {f.message}")
    if len(shown) < len(report.failures):
        print(f"  ... {len(report.failures) - len(shown)} more (--list)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
