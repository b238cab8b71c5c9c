"""AlterOpLayout for the llvm target: nn.conv2d -> nn.contrib_conv2d_NCHWc
(transform/layout/nchwc.py), the blocked layout carried through the followers (add with
its (C, 1, 1) bias, relu, clip, multiply, pools), transforms only at the edges, the
blocks chosen per convolution (the input block the producer's), the same values before
and after on the interpreter, and rl.build running it (the interpreter's values)."""
from __future__ import annotations

import numpy as np
import pytest
from pass_helpers import same_value

import relaylang as rl
from relaylang.ir.expr import Call, Op
from relaylang.ir.traverse import post_order
from relaylang.transform import PassContext
from relaylang.transform.layout.alter_op_layout import AlterOpLayout
from relaylang.transform.tvm_pipeline import optimize

HEAD = '#[version = "0.0.5"]\n'


def calls(mod, name):
    return [n for n in post_order(mod["main"])
            if isinstance(n, Call) and isinstance(n.op, Op) and n.op.name == name]


def args_for(mod, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal([int(d) for d in p.checked_type.shape]).astype("float32")
            for p in mod["main"].params]


def altered(text):
    mod = rl.transform.InferType()(rl.parse(text))
    out = AlterOpLayout(target="llvm")(mod)
    args = args_for(mod)
    assert same_value(rl.evaluate(mod, *args), rl.evaluate(out, *args), rtol=1e-5, atol=1e-5)
    assert rl.structural_equal(AlterOpLayout(target="llvm")(out), out)     # idempotent
    return out


NET = HEAD + """def @main(%x: Tensor[(2, 4, 11, 9), float32], %w1: Tensor[(16, 4, 3, 3), float32],
          %b1: Tensor[(16, 1, 1), float32], %w2: Tensor[(64, 16, 3, 3), float32],
          %w3: Tensor[(64, 16, 3, 3), float32], %w4: Tensor[(32, 64, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 0, 1, 1], channels=16, kernel_size=[3, 3]);
  %1 = nn.relu(add(%0, %b1));
  %2 = nn.max_pool2d(%1, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]);
  %3 = nn.conv2d(%2, %w2, strides=[2, 2], padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3]);
  %4 = nn.conv2d(%2, %w3, strides=[2, 2], padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3]);
  %5 = clip(add(%3, %4), a_min=0f, a_max=6f);
  %6 = nn.conv2d(%5, %w4, channels=32, kernel_size=[1, 1]);
  %7 = multiply(%6, 0.5f);
  %8 = nn.avg_pool2d(%7, pool_size=[2, 2], ceil_mode=True);
  nn.global_avg_pool2d(%8)
}
"""


def test_a_region_converts_with_transforms_only_at_its_edges():
    out = altered(NET)
    convs = calls(out, "nn.contrib_conv2d_NCHWc")
    assert not calls(out, "nn.conv2d")
    layouts = sorted((c.attrs.data_layout, c.attrs.kernel_layout, c.attrs.out_layout)
                     for c in convs)
    assert layouts == sorted([("NCHW4c", "OIHW4i16o", "NCHW16c"),
                              ("NCHW16c", "OIHW16i64o", "NCHW64c"),
                              ("NCHW16c", "OIHW16i64o", "NCHW64c"),
                              ("NCHW64c", "OIHW64i32o", "NCHW32c")])
    edges = [(t.attrs.src_layout, t.attrs.dst_layout) for t in calls(out, "layout_transform")]
    data_edges = [e for e in edges if e[0].startswith("NCHW") or e[1] == "NCHW"]
    # in: the input once; out: the result once; none between the convolutions
    assert sorted(data_edges) == [("NCHW", "NCHW4c"), ("NCHW32c", "NCHW")]
    assert ("CHW", "CHW16c") in edges                              # the bias
    pools = calls(out, "nn.max_pool2d") + calls(out, "nn.avg_pool2d") + calls(
        out, "nn.global_avg_pool2d")
    assert sorted(p.attrs.layout for p in pools) == ["NCHW16c", "NCHW32c", "NCHW32c"]


