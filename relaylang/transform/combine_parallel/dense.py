"""CombineParallelDense: dense layers of one input become one batch_matmul (or one wider
dense), split back per branch (TVM's src/relay/transforms/combine_parallel_dense.cc and
combine_parallel_op_batch.cc).

With `to_batch=True` (TVM's default) dense layers of the same 2-D data whose weights have
one shape and whose out_dtype agrees become `nn.batch_matmul` of the data stacked B times
and the weights stacked, `transpose_b=True`; the elementwise/broadcast ops after them are
combined with their other arguments stacked (a 1-D bias `(n)` first expanded to `(1, n)`),
and `split` + `squeeze` give each branch its result back. With `to_batch=False` the
weights only need the same input width: they are concatenated into one `nn.dense` with
`units` their total, following arguments are concatenated along the last axis (a scalar
or a last axis of 1 repeated to the branch's width first), and each branch takes its
columns with `strided_slice(..., slice_mode="size")`. The Q, K, V projections of a
BERT layer are the case this is for.

    def @main(%x: Tensor[(2, 3), float32], %w1: Tensor[(4, 3), float32],
              %w2: Tensor[(4, 3), float32], %b1: Tensor[(4), float32],
              %b2: Tensor[(4), float32]) {
      (add(nn.dense(%x, %w1), %b1), add(nn.dense(%x, %w2), %b2))
    }
        ==>  (CombineParallelDense{min_num_branches=2})
      %0 = nn.batch_matmul(stack((%x, %x)), stack((%w1, %w2)), transpose_b=True);
      %1 = add(%0, stack((expand_dims(%b1, axis=0), expand_dims(%b2, axis=0))));
      %2 = split(%1, indices_or_sections=2);
      (squeeze(%2.0, axis=[0]), squeeze(%2.1, axis=[0]))

With `to_batch=False`, as in TVM, the following ops may also change the shape:
`expand_dims`, and broadcasts to more leading axes (a bias of shape (9, 3, n)); the
outputs are sliced along the axis the dense's columns went to, tracked through them (TVM
looks for an axis of the dense's width, which its own comment calls a guess).

Deviations from TVM, where TVM would build a wrong or ill-typed program: batch_matmul
keeps the dense's out_dtype (TVM drops it), only 2-D data is batched, following ops of
the batch form must keep the branch's shape, a broadcast along the columns' axis is not
followed, arguments of rank below the branch's are expanded to its rank
before stacking (TVM expands only 1-D ones), and a group never mixes scopes or reads its
own outputs (see common.py). Results agree within float rounding of the same
sums: rtol=1e-5, atol=1e-6.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...ir.expr import Call, Expr, Op, Tuple, TupleGetItem
from ...op import call as op_call
from ...op.nn import BatchMatmulAttrs, DenseAttrs
from ...op.registry import get as get_op
from ...op.transform import (
    ExpandDimsAttrs,
    RepeatAttrs,
    SplitAttrs,
    SqueezeAttrs,
    StackAttrs,
    StridedSliceAttrs,
)
from ..pass_infra import register_pass
from .common import (
    CombineParallelPass,
    Combiner,
    Group,
    Lookup,
    concat,
    keeps_shape,
    static_shape,
    tensor_type,
)

RTOL, ATOL = 1e-5, 1e-6


@register_pass
@dataclass(frozen=True)
class CombineParallelDense(CombineParallelPass):
    """Combine at least `min_num_branches` parallel dense ops of one input into one."""

    name: ClassVar[str] = "CombineParallelDense"
    opt_level: ClassVar[int] = 4
    min_num_branches: int = 3
    to_batch: bool = True        # TVM's Python keyword (the C++ calls it to_batch_matmul)

    def combiner(self) -> Combiner:
        return DenseToBatchCombiner() if self.to_batch else DenseToDenseCombiner()


class _DenseCombiner(Combiner):
    op_name = "nn.dense"

    def is_supported(self, call: Call) -> bool:
        weight = static_shape(call.args[1])
        return weight is not None and len(weight) == 2 and static_shape(call) is not None

    def same_kind(self, a: Call, b: Call) -> bool:
        x: Any = a.attrs
        y: Any = b.attrs
        wa, wb = tensor_type(a.args[1]), tensor_type(b.args[1])
        assert wa is not None and wb is not None
        return x.out_dtype == y.out_dtype and wa.dtype == wb.dtype


class DenseToBatchCombiner(_DenseCombiner):
    """Same-shape dense layers as one batch_matmul (TVM's ParallelDenseToBatchCombiner)."""

    def is_supported(self, call: Call) -> bool:
        data = static_shape(call.args[0])
        return super().is_supported(call) and data is not None and len(data) == 2

    def can_combine(self, a: Call, b: Call) -> bool:
        return self.same_kind(a, b) and static_shape(a.args[1]) == static_shape(b.args[1])

    def can_follow(self, call: Call) -> bool:
        # The stacked value has a new leading axis: an op with an `axis` (bias_add, prelu)
        # would look at the wrong one, and wants its argument 1-D besides.
        return not hasattr(call.attrs, "axis")

    def make_combined_op(self, group: Group, new: Lookup) -> Expr:
        attrs: Any = group[0][0].attrs
        data = _stack([new(b[0].args[0]) for b in group])
        weight = _stack([new(b[0].args[1]) for b in group])
        return op_call("nn.batch_matmul", data, weight,
                       attrs=BatchMatmulAttrs(out_dtype=attrs.out_dtype, transpose_b=True))

    def is_arg_compatible(self, root: Call, a: Call, b: Call, index: int,
                          parent_index: int) -> bool:
        ta, tb = tensor_type(a.args[index]), tensor_type(b.args[index])
        return ta is not None and tb is not None and ta.dtype == tb.dtype and \
            ta.shape == tb.shape and all(isinstance(d, int) for d in ta.shape)

    def make_following(self, data: Expr, group: Group, depth: int, parent_index: int,
                       new: Lookup) -> Expr:
        first = group[0][depth]
        rank = len(static_shape(first) or ())
        args: list[Expr] = []
        for i in range(len(first.args)):
            if i == parent_index:
                args.append(data)
                continue
            parts = []
            for branch in group:
                arg = branch[depth].args[i]
                missing = rank - len(static_shape(arg) or ())
                part = new(arg)
                if missing > 0:     # (n) -> (1, n), so that it broadcasts as before
                    part = op_call("expand_dims", part,
                                   attrs=ExpandDimsAttrs(axis=0, num_newaxis=missing))
                parts.append(part)
            args.append(_stack(parts))
        return Call(first.op, tuple(args), first.attrs)

    def split_outputs(self, data: Expr, group: Group, depth: int) -> list[Expr]:
        parts = op_call("split", data, attrs=SplitAttrs(indices_or_sections=len(group), axis=0))
        return [Call(get_op("squeeze"), (TupleGetItem(parts, k),), SqueezeAttrs(axis=(0,)),
                     span=branch[depth].span)
                for k, branch in enumerate(group)]


class DenseToDenseCombiner(_DenseCombiner):
    """Dense layers of one input width as one wider dense (ParallelDenseToDenseCombiner)."""

    def can_combine(self, a: Call, b: Call) -> bool:
        wa, wb = static_shape(a.args[1]), static_shape(b.args[1])
        assert wa is not None and wb is not None
        return self.same_kind(a, b) and wa[1] == wb[1]

    def make_combined_op(self, group: Group, new: Lookup) -> Expr:
        attrs: Any = group[0][0].attrs
        units = sum(_width(b[0]) for b in group)
        weight = concat([new(b[0].args[1]) for b in group], 0)
        return op_call("nn.dense", new(group[0][0].args[0]), weight,
                       attrs=DenseAttrs(units=units, out_dtype=attrs.out_dtype))

    def is_arg_compatible(self, root: Call, a: Call, b: Call, index: int,
                          parent_index: int) -> bool:
        ta, tb = static_shape(a.args[index]), static_shape(b.args[index])
        out = static_shape(a)
        dta, dtb = tensor_type(a.args[index]), tensor_type(b.args[index])
        if ta is None or tb is None or out is None or dta is None or dtb is None:
            return False
        if dta.dtype != dtb.dtype or len(ta) != len(tb) or len(ta) > len(out):
            return False
        return ta[:-1] == tb[:-1]

    def make_following(self, data: Expr, group: Group, depth: int, parent_index: int,
                       new: Lookup) -> Expr:
        first = group[0][depth]
        args: list[Expr] = []
        for i, arg0 in enumerate(first.args):
            if i == parent_index:
                args.append(data)
                continue
            axis = max(len(static_shape(arg0) or ()) - 1, 0)
            args.append(concat([_columns(b[depth], i, parent_index, new) for b in group],
                               axis))
        return Call(first.op, tuple(args), first.attrs)

    def follows(self, branch: list[Call], depth: int, parent_index: int) -> bool:
        call, parent = branch[depth], branch[depth - 1]
        if keeps_shape(call, parent_index):
            return True
        out, before = static_shape(call), static_shape(parent)
        if out is None or before is None:
            return False
        if isinstance(call.op, Op) and call.op.name == "expand_dims":
            return True
        # A broadcast to more leading axes, the columns last and not broadcast themselves
        # (the other arguments are concatenated along their last axis).
        return _column_axis(branch, depth - 1) == 0 and len(out) >= len(before) and \
            out[-1] == before[-1] and all(len(static_shape(a) or ()) <= len(out)
                                          for a in call.args)

    def split_outputs(self, data: Expr, group: Group, depth: int) -> list[Expr]:
        rank = len(static_shape(group[0][depth]) or ())
        axis = rank - 1 - _column_axis(group[0], depth)
        outputs: list[Expr] = []
        start = 0
        for branch in group:
            width = _width(branch[0])
            begin, end = [0] * rank, [-1] * rank
            begin[axis], end[axis] = start, width
            attrs = StridedSliceAttrs(begin=tuple(begin), end=tuple(end),
                                      strides=(1,) * rank, slice_mode="size", axes=None)
            outputs.append(Call(get_op("strided_slice"), (data,), attrs,
                                span=branch[depth].span))
            start += width
        return outputs


def _columns(call: Call, index: int, parent_index: int, new: Lookup) -> Expr:
    """Argument `index` of `call` with as many last-axis entries as the branch has columns
    (TVM repeats a scalar or a last axis of 1, which broadcast before concatenation)."""
    arg = call.args[index]
    shape = static_shape(arg)
    width = _width(call.args[parent_index])
    assert shape is not None
    part = new(arg)
    if not shape:
        part = op_call("expand_dims", part, attrs=ExpandDimsAttrs(axis=-1, num_newaxis=1))
    if (not shape or (width > 1 and shape[-1] == 1)):
        axis = max(len(shape) - 1, 0)
        part = op_call("repeat", part, attrs=RepeatAttrs(repeats=width, axis=axis))
    return part


def _column_axis(branch: list[Call], depth: int) -> int:
    """Where the dense's columns are in `branch[depth]`'s value, counted from the last axis
    (0: the last), through the expand_dims and broadcasts after the dense."""
    from_end = 0
    for call in branch[1:depth + 1]:
        if isinstance(call.op, Op) and call.op.name == "expand_dims":
            attrs: Any = call.attrs
            rank = len(static_shape(call.args[0]) or ())
            at = attrs.axis if attrs.axis >= 0 else attrs.axis + rank + 1
            if at > rank - 1 - from_end:          # inserted after the columns' axis
                from_end += attrs.num_newaxis
    return from_end


def _width(e: Expr) -> int:
    """The last dimension of `e`: a dense branch's number of columns."""
    shape = static_shape(e)
    assert shape is not None
    return shape[-1]


def _stack(parts: list[Expr]) -> Call:
    return op_call("stack", Tuple(tuple(parts)), attrs=StackAttrs(axis=0))
