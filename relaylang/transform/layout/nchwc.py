"""AlterOpLayout's channel-blocked convolutions for the llvm target (TVM's x86
`_alter_conv2d_layout` in python/tvm/topi/x86/conv2d_alter_op.py): `nn.conv2d` (NCHW
data, OIHW weight, one group) becomes `nn.contrib_conv2d_NCHWc` with data NCHW{ic}c,
weight OIHW{ic}i{oc}o and output NCHW{oc}c; the followers (add, relu, pools, ...) keep
the blocked layout (rules.py), so consecutive convolutions exchange blocked tensors and
`layout_transform` appears only at the edges of the converted region (and on the
weights, which FoldConstant pre-transforms when they are constants).

Blocks: the output block `oc` is the largest of `OUT_BLOCKS` dividing the output
channels (the LLVM kernel's vector tile: 64 float32 are four AVX-512 accumulators per
output pixel, six pixels a register tile; conv_nchwc_lowering.py); the input block is
the producer's output block when the data arrives blocked (no transform between two
convolutions), else the largest of `OUT_BLOCKS` dividing the input channels, else all of
them when there are at most 64 (an RGB input: NCHW3c). A convolution none of these fit
stays `nn.conv2d` in NCHW. Measured (one core, one layer with bias + relu, ms; NCHW
blocked kernel against NCHWc with blocks of 64 / 32 / 16): 1x1 64->256 56x56 0.71 against
0.54 / 0.53 / 0.63; 3x3 64->64 56x56 1.19 against 1.10 / 1.12 / 1.28; 1x1 2048->512 7x7
1.32 against 0.59 / 0.62 / 0.70; 3x3 512->512 7x7 2.73 against 1.40 / 1.35 / 1.55.
ResNet-50 b1 in rl.build (benchmarks/llvm.py --only ort-resnet50, one thread, the same
session, a loaded machine): 60.9 ms without the alteration (1.36x onnxruntime), 51.9 to
55.7 ms with it (1.19x to 1.26x); every convolution of it is converted, with two
transforms in the whole network (the input to NCHW3c, the pooled result back to NCHW).

Depthwise convolutions (groups == channels, one output channel per group) become
`nn.contrib_depthwise_conv2d_NCHWc` (TVM's x86 alteration of depthwise_conv2d_NCHWc):
data and output NCHW{c}c with one block, the producer's when the data arrives blocked,
else the largest of `OUT_BLOCKS`; weight OIHW1i{c}o. They count as convolutions of a
region, so a MobileNet (depthwise + BN + relu + pointwise + BN + relu, repeated) is one
region with a transform at each end only. Measured (depthwise 3x3 + bias + clip, one
thread, ms, NCHW kernel against blocked by 16, a lightly loaded machine): 32x112x112
0.338 / 0.200, 64x112x112 /2 0.309 / 0.169, 128x56x56 0.303 / 0.162, 128x56x56 /2 0.155
/ 0.061, 256x28x28 0.152 / 0.096. MobileNet b1 (benchmarks/llvm.py --only ort-mobilenet,
the ratio to onnxruntime, a loaded machine): 1.42x (one thread) / 1.40x (two) with the
depthwise convolutions NCHW, 1.01-1.07x / 0.4-0.8x (onnxruntime's two threads suffer
most from the load) with them converted.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from ...ir.expr import Call, Op
from ...ir.types import TensorType
from .rewrite import Info, Laid, Plan, split_axes

NCHWC = "NCHWc"                # the preference's marker: blocks are chosen per call
NCHWC_OP = "nn.contrib_conv2d_NCHWc"
DEPTHWISE_OP = "nn.contrib_depthwise_conv2d_NCHWc"
OUT_BLOCKS = (64, 32, 16, 8)
MAX_WHOLE_INPUT_BLOCK = 64     # an input with fewer channels than a block: one block
# A reduction this short (input channels x window: MNIST's 1 x 5 x 5, an RGB 3 x 3 x 3)
# does not make a region worth converting: one block of 1-3 input channels cannot keep
# a vector tile busy, and the NCHW kernel has a direct form made for it
# (conv_lowering._DIRECT_REDUCTION). Such a convolution still joins a region the others
# make worth converting (`worth_converting`). Longer ones count, such as a MobileNet's
# first pointwise 32->64 (32), which when it did not (the bound was 32) left the first
# depthwise alone and the region starting at 64x112x112 behind a costly transform.
# Measured (benchmarks ort-mobilenet's model, ratio to onnxruntime interleaved in one
# process, one thread, a loaded machine): bound 32 1.39x; 27 1.10-1.13x; 27 with the
# RGB stem joining the region (NCHW3c: the transform is of the 3x224x224 input instead
# of the 32x112x112 result) 1.07x.
SHORT_REDUCTION = 27


# The largest block the blocks are chosen from, a pass-context option: which of 64 and 32
# is faster changes from layer to layer and host to host (the figures above), so
# `relay tune` measures the model with each (backend/tuning/layouts.py) and a tuning
# database sets it for a build; 64 when nothing does.
MAX_BLOCK_CONFIG = "relay.AlterOpLayout.nchwc_max_block"
MAX_BLOCK_CHOICES = (64, 32, 16)


def max_block() -> int:
    """The pass context's MAX_BLOCK_CONFIG (64 when unset or not one of the choices)."""
    from ..pass_infra import PassContext
    value = PassContext.current().config.get(MAX_BLOCK_CONFIG, OUT_BLOCKS[0])
    try:
        value = int(value)
    except (TypeError, ValueError):
        return OUT_BLOCKS[0]
    return value if value in MAX_BLOCK_CHOICES else OUT_BLOCKS[0]


