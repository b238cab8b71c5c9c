"""Registry-wide: every op has a type relation and a kernel, and every op's kernel is
run against its relation by one of the family agreement tables (test_rel_*.py)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import relaylang.op as op

HERE = Path(__file__).resolve().parent
# The agreement tables: a family test module (tests/op/test_*.py) declares one as a module
# attribute under one of these names; its first field (or the string itself) is the op.
TABLE_NAMES = ("AGREEMENT", "CASES", "NAMES")


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_registry_complete_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tables() -> list[list]:
    """Every agreement table of the family test modules (found by reading the source
    first, so modules without one are not imported)."""
    tables = []
    for path in sorted(HERE.glob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        source = path.read_text(encoding="utf-8")
        names = [n for n in TABLE_NAMES if f"\n{n} = " in source or f"\n{n}: " in source]
        if not names:
            continue
        module = _load(path)
        tables.extend(getattr(module, n) for n in names if hasattr(module, n))
    return tables


def _covered() -> set[str]:
    names: set[str] = set()
    for table in _tables():
        for case in table:
            first = case if isinstance(case, str) else (case.values[0] if hasattr(case, "values")
                                                        else case[0])
            names.add(first)
    return names


def test_the_known_family_tables_are_found() -> None:
    # the discovery above must not silently find nothing
    assert len(_tables()) >= 8


def test_every_op_has_a_relation_and_a_kernel() -> None:
    missing = [d.name for d in op.all_ops() if d.type_rel is None or d.kernel is None]
    assert missing == []


def test_every_op_is_run_against_its_relation() -> None:
    uncovered = sorted({d.name for d in op.all_ops()} - _covered() - {"arange"})
    assert uncovered == []


def test_arange_kernel_agrees_with_its_relation() -> None:
    # Not in a family table (its length is `?` unless the attributes hold constants): here.
    import numpy as np

    from relaylang.ir.attrs import make_attrs
    from relaylang.ir.node import ANY
    from relaylang.ir.types import TensorType

    arange = op.get_op_def("arange")
    attrs = make_attrs(arange.attrs, {"dtype": "float32"})
    scalar = TensorType((), "float32")
    result = arange.type_rel([scalar] * 3, attrs)
    assert (result.shape, result.dtype) == ((ANY,), "float32")
    out = arange.kernel([np.array(1, "float32"), np.array(4, "float32"),
                         np.array(0.5, "float32")], attrs)
    assert out.dtype == np.float32 and out.tolist() == [1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
