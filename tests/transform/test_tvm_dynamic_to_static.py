"""DynamicToStatic against TVM v0.19's tests/python/relay/test_pass_dynamic_to_static.py: the
tests that bind tensors as constants, built with the IR builder (the others are golden
cases in tests/golden/tvm/dynamic_to_static/). The pass runs through the golden harness
(re-parse, idempotence, same values on the interpreter); as TVM checks, the result is a
call of the static op and computes TVM's reference result."""
from __future__ import annotations

import numpy as np
from tvm_golden import run_golden

import relaylang as rl
from relaylang.ir.expr import Call
from relaylang.ir.module import IRModule


def to_static(params, body, op: str) -> IRModule:
    after = run_golden(IRModule.from_expr(rl.Function(params, body)),
                       "DynamicToStatic,InferType")
    out = after["main"].body
    assert isinstance(out, Call) and out.op.name == op, rl.astext(after)
    return after


# TVM's test_dynamic_to_static_pad (pad_width bound as a constant; the pad value in the
# data's dtype)
def test_dynamic_to_static_pad() -> None:
    for shape, width, value, dtype in (((4, 10, 7, 7), ((1, 1), (2, 2), (3, 3), (4, 4)), 2,
                                        "int32"),
                                       ((2, 7), ((1, 4), (2, 2)), 4.0, "float64")):
        x = rl.var("x", shape=shape, dtype=dtype)
        body = rl.dyn.nn.pad(x, rl.const(np.array(width, "int32")), rl.const(value, dtype))
        after = to_static([x], body, "nn.pad")
        data = np.random.default_rng(0).uniform(size=shape).astype(dtype)
        np.testing.assert_allclose(rl.evaluate(after, data),
                                   np.pad(data, width, "constant", constant_values=value))


def _slice_ref(data, begin, end, strides, mode):
    """TVM's topi.testing.strided_slice_python."""
    slices = []
    for i in range(len(data.shape)):
        b = begin[i] if i < len(begin) else 0
        s = strides[i] if i < len(strides) else 1
        if mode == "size":
            e = data.shape[i] if (i >= len(end) or end[i] < 0) else b + end[i]
            s = 1
        else:
            e = end[i] if i < len(end) else data.shape[i]
        slices.append(slice(b, e, s))
    return data[tuple(slices)]


# TVM's test_dynamic_to_static_strided_slice (its twelve cases; begin, end and strides
# bound as constants)
def test_dynamic_to_static_strided_slice() -> None:
    cases = [((1, 3, 10, 10), [0, 0, 0, 0], [1, 3, 10, 10], [1], "end", "int64"),
             ((1, 224, 224, 3), [0, 20, 20, 0], [1, 140, 140, 3], [1, 1, 1, 1], "end", "int64"),
             ((3, 4, 3), [1, 1, 0], [4, 4, 3], [2, 1, 1], "end", "int16"),
             ((3, 4, 3), [0, 0, 0], [4, -5, 4], [1, -1, 2], "end", "int32"),
             ((3, 4, 3), [1, 1, 0], [4, 4, 3], None, "end", "int32"),
             ((3, 4, 3), [1, 1, 0], [4, 1000, 3], None, "end", "int32"),
             ((3, 4, 3), [1, 1, 0], [4, 4, 4], None, "end", "int32"),
             ((3, 4, 3), [1, 1, 0], [4, 4, 3], None, "end", "int32"),
             ((3, 4, 3), [1, -1, 0], [4, -5, 3], [2, -1, 1], "end", "int32"),
             ((3, 4, 3), [1, -1, 0], [2, -3, 3], [1, -1, 1], "end", "int32"),
             ((3, 4, 3), [1, 0, 0], [3, -1, 3], [1, 1, 1], "size", "int32"),
             ((3, 4, 3), [1, 0, 0], [-1, 2, 3], [1, 1, 1], "size", "int32")]
    for shape, begin, end, strides, mode, dtype in cases:
        strides = (strides * len(shape) if len(strides) == 1 else strides) if strides \
            else [1] * len(shape)
        x = rl.var("x", shape=shape)
        consts = [rl.const(np.array(v, dtype)) for v in (begin, end, strides)]
        after = to_static([x], rl.dyn.strided_slice(x, *consts, slice_mode=mode),
                          "strided_slice")
        data = np.random.default_rng(0).uniform(size=shape).astype("float32")
        np.testing.assert_allclose(rl.evaluate(after, data),
                                   _slice_ref(data, begin, end, strides, mode))


