"""Type relations of the pools: max/avg pool 1d/2d/3d, global and adaptive pools.

Mirrors Pool1DRel/Pool2DRel/Pool3DRel, GlobalPool2DRel and AdaptivePool*Rel of
TVM's src/relay/op/nn/pooling.cc. The layout may be any that holds the pooled
axes unsplit (NCHW, NHWC, NCHW16c, ...); the output keeps the input layout
(`out_layout` is for layout passes and does not change the type, as in TVM).
Output length: (size + pads - dilated window) // stride + 1, with stride - 1
added before dividing under ceil_mode. `pool_geometry` is shared with the kernels.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...ir.types import TensorType, Type
from ..layouts import axis_positions
from ..relation import TypeRelError, dim_str, is_known, shape_str, tensor
from ..shape_rules import Dim, dim_add, is_int, padding_pairs, positive, spatial, window_out

SPATIAL = {1: "W", 2: "HW", 3: "DHW"}
Rel = Callable[[list[Type], Any], Type | None]


@dataclass(frozen=True)
class PoolGeometry:
    axes: list[int]                  # positions of the pooled axes in the layout
    pool_size: tuple[Dim, ...]
    strides: tuple[Dim, ...]
    dilation: tuple[Dim, ...]
    pads: list[tuple[Dim, Dim]]


def pooled_axes(layout: str, nd: int, data: TensorType | None = None) -> list[int]:
    axes = axis_positions(layout, SPATIAL[nd], "layout")
    rank = sum(ch.isalpha() for ch in layout)
    if data is not None and len(data.shape) != rank:
        raise TypeRelError(f"layout {layout} has {rank} axes but data has rank "
                           f"{len(data.shape)}", arg=0)
    return axes


def pool_geometry(attrs: Any, nd: int, data: TensorType | None = None) -> PoolGeometry:
    if attrs.pool_size is None:
        raise TypeRelError("pool_size is required")
    g = PoolGeometry(pooled_axes(attrs.layout, nd, data),
                     spatial(attrs.pool_size, nd, "pool_size"),
                     spatial(attrs.strides, nd, "strides"),
                     spatial(attrs.dilation, nd, "dilation"),
                     padding_pairs(attrs.padding, nd))
    for what, values in (("pool_size", g.pool_size), ("strides", g.strides),
                         ("dilation", g.dilation)):
        positive(values, what)
    for b, a in g.pads:
        if (is_int(b) and b < 0) or (is_int(a) and a < 0):
            raise TypeRelError(f"padding must be non-negative, got {list(attrs.padding)}")
    return g


def pool_rel(nd: int) -> Rel:
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not is_known(args[0]):
            return None
        data = tensor(args, 0, "data")
        g = pool_geometry(attrs, nd, data)
        shape = list(data.shape)
        for j, axis in enumerate(g.axes):
            pad = dim_add(*g.pads[j])
            o = window_out(shape[axis], pad, g.pool_size[j], g.strides[j], g.dilation[j],
                           attrs.ceil_mode)
            if is_int(o) and o <= 0:
                raise TypeRelError(f"the input is too small: dimension {axis} has size "
                                   f"{shape[axis]} (padded by {dim_str(pad)}) but the pool "
                                   f"window spans {(g.pool_size[j] - 1) * g.dilation[j] + 1}",
                                   arg=0, dim=axis)
            shape[axis] = o
        return TensorType(tuple(shape), data.dtype)
    rel.__name__ = rel.__qualname__ = f"pool{nd}d_rel"
    return rel


def global_pool_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    shape = list(data.shape)
    for axis in pooled_axes(attrs.layout, 2, data):
        shape[axis] = 1
    return TensorType(tuple(shape), data.dtype)


def adaptive_output_size(attrs: Any, nd: int, sizes: list[Dim]) -> list[Dim]:
    """AdaptivePoolRel's output_size: none keeps the input size, one value is used for
    every pooled axis, otherwise one value per axis."""
    given = tuple(attrs.output_size or ())
    if not given:
        return list(sizes)
    if len(given) == 1:
        given = given * nd
    if len(given) != nd:
        raise TypeRelError(f"output_size must have 1 or {nd} values, got {len(given)}")
    for d in given:
        if is_int(d) and d <= 0:
            raise TypeRelError(f"output_size must be positive, got {shape_str(given)}")
    return list(given)


def adaptive_pool_rel(nd: int) -> Rel:
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not is_known(args[0]):
            return None
        data = tensor(args, 0, "data")
        axes = pooled_axes(attrs.layout, nd, data)
        shape = list(data.shape)
        for axis, size in zip(axes, adaptive_output_size(attrs, nd, [shape[a] for a in axes])):
            shape[axis] = size
        return TensorType(tuple(shape), data.dtype)
    rel.__name__ = rel.__qualname__ = f"adaptive_pool{nd}d_rel"
    return rel
