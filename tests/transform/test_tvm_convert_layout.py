"""ConvertLayout against TVM v0.19's tests/python/relay/test_pass_convert_op_layout.py:
TVM's before and expected programs built with the IR builder; the pass runs through the
golden harness (re-parse, idempotence, same values on the interpreter) and the result is
compared structurally with TVM's expected program.

TVM's ConvertLayout requires CanonicalizeOps, which writes `nn.bias_add` as `add` before
the layouts change; relaylang's converts `nn.bias_add` directly (its axis renumbered, no
expand_dims). The tests with a bias run TVM's pipeline, `CanonicalizeOps,ConvertLayout`,
and check TVM's expected program, and also check relaylang's direct form.

Not mirrored (docs/TVM_DIFFERENCES.md): test_conv_roi_pool (no vision.roi_pool), test_simulated_quantize (no
relay.op.annotation.simulated_quantize), the two deformable_conv2d tests (relaylang's
nn.deformable_conv2d computes NCHW/OIHW only, and both tests convert to or from NHWC).
"""
from __future__ import annotations

import numpy as np
import pytest
from pass_helpers import main_args, same_value
from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.expr import Call, Op
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.transform.layout.desired_layouts import DesiredLayouts


def convert(fn, desired: dict, pre: str = "", skip: tuple[str, ...] = ()) -> IRModule:
    """`ConvertLayout(desired)` (after the passes `pre`, comma-separated) on `fn`, at opt
    level 3 as TVM's run_opt_pass, through the golden harness."""
    pipeline = f"ConvertLayout{{desired_layouts={DesiredLayouts.of(desired)}}}"
    return run_golden(IRModule.from_expr(fn), f"{pre},{pipeline}" if pre else pipeline,
                      skip, opt_level=3)


def check(before, expected, desired: dict, pre: str = "", close: bool = False) -> IRModule:
    """`close`: the values are compared here with a looser tolerance than the harness's
    (an op whose reduction runs in another order in the new layout)."""
    after = convert(before, desired, pre, ("interp",) if close else ())
    assert_same(after, IRModule.from_expr(expected))
    if close:
        mod = IRModule.from_expr(before)
        args = main_args(mod)
        assert same_value(rl.evaluate(mod, *args), rl.evaluate(after, *args),
                          rtol=1e-4, atol=1e-5)
    return after


def fn(body):
    return rl.Function(rl.analysis.free_vars(body), body)


def calls(mod: IRModule, name: str) -> list[Call]:
    return [n for n in post_order(mod["main"]) if isinstance(n, Call)
            and isinstance(n.op, Op) and n.op.name == name]


def conv(x, w, channels, k=3, pad=True, layout=("NCHW", "OIHW"), **kw):
    if pad:
        kw["padding"] = (1, 1)
    if layout != ("NCHW", "OIHW"):
        kw.update(data_layout=layout[0], kernel_layout=layout[1])
    return rl.nn.conv2d(x, w, channels=channels, kernel_size=(k, k), **kw)


NHWC = ("NHWC", "HWIO")
NCHW = {"nn.conv2d": ["NCHW", "default"]}
TO_NHWC = {"nn.conv2d": ["NHWC", "default"]}


def lt(x, src, dst):
    return rl.layout_transform(x, src_layout=src, dst_layout=dst)


# TVM's test_no_convert_layout
def test_no_convert_layout() -> None:
    def before():
        x = rl.var("x", shape=(1, 64, 56, 56))
        w = rl.var("weight", shape=(64, 64, 3, 3))
        return rl.Function([x, w], rl.nn.relu(conv(x, w, 64)))
    check(before(), before(), NCHW)


# TVM's test_conv_convert_layout
def test_conv_convert_layout() -> None:
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    before = rl.Function([x, w], rl.nn.relu(conv(x, w, 64, layout=NHWC)))
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    y = rl.nn.relu(conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 64))
    check(before, fn(lt(y, "NCHW", "NHWC")), NCHW)


# TVM's test_conv_nhwc_convert_layout
def test_conv_nhwc_convert_layout() -> None:
    x = rl.var("x", shape=(1, 64, 56, 56))
    w = rl.var("weight", shape=(64, 64, 3, 3))
    before = rl.Function([x, w], rl.nn.relu(conv(x, w, 64)))
    x = rl.var("x", shape=(1, 64, 56, 56))
    w = rl.var("weight", shape=(64, 64, 3, 3))
    y = rl.nn.relu(conv(lt(x, "NCHW", "NHWC"), lt(w, "OIHW", "HWIO"), 64, layout=NHWC))
    check(before, fn(lt(y, "NHWC", "NCHW")), TO_NHWC)


# TVM's test_conv_transpose_convert_layout
def test_conv_transpose_convert_layout() -> None:
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    y = rl.nn.conv2d_transpose(x, w, channels=64, kernel_size=(3, 3), padding=(1, 1),
                               data_layout="NHWC", kernel_layout="HWIO")
    before = rl.Function([x, w], rl.nn.relu(y))
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    y = rl.nn.conv2d_transpose(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "IOHW"), channels=64,
                               kernel_size=(3, 3), padding=(1, 1), kernel_layout="IOHW")
    check(before, fn(lt(rl.nn.relu(y), "NCHW", "NHWC")),
          {"nn.conv2d_transpose": ["NCHW", "IOHW"]})


def _conv_bias_pool_before():
    x = rl.var("x", shape=(1, 56, 56, 64))
    bias = rl.var("bias", shape=(64,))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    y = rl.nn.bias_add(conv(x, w, 64, layout=NHWC), bias, axis=3)
    y = rl.TupleGetItem(rl.Tuple([y]), 0)        # a useless tuple
    y = rl.nn.max_pool2d(rl.nn.relu(y), pool_size=(2, 2), layout="NHWC")
    return fn(rl.nn.batch_flatten(rl.cast(y, dtype="int32")))


