"""What each layout-aware op does when its inputs change layout: the rules behind
`rewrite.py` (TVM's per-op `FInferCorrectLayout` in src/relay/op/**, and
`FTVMConvertOpLayout` in python/tvm/relay/op/nn/_nn.py for the ops a pass converts).

Each op says which rule is its own by its `layout` kind, declared with the op in its
family (`relaylang/op/<family>/`); `LAYOUT_RULES` maps the kinds to the rules, and
`RULES` (op name -> rule) follows from the registry. The kinds (a rule sees the facts
of its arguments, see `Laid`):

  conv           take the layouts the pass prefers (or keep their own) and want
                 data and weight in them; the result is in the new data layout.
  pool           take the preferred layout, else follow their input's layout.
  spatial        (image.resize2d: a `layout` attribute) as pool.
  roi            (vision.roi_align, vision.roi_pool) take the preferred layout; not
                 asked, an edge.
  upsampling     (nn.upsampling, nn.upsampling3d, dyn.nn.upsampling[3d]) follow their
                 input when its spatial axes stay in place and unsplit (NCHW16c), else
                 keep their own layout.
  elemwise       (unary ops, clip, cast, nn.relu, ...) follow their input.
  broadcast      (add, multiply, where, ...) follow the first operand of full rank;
                 a lower-rank operand is converted by the matching tail of the
                 layouts (bias (C, 1, 1): CHW -> HWC), else, as TVM, expanded to full
                 rank first (bias (C,) when NHWC becomes NCHW: expand_dims to
                 (1, 1, 1, C), NHWC -> NCHW); an all-ones one is left alone.
  axis           (nn.bias_add, nn.prelu, nn.batch_norm, nn.layer_norm,
                 nn.instance_norm, softmaxes, nn.lrn) follow, with `axis` renumbered.
  axes           (nn.l2_normalize) follow, each axis renumbered.
  reduce         follow, with `axis` renumbered; without keepdims the result's
                 layout drops the reduced axes (NHWC mean over HW is NC: no edge).
  arg_reduce     (argmax, argmin) as reduce, when the reduced axes keep their order
                 (the index counts over them in layout order).
  concatenate    follows its first converted field, with `axis` renumbered.
  split, topk    follow, `axis` renumbered; every result in the new layout.
  squeeze        follows, its axes renumbered (named when none are given); the
                 result's layout drops them (NHWC squeezed on H is NWC).
  strided_slice  follows: `axes` renumbered, or begin/end/strides completed to every
                 axis and permuted.
  slice_like     follows when both inputs are converted alike, `axes` renumbered.
  pad            (nn.pad) follows, its pad_width permuted.
  transpose      absorbs the conversion: its axes are composed with it, so its
                 result is in the original layout (an identity transpose vanishes;
                 TVM keeps it).
  layout_transform  of a converted value from its original layout is the value itself.
  qnn_requantize  (qnn.requantize) follows, `axis` renumbered (non-negative, as TVM).
  qnn_broadcast  (qnn.add, qnn.subtract, qnn.mul) broadcast over lhs and rhs; scales
                 and zero points stay, per-channel ones with lhs_axis/rhs_axis renumbered.
  (qnn.conv2d is a conv, qnn.concatenate a concatenate: their scales and zero points
  keep their layouts.)

Every op without a kind is an edge: its arguments get their original layouts back.

Blocked layouts (NCHW16c: AlterOpLayout's nn.contrib_conv2d_NCHWc for llvm, nchwc.py)
are followed by elemwise, broadcast (a lower-rank operand is transformed over the
matching tail, CHW -> CHW16c; an operand broadcast along a split axis is an edge, a
transform would pad it with zeros), pool (pooled axes unsplit), axis ops whose axis
is not split and split (along a blocked axis in whole blocks), concatenate (fields all
in one blocked layout), pad (nothing padded along a split axis) and the reductions (a
reduced split axis takes its block along: NCHW16c summed over C with keepdims is
NCHW1c); the other kinds follow plain layouts only. ConvertLayout makes them too when asked for nn.conv2d in NCHW{n}c
(`_tiled_conv_plan`).
"""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

from ...ir.expr import Call, Tuple
from ...ir.types import TensorType, TupleType
from ...op import all_ops, get_op_def
from .nchwc import NCHWC, NCHWC_OP, nchwc_plan
from .rewrite import Info, Laid, Plan, Prefer, Rule, axis_letters, is_plain, laid, split_axes


