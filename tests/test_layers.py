"""The layer order of DESIGN.md, enforced by reading every import with `ast`.

Each module of `relaylang/` and `lsp/` belongs to a layer; a module may import its own
layer and the layers below it, never one above (ir < op < syntax < typing < transform <
backend < frontend < tools). Imports under `if TYPE_CHECKING:` are type-only and
exempt; any other exception must be listed in `ALLOWED_UPWARD` with its reason. (The
IR reaches its printer through the hook of relaylang/ir/text.py, by registration.)
Import circles of more than two files are errors, and `relaylang` never imports `lsp`.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from relaylang.typing.scc import strongly_connected_components

ROOT = Path(__file__).resolve().parents[1]

# Longest prefix wins. Tools have an order of their own: the editor features shared by
# the REPL and the language server sit below both; the command line lists every tool.
LAYERS: dict[str, int] = {
    "relaylang.ir": 1,
    "relaylang.op": 2,
    "relaylang.analysis": 3,     # rl.analysis: IR checkers plus the registry's answers
    "relaylang.syntax": 4,
    "relaylang.typing": 5,
    "relaylang.std": 5,          # the standard library (Relay text): parsed, then type-checked
    "relaylang.dataflow_pattern": 5,  # TVM's pattern language: needs ir, op and typing
    "relaylang.transform": 6,
    "relaylang.backend": 7,
    "relaylang.frontend": 8,
    "relaylang.training": 8,     # training models written in Relay: gradient pass + rl.build
    "relaylang.ide": 9,
    "relaylang.testing": 9,
    "relaylang.viz": 9,          # pictures of functions (relay viz, :viz, "Show graph")
    "relaylang.repl": 10,
    "relaylang.cli": 11,
    "relaylang.__main__": 11,
    "relaylang": 11,             # the package face: lazy re-exports of the public API
    "lsp": 12,
}

# (importer, imported): why this upward import is right.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    source: str           # importing module
    target: str           # imported module (a module file or package, resolved)
    line: int
    type_only: bool


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in ("relaylang", "lsp"):
        for path in sorted((ROOT / top).rglob("*.py")):
            found[module_name(path)] = path
    return found


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else \
                test.attr if isinstance(test, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                for child in node.body:
                    for inner in ast.walk(child):
                        if hasattr(inner, "lineno"):
                            lines.add(inner.lineno)
    return lines


def imports_of(name: str, path: Path, known: dict[str, Path]) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    guarded = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                targets.append(sub if sub in known else module)
        for target in targets:
            if target.split(".")[0] in ("relaylang", "lsp"):
                yield Import(name, target, node.lineno, node.lineno in guarded)


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def all_imports() -> list[Import]:
    known = modules()
    return [imp for name, path in known.items() for imp in imports_of(name, path, known)]


def test_no_import_points_up_a_layer() -> None:
    wrong = [f"{imp.source}:{imp.line} imports {imp.target}"
             for imp in all_imports()
             if not imp.type_only and layer(imp.target) > layer(imp.source)
             and (imp.source, imp.target) not in ALLOWED_UPWARD]
    assert wrong == []


def test_the_library_never_imports_the_language_server() -> None:
    wrong = [f"{imp.source}:{imp.line} imports {imp.target}" for imp in all_imports()
             if imp.source.startswith("relaylang") and imp.target.split(".")[0] == "lsp"]
    assert wrong == []


def test_allowed_upward_imports_still_exist() -> None:
    seen = {(imp.source, imp.target) for imp in all_imports()}
    assert set(ALLOWED_UPWARD) <= seen, "an exception no longer needed: remove it"


def test_no_import_circle_of_more_than_two_files() -> None:
    graph: dict[str, set[str]] = {name: set() for name in modules()}
    for imp in all_imports():
        if imp.target in graph and imp.target != imp.source:
            graph[imp.source].add(imp.target)
    components = strongly_connected_components(list(graph), {n: sorted(e) for n, e in
                                                                graph.items()})
    circles = [sorted(c) for c in components if len(c) > 2]
    assert circles == []


def test_the_checker_sees_imports_of_every_kind() -> None:
    """The scan itself: relative, absolute, lazy (in a function) and type-only imports."""
    found = {(imp.source, imp.target, imp.type_only) for imp in all_imports()}
    assert ("relaylang.ir.module", "relaylang.ir.text", False) in found      # lazy, relative
    assert any(s == "lsp.server" and t.startswith("relaylang.") for s, t, _ in found)  # absolute
    assert ("relaylang.transform.infer_type", "relaylang.typing", False) in found  # a package
    assert any(s == "relaylang.ir.types" and t == "relaylang.ir.expr" and only
               for s, t, only in found)                                          # type-only
    assert layer("relaylang.transform.fusion.fuse_ops") == LAYERS["relaylang.transform"]
    assert layer("relaylang") == LAYERS["relaylang"]