def _conv_bias_pool_expected(pool_nhwc: bool, direct: bool = False):
    x = rl.var("x", shape=(1, 56, 56, 64))
    bias = rl.var("bias", shape=(64,))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    y = conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 64)
    if direct:                                   # relaylang's ConvertLayout alone
        y = rl.nn.bias_add(y, bias, axis=1)
    else:                                        # after CanonicalizeOps, as TVM
        y = rl.add(y, lt(rl.expand_dims(bias, axis=0, num_newaxis=3), "NHWC", "NCHW"))
    y = rl.nn.relu(rl.TupleGetItem(rl.Tuple([y]), 0))
    if pool_nhwc:
        y = rl.nn.max_pool2d(lt(y, "NCHW", "NHWC"), pool_size=(2, 2), layout="NHWC",
                             out_layout="NHWC")
        y = rl.cast(y, dtype="int32")
    else:
        y = lt(rl.cast(rl.nn.max_pool2d(y, pool_size=(2, 2)), dtype="int32"), "NCHW", "NHWC")
    return fn(rl.nn.batch_flatten(y))


# TVM's test_conv_bias_pool_convert_layout
def test_conv_bias_pool_convert_layout() -> None:
    check(_conv_bias_pool_before(), _conv_bias_pool_expected(False), NCHW, "CanonicalizeOps")
    check(_conv_bias_pool_before(), _conv_bias_pool_expected(False, direct=True), NCHW)


# TVM's test_conv_bias_pool_uses_specified_convert_layout
def test_conv_bias_pool_uses_specified_convert_layout() -> None:
    desired = {"nn.conv2d": ["NCHW", "OIHW"], "nn.max_pool2d": ["NHWC"]}
    check(_conv_bias_pool_before(), _conv_bias_pool_expected(True), desired, "CanonicalizeOps")
    check(_conv_bias_pool_before(), _conv_bias_pool_expected(True, direct=True), desired)


# TVM's test_conv_concat_convert_layout
def test_conv_concat_convert_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 56, 56, 64)), rl.var("weight1", shape=(3, 3, 64, 64)),
                rl.var("weight2", shape=(3, 3, 64, 64)))
    x, w1, w2 = params()
    y = conv(x, w1, 64, layout=NHWC)
    before = fn(rl.concatenate([y, conv(y, w2, 64, layout=NHWC)], axis=3))
    x, w1, w2 = params()
    w1, w2 = lt(w1, "HWIO", "OIHW"), lt(w2, "HWIO", "OIHW")
    y = conv(lt(x, "NHWC", "NCHW"), w1, 64)
    ret = rl.concatenate([y, conv(y, w2, 64)], axis=1)
    check(before, fn(lt(ret, "NCHW", "NHWC")), NCHW)



# TVM's test_dual_path_convert_layout
def test_dual_path_convert_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 56, 56, 64)), rl.var("weight1", shape=(3, 3, 64, 32)),
                rl.var("weight2", shape=(3, 3, 32, 32)))
    x, w1, w2 = params()
    y = rl.nn.relu(conv(x, w1, 32, layout=NHWC))
    y1 = rl.nn.relu(conv(y, w2, 32, layout=NHWC))
    before = fn(rl.Tuple([y1, rl.nn.batch_flatten(y)]))
    x, w1, w2 = params()
    w1, w2 = lt(w1, "HWIO", "OIHW"), lt(w2, "HWIO", "OIHW")
    y = rl.nn.relu(conv(lt(x, "NHWC", "NCHW"), w1, 32))
    y1 = lt(rl.nn.relu(conv(y, w2, 32)), "NCHW", "NHWC")
    y2 = rl.nn.batch_flatten(lt(y, "NCHW", "NHWC"))
    check(before, fn(rl.Tuple([y1, y2])), NCHW)


# TVM's test_bn_convert_layout: one transform back to NHWC (gamma & co. typed here)
def test_bn_convert_layout() -> None:
    x = rl.var("x", shape=(1, 56, 56, 64))
    w1 = rl.var("weight1", shape=(3, 3, 64, 32))
    y = conv(x, w1, 32, layout=NHWC)
    gamma, beta, mean, variance = (rl.var(n, shape=(32,))
                                   for n in ("gamma", "beta", "mean", "variance"))
    y = rl.TupleGetItem(rl.nn.batch_norm(y, gamma, beta, mean, variance, axis=3), 0)
    after = convert(fn(y), NCHW)
    back = [c for c in calls(after, "layout_transform")
            if (c.attrs.src_layout, c.attrs.dst_layout) == ("NCHW", "NHWC")]
    assert len(back) == 1


# TVM's test_slice_like_convert_layout (its three programs)
def test_slice_like_convert_layout() -> None:
    def axes_after(before, desired):
        return [tuple(c.attrs.axes) for c in calls(convert(before, desired), "slice_like")]

    x = rl.var("x", shape=(1, 56, 56, 64))
    y = conv(x, rl.var("weight1", shape=(3, 3, 64, 32)), 32, layout=NHWC)
    assert axes_after(fn(rl.slice_like(y, y, axes=[1, 2])), NCHW) == [(2, 3)]
    x = rl.var("x", shape=(1, 64, 56, 56))
    y = conv(x, rl.var("weight1", shape=(32, 64, 3, 3)), 32)
    assert axes_after(fn(rl.slice_like(y, y, axes=[2, 3])), TO_NHWC) == [(1, 2)]
    # z has no layout information, so the slice_like is not converted
    x = rl.var("x", shape=(1, 56, 56, 64))
    y = conv(x, rl.var("weight1", shape=(3, 3, 64, 32)), 32, layout=NHWC)
    z = rl.var("y", shape=(1, 56, 56, 32))
    assert axes_after(fn(rl.slice_like(y, z, axes=[1, 2])), NCHW) == [(1, 2)]


