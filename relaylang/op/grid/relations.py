"""Type relations of the grid family: AffineGridRel and GridSampleRel
(src/relay/op/image/grid_sample.cc), with 3-D added to affine_grid."""
from __future__ import annotations

from typing import Any

from ...ir.dtype import dtype_kind
from ...ir.types import TensorType, Type
from ..relation import TypeRelError, choice, shape_str, tensor
from ..shape_rules import all_known, expect_dim, expect_rank, ints, is_int

GRID_METHODS = ("nearest", "bilinear", "bicubic")
PADDING_MODES = ("zeros", "border", "reflection")
GRID_LAYOUTS = {"NCHW": 2, "NCDHW": 3}


def _float(t: TensorType, what: str, arg: int) -> None:
    if dtype_kind(t.dtype) not in ("float", "bfloat"):
        raise TypeRelError(f"{what} must be a float tensor, got dtype {t.dtype}", arg=arg)


def affine_grid_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data = tensor(args, 0, "data")
    _float(data, "data", 0)
    if attrs.target_shape is None:
        raise TypeRelError("affine_grid needs a target_shape")
    target = ints(attrs.target_shape, "target_shape")
    nd = len(target)
    if nd not in (2, 3):
        raise TypeRelError(f"target_shape must have 2 or 3 entries, got {list(target)}")
    if any(d <= 0 for d in target):
        raise TypeRelError(f"target_shape must be positive, got {list(target)}")
    expect_rank(data, 3, "data", 0)
    expect_dim(data.shape[1], nd, f"data must be (N, {nd}, {nd + 1}) for a {nd}-D target "
               f"shape, got {shape_str(data.shape)}", 0, 1)
    expect_dim(data.shape[2], nd + 1, f"data must be (N, {nd}, {nd + 1}) for a {nd}-D target "
               f"shape, got {shape_str(data.shape)}", 0, 2)
    return TensorType((data.shape[0], nd, *target), data.dtype)


def grid_sample_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data = tensor(args, 0, "data")
    grid = tensor(args, 1, "grid")
    choice(attrs.method, GRID_METHODS, "method")
    choice(attrs.padding_mode, PADDING_MODES, "padding_mode")
    if attrs.layout not in GRID_LAYOUTS:
        raise TypeRelError(f"grid_sample supports layouts NCHW and NCDHW, got {attrs.layout!r}")
    nd = GRID_LAYOUTS[attrs.layout]
    _float(data, "data", 0)
    _float(grid, "grid", 1)
    expect_rank(data, nd + 2, "data", 0)
    expect_rank(grid, nd + 2, "grid", 1)
    expect_dim(grid.shape[1], nd, f"grid must be (N, {nd}, ...) for layout {attrs.layout}, "
               f"got {shape_str(grid.shape)}", 1, 1)
    n = data.shape[0]
    if is_int(n) and is_int(grid.shape[0]) and n != grid.shape[0]:
        raise TypeRelError(f"data has batch {n} but grid has batch {grid.shape[0]}", arg=1,
                           dim=0)
    if not is_int(n):
        n = grid.shape[0]
    return TensorType((n, data.shape[1], *grid.shape[2:]), data.dtype)
