"""AlterOpLayout: compute ops in the layouts the target's kernels prefer
(TVM's src/relay/transforms/alter_op_layout.cc).

TVM asks each op's `FTVMAlterOpLayout` function for a replacement of every call of the
op and then repairs layouts like ConvertLayout. Here too, an op's alter function is
looked up in a registry (`register_alter_op_layout`, TVM's
`relay.op.register_alter_op_layout`; `temp_alter_op_layout` for a `with` block, TVM's
`TempOpAttr(op, "FTVMAlterOpLayout", fn)`) and the repair is the machinery ConvertLayout
uses (`rewrite.py`, `rules.py`).

An alter function is `fn(attrs, inputs, types, out_type)`, as in TVM: the call's
attributes, its arguments as rewritten so far (a producer already altered hands over its
value in the new layout), the arguments' original types and the call's type. It returns
the replacement, a call of an operator with as many arguments, or None to leave the call
alone. The layouts the replacement reads and writes are those of its attributes
(`data_layout`/`kernel_layout`/`out_layout` of the convolutions, `layout`/`out_layout`
of pools, upsampling and resizes); each argument is brought from the layout its producer
left it in to the one the replacement reads (`layout_transform`, shared and cancelled as
everywhere in `rewrite.py`), and the result's layout flows on through the ops that
follow layouts, back to the original layout at the edges (TVM's `LayoutRewriter`):

    with rl.transform.temp_alter_op_layout("nn.conv2d", to_nchw16c):   # returns a conv in NCHW16c
        AlterOpLayout()(mod)

    %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);   %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
    %1 = nn.relu(%0);                        ==>    %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW16i16o");
    nn.max_pool2d(%1, pool_size=[2, 2])             %2 = nn.contrib_conv2d_NCHWc(%0, %1, padding=[1, 1, 1, 1], data_layout="NCHW16c", ...);
                                                    %3 = nn.relu(%2);
                                                    %4 = nn.max_pool2d(%3, pool_size=[2, 2], layout="NCHW16c");
                                                    layout_transform(%4, src_layout="NCHW16c", dst_layout="NCHW")

Registered functions apply whatever the target. The built-in alteration, registered for
nn.conv2d at level 10 (TVM's level for its `alter_op_layout_conv2d`), is the target's
table `TARGET_LAYOUTS`: registering a function for nn.conv2d at a higher level, or for a
`with` block, replaces it, as a registration replaces TVM's topi dispatch. The tables:

  llvm    as TVM on x86: nn.conv2d becomes nn.contrib_conv2d_NCHWc, data in blocks of
          channels (NCHW{ic}c), weights OIHW{ic}i{oc}o (FoldConstant pre-transforms
          constant weights), the output NCHW{oc}c, blocks chosen per convolution
          (`nchwc.py`: the output block the largest of 64/32/16/8 dividing the channels,
          the input block the producer's). Bias adds, relu, clip, residual adds and pools
          follow the blocked layout, so consecutive convolutions exchange blocked
          tensors; only regions of at least two such convolutions are converted (one
          alone is not worth its two transforms). Depthwise convolutions (one group per
          channel) become nn.contrib_depthwise_conv2d_NCHWc in their producer's block,
          so a MobileNet chain is one region; a short-reduction convolution (an RGB
          stem) joins a region others make worth converting but does not start one;
          grouped or non-float convolutions stay NCHW. NHWC (HWIO weights) stays available
          through ConvertLayout{desired_layouts=nn.conv2d:NHWC}.
  interp  nothing: the reference interpreter's convolutions (im2col + matmul) are
          indifferent to layout, and transforms would only add work.

The target is the `target` option (`-p 'AlterOpLayout{target=llvm}'`; "llvm -mcpu=..."
reads as llvm) or else the pass context's `config["target"]`, which a build sets.
With neither, only registered functions apply (none by default): that is how it sits in
`-O3` (optimize.TVM_PIPELINE, opt_level 3 as TVM's), where converting a model for no
particular target would only add layout_transforms at the edges of every converted
region (parameters, weights that are not constants, the result) -- more ops, no gain.

    AlterOpLayout{target=llvm}, weights constant, then FoldConstant (which makes them
    new constants, blocked):
    %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1, 1, 1]);  (x 1x16x8x8, 64 3x3 filters)
    %1 = nn.relu(%0);
    nn.conv2d(%1, meta[relay.Constant][1])                              (64 1x1 filters)
    ==>
    %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
    %1 = nn.contrib_conv2d_NCHWc(%0, meta[relay.Constant][0], padding=[1, 1, 1, 1],
           data_layout="NCHW16c", kernel_layout="OIHW16i64o", out_layout="NCHW64c");
    %2 = nn.relu(%1);
    %3 = nn.contrib_conv2d_NCHWc(%2, meta[relay.Constant][1], data_layout="NCHW64c",
           kernel_layout="OIHW64i64o", out_layout="NCHW64c");
    layout_transform(%3, src_layout="NCHW64c", dst_layout="NCHW")

`rl.build` runs it (the build's pass context names its target, backend/build.py).
"""
from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from ...ir.expr import Call, Expr, Function, Op
from ...ir.module import IRModule
from ...op import get_op_def
from ..pass_infra import FunctionPass, PassContext, register_pass
from .desired_layouts import DesiredLayouts
from .nchwc import BlockedConvLayouts
from .rewrite import Info, Laid, Plan, Rule, is_plain, laid, rewrite_layouts
from .rules import RULES

