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