# TVM's test_dynamic_to_static_dynamic_if: an `if` on a constant (TVM's int 1; a bool here)
# folds to its branch, a static reshape. A difference kept (docs/TVM_DIFFERENCES.md): TVM's
# branches have different types ((1, 4) and (4, 1)), which TVM's pass accepts because it
# folds the `if` before typing it; relaylang type-checks the module first and rejects that
# program, so the else-branch here has the then-branch's type.
def test_dynamic_to_static_dynamic_if() -> None:
    x = rl.var("x", shape=(2, 2), dtype="int64")
    other = rl.reshape(rl.transpose(x), newshape=[1, 4])
    body = rl.If(rl.const(True), rl.reshape(x, newshape=[1, 4]), other)
    after = to_static([x], body, "reshape")
    data = np.arange(4, dtype="int64").reshape(2, 2)
    np.testing.assert_array_equal(rl.evaluate(after, data), data.reshape(1, 4))


def _topk_ref(data, k, axis, is_ascend):
    """TVM's reference: argsort (descending: of -data), the first k (all when k < 1)."""
    order = np.argsort(data if is_ascend else -data, axis=axis, kind="stable")
    kk = k if k >= 1 else data.shape[axis]
    indices = np.take(order, np.arange(kk), axis=axis)
    return np.take_along_axis(data, indices, axis=axis), indices


# TVM's test_dynamic_to_static_topk (k bound as a constant). A difference kept
# (docs/TVM_DIFFERENCES.md): TVM's descending cases ask for float32 indices, which
# relaylang's topk rejects (its indices are integers); they use int32 here.
def test_dynamic_to_static_topk() -> None:
    shape = (20, 100)
    data = np.random.default_rng(0).uniform(size=shape).astype("float32")
    for k in (0, 1, 5):
        for axis in (0, -1, 1):
            for ret_type in ("both", "values", "indices"):
                for is_ascend, dtype in ((True, "int64"), (False, "int32")):
                    x = rl.var("x", shape=shape)
                    body = rl.dyn.topk(x, rl.const(np.array(k, "int32")), axis=axis,
                                       ret_type=ret_type, is_ascend=is_ascend, dtype=dtype)
                    after = to_static([x], body, "topk")
                    values, indices = _topk_ref(data, k, axis, is_ascend)
                    out = rl.evaluate(after, data)
                    if ret_type == "both":
                        np.testing.assert_allclose(out[0], values)
                        np.testing.assert_array_equal(out[1], indices.astype(dtype))
                    elif ret_type == "values":
                        np.testing.assert_allclose(out, values)
                    else:
                        np.testing.assert_array_equal(out, indices.astype(dtype))
                        assert out.dtype == dtype


def _resize_ref(data, out_size, axes, method, mode):
    """topi.testing's resize: per axis, the source coordinate of each output position
    (align_corners or asymmetric), nearest by floor (round for align_corners) or linear."""
    out = data.astype("float64")
    for axis, m in zip(axes, out_size):
        n = out.shape[axis]
        x = np.arange(m, dtype="float64")
        if mode == "align_corners":
            src = x * (n - 1) / (m - 1) if m > 1 else x * 0
        elif mode == "asymmetric":
            src = x * n / m
        else:                                            # half_pixel
            src = (x + 0.5) * n / m - 0.5
        if method == "nearest_neighbor":
            idx = np.floor(src + 0.5) if mode == "align_corners" else np.floor(src + 1e-5)
            out = np.take(out, np.clip(idx, 0, n - 1).astype(int), axis=axis)
            continue
        lo = np.floor(src)
        t = (src - lo).reshape([-1 if a == axis % out.ndim else 1 for a in range(out.ndim)])
        a = np.take(out, np.clip(lo, 0, n - 1).astype(int), axis=axis)
        b = np.take(out, np.clip(lo + 1, 0, n - 1).astype(int), axis=axis)
        out = a * (1 - t) + b * t
    return out


# TVM's test_dynamic_to_static_resize2d (size bound as a float32 constant, the roi TVM's
# wrapper gives, [0, 0, 0, 0]). TVM computes the reference and does not compare it; it
# is compared here.
def test_dynamic_to_static_resize2d() -> None:
    shape, scale = (1, 4, 4, 4), 2
    data = np.random.default_rng(0).uniform(low=-1, high=1, size=shape).astype("float32")
    for method in ("linear", "nearest_neighbor"):
        for layout in ("NCHW", "NHWC"):
            hw = (1, 2) if layout == "NHWC" else (2, 3)
            size = tuple(shape[a] * scale for a in hw)
            mode = "asymmetric" if method == "nearest_neighbor" else "align_corners"
            x = rl.var("x", shape=shape)
            body = rl.dyn.image.resize2d(x, rl.const(np.array(size, "float32")),
                                         rl.const(np.zeros(4, "float32")), layout=layout,
                                         method=method,
                                         coordinate_transformation_mode=mode)
            after = to_static([x], body, "image.resize2d")
            assert after["main"].body.attrs.size == size
            np.testing.assert_allclose(rl.evaluate(after, data),
                                       _resize_ref(data, size, hw, method, mode),
                                       rtol=1e-5, atol=1e-6)


