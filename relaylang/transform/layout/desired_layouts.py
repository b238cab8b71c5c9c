"""Which layouts a layout pass asks ops to use: ConvertLayout's `desired_layouts`
(TVM: python/tvm/relay/transform/transform.py `ConvertLayout(desired_layouts)`, resolved
by `convert_conv2d` & co. in python/tvm/relay/op/nn/_nn.py) and AlterOpLayout's tables.

From Python, TVM's dict: `{"nn.conv2d": ["NHWC", "default"], "nn.max_pool2d": ["NHWC"]}`.
In a pipeline string (where `,` separates options) entries are separated by `;`, an op
and its layouts by `:`:

    relay opt m.relay --opt-level 3 -p 'ConvertLayout{desired_layouts=nn.conv2d:NHWC}'
    -p 'ConvertLayout{desired_layouts=nn.conv2d:NHWC:OHWI;nn.max_pool2d:NHWC}'

A convolution takes a data layout and a kernel layout (omitted: "default"); a pool
one layout. "default" picks the kernel layout that goes with the data layout, as
TVM does: channels first (NCHW) -> OIHW, channels last (NHWC) -> HWIO, or HWOI for
a depthwise convolution, HWNC -> HWOI; transposed convolutions use IOHW and HWIO.
Layouts must be plain permutations of the op's own axes (NHWC for conv2d, not NCW),
except one: nn.conv2d in NCHW{n}c with a kernel layout OIHW{n}i{n}o given (TVM's
convert_conv2d "need_tile") becomes nn.contrib_conv2d_NCHWc, where the blocks divide
its channels (rules.py).
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...ir.expr import Call, Op
from ...ir.types import TensorType
from ...op import get_op_def
from .rewrite import is_plain
from .rules import CONV_OPS, POOL_OPS

DEFAULT = "default"
# ConvertLayout's channel-blocked conv2d (TVM's convert_conv2d): NCHW4c with OIHW4i4o
BLOCKED_DATA = re.compile(r"NCHW([1-9][0-9]*)c")
BLOCKED_KERNEL = re.compile(r"OIHW([1-9][0-9]*)i([1-9][0-9]*)o")


@dataclass(frozen=True, slots=True)
class DesiredLayouts:
    """op name -> its layouts (data, kernel for convolutions; one for pools), validated."""

    entries: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @staticmethod
    def of(value: Any) -> DesiredLayouts:
        """From TVM's dict, a pipeline string (module docstring) or a DesiredLayouts."""
        if isinstance(value, DesiredLayouts):
            return value
        if isinstance(value, str):
            value = _parse_text(value)
        if not isinstance(value, Mapping):
            raise TypeError(f"desired_layouts must be a dict or text, not {value!r}")
        entries = []
        for op, layouts in value.items():
            layouts = (layouts,) if isinstance(layouts, str) else tuple(map(str, layouts))
            entries.append((str(op), _check(str(op), layouts)))
        return DesiredLayouts(tuple(entries))

    def __str__(self) -> str:
        return ";".join(":".join((op, *layouts)) for op, layouts in self.entries)

    def prefer(self, call: Call) -> tuple[str, ...] | None:
        """The layouts `call` should use, "default" resolved; None: not asked for."""
        assert isinstance(call.op, Op)
        layouts = dict(self.entries).get(call.op.name)
        if layouts is None or call.op.name in POOL_OPS:
            return layouts
        data, kernel = layouts
        if kernel == DEFAULT:
            kernel = default_kernel_layout(call.op.name, data, _is_depthwise(call))
        return data, kernel


def _parse_text(text: str) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        op, *layouts = (part.strip() for part in entry.split(":"))
        if not layouts:
            raise ValueError(f"desired layout `{entry}` names no layout: write OP:LAYOUT, "
                             "as in nn.conv2d:NHWC")
        out[op] = tuple(layouts)
    return out


def _schema_layouts(op: str) -> tuple[str, str | None]:
    """The op's own default data (and kernel) layout, from its attribute schema."""
    opdef = get_op_def(op)
    assert opdef is not None and opdef.attrs is not None
    defaults = {f.name: f.default for f in dataclasses.fields(opdef.attrs)}
    if op in POOL_OPS:
        return defaults["layout"], None
    return defaults["data_layout"], defaults["kernel_layout"]


def _check(op: str, layouts: tuple[str, ...]) -> tuple[str, ...]:
    if op not in CONV_OPS and op not in POOL_OPS:
        raise ValueError(f"cannot convert the layout of `{op}`; desired_layouts may name "
                         f"{', '.join(CONV_OPS + POOL_OPS)}")
    data_axes, kernel_axes = _schema_layouts(op)
    wanted = 1 if kernel_axes is None else 2
    if op in CONV_OPS and len(layouts) == 1:
        layouts = (layouts[0], DEFAULT)
    if kernel_axes is None and len(layouts) == 2 and layouts[1] == DEFAULT:
        layouts = layouts[:1]        # TVM's vision.roi_align: [layout, "default"]
    if len(layouts) != wanted:
        raise ValueError(f"`{op}` takes {wanted} desired layout{'s' * (wanted > 1)}, "
                         f"got {len(layouts)}: {':'.join(layouts)}")
    tile = BLOCKED_DATA.fullmatch(layouts[0])
    if op == "nn.conv2d" and tile:
        n = tile.group(1)
        if layouts[1] == DEFAULT:
            raise ValueError(f"the kernel layout of `{op}` in {layouts[0]} cannot be default: "
                             f"give one, as in {op}:{layouts[0]}:OIHW{n}i{n}o")
        blocks = BLOCKED_KERNEL.fullmatch(layouts[1])
        if not blocks or blocks.groups() != (n, n):
            raise ValueError(f"kernel layout `{layouts[1]}` for `{op}` in {layouts[0]}: "
                             f"expected OIHW{n}i{n}o")
        return layouts
    _check_layout(op, layouts[0], data_axes, "data layout")
    if kernel_axes is not None and layouts[1] != DEFAULT:
        _check_layout(op, layouts[1], kernel_axes, "kernel layout")
    elif kernel_axes is not None:
        default_kernel_layout(op, layouts[0], False)      # raises if there is none
    return layouts


def _check_layout(op: str, layout: str, axes: str, what: str) -> None:
    if layout == DEFAULT:
        raise ValueError(f"the data layout of `{op}` cannot be default")
    if not is_plain(layout) or sorted(layout) != sorted(axes):
        raise ValueError(f"{what} `{layout}` for `{op}`: expected the axes {axes} in some "
                         "order")


def default_kernel_layout(op: str, data: str, depthwise: bool) -> str:
    """TVM's "default" kernel layout for a convolution computed in data layout `data`."""
    spatial = data.replace("N", "").replace("C", "")
    transposed = "transpose" in op
    if data == "NC" + spatial:
        return ("IO" if transposed else "OI") + spatial
    if data == "N" + spatial + "C":
        return spatial + ("OI" if depthwise and not transposed else "IO")
    if data == spatial + "NC" and not transposed:
        return spatial + "OI"                      # TVM's HWNC -> HWOI
    raise ValueError(f"no default kernel layout for `{op}` in {data}: give one, as in "
                     f"{op}:{data}:{'OI' + spatial}")


def _is_depthwise(call: Call) -> bool:
    """groups == input channels (TVM's is_depthwise_conv2d)."""
    attrs: Any = call.attrs
    ty = call.args[0].checked_type
    if attrs.groups <= 1 or not isinstance(ty, TensorType):
        return False
    return ty.shape[attrs.data_layout.index("C")] == attrs.groups