def _block(channels: int) -> int:
    cap = max_block()
    return next((k for k in OUT_BLOCKS if k <= cap and channels % k == 0), 0)


def _static(ty: Any) -> bool:
    return isinstance(ty, TensorType) and all(isinstance(d, int) for d in ty.shape)


def _plain_float_conv(call: Call) -> bool:
    """A conv2d in NCHW/OIHW with static float shapes (data and weight of one dtype)."""
    if not (isinstance(call.op, Op) and call.op.name == "nn.conv2d"):
        return False
    attrs: Any = call.attrs
    if (attrs.data_layout, attrs.kernel_layout) != ("NCHW", "OIHW") \
            or attrs.out_layout not in ("", "NCHW"):
        return False
    data, weight = (a.checked_type for a in call.args)
    if not (_static(data) and _static(weight) and _static(call.checked_type)):
        return False
    return str(data.dtype) in ("float32", "float16", "float64") and data.dtype == weight.dtype


def depthwise(call: Call) -> bool:
    """Whether `call` is a depthwise conv2d the blocked depthwise kernel computes
    (nn.contrib_depthwise_conv2d_NCHWc, depthwise_nchwc_lowering.py): NCHW/OIHW, one
    group per channel and one output channel per group (channel multiplier 1), static
    float shapes, channels a multiple of 8."""
    if not _plain_float_conv(call):
        return False
    attrs: Any = call.attrs
    data, weight = (a.checked_type for a in call.args)
    channels = data.shape[1]
    return (channels > 1 and attrs.groups == channels and weight.shape[0] == channels
            and weight.shape[1] == 1 and bool(_block(channels)))


def convertible(call: Call, short: bool = False) -> bool:
    """Whether `call` is a conv2d a blocked kernel computes: depthwise (`depthwise`), or
    NCHW/OIHW, one group, static float shapes, output channels a multiple of 8, a
    reduction longer than SHORT_REDUCTION (any length with `short`: a member of a
    region that other convolutions make worth converting, see `worth_converting`)."""
    if depthwise(call):
        return True
    if not _plain_float_conv(call) or call.attrs.groups != 1:  # type: ignore[union-attr]
        return False
    data, weight = (a.checked_type for a in call.args)
    channels = data.shape[1]
    if channels * weight.shape[2] * weight.shape[3] <= SHORT_REDUCTION and not short:
        return False
    return bool(_block(weight.shape[0])) and (
        bool(_block(channels)) or 0 < channels <= MAX_WHOLE_INPUT_BLOCK)


# A region of convolutions and the ops that follow their layout (elementwise,
# broadcast, pools) is converted only when it holds at least this many convertible
# convolutions: one alone pays two data transforms for nothing. Measured (one thread,
# ms, NCHW against converted): conv3x3/s2 + BN + ReLU alone 0.69 against 0.87; a
# MobileNet-style net when its depthwise convolutions stayed NCHW and so isolated each
# pointwise one, 12.8 against 39 (depthwise ones now convert, `depthwise`, and join the
# region: a MobileNet block is one region with the blocks it feeds).
MIN_REGION_CONVS = 2
FOLLOWER_KINDS = ("elemwise", "broadcast", "pool")


