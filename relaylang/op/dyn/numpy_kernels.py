"""NumPy reference kernels of the dyn family (registered with `@implement`).

A dyn op computes exactly what its static twin (`twins.py`) computes with the values
of its shape-like inputs as attributes: the kernel builds the twin's attributes, checks
them with the twin's type relation on the actual input types (so a bad value fails with
the message the static op's type error would give, as a `ValueError`; the interpreter
names the op), checks that the result has the rank and dtype the dyn op's relation
promised, and runs the twin's kernel.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...ir.text import astext
from ...ir.types import TensorType, TupleType
from ..numpy_support import implement
from ..registry import get_op_def
from ..relation import TypeRelError
from .twins import TWINS, StaticTwin, same_rank_and_dtype


def _relay_dtype(a: np.ndarray) -> str:
    return a.dtype.name


def run_as_twin(name: str, twin: StaticTwin, inputs: list, attrs: Any) -> Any:
    """The dyn op `name` on `inputs`, computed by its static twin."""
    try:
        values = [np.asarray(inputs[i]).tolist() for i in twin.values]
        static_attrs = twin.attrs(attrs, values)
        data = [np.asarray(inputs[i]) for i in twin.inputs]
        static = get_op_def(twin.op)
        assert static is not None and static.type_rel is not None
        types = [TensorType(tuple(x.shape), _relay_dtype(x)) for x in data]
        out_type = static.type_rel(types, static_attrs)
        promised = get_op_def(name).type_rel(   # the dyn op's own type: rank and dtype
            [TensorType(tuple(np.shape(x)), _relay_dtype(np.asarray(x))) for x in inputs], attrs)
        if not same_rank_and_dtype(out_type, promised):
            raise ValueError(f"the values give a result of type {astext(out_type)}, not of "
                             f"the rank and dtype of {astext(promised)}")
    except (TypeRelError, ValueError) as e:
        raise ValueError(getattr(e, "message", None) or str(e)) from None
    out = static.kernel(data, static_attrs)
    outs, types = (out, out_type.fields) if isinstance(out_type, TupleType) \
        else ((out,), (out_type,))
    assert all(isinstance(t, TensorType) and np.shape(o) == tuple(t.shape)
               for o, t in zip(outs, types)), (name, out_type)
    return out


def _kernel(name: str) -> Any:
    twin = TWINS[name]

    def kernel(inputs: list, attrs: Any) -> Any:
        return run_as_twin(name, twin, inputs, attrs)
    kernel.__name__ = kernel.__qualname__ = name.replace(".", "_")
    kernel.__doc__ = f"{name}: {twin.op} with the values of its shape-like inputs."
    return kernel


for _name in TWINS:
    implement(_name)(_kernel(_name))