TARGET_LAYOUTS: dict[str, DesiredLayouts | BlockedConvLayouts] = {
    "llvm": BlockedConvLayouts(),
    "interp": DesiredLayouts(),
}

# fn(attrs, inputs, types, out_type) -> the replacement call, or None
AlterFn = Callable[[Any, list[Expr], list[Any], Any], "Expr | None"]


class _TargetTable:
    """The built-in alter function: the target's entry of TARGET_LAYOUTS."""

    def __repr__(self) -> str:
        return "<the target's layouts (AlterOpLayout TARGET_LAYOUTS)>"


TARGET_DEFAULT = _TargetTable()
DEFAULT_LEVEL = 10


@dataclass(frozen=True)
class _Entry:
    fn: AlterFn | _TargetTable
    level: int


# op name -> its alter function; the built-in one for every op a target table names
_REGISTRY: dict[str, _Entry] = {
    op: _Entry(TARGET_DEFAULT, DEFAULT_LEVEL)
    for table in TARGET_LAYOUTS.values() for op, _ in table.entries
}


def _check_op(op_name: str) -> None:
    if get_op_def(op_name) is None:
        raise ValueError(f"cannot register an alter function for `{op_name}`: no such "
                         "operator")


def register_alter_op_layout(op_name: str, fn: AlterFn | None = None,
                             level: int = DEFAULT_LEVEL) -> Any:
    """Register `fn(attrs, inputs, types, out_type)` as `op_name`'s alter function (TVM's
    `relay.op.register_alter_op_layout`; also a decorator when `fn` is omitted). As in
    TVM, a registration replaces one of a lower level, is ignored under one of a higher
    level, and is an error at the same level (the built-in for nn.conv2d is level 10)."""
    if fn is None:
        return lambda f: register_alter_op_layout(op_name, f, level)
    _check_op(op_name)
    if not callable(fn):
        raise TypeError(f"the alter function of `{op_name}` must be callable, not {fn!r}")
    old = _REGISTRY.get(op_name)
    if old is not None and old.level == level:
        raise ValueError(f"`{op_name}` already has an alter function at level {level}: "
                         "register at a higher level to replace it, or use "
                         "temp_alter_op_layout for a block")
    if old is None or old.level < level:
        _REGISTRY[op_name] = _Entry(fn, level)
    return fn


@contextlib.contextmanager
def temp_alter_op_layout(op_name: str, fn: AlterFn | None) -> Iterator[None]:
    """`op_name`'s alter function is `fn` inside the block (None: it has none), the former
    one again after it (TVM's `TempOpAttr(op_name, "FTVMAlterOpLayout", fn)`)."""
    _check_op(op_name)
    if fn is not None and not callable(fn):
        raise TypeError(f"the alter function of `{op_name}` must be callable, not {fn!r}")
    old = _REGISTRY.pop(op_name, None)
    if fn is not None:
        _REGISTRY[op_name] = _Entry(fn, DEFAULT_LEVEL)
    try:
        yield
    finally:
        _REGISTRY.pop(op_name, None)
        if old is not None:
            _REGISTRY[op_name] = old


def get_alter_op_layout(op_name: str) -> AlterFn | _TargetTable | None:
    """`op_name`'s alter function: a registered function, TARGET_DEFAULT (the target's
    table decides) or None."""
    entry = _REGISTRY.get(op_name)
    return None if entry is None else entry.fn


def target_kind(target: object) -> str:
    """`llvm` of "llvm -mcpu=skylake", or of a target object's `kind` (TVM's Target)."""
    text = str(getattr(target, "kind", target) or "")
    return text.split()[0] if text.strip() else ""


class AlterError(ValueError):
    """An alter function returned something the pass cannot use."""