def test_edges_inside_a_region_and_lone_convolutions():
    text = HEAD + """def @main(%x: Tensor[(1, 40, 6, 6), float32], %w: Tensor[(40, 40, 1, 1), float32],
              %s: Tensor[(1, 6, 6), float32], %g: Tensor[(40), float32], %w2: Tensor[(40, 2, 3, 3), float32]) {
      %0 = nn.conv2d(%x, %w, channels=40, kernel_size=[1, 1]);
      %1 = multiply(%0, %s);
      %2 = nn.conv2d(%1, %w, channels=40, kernel_size=[1, 1]);
      %3 = nn.batch_norm(%2, %g, %g, %g, abs(%g));
      %4 = nn.conv2d(%3.0, %w, channels=40, kernel_size=[1, 1]);
      %5 = nn.conv2d(%4, %w2, padding=[1, 1, 1, 1], groups=20, channels=40, kernel_size=[3, 3]);
      %6 = nn.conv2d(%5, %w, channels=40, kernel_size=[1, 1]);
      mean(%6, axis=[1])
    }
    """
    out = altered(text)
    # %0 and %2 are one region (joined by the multiply); %4 and %6 are alone (batch_norm
    # and the grouped convolution, which stays NCHW, are no followers): not worth two
    # transforms each
    assert len(calls(out, "nn.contrib_conv2d_NCHWc")) == 2
    assert len(calls(out, "nn.conv2d")) == 3
    assert calls(out, "nn.batch_norm")[0].attrs.axis == 1
    # the multiply by a C-broadcast operand is an edge inside the region: out and in again
    edges = [(t.attrs.src_layout, t.attrs.dst_layout) for t in calls(out, "layout_transform")
             if t.attrs.src_layout.startswith("NCHW")]
    assert sorted(edges) == [("NCHW", "NCHW8c")] * 2 + [("NCHW8c", "NCHW")] * 2


def test_a_lone_convolution_is_left_alone():
    text = HEAD + """def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(32, 16, 3, 3), float32],
              %b: Tensor[(32, 1, 1), float32]) {
      nn.relu(add(nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3]), %b))
    }"""
    mod = rl.transform.InferType()(rl.parse(text))
    assert rl.structural_equal(AlterOpLayout(target="llvm")(mod), mod)


@pytest.mark.parametrize("decl, call", [
    ("%x: Tensor[(1, 40, 4, 4), float32], %w: Tensor[(12, 40, 1, 1), float32]",
     "nn.conv2d(%x, %w, channels=12, kernel_size=[1, 1])"),                    # 12 outputs
    ("%x: Tensor[(1, 100, 4, 4), float32], %w: Tensor[(16, 100, 1, 1), float32]",
     "nn.conv2d(%x, %w, channels=16, kernel_size=[1, 1])"),                    # 100 inputs
    ("%x: Tensor[(1, 4, 4, 40), float32], %w: Tensor[(1, 1, 40, 16), float32]",
     ('nn.conv2d(%x, %w, channels=16, kernel_size=[1, 1], data_layout="NHWC", '
      'kernel_layout="HWIO")')),
    ("%x: Tensor[(1, 80, 4, 4), float32], %w: Tensor[(16, 40, 1, 1), float32]",
     "nn.conv2d(%x, %w, groups=2, channels=16, kernel_size=[1, 1])"),
    ("%x: Tensor[(1, 40, 4, 4), int32], %w: Tensor[(16, 40, 1, 1), int32]",
     "nn.conv2d(%x, %w, channels=16, kernel_size=[1, 1])"),
    ("%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(16, 3, 3, 3), float32]",
     "nn.conv2d(%x, %w, channels=16, kernel_size=[3, 3])"),                   # 27: short
    ("%x: Tensor[(1, 12, 8, 8), float32], %w: Tensor[(12, 1, 3, 3), float32]",
     "nn.conv2d(%x, %w, groups=12, channels=12, kernel_size=[3, 3])"),       # depthwise, 12
    ("%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(32, 1, 3, 3), float32]",
     "nn.conv2d(%x, %w, groups=16, channels=32, kernel_size=[3, 3])"),       # multiplier 2
])
def test_convolutions_it_leaves_alone(decl, call):
    from relaylang.transform.layout.nchwc import convertible
    mod = rl.transform.InferType()(rl.parse(HEAD + f"def @main({decl}) {{ {call} }}"))
    out = AlterOpLayout(target="llvm")(mod)
    assert rl.structural_equal(out, mod)
    assert not any(convertible(c) for c in calls(mod, "nn.conv2d"))


def test_blocks_follow_the_producer():
    text = HEAD + """def @main(%x: Tensor[(1, 40, 5, 5), float32], %w1: Tensor[(48, 40, 1, 1), float32],
              %w2: Tensor[(128, 48, 1, 1), float32]) {
      nn.conv2d(nn.conv2d(%x, %w1, channels=48, kernel_size=[1, 1]), %w2, channels=128,
                kernel_size=[1, 1])
    }"""
    out = altered(text)
    got = [(c.attrs.data_layout, c.attrs.out_layout)
           for c in calls(out, "nn.contrib_conv2d_NCHWc")]
    assert sorted(got) == [("NCHW16c", "NCHW64c"), ("NCHW8c", "NCHW16c")]


