"""FuseOps against TVM v0.19's tests/python/relay/test_pass_fuse_ops.py: TVM's before and
expected programs built with the IR builder; the pass runs through the golden harness
(re-parse, idempotence, same values on the interpreter) and the result is compared with
TVM's expected program. Weights TVM leaves untyped (`relay.var("w1")`) are annotated."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.expr import Function as FunctionNode
from relaylang.ir.module import IRModule
from relaylang.ir.node import AnyDim
from relaylang.ir.traverse import post_order, rewrite
from relaylang.transform import InferType, PassContext
from relaylang.transform.fusion.fuse_ops import FuseOps


def prim(params, body):
    return rl.Function(params, body, attrs={"Primitive": 1})


def fuse(fn, level: int | None = None, **opts) -> IRModule:
    """`FuseOps` (with `fuse_opt_level=level` and `opts`) on `fn` through the harness."""
    args = dict(opts)
    if level is not None:
        args["fuse_opt_level"] = level
    inner = ",".join(f"{k}={v}" for k, v in args.items())
    return run_golden(IRModule.from_expr(fn), f"FuseOps{{{inner}}}" if inner else "FuseOps")


def typed_expected(fn) -> IRModule:
    """TVM's expected function, typed; each Primitive function gets its return type, as
    TVM's InferType fills in a missing one (relaylang's leaves it out)."""
    mod = InferType()(IRModule.from_expr(fn))

    def ret(old, new):
        if isinstance(new, FunctionNode) and new.ret_type is None and new.attrs is not None \
                and new.attrs.get("Primitive", 0):
            return dataclasses.replace(new, ret_type=old.checked_type.ret_type)
        return None
    return IRModule.from_expr(rewrite(mod["main"], ret))


def same(fn, expected, level: int | None = None, **opts) -> IRModule:
    out = fuse(fn, level, **opts)
    assert_same(out, typed_expected(expected))
    return out


def primitives(mod: IRModule) -> list[FunctionNode]:
    return [n for n in post_order(mod["main"]) if isinstance(n, FunctionNode)
            and n.attrs is not None and n.attrs.get("Primitive", 0)]


# TVM's test_fuse_simple
def test_fuse_simple() -> None:
    x = rl.var("x", shape=(10, 20))
    before = rl.Function([x], rl.squeeze(rl.exp(rl.add(x, rl.const(1, "float32")))))
    p = rl.var("p", shape=(10, 20))
    f1 = prim([p], rl.squeeze(rl.exp(rl.add(p, rl.const(1, "float32")))))
    x = rl.var("x", shape=(10, 20))
    same(before, rl.Function([x], rl.Call(f1, [x])))


def conv(x, w, k: int, pad: int):
    return rl.nn.conv2d(x, w, kernel_size=(k, k), padding=(pad, pad), channels=16)


def one():
    return rl.const(1, "float32")


# TVM's test_conv2d_fuse: each convolution takes the elementwise ops it dominates; the
# add of the two last convolutions joins the first of them
def test_conv2d_fuse() -> None:
    dshape = (1, 16, 64, 64)

    def weights():
        return [rl.var("w1", shape=(16, 16, 3, 3)), rl.var("w2", shape=(16, 16, 1, 1)),
                rl.var("w3", shape=(16, 16, 3, 3))]
    x = rl.var("x", shape=dshape)
    w1, w2, w3 = weights()
    y = conv(rl.add(x, one()), w1, 3, 1)
    y = rl.add(y, rl.add(one(), y))
    before = rl.Function([x, w1, w2, w3],
                         rl.add(conv(y, w2, 1, 0), conv(y, w3, 3, 1)))

    p0 = rl.var("p0", shape=dshape)
    f0 = prim([p0], rl.add(p0, one()))
    p0, p1 = rl.var("p0", shape=dshape), rl.var("p1", shape=(16, 16, 3, 3))
    y = conv(p0, p1, 3, 1)
    f1 = prim([p0, p1], rl.add(y, rl.add(one(), y)))
    p0, p1 = rl.var("p0", shape=dshape), rl.var("p1", shape=(16, 16, 3, 3))
    f2 = prim([p0, p1], conv(p0, p1, 3, 1))
    p0, p1 = rl.var("p0", shape=dshape), rl.var("p1", shape=(16, 16, 1, 1))
    p2 = rl.var("p2", shape=dshape)
    f3 = prim([p0, p1, p2], rl.add(conv(p0, p1, 1, 0), p2))
    x = rl.var("x", shape=dshape)
    w1, w2, w3 = weights()
    y = rl.Call(f1, [rl.Call(f0, [x]), w1])
    expected = rl.Function([x, w1, w2, w3], rl.Call(f3, [y, w2, rl.Call(f2, [y, w3])]))
    same(before, expected, level=2)


def pool(x):
    return rl.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2), padding=(0, 0))


def upsample(x):
    return rl.nn.upsampling(x, scale_h=2, scale_w=2, layout="NCHW")


# TVM's test_concatenate: the upsampling, the tuple of its result and the input, the
# concatenate and the add are one function
def test_concatenate() -> None:
    dshape = (1, 16, 64, 64)
    x = rl.var("x", shape=dshape)
    before = rl.Function([x], rl.add(rl.concatenate(rl.Tuple([upsample(pool(x)), x]), axis=1),
                                     one()))
    assert len(primitives(fuse(before, 0))) == 4
    x = rl.var("x", shape=dshape)
    f0 = prim([x], pool(x))
    p0, p1 = rl.var("p0", shape=(1, 16, 32, 32)), rl.var("p1", shape=dshape)
    f1 = prim([p0, p1], rl.add(rl.concatenate(rl.Tuple([upsample(p0), p1]), axis=1), one()))
    x = rl.var("x", shape=dshape)
    same(before, rl.Function([x], rl.Call(f1, [rl.Call(f0, [x]), x])), level=2)


# TVM's test_tuple_root: a tuple that is the function's result stays outside
def test_tuple_root() -> None:
    dshape = (1, 16, 64, 64)
    x = rl.var("x", shape=dshape)
    before = rl.Function([x], rl.Tuple([upsample(pool(x)), x]))
    fuse(before, 0)
    x = rl.var("x", shape=dshape)
    f0 = prim([x], pool(x))
    p0 = rl.var("p0", shape=(1, 16, 32, 32))
    f1 = prim([p0], upsample(p0))
    x = rl.var("x", shape=dshape)
    same(before, rl.Function([x], rl.Tuple([rl.Call(f1, [rl.Call(f0, [x])]), x])), level=2)


# TVM's test_stop_fusion: annotation.stop_fusion splits the chain and is removed
def test_stop_fusion() -> None:
    dshape = (10, 20)
    x = rl.var("x", shape=dshape)
    before = rl.Function([x], rl.exp(rl.annotation.stop_fusion(rl.add(x, one()))))
    p0 = rl.var("p0", shape=dshape)
    f1 = prim([p0], rl.add(p0, one()))
    p01 = rl.var("p01", shape=dshape)
    f2 = prim([p01], rl.exp(p01))
    x = rl.var("x", shape=dshape)
    same(before, rl.Function([x], rl.Call(f2, [rl.Call(f1, [x])])))


# TVM's test_fuse_myia_regression: the condition of an `if` is fused; the closures in
# its branches have no op call
def test_fuse_myia_regression() -> None:
    def params():
        return rl.var("x", shape=(), dtype="int64"), rl.var("y", shape=(), dtype="int64")

    x, y = params()
    branch = rl.If(rl.greater(x, y), rl.Function([], x), rl.Function([], y))
    before = rl.Function([x, y], rl.Call(branch, []))
    p1, p2 = rl.var("p1", shape=(), dtype="int64"), rl.var("p2", shape=(), dtype="int64")
    fused_gt = prim([p1, p2], rl.greater(p1, p2))
    x, y = params()
    branch = rl.If(rl.Call(fused_gt, [x, y]), rl.Function([], x), rl.Function([], y))
    same(before, rl.Function([x, y], rl.Call(branch, [])))


# TVM's test_fuse_tuple_get_elemwise: the dense alone; the split, its projections and
# the elementwise ops on them in one function
def test_fuse_tuple_get_elemwise() -> None:
    dim = 10

    def params():
        return rl.var("X", shape=(1, dim)), rl.var("W", shape=(3 * dim, dim))

    def tail(m):
        s = rl.split(m, indices_or_sections=3, axis=1)
        return rl.add(rl.sigmoid(rl.TupleGetItem(s, 0)),
                      rl.multiply(rl.tanh(rl.TupleGetItem(s, 1)), rl.exp(rl.TupleGetItem(s, 2))))
    X, W = params()
    before = rl.Function([X, W], tail(rl.nn.dense(X, W)))
    fuse(before, 0)
    p0, p1 = params()
    f0 = prim([p0, p1], rl.nn.dense(p0, p1))
    p01 = rl.var("p01", shape=(1, 3 * dim))
    f1 = prim([p01], tail(p01))
    X, W = params()
    same(before, rl.Function([X, W], rl.Call(f1, [rl.Call(f0, [X, W])])), level=2)


# TVM's test_tuple_get_root: a projection of a split is the root of the split's function
def test_tuple_get_root() -> None:
    dim = 10

    def params():
        return rl.var("X", shape=(1, 3 * dim)), rl.var("W", shape=(dim, dim))

    def first(x):
        return rl.TupleGetItem(rl.split(x, indices_or_sections=3, axis=1), 0)
    X, W = params()
    before = rl.Function([X, W], rl.nn.dense(first(X), W))
    fuse(before, 0)
    p0 = rl.var("p0", shape=(1, 3 * dim))
    f0 = prim([p0], first(p0))
    p01, p1 = rl.var("p01", shape=(1, dim)), rl.var("p1", shape=(dim, dim))
    f1 = prim([p01, p1], rl.nn.dense(p01, p1))
    X, W = params()
    same(before, rl.Function([X, W], rl.Call(f1, [rl.Call(f0, [X]), W])), level=2)


def check_build(mod: IRModule, *shapes) -> None:
    """TVM's `relay.build(m, "llvm")`: the fused module builds, and computes what the
    interpreter does."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype("float32") for s in shapes]
    want = rl.evaluate(mod, *args)
    lib = rl.build(mod, target="llvm")
    got = lib(*args)
    for w, g in zip(want if isinstance(want, tuple) else (want,),
                    got if isinstance(got, tuple) else (got,)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)