# TVM's test_transpose_convert_layout (its three programs). TVM keeps the transpose that
# conversion makes an identity (axes [0, 1, 2, 3]); relaylang removes it. The transposes
# that remain and the layout_transforms (x, the weight, z) are TVM's.
def test_transpose_convert_layout() -> None:
    def run(src, dst, z_shape, axes):
        x = rl.var("x", shape=(1, 56, 56, 64) if src == "NHWC" else (1, 64, 56, 56))
        w = rl.var("weight1", shape=(3, 3, 64, 32) if src == "NHWC" else (32, 64, 3, 3))
        y = conv(x, w, 32, layout=NHWC if src == "NHWC" else ("NCHW", "OIHW"))
        out = rl.transpose(rl.add(y, rl.var("z", shape=z_shape)), axes=axes)
        if axes is not None:
            out = rl.nn.batch_flatten(out)
        after = convert(fn(out), {"nn.conv2d": [dst, "default"]})
        return [tuple(c.attrs.axes) for c in calls(after, "transpose")], \
            len(calls(after, "layout_transform"))
    assert run("NHWC", "NCHW", (56, 56, 32), [0, 3, 1, 2]) == ([], 3)
    assert run("NCHW", "NHWC", (32, 56, 56), [0, 2, -1, 1]) == ([], 3)
    assert run("NCHW", "NHWC", (32, 56, 56), None) == ([(2, 1, 3, 0)], 3)


def _resnet_before():
    x = rl.var("x", shape=(1, 56, 56, 64))
    w1 = rl.var("weight1", shape=(3, 3, 64, 32))
    w2 = rl.var("weight2", shape=(1, 1, 64, 32))
    y = rl.nn.relu(conv(x, w1, 32, layout=NHWC))
    y2 = rl.nn.relu(conv(x, w2, 32, k=1, pad=False, layout=NHWC))
    return fn(rl.nn.global_max_pool2d(rl.add(y, y2), layout="NHWC"))


def _resnet_expected(pool_nhwc: bool):
    x = rl.var("x", shape=(1, 56, 56, 64))
    w1 = rl.var("weight1", shape=(3, 3, 64, 32))
    w2 = rl.var("weight2", shape=(1, 1, 64, 32))
    w1, w2 = lt(w1, "HWIO", "OIHW"), lt(w2, "HWIO", "OIHW")
    x = lt(x, "NHWC", "NCHW")
    y = rl.add(rl.nn.relu(conv(x, w1, 32)), rl.nn.relu(conv(x, w2, 32, k=1, pad=False)))
    if pool_nhwc:
        y = rl.nn.global_max_pool2d(lt(y, "NCHW", "NHWC"), layout="NHWC", out_layout="NHWC")
    else:
        y = lt(rl.nn.global_max_pool2d(y), "NCHW", "NHWC")
    return fn(y)


# TVM's test_resnet_convert_layout
def test_resnet_convert_layout() -> None:
    check(_resnet_before(), _resnet_expected(False), NCHW)


# TVM's test_resnet_pool_uses_specified_convert_layout
def test_resnet_pool_uses_specified_convert_layout() -> None:
    check(_resnet_before(), _resnet_expected(True),
          {"nn.conv2d": ["NCHW", "default"], "nn.global_max_pool2d": ["NHWC"]})


# TVM's test_scalar_convert_layout
def test_scalar_convert_layout() -> None:
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    before = fn(rl.add(conv(x, w, 64, layout=NHWC), rl.const(1, "float32")))
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    y = rl.add(conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 64), rl.const(1.0, "float32"))
    check(before, fn(lt(y, "NCHW", "NHWC")), NCHW)


def _norm_check(make, close: bool = False) -> None:
    def params():
        return (rl.var("x", shape=(1, 56, 56, 64)), rl.var("weight", shape=(3, 3, 64, 64)),
                *(rl.var(n, shape=(64,)) for n in ("beta", "gamma", "moving_mean",
                                                    "moving_var")))
    x, w, *vecs = params()
    before = fn(make(conv(x, w, 64, layout=NHWC), *vecs, 3))
    x, w, *vecs = params()
    y = conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 64)
    check(before, fn(lt(make(y, *vecs, 1), "NCHW", "NHWC")), NCHW, close=close)


# TVM's test_conv_ln_convert_layout
def test_conv_ln_convert_layout() -> None:
    _norm_check(lambda y, beta, gamma, mean, var, axis:
                rl.nn.layer_norm(y, gamma, beta, axis=axis))


# TVM's test_conv_InstanceNorm_convert_layout
def test_conv_InstanceNorm_convert_layout() -> None:
    _norm_check(lambda y, beta, gamma, mean, var, axis:
                rl.nn.instance_norm(y, gamma, beta, axis=axis), close=True)


# TVM's test_conv_bn_convert_layout
def test_conv_bn_convert_layout() -> None:
    _norm_check(lambda y, beta, gamma, mean, var, axis: rl.nn.relu(rl.TupleGetItem(
        rl.nn.batch_norm(y, gamma, beta, mean, var, axis=axis), 0)))


# TVM's test_conv_convert_kernel_layout
def test_conv_convert_kernel_layout() -> None:
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    before = fn(conv(x, w, 64, layout=NHWC))
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    check(before, fn(conv(x, lt(w, "HWIO", "OHWI"), 64, layout=("NHWC", "OHWI"))),
          {"nn.conv2d": ["NHWC", "OHWI"]})


# TVM's test_conv_roi_align_convert_layout
def test_conv_roi_align_convert_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 64, 56, 56)), rl.var("weight1", shape=(64, 64, 3, 3)),
                rl.var("rois", shape=(32, 5)))
    x, w, rois = params()
    y = rl.vision.roi_align(conv(x, w, 64), rois, pooled_size=(14, 14), spatial_scale=0.0625,
                            sample_ratio=2, layout="NCHW")
    before = fn(y)
    x, w, rois = params()
    y = conv(lt(x, "NCHW", "NHWC"), lt(w, "OIHW", "HWIO"), 64, layout=NHWC)
    y = rl.vision.roi_align(y, rois, pooled_size=(14, 14), spatial_scale=0.0625,
                            sample_ratio=2, layout="NHWC")
    check(before, fn(lt(y, "NHWC", "NCHW")),
          {"nn.conv2d": ["NHWC", "HWIO"], "vision.roi_align": ["NHWC", "default"]})