def test_o3_for_llvm_folds_weights_and_bias():
    mod = rl.transform.InferType()(rl.parse(NET))
    names = [p.name_hint for p in mod["main"].params][1:]
    args = args_for(mod, seed=4)
    bound = rl.transform.BindParams(params=dict(zip(names, args[1:])))(mod)
    with PassContext(config={"target": "llvm"}):
        opt = optimize(bound, opt_level=3)
    transforms = calls(opt, "layout_transform")
    # only the data's way in and the result's way out (weights and bias folded)
    assert sorted((t.attrs.src_layout, t.attrs.dst_layout) for t in transforms) == [
        ("NCHW", "NCHW4c"), ("NCHW32c", "NCHW")]
    assert same_value(rl.evaluate(bound, args[0]), rl.evaluate(opt, args[0]),
                      rtol=1e-4, atol=1e-4)


def test_rl_build_runs_the_alteration_natively():
    mod = rl.transform.InferType()(rl.parse(NET))
    names = [p.name_hint for p in mod["main"].params][1:]
    args = args_for(mod, seed=5)
    params = dict(zip(names, args[1:]))
    lib = rl.build(mod, target="llvm", params=params)
    assert lib.fallback_ops == []
    expected = rl.evaluate(rl.transform.BindParams(params=params)(mod), args[0])
    assert same_value(np.asarray(lib(args[0])), expected, rtol=1e-4, atol=1e-4)
    with PassContext(config={"target": "interp"}):   # a context's own target is kept
        plain = rl.build(mod, target="llvm", params=params)
    assert same_value(np.asarray(plain(args[0])), expected, rtol=1e-4, atol=1e-4)


def test_build_uses_the_blocked_kernels():
    from relaylang.backend.build import _target_context
    mod = rl.transform.InferType()(rl.parse(NET))
    with _target_context("llvm"):
        opt = optimize(mod, opt_level=3)
    names = {n.op.name for fn in [opt["main"]] for n in post_order(fn)
             if isinstance(n, Call) and isinstance(n.op, Op)}
    inner = set()
    for n in post_order(opt["main"]):
        if isinstance(n, Call) and not isinstance(n.op, Op):
            inner |= {m.op.name for m in post_order(n.op)
                      if isinstance(m, Call) and isinstance(m.op, Op)}
    assert "nn.contrib_conv2d_NCHWc" in names | inner
    assert "nn.conv2d" not in names | inner


# A MobileNet-like chain: a stem, then depthwise 3x3 (+ bias + clip) and pointwise 1x1
# (+ bias + clip) blocks, one strided, one with one-sided padding; odd spatial sizes.
MOBILE = HEAD + """def @main(%x: Tensor[(2, 16, 15, 13), float32], %w0: Tensor[(32, 16, 3, 3), float32],
          %d1: Tensor[(32, 1, 3, 3), float32], %b1: Tensor[(32, 1, 1), float32],
          %p1: Tensor[(64, 32, 1, 1), float32], %c1: Tensor[(64, 1, 1), float32],
          %d2: Tensor[(64, 1, 3, 3), float32], %b2: Tensor[(64, 1, 1), float32],
          %p2: Tensor[(48, 64, 1, 1), float32], %d3: Tensor[(48, 1, 3, 3), float32]) {
  %0 = nn.relu(nn.conv2d(%x, %w0, strides=[2, 2], padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3]));
  %1 = clip(add(nn.conv2d(%0, %d1, padding=[1, 1, 1, 1], groups=32, channels=32, kernel_size=[3, 3]), %b1), a_min=0f, a_max=6f);
  %2 = clip(add(nn.conv2d(%1, %p1, channels=64, kernel_size=[1, 1]), %c1), a_min=0f, a_max=6f);
  %3 = clip(add(nn.conv2d(%2, %d2, strides=[2, 2], padding=[1, 1, 1, 1], groups=64, channels=64, kernel_size=[3, 3]), %b2), a_min=0f, a_max=6f);
  %4 = nn.relu(nn.conv2d(%3, %p2, channels=48, kernel_size=[1, 1]));
  nn.conv2d(%4, %d3, padding=[0, 1, 2, 0], groups=48, channels=48, kernel_size=[3, 3])
}
"""