@dataclasses.dataclass(frozen=True)
class BlockedConvLayouts:
    """AlterOpLayout's preferences for the llvm target (the interface of
    DesiredLayouts: `entries` and `prefer`; `for_function` narrows them to one
    function's regions worth converting)."""

    entries: tuple = (("nn.conv2d", (NCHWC, "OIHWio")),)
    chosen: frozenset[int] | None = None      # ids of the calls to convert (None: any)

    def prefer(self, call: Call) -> tuple[str, ...] | None:
        if (convertible(call) if self.chosen is None
                else id(call) in self.chosen and convertible(call, short=True)):
            return (NCHWC, "OIHWio")
        return None

    def for_function(self, fn: Any) -> BlockedConvLayouts:
        return dataclasses.replace(self, chosen=frozenset(worth_converting(fn)))


def worth_converting(fn: Any) -> list[int]:
    """ids of the convertible convolutions of `fn` in regions of at least
    MIN_REGION_CONVS of them. A region: convolutions joined through their data inputs
    and through the ops that follow a blocked layout (a residual add joins two). A
    convolution convertible but for its short reduction (an RGB stem, 3 x 3 x 3) joins
    a region without counting towards it: converted where the region is, it saves the
    transform of its output (32x112x112 in a MobileNet) for one of its input
    (3x224x224), and alone, or with one other convolution, it stays NCHW."""
    from ...ir.normal_forms import opaque_children
    from ...ir.traverse import post_order
    from ...op import get_op_def
    parent: dict[int, int] = {}

    def find(a: int) -> int:
        root = a
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(a, a) != root:
            parent[a], a = root, parent[a]
        return root

    def union(a: int, c: int) -> None:
        parent[find(a)] = find(c)

    def kind(e: Any) -> str | None:
        if not (isinstance(e, Call) and isinstance(e.op, Op)):
            return None
        if convertible(e):
            return "conv"
        if convertible(e, short=True):
            return "short"
        d = get_op_def(e.op.name)
        return "follow" if d is not None and d.layout in FOLLOWER_KINDS else None
    convs: list[Call] = []
    for node in post_order(fn, opaque_children):
        k = kind(node)
        if k is None:
            continue
        parent.setdefault(id(node), id(node))
        args = node.args[:1] if k in ("conv", "short") else node.args
        if k in ("conv", "short"):
            convs.append(node)
        for a in args:
            if kind(a) is not None:
                parent.setdefault(id(a), id(a))
                union(id(node), id(a))
    count: dict[int, int] = {}
    for c in convs:
        count[find(id(c))] = count.get(find(id(c)), 0) + int(convertible(c))
    return [id(c) for c in convs if count[find(id(c))] >= MIN_REGION_CONVS]


def _producer_block(channels: int, have: Info) -> int:
    """The channel block of data arriving blocked (NCHW{k}c, k dividing `channels`),
    else 0."""
    if isinstance(have, Laid) and have.old == "NCHW":
        k = split_axes(have.new).get("C", 0)
        if k and channels % k == 0 and have.new == f"NCHW{k}c":
            return k
    return 0


def nchwc_plan(call: Call, infos: list[Info]) -> Plan | None:
    """The conv2d `call` as nn.contrib_conv2d_NCHWc, or a depthwise one as
    nn.contrib_depthwise_conv2d_NCHWc (module docstring)."""
    attrs: Any = call.attrs
    data, weight = (a.checked_type for a in call.args)
    channels, out_channels = data.shape[1], weight.shape[0]
    if depthwise(call):
        # one block for data, weight and output: the producer's, else the largest of
        # OUT_BLOCKS (the next convolution then reads it as it is)
        k = _producer_block(channels, infos[0]) or _block(channels)
        new_attrs = dataclasses.replace(attrs, data_layout=f"NCHW{k}c",
                                        kernel_layout=f"OIHW1i{k}o", out_layout=f"NCHW{k}c")
        wants = (Laid("NCHW", f"NCHW{k}c"), Laid("OIHW", f"OIHW1i{k}o"))
        return Plan(new_attrs, wants, Laid("NCHW", f"NCHW{k}c"), op=DEPTHWISE_OP)
    ic = _producer_block(channels, infos[0]) or _block(channels) or channels
    oc = _block(out_channels)
    if not oc:
        return None
    new_attrs = dataclasses.replace(attrs, data_layout=f"NCHW{ic}c",
                                    kernel_layout=f"OIHW{ic}i{oc}o", out_layout=f"NCHW{oc}c")
    wants = (Laid("NCHW", f"NCHW{ic}c"), Laid("OIHW", f"OIHW{ic}i{oc}o"))
    return Plan(new_attrs, wants, Laid("NCHW", f"NCHW{oc}c"), op=NCHWC_OP)