# TVM's test_dynamic_to_static_upsampling (scale_h, scale_w bound as float32 constants).
# TVM's data is uniform in [0, 1) cast to int8/int32, all zeros; random integers here.
def test_dynamic_to_static_upsampling() -> None:
    rng = np.random.default_rng(0)
    for shape, sh, sw, dtype in (((1, 16, 32, 32), 2, 2, "int8"),
                                 ((1, 16, 32, 32), 4, 4, "int32")):
        x = rl.var("x", shape=shape, dtype=dtype)
        body = rl.dyn.nn.upsampling(x, rl.const(np.array(sh, "float32")),
                                    rl.const(np.array(sw, "float32")))
        after = to_static([x], body, "nn.upsampling")
        data = rng.integers(-100, 100, size=shape).astype(dtype)
        expected = _resize_ref(data, (shape[2] * sh, shape[3] * sw), (2, 3),
                               "nearest_neighbor", "asymmetric").astype(dtype)
        np.testing.assert_array_equal(rl.evaluate(after, data), expected)


# TVM's test_dynamic_to_static_upsampling3d (the three scales bound as float32 constants;
# the op's default coordinate mode, half_pixel). TVM compares against an asymmetric
# reference on all-zero data (uniform in [0, 1) cast to integers), which any mode passes;
# here random integers against a half_pixel reference (floor, as topi's default rounding).
def test_dynamic_to_static_upsampling3d() -> None:
    rng = np.random.default_rng(0)
    for shape, scales, dtype in (((1, 1, 1, 1, 1), (2, 3, 4), "int8"),
                                 ((5, 7, 8, 10, 32), (3, 2, 2), "int8"),
                                 ((1, 4, 2, 5, 3), (5, 4, 3), "int32")):
        x = rl.var("x", shape=shape, dtype=dtype)
        body = rl.dyn.nn.upsampling3d(x, *(rl.const(np.array(s, "float32")) for s in scales))
        after = to_static([x], body, "nn.upsampling3d")
        data = rng.integers(-100, 100, size=shape).astype(dtype)
        out_size = tuple(n * s for n, s in zip(shape[2:], scales))
        expected = _resize_ref(data, out_size, (2, 3, 4), "nearest_neighbor",
                               "half_pixel").astype(dtype)
        np.testing.assert_array_equal(rl.evaluate(after, data), expected)
        zeros = np.zeros(shape, dtype)        # TVM's own data and reference
        np.testing.assert_array_equal(rl.evaluate(after, zeros),
                                      np.zeros(shape[:2] + out_size, dtype))


# TVM's test_dyn_to_static_sparse_to_dense (output_shape a constant; TVM's wrapper
# `relay.sparse_to_dense(a, const, b, c)` makes dyn.sparse_to_dense of an Expr shape).
def test_dyn_to_static_sparse_to_dense() -> None:
    cases = [(1, 3, 0, [5], [0, 3, 0, 0, 0]),
             ([0, 1, 4], [3, 3, 3], 0, [5], [3, 3, 0, 0, 3]),
             ([[0, 0], [1, 2]], [1, 2], 0, [3, 4], [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]),
             ([[0, 0, 0], [1, 2, 3]], [1, 2], 4, [2, 3, 4],
              [[[1, 4, 4, 4], [4, 4, 4, 4], [4, 4, 4, 4]],
               [[4, 4, 4, 4], [4, 4, 4, 4], [4, 4, 4, 2]]]),
             ([0, 1, 4], [3.1, 3.1, 3.1], 3.5, [5], [3.1, 3.1, 3.5, 3.5, 3.1]),
             (1, 3, None, [5], [0, 3, 0, 0, 0])]
    for indices, values, default, output_shape, expected in cases:
        ind, val = np.array(indices), np.array(values)
        a = rl.var("a", shape=ind.shape, dtype=str(ind.dtype))
        b = rl.var("b", shape=val.shape, dtype=str(val.dtype))
        params, args = [a, b], [ind, val]
        if default is None:                      # TVM's wrapper: const(0), an int32
            c = rl.const(np.array(0, "int32"))
        else:
            dv = np.array(default)
            c = rl.var("c", shape=(), dtype=str(dv.dtype))
            params.append(c)
            args.append(dv)
        body = rl.dyn.sparse_to_dense(a, b, c, rl.const(np.array(output_shape)))
        typed = rl.transform.InferType()(IRModule.from_expr(rl.Function(params, body)))
        assert len(typed["main"].body.checked_type.shape) == len(output_shape)
        after = to_static(params, body, "sparse_to_dense")
        out = rl.evaluate(after, *args)
        assert out.dtype == val.dtype
        np.testing.assert_allclose(out, np.array(expected, val.dtype))