def _rank(expr: Any) -> int | None:
    ty = expr.checked_type
    return len(ty.shape) if isinstance(ty, TensorType) else None


def _renumber(axis: int, have: Laid) -> int:
    """`axis` of the original layout as an axis of the new one (negative stays negative)."""
    rank = len(have.old)
    letters = axis_letters(have.new)
    new = letters.index(have.old[axis + rank if axis < 0 else axis])
    return new - len(letters) if axis < 0 else new


def _blocked(info: Info) -> bool:
    """A fact whose new layout splits an axis (NCHW16c): only the rules that know how
    follow it (elementwise, broadcast, pools, axis ops on an unsplit axis)."""
    return isinstance(info, Laid) and not is_plain(info.new)


def _whole_on_splits(shape: tuple, letters: str, splits: dict[str, int],
                     full: dict[str, object]) -> bool:
    """Whether an operand (axes `letters`) has the output's whole extent on every axis a
    blocked layout splits: a broadcast size 1 there would be padded with zeros by the
    layout_transform instead of broadcasting."""
    for letter, d in zip(letters, shape):
        if letter in splits and d != full.get(letter):
            return False
    return True


def _tail_layout(new: str, old_tail: str) -> str | None:
    """The layout of a lower-rank operand (axes `old_tail`, aligned with the last axes of
    the original layout) when the full-rank value is in `new`: the axes of `new` over
    those letters, which must be a tail of `new` for broadcasting to align them (NHWC:
    CHW -> HWC; NCHW16c: CHW -> CHW16c)."""
    from ...op.layouts import parse_layout
    axes = parse_layout(new)
    keep = [(a, f) for a, f in axes if a.upper() in old_tail]
    if len(keep) == 0 or keep != list(axes[len(axes) - len(keep):]):
        return None
    return "".join(f"{f}{a}" if f else a for a, f in keep)


# ---------------------------------------------------------------- anchors


def conv_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    attrs: Any = call.attrs
    chosen = prefer(call)
    if chosen is not None and chosen[0] == NCHWC:
        return nchwc_plan(call, infos)   # AlterOpLayout for llvm: nn.contrib_conv2d_NCHWc
    if chosen is not None and not is_plain(chosen[0]):
        return _tiled_conv_plan(call, chosen[0], chosen[1])
    if chosen is None:
        data, kernel, new_attrs = attrs.data_layout, attrs.kernel_layout, attrs
    else:
        data, kernel = chosen
        # An out_layout that only repeated the data layout follows it (TVM leaves it).
        out = "" if attrs.out_layout in ("", attrs.data_layout) else attrs.out_layout
        new_attrs = dataclasses.replace(attrs, data_layout=data, kernel_layout=kernel,
                                        out_layout=out)
    out_old = attrs.out_layout or attrs.data_layout
    out_new = new_attrs.out_layout or data
    if not all(map(is_plain, (out_old, out_new))):
        return None
    wants: tuple[Info, ...] = (Laid(attrs.data_layout, data), Laid(attrs.kernel_layout, kernel))
    if len(call.args) == 3:              # nn.deformable_conv2d: the offset is laid out as
        wants = (wants[0], wants[0], wants[1])      # the data (TVM's convert_deformable_conv2d)
    elif len(call.args) > 2:             # qnn.conv2d: zero points and scales stay as they are
        wants = wants + (None,) * (len(call.args) - 2)
    return Plan(new_attrs, wants, laid(out_old, out_new))


def _tiled_conv_plan(call: Call, data: str, kernel: str) -> Plan | None:
    """ConvertLayout's nn.conv2d in NCHW{n}c (desired_layouts.py): nn.contrib_conv2d_NCHWc
    with the given kernel layout and no out_layout, as TVM's convert_conv2d; a
    convolution whose channels the blocks do not divide (an RGB input in blocks of 4)
    stays as it is."""
    attrs: Any = call.attrs
    dty, wty = (a.checked_type for a in call.args)
    if call.op.name != "nn.conv2d" or attrs.groups != 1 \
            or attrs.out_layout not in ("", attrs.data_layout) \
            or not (isinstance(dty, TensorType) and isinstance(wty, TensorType)):
        return None
    n = split_axes(data).get("C", 0)
    channels = dty.shape[attrs.data_layout.index("C")]
    out_channels = wty.shape[attrs.kernel_layout.index("O")]
    if not (n and isinstance(channels, int) and isinstance(out_channels, int)) \
            or channels % n or out_channels % n:
        return None
    new_attrs = dataclasses.replace(attrs, data_layout=data, kernel_layout=kernel,
                                    out_layout="")
    wants = (Laid(attrs.data_layout, data), Laid(attrs.kernel_layout, kernel))
    return Plan(new_attrs, wants, Laid(attrs.data_layout, data), op=NCHWC_OP)