def _data_transforms(mod):
    """(src, dst) of the layout_transforms of batch-2 tensors (not weights or biases)."""
    return sorted((t.attrs.src_layout, t.attrs.dst_layout)
                  for t in calls(mod, "layout_transform")
                  if int(t.args[0].checked_type.shape[0]) == 2)


def test_a_mobilenet_chain_converts_as_one_region():
    out = rl.transform.InferType()(altered(MOBILE))
    assert not calls(out, "nn.conv2d")
    dws = calls(out, "nn.contrib_depthwise_conv2d_NCHWc")
    got = sorted((c.attrs.data_layout, c.attrs.kernel_layout, c.attrs.out_layout,
                  int(c.attrs.groups)) for c in dws)
    # each depthwise takes its producer's block
    assert got == [("NCHW16c", "OIHW1i16o", "NCHW16c", 48),
                   ("NCHW32c", "OIHW1i32o", "NCHW32c", 32),
                   ("NCHW64c", "OIHW1i64o", "NCHW64c", 64)]
    assert len(calls(out, "nn.contrib_conv2d_NCHWc")) == 3
    # the data changes layout only at the chain's two ends
    assert _data_transforms(out) == [("NCHW", "NCHW16c"), ("NCHW16c", "NCHW")]


def test_a_lone_depthwise_convolution_is_left_alone():
    text = HEAD + """def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 1, 3, 3), float32]) {
      nn.relu(nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=16, channels=16, kernel_size=[3, 3]))
    }"""
    mod = rl.transform.InferType()(rl.parse(text))
    assert rl.structural_equal(AlterOpLayout(target="llvm")(mod), mod)


def test_rl_build_runs_the_mobilenet_chain_natively():
    from relaylang.backend.build import _target_context
    mod = rl.transform.InferType()(rl.parse(MOBILE))
    names = [p.name_hint for p in mod["main"].params][1:]
    args = args_for(mod, seed=6)
    params = dict(zip(names, args[1:]))
    bound = rl.transform.BindParams(params=params)(mod)
    with _target_context("llvm"):
        opt = optimize(bound, opt_level=3)
    # only the data's way in and the result's way out (weights and biases folded)
    assert sorted((t.attrs.src_layout, t.attrs.dst_layout)
                  for t in calls(opt, "layout_transform")) == [("NCHW", "NCHW16c"),
                                                               ("NCHW16c", "NCHW")]
    lib = rl.build(mod, target="llvm", params=params)
    assert lib.fallback_ops == []
    expected = rl.evaluate(bound, args[0])
    assert same_value(np.asarray(lib(args[0])), expected, rtol=1e-4, atol=1e-4)


def test_a_short_convolution_joins_a_region_without_making_one():
    """An RGB stem (3 x 3 x 3 = 27: a short reduction) converts as part of a region the
    other convolutions make worth it (the transform is then of its 3-channel input), but
    with only one other convolution it stays NCHW, and the other one too."""
    stem = HEAD + """def @main(%x: Tensor[(2, 3, 17, 15), float32], %w0: Tensor[(32, 3, 3, 3), float32],
              %d: Tensor[(32, 1, 3, 3), float32], %p: Tensor[(16, 32, 1, 1), float32]) {
      %0 = clip(nn.conv2d(%x, %w0, strides=[2, 2], padding=[1, 1, 1, 1], channels=32, kernel_size=[3, 3]), a_min=0f, a_max=6f);
      %1 = nn.relu(nn.conv2d(%0, %d, padding=[1, 1, 1, 1], groups=32, channels=32, kernel_size=[3, 3]));
      nn.conv2d(%1, %p, channels=16, kernel_size=[1, 1])
    }"""
    out = rl.transform.InferType()(altered(stem))
    assert not calls(out, "nn.conv2d")
    stems = [c for c in calls(out, "nn.contrib_conv2d_NCHWc") if c.attrs.data_layout == "NCHW3c"]
    assert len(stems) == 1 and stems[0].attrs.out_layout == "NCHW32c"
    assert _data_transforms(out) == [("NCHW", "NCHW3c"), ("NCHW16c", "NCHW")]
    # the stem and one other convolution: not worth it
    pair = HEAD + """def @main(%x: Tensor[(1, 3, 16, 16), float32], %w1: Tensor[(8, 3, 3, 3), float32],
              %w2: Tensor[(8, 8, 3, 3), float32]) {
      nn.relu(nn.conv2d(nn.relu(nn.conv2d(%x, %w1, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3])),
                        %w2, channels=8, kernel_size=[3, 3]))
    }"""
    mod = rl.transform.InferType()(rl.parse(pair))
    assert rl.structural_equal(AlterOpLayout(target="llvm")(mod), mod)
