"""Registry-wide: every op has a type relation and a kernel, and every op's kernel is
run against its relation by one of the family agreement tables (test_rel_*.py)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import relaylang.op as op

HERE = Path(__file__).resolve().parent
# Each family test module and the table of (op name, ...) cases its agreement test runs.
TABLES = {"test_rel_elemwise": "CASES", "test_rel_reduce": "CASES", "test_rel_nn": "AGREEMENT",
          "test_rel_pool": "AGREEMENT", "test_rel_transform": "AGREEMENT",
          "test_rel_annotation": "NAMES", "test_rel_lowering": "AGREEMENT",
          "test_dyn_ops": "AGREEMENT"}


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _covered() -> set[str]:
    names: set[str] = set()
    for module_name, table in TABLES.items():
        for case in getattr(_load(module_name), table):
            first = case if isinstance(case, str) else (case.values[0] if hasattr(case, "values")
                                                        else case[0])
            names.add(first)
    return names


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