def pool_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    attrs: Any = call.attrs
    chosen, have = prefer(call), infos[0]
    rest = (None,) * (len(call.args) - 1)    # qnn.avg_pool2d: scales and zero points
    if _blocked(have):
        # follow a channel-blocked input (NCHW16c): the pools' relations and kernels take
        # any layout whose pooled axes are not split
        if not (have.old == attrs.layout and attrs.out_layout in ("", attrs.layout)
                and is_plain(attrs.layout)
                and not set(split_axes(have.new)) & set(attrs.layout) - {"N", "C"}):
            return None
        new_attrs = dataclasses.replace(attrs, layout=have.new)
        return Plan(new_attrs, (have, *rest), have)
    if chosen is not None:                   # TVM's convert_*pool2d sets both
        new_attrs = dataclasses.replace(attrs, layout=chosen[0], out_layout=chosen[0])
    elif isinstance(have, Laid) and have.old == attrs.layout \
            and attrs.out_layout in ("", attrs.layout):
        new_attrs = dataclasses.replace(attrs, layout=have.new)
    else:
        new_attrs = attrs
    out_old = attrs.out_layout or attrs.layout
    out_new = new_attrs.out_layout or new_attrs.layout
    if not all(map(is_plain, (attrs.layout, out_old, out_new))):
        return None
    return Plan(new_attrs, (Laid(attrs.layout, new_attrs.layout), *rest),
                laid(out_old, out_new))


# ---------------------------------------------------------------- followers


def elemwise_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    have = infos[0]
    if not isinstance(have, Laid):
        return None
    return Plan(call.attrs, (have, *infos[1:]), have)


def broadcast_rule(call: Call, infos: list[Info], prefer: Prefer,
                   args: Any = None) -> Plan | None:
    """`args`: the operands to lay out (all of the call's by default; qnn's binary ops
    pass lhs and rhs)."""
    rank = _rank(call)
    lead = next((i for i in infos if isinstance(i, Laid) and len(i.old) == rank), None)
    if lead is None:
        return None
    out_ty = call.checked_type
    splits = split_axes(lead.new)
    full = dict(zip(lead.old, out_ty.shape)) if isinstance(out_ty, TensorType) else {}
    wants: list[Info] = []
    for arg, have in zip(call.args if args is None else args, infos):
        ty = arg.checked_type
        if not isinstance(ty, TensorType):
            return None
        r = len(ty.shape)
        if all(d == 1 for d in ty.shape) and not _blocked(have):
            # broadcasts the same in every layout
            wants.append(have if isinstance(have, Laid) else None)
        elif r == rank:
            if splits and not _whole_on_splits(tuple(ty.shape), lead.old, splits, full):
                return None
            wants.append(Laid(lead.old, lead.new))
        else:                                # aligned with the layouts' last r axes
            old = lead.old[rank - r:]
            new = _tail_layout(lead.new, old)
            if new is None and (not splits or _whole_on_splits(tuple(ty.shape), old, splits,
                                                               full)):
                # no tail of the new layout holds those axes (a bias (C,) when NHWC
                # becomes NCHW, or NCHW16c): expanded to full rank first, as TVM
                # (rewrite.py)
                wants.append(Laid(old, lead.new))
                continue
            if new is None or (splits and not _whole_on_splits(tuple(ty.shape), old, splits,
                                                               full)):
                return None
            wants.append(Laid(old, new))
    return Plan(call.attrs, tuple(wants), lead)