# TVM's test_conv_roi_pool_convert_layout
def test_conv_roi_pool_convert_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 64, 56, 56)), rl.var("weight1", shape=(64, 64, 3, 3)),
                rl.var("rois", shape=(32, 5)))
    x, w, rois = params()
    y = rl.vision.roi_pool(conv(x, w, 64), rois, pooled_size=(14, 14), spatial_scale=0.0625,
                           layout="NCHW")
    before = fn(y)
    x, w, rois = params()
    y = conv(lt(x, "NCHW", "NHWC"), lt(w, "OIHW", "HWIO"), 64, layout=NHWC)
    y = rl.vision.roi_pool(y, rois, pooled_size=(14, 14), spatial_scale=0.0625, layout="NHWC")
    check(before, fn(lt(y, "NHWC", "NCHW")),
          {"nn.conv2d": ["NHWC", "HWIO"], "vision.roi_pool": ["NHWC", "default"]})


# TVM's test_conv_strided_slice_convert_layout
def test_conv_strided_slice_convert_layout() -> None:
    x = rl.var("x", shape=(1, 64, 56, 56))
    w = rl.var("weight", shape=(64, 64, 3, 3))
    y = rl.nn.relu(conv(x, w, 64))
    before = rl.Function([x, w], rl.strided_slice(y, begin=[0, 1], end=[1, -1, 10],
                                                  strides=[1, 1, 2, 1]))
    x = rl.var("x", shape=(1, 64, 56, 56))
    w = rl.var("weight", shape=(64, 64, 3, 3))
    y = rl.nn.relu(conv(lt(x, "NCHW", "NHWC"), lt(w, "OIHW", "HWIO"), 64, layout=NHWC))
    y = rl.strided_slice(y, begin=[0, 0, 0, 1], end=[1, 10, 56, -1], strides=[1, 2, 1, 1])
    check(before, fn(lt(y, "NHWC", "NCHW")), TO_NHWC)


# TVM's test_conv_split_convert_layout (its first three programs; the fourth, to NCHW4c,
# is test_conv_split_convert_layout_blocking below)
def test_conv_split_convert_layout() -> None:
    for sections, axis in ((2, -1), (2, 3), ((5, 10), -1)):
        def params():
            return (rl.var("x", shape=(1, 38, 38, 512)),
                    rl.var("weight", shape=(3, 3, 512, 512)))
        parts = 2 if sections == 2 else 3
        x, w = params()
        y = rl.split(rl.nn.relu(conv(x, w, 512, pad=False, layout=NHWC)),
                     indices_or_sections=sections, axis=axis)
        before = fn(rl.Tuple([rl.TupleGetItem(y, i) for i in range(parts)]))
        x, w = params()
        w = lt(w, "HWIO", "OIHW")
        y = rl.nn.relu(conv(lt(x, "NHWC", "NCHW"), w, 512, pad=False))
        y = rl.split(y, indices_or_sections=sections, axis=1)
        expected = fn(rl.Tuple([lt(rl.TupleGetItem(y, i), "NCHW", "NHWC")
                                for i in range(parts)]))
        check(before, expected, NCHW)


# TVM's test_conv_strided_slice_axes_convert_layout
def test_conv_strided_slice_axes_convert_layout() -> None:
    x = rl.var("x", shape=(1, 28, 28, 32))
    w = rl.var("weight", shape=(3, 3, 32, 32))
    before = fn(rl.strided_slice(conv(x, w, 32, layout=NHWC), begin=[0, 16], end=[1, 33],
                                 strides=[1, 1], axes=[0, 3]))
    x = rl.var("x", shape=(1, 28, 28, 32))
    w = rl.var("weight", shape=(3, 3, 32, 32))
    y = conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 32)
    y = rl.strided_slice(y, begin=[0, 16], end=[1, 33], strides=[1, 1], axes=[0, 1])
    check(before, fn(lt(y, "NCHW", "NHWC")), NCHW)


# TVM's test_conv_topk_convert_layout
def test_conv_topk_convert_layout() -> None:
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    before = fn(rl.topk(conv(x, w, 64, layout=NHWC), k=2, axis=2))
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    y = rl.topk(conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 64), k=2, axis=3)
    check(before, fn(rl.Tuple([lt(rl.TupleGetItem(y, i), "NCHW", "NHWC") for i in (0, 1)])),
          NCHW)


# TVM's test_default_keyword
def test_default_keyword() -> None:
    x = rl.var("x", shape=(1, 64, 56, 56))
    w = rl.var("weight", shape=(64, 3, 3, 64))
    before = fn(conv(x, w, 64, layout=("NCHW", "OHWI")))
    x = rl.var("x", shape=(1, 64, 56, 56))
    w = rl.var("weight", shape=(64, 3, 3, 64))
    check(before, fn(conv(x, lt(w, "OHWI", "OIHW"), 64)), NCHW)


# TVM's test_no_desired_layout: roi_align not named, so it is an edge
def test_no_desired_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 64, 56, 56)), rl.var("weight1", shape=(64, 64, 3, 3)),
                rl.var("rois", shape=(32, 5)))
    x, w, rois = params()
    before = fn(rl.vision.roi_align(conv(x, w, 64), rois, pooled_size=(14, 14),
                                    spatial_scale=0.0625, sample_ratio=2, layout="NCHW"))
    x, w, rois = params()
    y = conv(lt(x, "NCHW", "NHWC"), lt(w, "OIHW", "HWIO"), 64, layout=NHWC)
    y = rl.vision.roi_align(lt(y, "NHWC", "NCHW"), rois, pooled_size=(14, 14),
                            spatial_scale=0.0625, sample_ratio=2, layout="NCHW")
    check(before, fn(y), {"nn.conv2d": ["NHWC", "HWIO"]})


def _squeeze_case(squeeze_before, squeeze_after, back):
    def params():
        return rl.var("x", shape=(1, 1, 1, 2048)), rl.var("weight", shape=(1, 1, 2048, 1000))
    x, w = params()
    before = fn(squeeze_before(rl.nn.relu(conv(x, w, 1000, k=1, pad=False, layout=NHWC))))
    x, w = params()
    y = rl.nn.relu(conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 1000, k=1, pad=False))
    y = squeeze_after(y)
    # the 1x1 convolution over 2048 channels sums in another order in NCHW
    check(before, fn(lt(y, *back) if back else y), NCHW, close=True)


