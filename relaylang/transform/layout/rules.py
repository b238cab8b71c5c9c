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
  elemwise       (unary ops, clip, cast, nn.relu, ...) follow their input.
  broadcast      (add, multiply, where, ...) follow the first operand of full rank;
                 a lower-rank operand is converted by the matching tail of the
                 layouts (bias (C, 1, 1): CHW -> HWC), an all-ones one is left alone.
  axis           (nn.bias_add, nn.prelu, nn.batch_norm, softmaxes, nn.lrn)
                 follow, with `axis` renumbered.
  reduce         follow, with `axis` renumbered; without keepdims the result's
                 layout drops the reduced axes (NHWC mean over HW is NC: no edge).
  arg_reduce     (argmax, argmin) as reduce, when reducing over one axis.
  concatenate    follows its first converted field, with `axis` renumbered.
  pad            (nn.pad) follows, its pad_width permuted.
  transpose      absorbs the conversion: its axes are composed with it, so its
                 result is in the original layout (an identity transpose vanishes).
  layout_transform  of a converted value from its original layout is the value itself.

Every op without a kind is an edge: its arguments get their original layouts back.

Blocked layouts (NCHW16c: AlterOpLayout's nn.contrib_conv2d_NCHWc for llvm, nchwc.py)
are followed by elemwise, broadcast (a lower-rank operand is transformed over the
matching tail, CHW -> CHW16c; an operand broadcast along a split axis is an edge, a
transform would pad it with zeros), pool (pooled axes unsplit) and axis ops whose axis
is not split; the other kinds follow plain layouts only.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ...ir.expr import Call, Tuple
from ...ir.types import TensorType, TupleType
from ...op import all_ops
from .nchwc import NCHWC, nchwc_plan
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
    wants = (Laid(attrs.data_layout, data), Laid(attrs.kernel_layout, kernel))
    return Plan(new_attrs, wants, laid(out_old, out_new))


def pool_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    attrs: Any = call.attrs
    chosen, have = prefer(call), infos[0]
    if _blocked(have):
        # follow a channel-blocked input (NCHW16c): the pools' relations and kernels take
        # any layout whose pooled axes are not split
        if not (have.old == attrs.layout and attrs.out_layout in ("", attrs.layout)
                and is_plain(attrs.layout)
                and not set(split_axes(have.new)) & set(attrs.layout) - {"N", "C"}):
            return None
        new_attrs = dataclasses.replace(attrs, layout=have.new)
        return Plan(new_attrs, (have,), have)
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
    return Plan(new_attrs, (Laid(attrs.layout, new_attrs.layout),), laid(out_old, out_new))


# ---------------------------------------------------------------- followers


def elemwise_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    have = infos[0]
    if not isinstance(have, Laid):
        return None
    return Plan(call.attrs, (have, *infos[1:]), have)


def broadcast_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    rank = _rank(call)
    lead = next((i for i in infos if isinstance(i, Laid) and len(i.old) == rank), None)
    if lead is None:
        return None
    out_ty = call.checked_type
    splits = split_axes(lead.new)
    full = dict(zip(lead.old, out_ty.shape)) if isinstance(out_ty, TensorType) else {}
    wants: list[Info] = []
    for arg, have in zip(call.args, infos):
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
        return None          # follows plain layouts only
    fields = infos[0]
    if not (isinstance(call.args[0], Tuple) and isinstance(fields, tuple)):
        return None
    lead = next((i for i in fields if isinstance(i, Laid)), None)
    if lead is None:
        return None
    attrs = dataclasses.replace(call.attrs, axis=_renumber(call.attrs.axis, lead))  # type: ignore
    return Plan(attrs, (tuple(Laid(lead.old, lead.new) for _ in fields),), lead)


def reduce_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
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
    if attrs.exclude or attrs.axis is None or len(attrs.axis) != 1:
        return None
    return reduce_rule(call, infos, prefer)


def pad_rule(call: Call, infos: list[Info], prefer: Prefer) -> Plan | None:
    if any(_blocked(i) for i in (infos[0] if isinstance(infos[0], tuple) else infos[:1])):
        return None          # follows plain layouts only
    have = infos[0]
    attrs: Any = call.attrs
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


# layout kind (OpDef.layout) -> its rule
LAYOUT_RULES: dict[str, Rule] = {
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
}


def ops_of_kind(kind: str) -> tuple[str, ...]:
    """The registered ops of layout kind `kind`, in registration order."""
    return tuple(d.name for d in all_ops() if d.layout == kind)


RULES: dict[str, Rule] = {d.name: LAYOUT_RULES[d.layout] for d in all_ops()
                          if d.layout is not None}
# The ops `desired_layouts` may name: they take the layouts a pass prefers.
CONV_OPS: tuple[str, ...] = ops_of_kind("conv")
POOL_OPS: tuple[str, ...] = ops_of_kind("pool")
