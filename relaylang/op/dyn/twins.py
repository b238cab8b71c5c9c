"""Each dyn op's static twin: which static op it is once the values of its shape-like
inputs are known, and the twin's attributes built from those values.

The NumPy kernels (`numpy_kernels.py`) run a dyn op as its twin on the values they
receive; `DynamicToStatic` (relaylang/transform/dynamic_to_static.py) rewrites a call
whose shape-like inputs are constants into a call of the twin: one description of the
correspondence serves both, so they cannot drift apart. The correspondence is TVM's
(src/relay/transforms/dynamic_to_static.cc and the shape functions of
python/tvm/relay/op/dyn/): dyn.reshape(x, s) is reshape(x, newshape=s), ...,
dyn.nn.pad(x, w, v) is nn.pad(x, v, pad_width=w), dyn.topk(x, k) is topk(x, k=k),
dyn.image.resize2d(x, s, r) is image.resize2d(x, size=s, roi=r), dyn.nn.upsampling(x, h, w)
is nn.upsampling(x, scale_h=h, scale_w=w) (and 3d), dyn.sparse_to_dense(i, v, d, s) is
sparse_to_dense(i, v, d, output_shape=s).

`StaticTwin.attrs(dyn_attrs, values)` takes the values as Python numbers and (nested)
lists (`ndarray.tolist()`) and raises `ValueError` for values no static call can
take (a shape that is not 1-D, a -2 in a dynamic reshape, which would change the rank
the dyn op's type promised). What the twin's own relation rejects (a negative dimension,
an axis out of range) is left to that relation. Nothing here imports NumPy.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...ir.types import TensorType, TupleType
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


def _number(value: Any, what: str) -> float:
    """A scalar (or one-element) number, integer or float (a scale)."""
    if isinstance(value, list):
        if len(value) != 1 or isinstance(value[0], list):
            raise ValueError(f"{what} must be a scalar, got {value!r}")
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number, got {value!r}")  # noqa: TRY004
    if not math.isfinite(value):
        raise ValueError(f"{what} must be finite, got {value!r}")
    return value


def _topk(attrs: Any, values: list[Any]) -> Any:
    k = values[0]
    if isinstance(k, list) and len(k) == 1:
        k = k[0]
    return dataclasses.replace(attrs, k=_scalar(k, "k"))


def _resize2d(attrs: Any, values: list[Any]) -> Any:
    size, roi = values
    if not isinstance(size, list) or len(size) != 2 or any(isinstance(v, list) for v in size):
        raise ValueError(f"size must hold 2 values (H, W), got {size!r}")
    # TVM's ToVector truncates a float size to an integer
    dims = tuple(int(_number(v, "size")) for v in size)
    if not isinstance(roi, list) or any(isinstance(v, list) for v in roi):
        raise ValueError(f"roi must be a 1-D tensor, got {roi!r}")
    return dataclasses.replace(attrs, size=dims,
                               roi=tuple(float(_number(v, "roi")) for v in roi))


def _upsampling(attrs: Any, values: list[Any]) -> Any:
    from ..nn import UpSamplingAttrs
    h, w = (float(_number(v, what)) for v, what in zip(values, ("scale_h", "scale_w")))
    return UpSamplingAttrs(scale_h=h, scale_w=w, layout=attrs.layout, method=attrs.method,
                           align_corners=attrs.align_corners)


def _upsampling3d(attrs: Any, values: list[Any]) -> Any:
    from ..nn import UpSampling3DAttrs
    d, h, w = (float(_number(v, what)) for v, what in
               zip(values, ("scale_d", "scale_h", "scale_w")))
    return UpSampling3DAttrs(scale_d=d, scale_h=h, scale_w=w, layout=attrs.layout,
                             method=attrs.method,
                             coordinate_transformation_mode=attrs.coordinate_transformation_mode)


def _sparse_to_dense(attrs: Any, values: list[Any]) -> Any:
    from ..transform import SparseToDenseAttrs
    return SparseToDenseAttrs(output_shape=_vector(values[0], "output_shape"))


def same_rank_and_dtype(a: Any, b: Any) -> bool:
    """Whether types `a` and `b` agree in rank and dtype (field by field for tuples): what a
    dyn op's type promises of its twin's."""
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return len(a.shape) == len(b.shape) and a.dtype == b.dtype
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a.fields) == len(b.fields) and all(
            same_rank_and_dtype(x, y) for x, y in zip(a.fields, b.fields))
    return False


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
    "dyn.topk": StaticTwin("topk", (0,), (1,), _topk),
    "dyn.image.resize2d": StaticTwin("image.resize2d", (0,), (1, 2), _resize2d),
    "dyn.nn.upsampling": StaticTwin("nn.upsampling", (0,), (1, 2), _upsampling),
    "dyn.nn.upsampling3d": StaticTwin("nn.upsampling3d", (0,), (1, 2, 3), _upsampling3d),
    "dyn.sparse_to_dense": StaticTwin("sparse_to_dense", (0, 1, 2), (3,), _sparse_to_dense),
}