# TVM's test_conv_squeeze_convert_layout (its three programs)
def test_conv_squeeze_convert_layout() -> None:
    # the given axis is squeezed
    _squeeze_case(lambda y: rl.squeeze(y, axis=[-3]), lambda y: rl.squeeze(y, axis=[2]),
                  ("NCW", "NWC"))
    # every axis of extent 1 is squeezed: named explicitly
    _squeeze_case(lambda y: rl.squeeze(y), lambda y: rl.squeeze(y, axis=[0, 2, 3]), None)
    # no axis
    _squeeze_case(lambda y: rl.squeeze(y, axis=[]), lambda y: rl.squeeze(y, axis=[]),
                  ("NCHW", "NHWC"))


# TVM's test_conv_reduce_convert_layout (its two programs; the second's spans are
# checked on the pass's output itself, as text drops them)
def test_conv_reduce_convert_layout() -> None:
    def params():
        return rl.var("x", shape=(1, 1, 1, 2048)), rl.var("weight", shape=(1, 1, 2048, 1000))
    x, w = params()
    y = rl.nn.relu(conv(x, w, 1000, k=1, pad=False, layout=NHWC))
    before = fn(rl.sum(rl.sum(rl.sum(rl.sum(y, axis=(1, 2)), axis=(1,))), axis=None))
    x, w = params()
    y = rl.nn.relu(conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 1000, k=1, pad=False))
    check(before, fn(rl.sum(rl.sum(rl.sum(rl.sum(y, axis=(2, 3)), axis=(1,))), axis=None)),
          NCHW)

    from relaylang.ir.span import Span
    from relaylang.transform import InferType
    from relaylang.transform.layout.convert_layout import ConvertLayout

    def spanned(call, text):
        return Call(call.op, call.args, call.attrs, call.type_args,
                    span=Span(text, 1, 1, 1, 1))
    x = rl.var("x", shape=(1, 38, 38, 512))
    w = rl.var("weight", shape=(3, 3, 512, 512))
    y = spanned(conv(x, w, 512, pad=False, layout=NHWC), "SpanConv2D")
    y = spanned(rl.nn.relu(y), "SpanRelu")
    y = spanned(rl.multiply(y, y), "SpanMultiply")
    before = fn(spanned(rl.sum(y, axis=(3,), keepdims=True), "SpanSum"))
    x = rl.var("x", shape=(1, 38, 38, 512))
    w = rl.var("weight", shape=(3, 3, 512, 512))
    y = rl.nn.relu(conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 512, pad=False))
    y = rl.sum(rl.multiply(y, y), axis=(1,), keepdims=True)
    check(before, fn(lt(y, "NCHW", "NHWC")), NCHW)
    after = ConvertLayout(NCHW)(InferType()(IRModule.from_expr(before)))
    spans = {n.span.source_name for n in post_order(after["main"])
             if isinstance(n, Call) and n.span is not None}
    assert {"SpanConv2D", "SpanRelu", "SpanMultiply", "SpanSum"} <= spans


# TVM's test_image_resize2d_convert_layout (both directions)
def test_image_resize2d_convert_layout() -> None:
    for src, dst, shape in (("NCHW", "NHWC", (1, 2, 4, 4)), ("NHWC", "NCHW", (1, 4, 4, 2))):
        x = rl.var("x", shape=shape)
        before = rl.Function([x], rl.image.resize2d(x, size=(8, 8), layout=src))
        x = rl.var("x", shape=shape)
        y = rl.image.resize2d(lt(x, src, dst), size=(8, 8), layout=dst)
        check(before, fn(lt(y, dst, src)), {"image.resize2d": [dst]})


# TVM's test_conv_image_resize2d_convert_layout
def test_conv_image_resize2d_convert_layout() -> None:
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    before = fn(rl.image.resize2d(conv(x, w, 64, layout=NHWC), size=(112, 112), layout="NHWC"))
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    y = conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 64)
    y = rl.image.resize2d(y, size=(112, 112), layout="NCHW")
    check(before, fn(lt(y, "NCHW", "NHWC")), NCHW)


# TVM's test_reduce_op_convert_layout (argmax, mean, max over H and W)
def test_reduce_op_convert_layout() -> None:
    for reduce_op in (rl.argmax, rl.mean, rl.max):
        x = rl.var("x", shape=(1, 64, 56, 56))
        w = rl.var("weight", shape=(64, 64, 3, 3))
        before = rl.Function([x, w], reduce_op(conv(x, w, 64), axis=[2, 3]))
        x = rl.var("x", shape=(1, 64, 56, 56))
        w = rl.var("weight", shape=(64, 64, 3, 3))
        y = conv(lt(x, "NCHW", "NHWC"), lt(w, "OIHW", "HWIO"), 64, layout=NHWC)
        check(before, fn(reduce_op(y, axis=[1, 2])), TO_NHWC)


# TVM's test_conv_max_pool_uses_specified_convert_layout
def test_conv_max_pool_uses_specified_convert_layout() -> None:
    x = rl.var("x", shape=(1, 64, 56, 56))
    w = rl.var("weight", shape=(64, 64, 3, 3))
    y = rl.nn.max_pool2d(rl.nn.relu(conv(x, w, 64)), pool_size=(2, 2), layout="NCHW")
    before = fn(rl.nn.batch_flatten(y))
    x = rl.var("x", shape=(1, 64, 56, 56))
    w = rl.var("weight", shape=(64, 64, 3, 3))
    y = rl.nn.relu(conv(lt(x, "NCHW", "NHWC"), lt(w, "OIHW", "OHWI"), 64,
                        layout=("NHWC", "OHWI")))
    y = rl.nn.max_pool2d(y, pool_size=(2, 2), layout="NHWC", out_layout="NHWC")
    check(before, fn(rl.nn.batch_flatten(lt(y, "NHWC", "NCHW"))),
          {"nn.conv2d": ["NHWC", "OHWI"], "nn.max_pool2d": ["NHWC"]})