def axis_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """Ops reading one `axis` of their first input; other inputs are per-axis vectors."""
    have = infos[0]
    if not isinstance(have, Laid):
        return None
    if _blocked(have):
        rank = len(have.old)
        axis = call.attrs.axis  # type: ignore[union-attr]
        if have.old[axis + rank if axis < 0 else axis] in split_axes(have.new):
            return None          # a per-channel vector cannot follow blocked channels
    attrs = dataclasses.replace(call.attrs, axis=_renumber(call.attrs.axis, have))  # type: ignore
    wants = (have, *(None for _ in call.args[1:]))
    ty = call.checked_type                   # batch_norm: (data, mean, variance)
    out: Info = (have, *(None for _ in ty.fields[1:])) if isinstance(ty, TupleType) else have
    return Plan(attrs, wants, out)


def concatenate_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    if any(_blocked(i) for i in (infos[0] if isinstance(infos[0], tuple) else infos[:1])):
        return _concatenate_blocked(call, infos[0])
    fields = infos[0]
    if not (isinstance(call.args[0], Tuple) and isinstance(fields, tuple)):
        return None
    lead = next((i for i in fields if isinstance(i, Laid)), None)
    if lead is None:
        return None
    attrs = dataclasses.replace(call.attrs, axis=_renumber(call.attrs.axis, lead))  # type: ignore
    rest = (None,) * (len(call.args) - 1)    # qnn.concatenate: scales and zero points
    return Plan(attrs, (tuple(Laid(lead.old, lead.new) for _ in fields), *rest), lead)


def _concatenate_blocked(call: Call, fields: Info) -> Plan | None:
    """Fields all in one blocked layout are joined in it (TVM's ConcatenateLayout: the
    new layouts all the same), along a split axis only when every field fills whole
    blocks."""
    if not (isinstance(call.args[0], Tuple) and isinstance(fields, tuple)):
        return None
    lead = fields[0]
    if not isinstance(lead, Laid) or any(f != lead for f in fields):
        return None
    rank = len(lead.old)
    axis = call.attrs.axis  # type: ignore[union-attr]
    letter = lead.old[axis + rank if axis < 0 else axis]
    factor = split_axes(lead.new).get(letter)
    for f in call.args[0].fields:
        ty = f.checked_type
        if not isinstance(ty, TensorType) or (factor and not (
                isinstance(ty.shape[lead.old.index(letter)], int)
                and ty.shape[lead.old.index(letter)] % factor == 0)):
            return None
    attrs = dataclasses.replace(call.attrs, axis=_renumber(axis, lead))  # type: ignore
    rest = (None,) * (len(call.args) - 1)    # qnn.concatenate: scales and zero points
    return Plan(attrs, (tuple(lead for _ in fields), *rest), lead)


def _reduce_blocked(call: Call, have: Laid) -> Plan | None:
    """A reduction of a blocked value (TVM's ReduceInferCorrectLayout): a reduced split
    axis takes its block along; kept, its block is 1 (NCHW16c summed over C with keepdims
    is NCHW1c)."""
    from ...op.layouts import parse_layout
    attrs: Any = call.attrs
    rank = len(have.old)
    axes = range(rank) if not attrs.axis else [a + rank if a < 0 else a for a in attrs.axis]
    letters = {have.old[a] for a in axes}
    reduced = set(have.old) - letters if attrs.exclude and attrs.axis else letters
    if get_op_def(call.op.name).layout == "arg_reduce" and len(reduced) > 1 \
            and reduced & set(split_axes(have.new)):          # type: ignore[union-attr]
        return None          # the index would count the blocks' axes in another order
    shape = call.args[0].checked_type.shape
    for letter, factor in split_axes(have.new).items():
        d = shape[have.old.index(letter)]
        if letter in reduced and not (isinstance(d, int) and d % factor == 0):
            return None      # the blocks' zero padding would join the reduction
    new_axes = tuple(i for i, a in enumerate(axis_letters(have.new)) if a.upper() in reduced)
    kept = [(a, f) for a, f in parse_layout(have.new) if a.upper() not in reduced]
    if attrs.keepdims:
        out: Info = Laid(have.old, "".join(
            ("1" if a.upper() in reduced else str(f)) + a if f else a
            for a, f in parse_layout(have.new)))
    else:
        old = "".join(c for c in have.old if c not in reduced)
        new = "".join(f"{f}{a}" if f else a for a, f in kept)
        out = laid(old, new) if old else None
    return Plan(dataclasses.replace(attrs, axis=new_axes, exclude=False), (have,), out)