@register_pass
@dataclass(frozen=True)
class AlterOpLayout(FunctionPass):
    """Rewrite ops into the layouts `target` prefers, and with the registered alter
    functions (module docstring)."""

    name: ClassVar[str] = "AlterOpLayout"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)
    target: str = ""                 # empty: the context's config["target"], else nothing

    def __post_init__(self) -> None:
        kind = target_kind(self.target)
        if kind and kind not in TARGET_LAYOUTS:
            raise ValueError(f"AlterOpLayout knows no layouts for target `{kind}`; "
                             f"targets: {', '.join(TARGET_LAYOUTS)}")

    def preferences(self, ctx: PassContext) -> DesiredLayouts | BlockedConvLayouts:
        kind = target_kind(self.target or ctx.config.get("target"))
        return TARGET_LAYOUTS.get(kind, DesiredLayouts())

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        if not (self.preferences(ctx).entries or _registered()):
            return mod
        return super().transform_module(mod, ctx)

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        prefs = self.preferences(ctx)
        if isinstance(prefs, BlockedConvLayouts):
            prefs = prefs.for_function(fn)      # only regions worth their transforms
        table = prefs.prefer

        def prefer(call: Call) -> tuple[str, ...] | None:
            # the target's table speaks for the ops whose alter function it is
            assert isinstance(call.op, Op)
            entry = _REGISTRY.get(call.op.name)
            return table(call) if entry is not None and entry.fn is TARGET_DEFAULT else None

        rules = dict(RULES)
        for op, fn_ in _registered().items():
            rules[op] = _alter_rule(fn_, RULES.get(op))
        return rewrite_layouts(fn, rules, prefer, fold_projections=True)


def _registered() -> dict[str, AlterFn]:
    """The registered alter functions (not the built-in table)."""
    return {op: e.fn for op, e in _REGISTRY.items() if not isinstance(e.fn, _TargetTable)}


def _no_preference(call: Call) -> None:
    return None


def _alter_rule(fn: AlterFn, base: Rule | None) -> Rule:
    """The layout rule of an op with a registered alter function: the function's
    replacement, else (it returned None) the op's own rule, as if nothing were preferred."""
    def rule(call: Call, infos: list[Info], prefer: Any) -> Plan | None:
        plan = base(call, infos, _no_preference) if base is not None else None
        if plan is None:                      # an edge: the arguments in their layouts
            plan = Plan(call.attrs, tuple(None for _ in call.args), None)

        def build(values: list[Expr], bring: Callable[[Expr, Info, Info], Expr]
                  ) -> tuple[Expr, Info] | None:
            return _altered(fn, call, infos, values, bring)
        return dataclasses.replace(plan, build=build)
    return rule


def op_layouts(call: Call) -> tuple[tuple[str | None, ...], str] | None:
    """The layouts a call reads (per argument; None: no layout) and writes, from its
    attributes (TVM's FInferCorrectLayout of the anchor ops); None: it names none."""
    attrs: Any = call.attrs
    n = len(call.args)
    if hasattr(attrs, "data_layout") and hasattr(attrs, "kernel_layout"):
        ins: tuple[str | None, ...] = (attrs.data_layout, attrs.kernel_layout)
        out = getattr(attrs, "out_layout", "") or attrs.data_layout
    elif isinstance(getattr(attrs, "layout", None), str):
        ins = (attrs.layout,)
        out = getattr(attrs, "out_layout", "") or attrs.layout
    else:
        return None
    return (ins + (None,) * n)[:n], out


def _primal(layout: str) -> list[str]:
    return sorted(c for c in layout if c.isalpha() and c.isupper())


def _altered(fn: AlterFn, call: Call, infos: list[Info], values: list[Expr],
             bring: Callable[[Expr, Info, Info], Expr]) -> tuple[Expr, Info] | None:
    """The call replaced by what `fn` returns, its arguments brought to the layouts the
    replacement reads (TVM's LayoutRewriter after CallWithNewLayouts); None: `fn`
    returned None."""
    assert isinstance(call.op, Op)
    name = call.op.name
    new = fn(call.attrs, list(values), [a.checked_type for a in call.args],
             call.checked_type)
    if new is None:
        return None
    if not (isinstance(new, Call) and isinstance(new.op, Op)):
        raise AlterError(f"the alter function of `{name}` returned {type(new).__name__}: "
                         "it must return a call of an operator, or None")
    if len(new.args) != len(call.args):
        raise AlterError(f"the alter function of `{name}` returned a call of "
                         f"`{new.op.name}` with {len(new.args)} arguments for "
                         f"{len(call.args)}: the number of inputs must stay the same")
    old, now = op_layouts(call), op_layouts(new)
    if old is None or now is None:            # layouts unknown: the original ones
        args = [bring(a, have, None) for a, have in zip(new.args, infos)]
        return new.with_children([new.op, *args]), None
    (old_in, old_out), (new_in, new_out) = old, now
    for was, becomes in [*zip(old_in, new_in), (old_out, new_out)]:
        if was is not None and becomes is not None and _primal(was) != _primal(becomes):
            raise AlterError(f"the alter function of `{name}` returned layout {becomes} "
                             f"where {was} was: a layout change must keep the axes")
    args = []
    for a, have, was, becomes in zip(new.args, infos, old_in, new_in):
        want = Laid(was, becomes) if was is not None and becomes is not None else None
        args.append(bring(a, have, want))
    value = new.with_children([new.op, *args])
    if not is_plain(old_out):
        # The original result is blocked (NCHW4c): the followers' rules read plain
        # layouts only, so it goes back to its own layout at once.
        return bring(value, laid(old_out, new_out), None), None
    return value, laid(old_out, new_out)