# TVM's test_conv_l2n_convert_layout: TVM's loop asserts only its last case (axis [2, 3]
# -> [3, 1]); all three are checked here
def test_conv_l2n_convert_layout() -> None:
    for axis, expected_axis in (([3], [1]), ([-1], [1]), ([2, 3], [3, 1])):
        x = rl.var("x", shape=(1, 56, 56, 64))
        w = rl.var("weight", shape=(3, 3, 64, 64))
        before = fn(rl.nn.l2_normalize(conv(x, w, 64, layout=NHWC), eps=0.001, axis=axis))
        x = rl.var("x", shape=(1, 56, 56, 64))
        w = rl.var("weight", shape=(3, 3, 64, 64))
        y = conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 64)
        y = rl.nn.l2_normalize(y, eps=0.001, axis=expected_axis)
        check(before, fn(lt(y, "NCHW", "NHWC")), NCHW, close=True)


# TVM's test_infer_correct_layout: a layout rule registered for nn.relu at level 11
# (above the built-in rules' 10) is the one ConvertLayout asks. relaylang's rules take
# (call, argument facts, preferences), not TVM's (attrs, new/old layouts, types).
def test_infer_correct_layout() -> None:
    from relaylang.transform.layout.rewrite import Laid, Plan
    from relaylang.transform.layout.rules import (
        RULES,
        register_infer_correct_layout,
        temp_infer_correct_layout,
    )
    called = []

    def infer_correct_layout_relu(call, infos, prefer):
        called.append(call.op.name)
        have = infos[0]
        return Plan(call.attrs, (have,), have) if isinstance(have, Laid) else None

    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    before = rl.Function([x, w], rl.nn.relu(conv(x, w, 64, layout=NHWC)))
    x = rl.var("x", shape=(1, 56, 56, 64))
    w = rl.var("weight", shape=(3, 3, 64, 64))
    y = rl.nn.relu(conv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"), 64))
    with temp_infer_correct_layout("nn.relu", RULES["nn.relu"]):    # restored after
        register_infer_correct_layout("nn.relu", infer_correct_layout_relu, level=11)
        with pytest.raises(ValueError, match="already has a layout rule at level 11"):
            register_infer_correct_layout("nn.relu", infer_correct_layout_relu, level=11)
        register_infer_correct_layout("nn.relu", lambda c, i, p: None, level=5)  # ignored
        check(before, fn(lt(y, "NCHW", "NHWC")), NCHW)
    assert called and set(called) == {"nn.relu"}
    assert RULES["nn.relu"] is not infer_correct_layout_relu


# TVM's test_conv_split_convert_layout, its fourth program (_blocking): the split points
# count blocks of 4 channels. TVM's kernel layout there is OIHW4o (output channels
# blocked, input channels not), which relaylang's nn.contrib_conv2d_NCHWc does not take;
# OIHW4i4o here.
def test_conv_split_convert_layout_blocking() -> None:
    def params():
        return rl.var("x", shape=(1, 512, 38, 38)), rl.var("weight", shape=(512, 512, 3, 3))
    x, w = params()
    y = rl.split(rl.nn.relu(conv(x, w, 512, pad=False)), indices_or_sections=[256], axis=1)
    before = fn(rl.Tuple([rl.TupleGetItem(y, i) for i in (0, 1)]))
    x, w = params()
    y = rl.nn.contrib_conv2d_NCHWc(lt(x, "NCHW", "NCHW4c"), lt(w, "OIHW", "OIHW4i4o"),
                                   channels=512, kernel_size=(3, 3), padding=(0, 0),
                                   data_layout="NCHW4c", kernel_layout="OIHW4i4o")
    y = rl.split(rl.nn.relu(y), indices_or_sections=[64], axis=1)
    expected = fn(rl.Tuple([lt(rl.TupleGetItem(y, i), "NCHW4c", "NCHW") for i in (0, 1)]))
    check(before, expected, {"nn.conv2d": ["NCHW4c", "OIHW4i4o"]})


# TVM's test_resnet_convert_layout_nchwc (its four parametrisations): the first
# convolution, over 3 channels, is converted only in blocks of 1
@pytest.mark.parametrize("data_layout, kernel_layout", [
    ("NCHW1c", "OIHW1i1o"), ("NCHW4c", "OIHW4i4o"), ("NCHW8c", "OIHW8i8o"),
    ("NCHW16c", "OIHW16i16o")])
def test_resnet_convert_layout_nchwc(data_layout, kernel_layout) -> None:
    def params():
        # TVM's 224x224 image made 32x32 (the interpreter runs both programs)
        return (rl.var("x", shape=(1, 3, 32, 32)), rl.var("weight1", shape=(64, 3, 7, 7)),
                rl.var("weight2", shape=(64, 64, 3, 3)), rl.var("weight3", shape=(64, 64, 1, 1)))

    def tail(y, w2, w3, conv2d):
        y1 = rl.nn.relu(conv2d(y, w2, channels=64, kernel_size=(3, 3), padding=(1, 1)))
        y2 = rl.nn.relu(conv2d(y, w3, channels=64, kernel_size=(1, 1)))
        return rl.add(y1, y2)
    x, w1, w2, w3 = params()
    y = rl.nn.conv2d(x, w1, strides=(2, 2), padding=(3, 3), channels=64, kernel_size=(7, 7))
    y = rl.nn.max_pool2d(rl.nn.relu(y), pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    before = fn(rl.nn.global_max_pool2d(tail(y, w2, w3, rl.nn.conv2d), layout="NCHW"))

    def nchwc(data, w, **kw):
        return rl.nn.contrib_conv2d_NCHWc(data, lt(w, "OIHW", kernel_layout),
                                          data_layout=data_layout,
                                          kernel_layout=kernel_layout, **kw)
    x, w1, w2, w3 = params()
    if data_layout == "NCHW1c":
        y = nchwc(lt(x, "NCHW", data_layout), w1, strides=(2, 2), padding=(3, 3),
                  channels=64, kernel_size=(7, 7))
        y = rl.nn.max_pool2d(rl.nn.relu(y), pool_size=(3, 3), strides=(2, 2),
                             padding=(1, 1), layout=data_layout)
    else:
        y = rl.nn.conv2d(x, w1, strides=(2, 2), padding=(3, 3), channels=64,
                         kernel_size=(7, 7))
        y = rl.nn.max_pool2d(rl.nn.relu(y), pool_size=(3, 3), strides=(2, 2),
                             padding=(1, 1))
        y = lt(y, "NCHW", data_layout)
    y = rl.nn.global_max_pool2d(tail(y, w2, w3, nchwc), layout=data_layout)
    check(before, fn(lt(y, data_layout, "NCHW")),
          {"nn.conv2d": [data_layout, kernel_layout]})


# TVM's test_convert_with_config: TVM's `with LayoutConfig(skip_layers=[0])` scope is
# ConvertLayout's option skip_layers here; the first convolution stays NHWC, the second
# goes to HWNC (kernel "default": HWOI)
def test_convert_with_config() -> None:
    def params():
        return (rl.var("x", shape=(1, 56, 56, 64)), rl.var("weight", shape=(3, 3, 64, 64)),
                rl.var("weight2", shape=(3, 3, 64, 64)))
    x, w, w2 = params()
    y = rl.nn.relu(conv(x, w, 64, layout=NHWC))
    before = rl.Function([x, w, w2], rl.nn.relu(conv(y, w2, 64, layout=NHWC)))
    x, w, w2 = params()
    y = lt(rl.nn.relu(conv(x, w, 64, layout=NHWC)), "NHWC", "HWNC")
    y = rl.nn.relu(conv(y, lt(w2, "HWIO", "HWOI"), 64, layout=("HWNC", "HWOI")))
    expected = rl.Function([x, w, w2], lt(y, "HWNC", "NHWC"))
    after = run_golden(IRModule.from_expr(before),
                       "ConvertLayout{desired_layouts=nn.conv2d:HWNC:default,skip_layers=0}",
                       opt_level=3)
    assert_same(after, IRModule.from_expr(expected))


# ---------------------------------------------------------------- qnn (relaylang/op/qnn)

def c(value, dtype):
    return rl.const(value, dtype)


def qconv(x, w, layout=("NCHW", "OIHW")):
    kw = {} if layout == ("NCHW", "OIHW") else {"data_layout": layout[0],
                                                     "kernel_layout": layout[1]}
    return rl.qnn.conv2d(x, w, c(1, "int32"), c(1, "int32"), c(1.0, "float32"),
                         c(1.0, "float32"), channels=64, kernel_size=(3, 3), padding=(1, 1),
                         **kw)


def ones8():
    return (c(1.0, "float32"), c(1, "int32")) * 3


# TVM's test_qnn_binary_no_convert_layout
def test_qnn_binary_no_convert_layout() -> None:
    # TVM's float32 operands do not type-check in relaylang (qnn.add takes integer
    # tensors; TVM's test never infers the call's type): uint8 here
    x = rl.var("x", shape=(2, 2), dtype="uint8")
    y = rl.var("y", shape=(1, 2), dtype="uint8")
    body = rl.qnn.add(x, y, lhs_scale=c(0.0156863, "float32"), lhs_zero_point=c(127, "int32"),
                      rhs_scale=c(0.0117647, "float32"), rhs_zero_point=c(85, "int32"),
                      output_scale=c(0.0235294, "float32"),
                      output_zero_point=c(128, "int32"))
    before = rl.Function([x, y], body)
    check(before, before, {})


# TVM's test_qnn_conv_requantize_convert_layout
def test_qnn_conv_requantize_convert_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 56, 56, 64), dtype="int8"),
                rl.var("weight", shape=(3, 3, 64, 64), dtype="int8"))
    x, w = params()
    y = rl.qnn.requantize(qconv(x, w, NHWC), c(1.0, "float32"), c(1, "int32"),
                          c(1.0, "float32"), c(1, "int32"), out_dtype="int32")
    before = rl.Function([x, w], rl.nn.relu(y))
    x, w = params()
    y = qconv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW"))
    y = rl.qnn.requantize(y, c(1.0, "float32"), c(1, "int32"), c(1.0, "float32"),
                          c(1, "int32"), axis=1, out_dtype="int32")
    check(before, fn(lt(rl.nn.relu(y), "NCHW", "NHWC")),
          {"qnn.conv2d": ["NCHW", "default"]})


