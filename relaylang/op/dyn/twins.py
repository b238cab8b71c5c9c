"""Each dyn op's static twin: which static op it is once the values of its shape-like
inputs are known, and the twin's attributes built from those values.

The NumPy kernels (`numpy_kernels.py`) run a dyn op as its twin on the values they
receive; `DynamicToStatic` (relaylang/transform/dynamic_to_static.py) rewrites a call
whose shape-like inputs are constants into a call of the twin: one description of the
correspondence serves both, so they cannot drift apart. The correspondence is TVM's
(src/relay/transforms/dynamic_to_static.cc and the shape functions of
python/tvm/relay/op/dyn/): dyn.reshape(x, s) is reshape(x, newshape=s), ...,
dyn.nn.pad(x, w, v) is nn.pad(x, v, pad_width=w).

`StaticTwin.attrs(dyn_attrs, values)` takes the values as Python numbers and (nested)
lists (`ndarray.tolist()`) and raises `ValueError` for values no static call can
take (a shape that is not 1-D, a -2 in a dynamic reshape, which would change the rank
the dyn op's type promised). What the twin's own relation rejects (a negative dimension,
an axis out of range) is left to that relation. Nothing here imports NumPy.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..transform import ExpandDimsAttrs, SqueezeAttrs


@dataclass(frozen=True)
class StaticTwin:
    op: str                        # the static op
    inputs: tuple[int, ...]        # the dyn call's arguments the static call takes, in order
    values: tuple[int, ...]        # the dyn call's arguments whose values become attributes
    attrs: Callable[[Any, list[Any]], Any]   # (dyn attrs, values) -> the static op's attrs


def _vector(value: Any, what: str) -> tuple[int, ...]:
    """A 1-D list of integers (a shape, reps, axes, begin/end/strides)."""
    if not isinstance(value, list) or any(isinstance(v, list) for v in value):
        raise ValueError(f"{what} must be a 1-D tensor, got {value!r}")
    return tuple(_int(v, what) for v in value)


def _scalar(value: Any, what: str) -> int:
    if isinstance(value, list):
        raise ValueError(f"{what} must be a scalar, got {value!r}")  # noqa: TRY004
    return _int(value, what)


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{what} must hold integers, got {v!r}")  # noqa: TRY004
    return v


def _reshape(attrs: Any, values: list[Any]) -> Any:
    newshape = _vector(values[0], "newshape")
    for v in newshape:
        if v in (-2, -4):
            raise ValueError(f"newshape value {v} is not valid in a dynamic reshape (it would "
                             f"make the rank dynamic): newshape {list(newshape)}")
        if v < -4:
            raise ValueError(f"newshape has the unsupported special value {v}")
    return dataclasses.replace(attrs, newshape=newshape)


def _field(name: str, what: str) -> Callable[[Any, list[Any]], Any]:
    """The twin has the dyn op's schema; the one value fills field `name`."""
    def build(attrs: Any, values: list[Any]) -> Any:
        return dataclasses.replace(attrs, **{name: _vector(values[0], what)})
    return build


def _strided_slice(attrs: Any, values: list[Any]) -> Any:
    begin, end, strides = (_vector(v, what) for v, what in
                           zip(values, ("begin", "end", "strides")))
    if not len(begin) == len(end) == len(strides):
        raise ValueError(f"begin, end and strides must have the same length, got "
                         f"{len(begin)}, {len(end)} and {len(strides)}")
    return dataclasses.replace(attrs, begin=begin, end=end, strides=strides, axes=None)


def _expand_dims(attrs: Any, values: list[Any]) -> Any:
    return ExpandDimsAttrs(axis=_scalar(values[0], "axis"), num_newaxis=attrs.num_newaxis)


def _squeeze(attrs: Any, values: list[Any]) -> Any:
    return SqueezeAttrs(axis=_vector(values[0], "axes"))


def _one_hot(attrs: Any, values: list[Any]) -> Any:
    return dataclasses.replace(attrs, depth=_scalar(values[0], "depth"))


def _pad(attrs: Any, values: list[Any]) -> Any:
    rows = values[0]
    if not isinstance(rows, list) or not all(isinstance(r, list) and len(r) == 2 and
                                             not any(isinstance(v, list) for v in r)
                                             for r in rows):
        raise ValueError(f"pad_width must be a 2-D tensor of [before, after] pairs, got "
                         f"{rows!r}")
    return dataclasses.replace(attrs, pad_width=tuple(
        (_int(b, "pad_width"), _int(a, "pad_width")) for b, a in rows))


TWINS: dict[str, StaticTwin] = {
    "dyn.reshape": StaticTwin("reshape", (0,), (1,), _reshape),
    "dyn.broadcast_to": StaticTwin("broadcast_to", (0,), (1,), _field("shape", "shape")),
    "dyn.tile": StaticTwin("tile", (0,), (1,), _field("reps", "reps")),
    "dyn.zeros": StaticTwin("zeros", (), (0,), _field("shape", "shape")),
    "dyn.ones": StaticTwin("ones", (), (0,), _field("shape", "shape")),
    "dyn.full": StaticTwin("full", (0,), (1,), _field("shape", "shape")),
    "dyn.strided_slice": StaticTwin("strided_slice", (0,), (1, 2, 3), _strided_slice),
    "dyn.expand_dims": StaticTwin("expand_dims", (0,), (1,), _expand_dims),
    "dyn.squeeze": StaticTwin("squeeze", (0,), (1,), _squeeze),
    "dyn.one_hot": StaticTwin("one_hot", (0, 1, 2), (3,), _one_hot),
    "dyn.nn.pad": StaticTwin("nn.pad", (0, 2), (1,), _pad),
}