def reduce_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    if isinstance(infos[0], Laid) and _blocked(infos[0]) and is_plain(infos[0].old):
        return _reduce_blocked(call, infos[0])
    if any(_blocked(i) for i in (infos[0] if isinstance(infos[0], tuple) else infos[:1])):
        return None          # follows plain layouts only
    have = infos[0]
    attrs: Any = call.attrs
    if not isinstance(have, Laid):
        return None
    if not attrs.axis:                       # every axis (TVM: None or empty)
        return Plan(attrs, (have,), have if attrs.keepdims else None)
    rank = len(have.old)
    letters = {have.old[a + rank if a < 0 else a] for a in attrs.axis}
    new_axes = tuple(sorted(have.new.index(c) for c in letters))
    reduced = set(have.old) - letters if attrs.exclude else letters
    if attrs.keepdims:
        out: Info = have
    else:
        old = "".join(c for c in have.old if c not in reduced)
        new = "".join(c for c in have.new if c not in reduced)
        out = laid(old, new) if old else None
    return Plan(dataclasses.replace(attrs, axis=new_axes), (have,), out)


def arg_reduce_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """argmax/argmin: an index over several axes counts in layout order, so only a
    reduction over one axis may change layout."""
    attrs: Any = call.attrs
    have = infos[0]
    if attrs.exclude or attrs.axis is None or not isinstance(have, Laid):
        return None
    rank = len(have.old)
    letters = [have.old[a + rank if a < 0 else a] for a in sorted(
        a + rank if a < 0 else a for a in attrs.axis)]
    where = [have.new.find(c) for c in letters]
    if where != sorted(where):       # the reduced axes change order: the index would too
        return None
    return reduce_rule(call, infos, prefer)


def pad_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    have = infos[0]
    attrs: Any = call.attrs
    if isinstance(have, Laid) and _blocked(have) and attrs.pad_width is not None:
        # TVM's PadInferCorrectLayout: no padding along a split axis; sub-axes unpadded
        if any(any(attrs.pad_width[have.old.index(a)]) for a in split_axes(have.new)):
            return None
        width = tuple(tuple(attrs.pad_width[have.old.index(a)]) if a.isupper() else (0, 0)
                      for a in axis_letters(have.new))
        return Plan(dataclasses.replace(attrs, pad_width=width), (have, None), have)
    if any(_blocked(i) for i in (infos[0] if isinstance(infos[0], tuple) else infos[:1])):
        return None          # follows plain layouts only
    if not isinstance(have, Laid) or attrs.pad_width is None:
        return None
    width = tuple(attrs.pad_width[have.old.index(c)] for c in have.new)
    return Plan(dataclasses.replace(attrs, pad_width=width), (have, None), have)


def transpose_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    if any(_blocked(i) for i in (infos[0] if isinstance(infos[0], tuple) else infos[:1])):
        return None          # follows plain layouts only
    have = infos[0]
    attrs: Any = call.attrs
    if not isinstance(have, Laid):
        return None
    rank = len(have.old)
    axes = attrs.axes if attrs.axes else tuple(reversed(range(rank)))
    # Output axis i is original axis axes[i], which the converted input holds at:
    new_axes = tuple(have.new.index(have.old[a + rank if a < 0 else a]) for a in axes)
    if new_axes == tuple(range(rank)):
        return Plan(attrs, (have,), None, forward=0)
    return Plan(dataclasses.replace(attrs, axes=new_axes), (have,), None)


def layout_transform_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    if any(_blocked(i) for i in (infos[0] if isinstance(infos[0], tuple) else infos[:1])):
        return None          # follows plain layouts only
    have = infos[0]
    attrs: Any = call.attrs
    if not (isinstance(have, Laid) and attrs.src_layout == have.old
            and is_plain(attrs.dst_layout) and sorted(attrs.dst_layout) == sorted(have.new)):
        return None
    # The converted input already is the original's result, laid out in `have.new`.
    return Plan(attrs, (have,), laid(attrs.dst_layout, have.new), forward=0)


def spatial_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """Ops with a `layout` attribute over their first input (image.resize2d): the
    preferred layout, else their input's."""
    return _layout_attr_plan(call, infos, prefer, follow=True)


def roi_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """vision.roi_align: the preferred layout, else its own (TVM's ROIAlign layout
    inference does not follow its input); the regions of interest keep theirs."""
    return _layout_attr_plan(call, infos, prefer, follow=False)