def _qnn_two_convs(join):
    """TVM's test_qnn_conv_concat / test_qnn_conv_add: before and expected (y1, the second
    convolution, is unused in both, as in TVM's test)."""
    def params():
        return (rl.var("x", shape=(1, 56, 56, 64), dtype="int8"),
                rl.var("weight1", shape=(3, 3, 64, 64), dtype="int8"),
                rl.var("weight2", shape=(3, 3, 64, 64), dtype="int8"))
    x, w1, w2 = params()
    y = qconv(x, w1, NHWC)
    qconv(y, w2, NHWC)
    y = rl.cast(y, dtype="int8")
    before = fn(join(y, rl.cast(y, dtype="int8"), 3))
    x, w1, w2 = params()
    w1t = lt(w1, "HWIO", "OIHW")
    y = qconv(lt(x, "NHWC", "NCHW"), w1t)
    y = rl.cast(y, dtype="int8")
    expected = fn(lt(join(y, rl.cast(y, dtype="int8"), 1), "NCHW", "NHWC"))
    return before, expected


# TVM's test_qnn_conv_concat_convert_layout
def test_qnn_conv_concat_convert_layout() -> None:
    def join(a, b, axis):
        return rl.qnn.concatenate([a, b], [c(1.0, "float32"), c(1.0, "float32")],
                                  [c(1, "int32"), c(1, "int32")], c(1.0, "float32"),
                                  c(1, "int32"), axis=axis)
    before, expected = _qnn_two_convs(join)
    check(before, expected, {"qnn.conv2d": ["NCHW", "default"]})


# TVM's test_qnn_conv_add_convert_layout
def test_qnn_conv_add_convert_layout() -> None:
    def join(a, b, axis):
        return rl.qnn.add(a, b, *ones8())
    before, expected = _qnn_two_convs(join)
    check(before, expected, {"qnn.conv2d": ["NCHW", "default"]})


