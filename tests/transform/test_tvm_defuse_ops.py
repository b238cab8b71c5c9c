"""DefuseOps against TVM v0.19's tests/python/relay/test_pass_defuse_ops.py: TVM's programs
built with the IR builder; the passes run through the golden harness (re-parse,
idempotence, same values on the interpreter) and the result is compared with TVM's
expected program. Adaptations: TVM's untyped weights are annotated; the images are
smaller than TVM's (16x16 for 64x64, 32x32 for 224x224) to keep the interpreter runs
short; TVM's uninitialised constants (`numpy.ndarray(shape)`) are random ones."""
from __future__ import annotations

import numpy as np
from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.analysis import free_vars
from relaylang.ir.module import IRModule
from relaylang.transform import InferType
from relaylang.transform.fusion.defuse_ops import DefuseOps

RNG = np.random.default_rng(22)


def typed(fn) -> IRModule:
    return InferType()(IRModule.from_expr(fn))


def fuse_defuse_is_identity(fn) -> None:
    """TVM's check: FuseOps then DefuseOps gives back the typed program."""
    fused = run_golden(IRModule.from_expr(fn), "FuseOps")
    assert any(f.attrs is not None and f.attrs.get("Primitive", 0)
               for f in _functions(fused["main"]))
    assert_same(run_golden(IRModule.from_expr(fn), "FuseOps,DefuseOps"), typed(fn))
    assert_same(DefuseOps()(fused), typed(fn))


def _functions(expr):
    from relaylang.ir.expr import Function
    from relaylang.ir.traverse import post_order
    return [n for n in post_order(expr) if isinstance(n, Function)]


# TVM's test_defuse_simple
def test_defuse_simple() -> None:
    x = rl.var("x", shape=(10, 20))
    w = rl.squeeze(rl.exp(rl.add(x, rl.const(1, "float32"))))
    fuse_defuse_is_identity(rl.Function([x], w))


# TVM's test_inception_like (16x16 images for TVM's 64x64; weights annotated)
def test_inception_like() -> None:
    def conv(data, cin: int):
        w = rl.var("w", shape=(16, cin, 3, 3))
        y = rl.nn.conv2d(data, w, kernel_size=(3, 3), padding=(1, 1), channels=16)
        return rl.nn.relu(y)

    def inception_like(data, cin: int):
        return rl.concatenate(rl.Tuple([conv(data, cin), conv(data, cin)]), axis=1)

    x = rl.var("x", shape=(1, 16, 16, 16))
    in2 = inception_like(inception_like(x, 16), 32)
    fn = rl.Function(free_vars(in2), in2)
    fuse_defuse_is_identity(fn)


def const(shape) -> rl.Constant:
    return rl.const(RNG.standard_normal(shape).astype("float32"))


def nhwc_conv(data, w, channels: int, k: int, **kw):
    return rl.nn.conv2d(data, w, channels=channels, kernel_size=(k, k), data_layout="NHWC",
                        kernel_layout="OHWI", out_layout="NHWC", **kw)


# TVM's test_defuse_complex: plain (not Primitive) functions called directly are inlined
# (32x32 images for TVM's 224x224)
def test_defuse_complex() -> None:
    size = 32
    h1, h2 = size // 2, size // 4          # after the strided conv, after the pool

    def bn_vars():
        return [rl.var(n, shape=(64,)) for n in ("bn_gamma0", "bn_beta0", "bn_mean0",
                                                  "bn_var0")]

    def fused_conv2d_batch_norm(w):
        data = rl.var("data", shape=(1, size, size, 3))
        g, b, m, v = bn_vars()
        c0 = nhwc_conv(data, w, 64, 7, strides=(2, 2), padding=(3, 3, 3, 3))
        c2 = rl.TupleGetItem(rl.nn.batch_norm(c0, g, b, m, v, axis=3), 0)
        return rl.Function(free_vars(c2), c2)

    def fused_conv2d_batch_norm_relu(z):
        data2 = rl.var("data2", shape=(1, h2, h2, 64))
        g, b, m, v = bn_vars()
        c0 = nhwc_conv(data2, z, 64, 3, padding=(1, 1, 1, 1))
        c3 = rl.nn.relu(rl.TupleGetItem(rl.nn.batch_norm(c0, g, b, m, v, axis=3), 0))
        return rl.Function(free_vars(c3), c3)

    def max_pool(data):
        return rl.nn.max_pool2d(data, pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1),
                                layout="NHWC", out_layout="NHWC")

    def fused_max_pool2d():
        data1 = rl.var("data1", shape=(1, h1, h1, 64))
        a1 = max_pool(data1)
        return rl.Function(free_vars(a1), a1)

    def fused_add_relu():
        data1 = rl.var("data1", shape=(1, h2, h2, 64))
        data2 = rl.var("data2", shape=(1, h2, h2, 64))
        a1 = rl.nn.relu(rl.add(data1, data2))
        return rl.Function(free_vars(a1), a1)

    w1, w2 = const((64, 7, 7, 3)), const((64, 3, 3, 64))
    bn = [const((64,)), rl.const(RNG.standard_normal(64).astype("float32")),
          const((64,)), rl.const(RNG.uniform(0.5, 2, 64).astype("float32"))]

    def before_fused():
        data = rl.var("data", shape=(1, 3, size, size))
        data1 = rl.layout_transform(data, src_layout="NCHW", dst_layout="NHWC")
        y0 = rl.Call(fused_conv2d_batch_norm(w1), [data1, *bn])
        y1 = rl.Call(fused_max_pool2d(), [y0])
        y2 = rl.Call(fused_conv2d_batch_norm_relu(w2), [y1, *bn])
        y3 = rl.Call(fused_add_relu(), [y1, y2])
        return rl.Function(free_vars(y3), y3)

    def golden_defused():
        data = rl.var("data", shape=(1, 3, size, size))
        data1 = rl.layout_transform(data, src_layout="NCHW", dst_layout="NHWC")
        c0 = nhwc_conv(data1, w1, 64, 7, strides=(2, 2), padding=(3, 3, 3, 3))
        c2 = rl.TupleGetItem(rl.nn.batch_norm(c0, *bn, axis=3), 0)
        c3 = max_pool(c2)
        c4 = nhwc_conv(c3, w2, 64, 3, padding=(1, 1, 1, 1))
        c7 = rl.nn.relu(rl.TupleGetItem(rl.nn.batch_norm(c4, *bn, axis=3), 0))
        c9 = rl.nn.relu(rl.add(c3, c7))
        return rl.Function(free_vars(c9), c9)

    defused = run_golden(typed(before_fused()), "DefuseOps")
    assert_same(defused, typed(golden_defused()))


# Beyond TVM's file: a function bound by `let` is not a direct call and stays; a literal
# called inside another one's body is inlined too, bottom up.
def test_nested_literals_and_let_bound_functions() -> None:
    x = rl.var("x", shape=(4,))
    p, q = rl.var("p", shape=(4,)), rl.var("q", shape=(4,))
    inner = rl.Function([q], rl.exp(q))
    outer = rl.Function([p], rl.Call(inner, [rl.add(p, p)]))
    out = run_golden(IRModule.from_expr(rl.Function([x], rl.Call(outer, [rl.negative(x)]))),
                     "DefuseOps")
    y = rl.negative(x)
    assert_same(out, typed(rl.Function([x], rl.exp(rl.add(y, y)))))
    f = rl.var("f")
    let = rl.Function([x], rl.Let(f, inner, rl.Call(f, [x])))
    assert_same(run_golden(IRModule.from_expr(let), "DefuseOps"), typed(let))