def upsampling_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """nn.upsampling, nn.upsampling3d and their dyn twins (TVM's
    UpsamplingInferCorrectLayout): follow the input's new layout, blocked ones included
    (NCHW16c), when its H and W (and D) sit where the op's own layout has them and are
    not split; else keep their own layout (the input gets it back). The other inputs of
    the dyn ops (scales) are scalars."""
    attrs: Any = call.attrs
    have = infos[0]
    layout = attrs.layout
    if isinstance(have, Laid) and have.old == attrs.layout:
        own, new = axis_letters(attrs.layout), axis_letters(have.new)
        spatial = [a for a in "DHW" if a in own]
        if all(a in new and new.index(a) == own.index(a) and a.lower() not in new
               for a in spatial):
            layout = have.new
    new_attrs = dataclasses.replace(attrs, layout=layout)
    wants = (Laid(attrs.layout, layout), *(None for _ in call.args[1:]))
    return Plan(new_attrs, wants, laid(attrs.layout, layout))


def _layout_attr_plan(call: Call, infos: list[Info], prefer: Prefer,
                      follow: bool) -> Plan | None:
    attrs: Any = call.attrs
    chosen, have = prefer(call), infos[0]
    if _blocked(have) or not is_plain(attrs.layout):
        return None
    if chosen is not None:
        layout = chosen[0]
    elif follow and isinstance(have, Laid) and have.old == attrs.layout:
        layout = have.new
    else:
        layout = attrs.layout
    new_attrs = dataclasses.replace(attrs, layout=layout)
    wants = (Laid(attrs.layout, layout), *(None for _ in call.args[1:]))
    return Plan(new_attrs, wants, laid(attrs.layout, layout))


def _follows_plain(infos: list[Info]) -> Laid | None:
    """The first argument's fact when it is a plain conversion (the rules below follow
    nothing else)."""
    have = infos[0]
    return have if isinstance(have, Laid) and not _blocked(have) else None


def _moved(have: Laid, axis: int) -> int:
    """`axis` of the original layout as a (non-negative) axis of the new one, as TVM
    gives it."""
    rank = len(have.old)
    return have.new.index(have.old[axis + rank if axis < 0 else axis])


def axes_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """nn.l2_normalize: follows, each of its axes renumbered (in the given order)."""
    have = _follows_plain(infos)
    attrs: Any = call.attrs
    if have is None or attrs.axis is None:
        return None
    axes = tuple(_moved(have, a) for a in attrs.axis)
    return Plan(dataclasses.replace(attrs, axis=axes), (have,), have)


def slice_like_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """Follows when both inputs are converted the same way (TVM's
    SliceLikeInferCorrectLayout), its axes renumbered."""
    have = _follows_plain(infos)
    attrs: Any = call.attrs
    if have is None or infos[1] != have:
        return None
    axes = tuple(_moved(have, a) for a in attrs.axes) if attrs.axes else attrs.axes
    return Plan(dataclasses.replace(attrs, axes=axes), (have, have), have)


def strided_slice_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """Follows (TVM's StridedSliceInferCorrectLayout): with `axes`, they are renumbered;
    without, begin/end/strides are completed to every axis (0, the extent, 1) and
    permuted."""
    have = _follows_plain(infos)
    attrs: Any = call.attrs
    if have is None or attrs.begin is None or attrs.end is None:
        return None
    if attrs.axes is not None:
        axes = tuple(_moved(have, a) for a in attrs.axes)
        return Plan(dataclasses.replace(attrs, axes=axes), (have,), have)
    shape = call.args[0].checked_type.shape
    size = attrs.slice_mode == "size"
    strides = () if size or attrs.strides is None else tuple(attrs.strides)
    begin, end, step = [], [], []
    for c in have.new:
        i = have.old.index(c)
        if i >= len(attrs.end) and not isinstance(shape[i], int):
            return None
        begin.append(attrs.begin[i] if i < len(attrs.begin) else 0)
        end.append(attrs.end[i] if i < len(attrs.end) else (-1 if size else shape[i]))
        step.append(strides[i] if i < len(strides) else 1)
    new_attrs = dataclasses.replace(attrs, begin=tuple(begin), end=tuple(end),
                                    strides=tuple(step))
    return Plan(new_attrs, (have,), have)