# TVM's test_qnn_conv_nhwc_convert_layout
def test_qnn_conv_nhwc_convert_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 64, 56, 56), dtype="int8"),
                rl.var("weight", shape=(64, 64, 3, 3), dtype="int8"))
    x, w = params()
    before = rl.Function([x, w], rl.nn.relu(qconv(x, w)))
    x, w = params()
    y = rl.nn.relu(qconv(lt(x, "NCHW", "NHWC"), lt(w, "OIHW", "HWIO"), NHWC))
    check(before, fn(lt(y, "NHWC", "NCHW")), {"qnn.conv2d": ["NHWC", "default"]})


# TVM's test_qnn_conv_transpose_requantize_convert_layout
def test_qnn_conv_transpose_requantize_convert_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 56, 56, 64), dtype="int8"),
                rl.var("weight", shape=(3, 3, 64, 64), dtype="int8"))

    def tconv(x, w, **kw):
        return rl.qnn.conv2d_transpose(x, w, c(1, "int32"), c(1, "int32"), c(1.0, "float32"),
                                       c(1.0, "float32"), channels=64, kernel_size=(3, 3),
                                       padding=(1, 1), out_dtype="int32", **kw)

    def requantize(y, **kw):
        return rl.qnn.requantize(y, c(1.0, "float32"), c(1, "int32"), c(1.0, "float32"),
                                 c(1, "int32"), out_dtype="int32", **kw)
    x, w = params()
    y = tconv(x, w, data_layout="NHWC", kernel_layout="HWIO")
    before = rl.Function([x, w], rl.nn.relu(requantize(y)))
    x, w = params()
    y = requantize(tconv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "IOHW")), axis=1)
    check(before, fn(lt(rl.nn.relu(y), "NCHW", "NHWC")),
          {"qnn.conv2d_transpose": ["NCHW", "default"]})


# TVM's test_qnn_conv_avgpool_2d_convert_layout
def test_qnn_conv_avgpool_2d_convert_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 56, 56, 64), dtype="int8"),
                rl.var("weight", shape=(3, 3, 64, 64), dtype="int8"))

    def pool(y, layout):
        return rl.qnn.avg_pool2d(y, c(1.0, "float32"), c(1, "int32"), c(1.0, "float32"),
                                 c(1, "int32"), layout=layout, out_layout=layout,
                                 pool_size=(3, 3), padding=(0, 0), strides=(1, 1),
                                 dilation=(1, 1))
    x, w = params()
    y = rl.cast(qconv(x, w, NHWC), dtype="int8")
    before = rl.Function([x, w], pool(y, "NHWC"))
    x, w = params()
    y = rl.cast(qconv(lt(x, "NHWC", "NCHW"), lt(w, "HWIO", "OIHW")), dtype="int8")
    check(before, fn(lt(pool(y, "NCHW"), "NCHW", "NHWC")),
          {"qnn.conv2d": ["NCHW", "default"], "qnn.avg_pool2d": ["NCHW"]})


# TVM's test_different_ops_convert_layout
def test_different_ops_convert_layout() -> None:
    def params():
        return (rl.var("x", shape=(1, 64, 56, 56)), rl.var("weight1", shape=(64, 3, 3, 64)),
                rl.var("weight2", shape=(64, 3, 3, 64), dtype="int8"),
                rl.var("weight3", shape=(64, 3, 3, 64)))

    def tconv(y, w, layout):
        return rl.nn.conv2d_transpose(y, w, channels=64, kernel_size=(3, 3), padding=(1, 1),
                                      data_layout=layout[0], kernel_layout=layout[1])
    x, w1, w2, w3 = params()
    y = rl.cast(conv(x, w1, 64, layout=("NCHW", "OHWI")), dtype="int8")
    y = rl.cast(qconv(y, w2, ("NCHW", "OHWI")), dtype="float32")
    before = fn(tconv(y, w3, ("NCHW", "OHWI")))
    x, w1, w2, w3 = params()
    y = conv(lt(x, "NCHW", "NHWC"), lt(w1, "OHWI", "HWIO"), 64, layout=NHWC)
    y = rl.cast(y, dtype="int8")
    y = qconv(lt(y, "NHWC", "NCHW"), lt(w2, "OHWI", "OIHW"), ("NCHW", "OIHW"))
    y = lt(rl.cast(y, dtype="float32"), "NCHW", "NHWC")
    y = tconv(y, lt(w3, "OHWI", "HWIO"), ("NHWC", "HWIO"))
    check(before, fn(lt(y, "NHWC", "NCHW")),
          {"nn.conv2d": ["NHWC", "HWIO"], "qnn.conv2d": ["NCHW", "OIHW"],
           "nn.conv2d_transpose": ["NHWC", "HWIO"]}, close=True)


def test_qnn_per_channel_requantize_and_add_follow_a_conversion() -> None:
    # not TVM's: per-channel scales keep their layout and the quantized axis is renumbered
    x = rl.var("x", shape=(1, 5, 5, 3), dtype="int8")
    w = rl.var("w", shape=(3, 3, 3, 4), dtype="int8")
    scales = c(np.array([0.5, 1.0, 2.0, 4.0], "float32"), "float32")
    zps = c(np.array([0, 1, -1, 2], "int32"), "int32")
    y = rl.qnn.conv2d(x, w, c(2, "int32"), zps, c(1.0, "float32"), scales, channels=4,
                      kernel_size=(3, 3), padding=(1, 1), data_layout="NHWC",
                      kernel_layout="HWIO")
    y = rl.qnn.requantize(y, scales, zps, c(8.0, "float32"), c(3, "int32"), axis=-1)
    y = rl.qnn.add(y, y, scales, zps, scales, zps, c(2.0, "float32"), c(1, "int32"),
                   lhs_axis=3, rhs_axis=-1)
    after = convert(rl.Function([x, w], y), {"qnn.conv2d": ["NCHW", "default"]})
    (rq,) = calls(after, "qnn.requantize")
    (add,) = calls(after, "qnn.add")
    assert rq.attrs.axis == 1 and (add.attrs.lhs_axis, add.attrs.rhs_axis) == (1, 1)
    assert len(calls(after, "layout_transform")) == 3