# TVM's test_tuple_intermediate: the concatenate's tuple fuses with its fields' ops and
# everything is one function
def test_tuple_intermediate() -> None:
    dshape = (1, 16, 64, 64)

    def body(x):
        inj = rl.squeeze(x)
        y1 = rl.add(inj, one())
        tmp = rl.add(rl.squeeze(inj), one())
        y2 = rl.add(tmp, one())
        y3 = rl.add(inj, one())
        concat = rl.concatenate(rl.Tuple([y1, y2, y3]), axis=1)
        return rl.add(rl.squeeze(concat), one())
    x = rl.var("x", shape=dshape)
    before = rl.Function([x], body(x))
    fuse(before, 0)
    p0 = rl.var("p0", shape=dshape)
    f1 = prim([p0], body(p0))
    x = rl.var("x", shape=dshape)
    m = same(before, rl.Function([x], rl.Call(f1, [x])), level=2)
    check_build(m, dshape)


# TVM's test_tuple_consecutive: three levels of concatenates are one function; the pool
# takes the add after it, the second add is alone (the tuple of results stays outside)
def test_tuple_consecutive() -> None:
    dshape = (1, 16, 8, 8)

    def intermediate(x):
        ys = [rl.add(x, one()) for _ in range(3)]
        return rl.add(rl.concatenate(rl.Tuple(ys), axis=1), one())

    def consecutive(x):
        return rl.concatenate(rl.Tuple([intermediate(x) for _ in range(3)]), axis=1)
    x = rl.var("x", shape=dshape)
    out = rl.add(pool(consecutive(x)), one())
    before = rl.Function([x], rl.Tuple([out, rl.add(out, one())]))
    fuse(before, 0)
    p0 = rl.var("p0", shape=dshape)
    f0 = prim([p0], consecutive(p0))
    p01 = rl.var("p01", shape=(1, dshape[1] * 9, dshape[2], dshape[3]))
    f1 = prim([p01], rl.add(pool(p01), one()))
    p02 = rl.var("p02", shape=(1, dshape[1] * 9, dshape[2] // 2, dshape[3] // 2))
    f2 = prim([p02], rl.add(p02, one()))
    x = rl.var("x", shape=dshape)
    z = rl.Call(f1, [rl.Call(f0, [x])])
    m = same(before, rl.Function([x], rl.Tuple([z, rl.Call(f2, [z])])), level=2)
    check_build(m, dshape)


# TVM's test_inception_like: convolution + relu functions, each concatenate alone with
# its tuple inside
def test_inception_like() -> None:
    dshape = (1, 16, 16, 16)

    def weights(c):
        return [rl.var(f"w{i}", shape=(16, c, 3, 3)) for i in range(1, 3)]

    def cbr(x, w):
        return rl.nn.relu(conv(x, w, 3, 1))

    def inception_like(x, ws):
        return rl.concatenate(rl.Tuple([cbr(x, ws[0]), cbr(x, ws[1])]), axis=1)
    x = rl.var("x", shape=dshape)
    ws1, ws2 = weights(16), weights(32)
    before = rl.Function([x, *ws1, *ws2], inception_like(inception_like(x, ws1), ws2))
    fuse(before, 0)
    dshape2 = (1, 32, 16, 16)

    def conv_fn(shape):
        p, w = rl.var("p0", shape=shape), rl.var("p1", shape=(16, shape[1], 3, 3))
        return prim([p, w], cbr(p, w))

    def concat_fn():
        a, b = rl.var("p0", shape=dshape), rl.var("p1", shape=dshape)
        return prim([a, b], rl.concatenate(rl.Tuple([a, b]), axis=1))
    x = rl.var("x", shape=dshape)
    ws1, ws2 = weights(16), weights(32)
    c1, c2 = rl.Call(conv_fn(dshape), [x, ws1[0]]), rl.Call(conv_fn(dshape), [x, ws1[1]])
    concat = rl.Call(concat_fn(), [c1, c2])
    c3, c4 = (rl.Call(conv_fn(dshape2), [concat, ws2[0]]),
              rl.Call(conv_fn(dshape2), [concat, ws2[1]]))
    expected = rl.Function([x, *ws1, *ws2], rl.Call(concat_fn(), [c3, c4]))
    m = same(before, expected, level=2)
    check_build(m, dshape, (16, 16, 3, 3), (16, 16, 3, 3), (16, 32, 3, 3), (16, 32, 3, 3))


# TVM's test_fuse_parallel_injective: an add feeding two injective ops that meet again is
# one function
def test_fuse_parallel_injective() -> None:
    def body(x):
        y = rl.add(x, rl.const(1, "int32"))
        return rl.left_shift(rl.squeeze(y), rl.transpose(y, axes=[0, 1]))
    # TVM's program is float32; left_shift is an integer op (relaylang's relation rejects
    # floats), so int32 here
    x = rl.var("x", shape=(10, 20), dtype="int32")
    before = rl.Function([x], body(x))
    fuse(before, 0)
    p = rl.var("p", shape=(10, 20), dtype="int32")
    f1 = prim([p], body(p))
    x = rl.var("x", shape=(10, 20), dtype="int32")
    same(before, rl.Function([x], rl.Call(f1, [x])), level=2)


# TVM's test_immutable: the pass does not change the module it is given
def test_immutable() -> None:
    def before():
        x = rl.var("x", shape=(10, 20))
        return InferType()(IRModule.from_expr(
            rl.Function([x], rl.squeeze(rl.exp(rl.add(x, one()))))))
    mod = before()
    text = rl.astext(mod)
    new_mod = FuseOps(fuse_opt_level=2)(mod)
    assert rl.astext(mod) == text
    assert rl.structural_equal(mod, before(), map_free_vars=True)
    p = rl.var("p", shape=(10, 20))
    f1 = prim([p], rl.squeeze(rl.exp(rl.add(p, one()))))
    x = rl.var("x", shape=(10, 20))
    assert_same(new_mod, typed_expected(rl.Function([x], rl.Call(f1, [x]))))


# TVM's test_split: a split whose fields go to an add, a reference and another add gives
# a well-formed program (the harness re-parses, types and runs it)
def test_split() -> None:
    x = rl.var("x", shape=(6, 9))
    y = rl.split(x, indices_or_sections=3)
    a, b, c = (rl.TupleGetItem(y, i) for i in range(3))
    before = rl.Function([x], rl.add(rl.add(a, rl.RefRead(rl.RefCreate(b))), c))
    mod = fuse(before)
    assert primitives(mod)


def exp_chain(x, n: int):
    for _ in range(n):
        x = rl.exp(x)
    return x


# TVM's test_fuse_max: a chain of 300 exps splits after 256 (TVM's limit); with
# relay.FuseOps.max_depth=10, a chain of 20 splits after 10
def test_fuse_max() -> None:
    def expected(n: int, limit: int):
        p = rl.var("p", shape=(10, 20))
        f1 = prim([p], exp_chain(p, limit))
        pp = rl.var("pp", shape=(10, 20))
        f2 = prim([pp], exp_chain(pp, n - limit))
        x = rl.var("x", shape=(10, 20))
        return rl.Function([x], rl.Call(f2, [rl.Call(f1, [x])]))

    def before(n: int):
        x = rl.var("x", shape=(10, 20))
        return rl.Function([x], exp_chain(x, n))
    same(before(300), expected(300, 256), level=2)
    same(before(300), expected(300, 256))
    with PassContext(config={"relay.FuseOps.max_depth": 10}):
        fused = FuseOps()(InferType()(IRModule.from_expr(before(20))))
    assert_same(fused, typed_expected(expected(20, 10)))
    # the same through the harness, with the pass option
    same(before(20), expected(20, 10), max_fuse_depth=10)


def concat_then(out):
    """TVM's test_fuse_take / test_fuse_gather_nd: `concatenate([x, x])` and `out` of it."""
    x = rl.var("x", shape=(10, 1))
    return rl.Function([x], out(rl.concatenate(rl.Tuple([x, x]), axis=-1)))


def check_link_params(out, c) -> None:
    before = concat_then(lambda cat: out(cat, c))
    for link in (0, 1):
        p0 = rl.var("p0", shape=(10, 1))
        cat = rl.concatenate(rl.Tuple([p0, p0]), axis=-1)
        x = rl.var("x", shape=(10, 1))
        if link:
            f0 = prim([p0], out(cat, c))
            expected = rl.Function([x], rl.Call(f0, [x]))
        else:
            p1 = rl.var("p1", shape=c.data.shape, dtype="int64")
            f0 = prim([p0, p1], out(cat, p1))
            expected = rl.Function([x], rl.Call(f0, [x, c]))
        m = same(before, expected, level=2, link_params=link)
        with PassContext(opt_level=2, config={"relay.FuseOps.link_params": bool(link)}):
            fused = FuseOps()(InferType()(IRModule.from_expr(before)))
        assert_same(fused, typed_expected(expected))
        check_build(m, (10, 1))


# TVM's test_fuse_take (link_params False and True): the concatenate and the take are one
# function; the index constant is a parameter unless relay.FuseOps.link_params
def test_fuse_take() -> None:
    check_link_params(lambda cat, i: rl.take(cat, i), rl.const([0], dtype="int64"))


# TVM's test_fuse_gather_nd (link_params False and True): the same with gather_nd
def test_fuse_gather_nd() -> None:
    check_link_params(lambda cat, i: rl.gather_nd(cat, i),
                      rl.const([[0, 1], [1, 0]], dtype="int64"))


# TVM's test_fuse_bcast_reduce_scalar: a comparison with a scalar and the reduction of its
# result are one function, which builds
def test_fuse_bcast_reduce_scalar() -> None:
    def body(x):
        return rl.min(rl.less(x, rl.const(10, "int32")))
    x = rl.var("x", shape=(), dtype="int32")
    before = rl.Function([x], body(x))
    p0 = rl.var("p0", shape=(), dtype="int32")
    f0 = prim([p0], body(p0))
    x = rl.var("x", shape=(), dtype="int32")
    m = same(before, rl.Function([x], rl.Call(f0, [x])), level=2)
    lib = rl.build(m, target="llvm")
    for v in (3, 12):
        assert bool(np.asarray(lib(np.array(v, "int32")))) == (v < 10)


# TVM's test_fuse_max_diamond: with relay.FuseOps.max_depth the size of one diamond, each
# diamond is one function
def test_fuse_max_diamond() -> None:
    branch_len, num_diamond = 5, 3

    def diamond(x):
        return rl.add(exp_chain(x, branch_len), exp_chain(x, branch_len))

    x = rl.var("x", shape=(10, 20))
    out = x
    for _ in range(num_diamond):
        out = diamond(out)
    before = rl.Function([x], out)
    x = rl.var("x", shape=(10, 20))
    out = x
    for _ in range(num_diamond):
        p = rl.var("p", shape=(10, 20))
        out = rl.Call(prim([p], diamond(p)), [out])
    expected = rl.Function([x], out)
    with PassContext(config={"relay.FuseOps.max_depth": branch_len * 2 + 1}):
        fused = FuseOps()(InferType()(IRModule.from_expr(before)))
    assert_same(fused, typed_expected(expected))
    same(before, expected, max_fuse_depth=branch_len * 2 + 1)


# TVM's test_fuse_dynamic_squeeze_slice_take: squeeze, strided_slice and take on `?`
# dimensions, compiled (FuseOps included) and run; TVM runs its VM, here the native build
# (its mixed mode for `?` dimensions) and the interpreter
def test_fuse_dynamic_squeeze_slice_take() -> None:
    data = [np.random.default_rng(0).random((1, 2, 4)).astype("float32"),
            np.array([0]).astype("int64")]
    x = rl.var("p0107", rl.TensorType((AnyDim(), AnyDim(), 4), "float32"))
    take_val = rl.var("p166", rl.TensorType((AnyDim(),), "int64"))
    squeeze = rl.squeeze(x, axis=[0])
    sliced = rl.strided_slice(squeeze, begin=[0, 0], end=[15130, 2147483647], strides=[1, 1])
    mod = IRModule.from_expr(rl.Function([x, take_val], rl.take(sliced, take_val, axis=0)))
    # TVM compares with np.allclose, which broadcasts the (4,) expectation to (1, 4)
    want = np.squeeze(data[0][:, data[1][0], :], axis=0)[None, :]
    fused = fuse(mod["main"])
    assert primitives(fused)
    for result in (rl.build(mod, target="llvm")(*data), rl.evaluate(fused, *data)):
        np.testing.assert_allclose(np.asarray(result), want)


# TVM's test_fuse_softmax: a softmax takes the cast after it, and computes softmax
def test_fuse_softmax() -> None:
    def body(x):
        return rl.cast(rl.nn.softmax(x), dtype="float16")
    x = rl.var("x", shape=(16, 16))
    before = rl.Function([x], body(x))
    p0 = rl.var("p0", shape=(16, 16))
    f0 = prim([p0], body(p0))
    x = rl.var("x", shape=(16, 16))
    m = same(before, rl.Function([x], rl.Call(f0, [x])), level=2)
    inp = np.random.default_rng(0).standard_normal((16, 16)).astype("float32")
    e = np.exp(inp - inp.max(axis=1, keepdims=True))
    ref = (e / e.sum(axis=1, keepdims=True)).astype("float16")
    for result in (rl.evaluate(m, inp), rl.build(m, target="llvm")(inp)):
        np.testing.assert_allclose(np.asarray(result), ref, rtol=1e-3, atol=1e-3)


# Not one of TVM's tests: the tuple nodes that made TVM's tests pass, at their edges (a
# projection of a tuple literal, of a parameter, of a call's result; tuples of non-tensors;
# a tuple used twice), each through the harness (re-parse, idempotence, values)
@pytest.mark.parametrize("body", [
    "(%a, %b).0",
    "add((%a, %b).1, 1f)",
    "%0 = (%a, %b); (%0, %0.0)",
    "%0 = (%a, %b); concatenate(%0) ",
    "%0 = (%a, %b); %1 = concatenate(%0); (%1, %0)",
    "%0 = ((%a, %b), %a); %1 = %0.0; add(%1.1, %0.1)",
    "%0 = split(%a, indices_or_sections=2); (%0, exp(%0.1))",
    "%0 = split(%a, indices_or_sections=2); %1 = concatenate((%0.1, %0.0)); add(%1, %b)",
    "%0 = (%t.0, %b); add(concatenate(%0), 1f)",
    "%0 = annotation.stop_fusion((%a, %b)); concatenate(%0)",
])
def test_tuple_edges(body: str) -> None:
    mod = rl.parse('#[version = "0.0.5"]\ndef @main(%a: Tensor[(2, 4), float32], '
                   '%b: Tensor[(2, 4), float32], %t: (Tensor[(2, 4), float32], int32)) '
                   f'{{ {body} }}')
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((2, 4)).astype("float32") for _ in range(3))
    args = (a, b, (c, np.array(3, "int32")))
    want = rl.evaluate(mod, *args)
    for level in (0, 2):
        got = rl.build(fuse(mod["main"], level), target="llvm")(*args)
        for w, g in zip(flat(want), flat(got)):
            np.testing.assert_allclose(g, w, rtol=1e-6)


def flat(value) -> list[np.ndarray]:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in flat(v)]
    return [np.asarray(value)]