def squeeze_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """Follows with its axes renumbered (all unit axes, when none are given, named
    explicitly, as TVM); the result's layout drops the squeezed axes."""
    have = _follows_plain(infos)
    attrs: Any = call.attrs
    if have is None:
        return None
    rank = len(have.old)
    if attrs.axis is None:
        old_axes = [i for i, d in enumerate(call.args[0].checked_type.shape) if d == 1]
    else:
        old_axes = [a + rank if a < 0 else a for a in attrs.axis]
    gone = {have.old[a] for a in old_axes}
    axes = tuple(have.new.index(have.old[a]) for a in old_axes)
    old = "".join(c for c in have.old if c not in gone)
    new = "".join(c for c in have.new if c not in gone)
    return Plan(dataclasses.replace(attrs, axis=axes), (have,), laid(old, new) if old else None)


def split_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """Follows, its axis renumbered; every part in the new layout. Along a blocked axis
    (C of NCHW4c) the split points count blocks, so each must be a whole number of them
    (TVM's SplitInferCorrectLayout)."""
    have, ty, attrs = infos[0], call.checked_type, call.attrs
    if not isinstance(have, Laid) or not isinstance(ty, TupleType):
        return None
    rank = len(have.old)
    letter = have.old[attrs.axis + rank if attrs.axis < 0 else attrs.axis]  # type: ignore
    factor = split_axes(have.new).get(letter)
    sections: Any = attrs.indices_or_sections  # type: ignore[union-attr]
    if factor:
        extent = call.args[0].checked_type.shape[have.old.index(letter)]
        if isinstance(sections, int):
            if not isinstance(extent, int) or extent % (factor * sections):
                return None
        elif any(i % factor for i in sections):
            return None
        else:
            sections = tuple(i // factor for i in sections)
    attrs = dataclasses.replace(attrs, axis=axis_letters(have.new).index(letter),
                                indices_or_sections=sections)
    return Plan(attrs, (have,), tuple(have for _ in ty.fields))


def topk_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """Follows, its axis renumbered; values and indices in the new layout."""
    have = _follows_plain(infos)
    if have is None:
        return None
    ty = call.checked_type
    attrs = dataclasses.replace(call.attrs, axis=_moved(have, call.attrs.axis))  # type: ignore
    return Plan(attrs, (have,),
                tuple(have for _ in ty.fields) if isinstance(ty, TupleType) else have)


def _scalar(expr: Any) -> bool:
    ty = expr.checked_type
    return isinstance(ty, TensorType) and len(ty.shape) == 0


def qnn_requantize_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """qnn.requantize (TVM's RequantizeInferCorrectLayout): follows its input, `axis`
    renumbered (non-negative, as TVM sets it); a blocked input only with per-tensor
    scales and zero points (or an unsplit axis)."""
    have = infos[0]
    if not isinstance(have, Laid):
        return None
    rank = len(have.old)
    if rank == 0:
        return None
    axis = call.attrs.axis  # type: ignore[union-attr]
    letter = have.old[axis + rank if axis < 0 else axis]
    if _blocked(have) and letter in split_axes(have.new) \
            and not all(_scalar(a) for a in call.args[1:3]):
        return None
    new_axis = axis_letters(have.new).index(letter)
    attrs = dataclasses.replace(call.attrs, axis=new_axis)  # type: ignore[arg-type]
    return Plan(attrs, (have, None, None, None, None), have)


def qnn_broadcast_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    """qnn.add, qnn.subtract, qnn.mul (TVM's QnnBinaryBroadcastLayout): the broadcast rule
    over lhs and rhs; scales and zero points stay as they are. Per-channel ones follow
    a plain conversion of a full-rank operand with its axis renumbered (else an edge)."""
    plan = broadcast_rule(call, infos[:2], prefer, args=call.args[:2])
    if plan is None:
        return None
    attrs: Any = call.attrs
    changes: dict[str, int] = {}
    for k, (side, want) in enumerate(zip(("lhs", "rhs"), plan.wants)):
        if all(_scalar(a) for a in call.args[2 + 2 * k:4 + 2 * k]):
            continue
        rank = _rank(call.args[k])
        if not isinstance(want, Laid) or _blocked(want) or rank is None \
                or len(want.old) != rank or rank <= 1:
            if isinstance(want, Laid) and want.old != want.new:
                return None
            continue
        changes[f"{side}_axis"] = _moved(want, getattr(attrs, f"{side}_axis"))
    new_attrs = dataclasses.replace(attrs, **changes) if changes else attrs
    return Plan(new_attrs, (*plan.wants, *(None,) * 6), plan.output)


# layout kind (OpDef.layout) -> its rule
LAYOUT_RULES: dict[str, Rule] = {
    "qnn_requantize": qnn_requantize_rule,
    "qnn_broadcast": qnn_broadcast_rule,
    "conv": conv_rule,
    "pool": pool_rule,
    "elemwise": elemwise_rule,
    "broadcast": broadcast_rule,
    "axis": axis_rule,
    "reduce": reduce_rule,
    "arg_reduce": arg_reduce_rule,
    "concatenate": concatenate_rule,
    "pad": pad_rule,
    "transpose": transpose_rule,
    "layout_transform": layout_transform_rule,
    "spatial": spatial_rule,
    "upsampling": upsampling_rule,
    "roi": roi_rule,
    "axes": axes_rule,
    "slice_like": slice_like_rule,
    "strided_slice": strided_slice_rule,
    "squeeze": squeeze_rule,
    "split": split_rule,
    "topk": topk_rule,
}


def ops_of_kind(kind: str) -> tuple[str, ...]:
    """The registered ops of layout kind `kind`, in registration order."""
    return tuple(d.name for d in all_ops() if d.layout == kind)


RULES: dict[str, Rule] = {d.name: LAYOUT_RULES[d.layout] for d in all_ops()
                          if d.layout is not None}
DEFAULT_LEVEL = 10
_LEVELS: dict[str, int] = dict.fromkeys(RULES, DEFAULT_LEVEL)


def _check_rule(op_name: str, rule: Any) -> None:
    if get_op_def(op_name) is None:
        raise ValueError(f"cannot register a layout rule for `{op_name}`: no such operator")
    if rule is not None and not callable(rule):
        raise TypeError(f"the layout rule of `{op_name}` must be callable, not {rule!r}")


def register_infer_correct_layout(op_name: str, rule: Rule | None = None,
                                  level: int = DEFAULT_LEVEL) -> Any:
    """Register `rule(call, infos, prefer) -> Plan | None` as `op_name`'s layout rule in
    ConvertLayout and AlterOpLayout (TVM's `register_infer_correct_layout`; a decorator
    when `rule` is omitted). `call` is the original typed call, `infos` the facts of its
    rewritten arguments (`Laid` or None), `prefer` the pass's wishes; None leaves the
    call as it is, an edge. As in TVM, a registration replaces one of a lower level, is
    ignored under one of a higher level, and is an error at the same level (the built-in
    rules are level 10); an op without a layout kind gets the rule."""
    if rule is None:
        return lambda r: register_infer_correct_layout(op_name, r, level)
    _check_rule(op_name, rule)
    old = _LEVELS.get(op_name)
    if old == level:
        raise ValueError(f"`{op_name}` already has a layout rule at level {level}: register "
                         "at a higher level to replace it, or use temp_infer_correct_layout "
                         "for a block")
    if old is None or old < level:
        RULES[op_name], _LEVELS[op_name] = rule, level
    return rule


@contextlib.contextmanager
def temp_infer_correct_layout(op_name: str, rule: Rule | None) -> Iterator[None]:
    """`op_name`'s layout rule is `rule` inside the block (None: it has none, an edge),
    the former one (and its level) again after it."""
    _check_rule(op_name, rule)
    old = RULES.pop(op_name, None), _LEVELS.pop(op_name, None)
    if rule is not None:
        RULES[op_name], _LEVELS[op_name] = rule, DEFAULT_LEVEL
    try:
        yield
    finally:
        RULES.pop(op_name, None)
        _LEVELS.pop(op_name, None)
        if old[0] is not None:
            RULES[op_name] = old[0]
        if old[1] is not None:
            _LEVELS[op_name] = old[1]

# The ops `desired_layouts` may name: they take the layouts a pass prefers.
CONV_OPS: tuple[str, ...] = ops_of_kind("conv")
POOL_OPS: tuple[str, ...] = ops_of_kind("pool") + ops_of_kind("spatial") + ops_of_kind("roi")
