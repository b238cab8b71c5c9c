"""FoldConstant against TVM v0.19's tests/python/relay/test_pass_fold_constant.py: each test
builds TVM's before and expected programs with the IR builder, runs the pass through the
golden harness (its automatic checks: re-parse, idempotence, same values on the
interpreter) and compares with TVM's expected program. Not applicable here (see
docs/TVM_DIFFERENCES.md): test_fold_ndarray_size (no ndarray_size op)."""
from __future__ import annotations

import numpy as np
from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.transform import InferType


# TVM's run_opt_pass: InferType, then the pass; the InferType after it types the new nodes,
# so that the printed output is the same when the pipeline runs again (idempotence).
def fold(expr, pipeline: str = "InferType,FoldConstant,InferType", skip: tuple[str, ...] = (),
         opt_level: int | None = None) -> IRModule:
    return run_golden(InferType()(IRModule.from_expr(expr)), pipeline, skip, opt_level)


def expect(expr) -> IRModule:
    return IRModule.from_expr(expr)


C3 = np.array([1, 2, 3], "float32")


# TVM's test_concatenate_const
def test_concatenate_const() -> None:
    c = rl.const(np.array([1.0, 2.0, 3.0]))
    after = fold(rl.Function([], rl.concatenate([c, c], axis=0)))
    assert_same(after, expect(rl.Function([], rl.const(np.array([1.0, 2, 3, 1, 2, 3])))))


def _fold_const_before(annotate: bool = False):
    c = rl.const(C3)
    x = rl.var("x", shape=(1, 2, 3))
    y = rl.multiply(rl.add(c, c), rl.const(2, "float32"))
    return rl.Function([x], rl.add(rl.add(x, y), c))


# TVM's test_fold_const
def test_fold_const() -> None:
    x = rl.var("x", shape=(1, 2, 3))
    body = rl.add(rl.add(x, rl.const((C3 + C3) * 2)), rl.const(C3))
    assert_same(fold(_fold_const_before()), expect(rl.Function([x], body)))


# TVM's test_fold_const_with_on_device (without virtual devices on %x and the function:
# relaylang has on_device annotations, not virtual_device fields on vars and functions)
def test_fold_const_with_on_device() -> None:
    c = rl.const(C3)
    x = rl.var("x", shape=(1, 2, 3))
    y = rl.multiply(rl.on_device(rl.add(c, c), constrain_result=True), rl.const(2, "float32"))
    before = rl.Function([x], rl.add(rl.add(x, y), c))
    x = rl.var("x", shape=(1, 2, 3))
    body = rl.add(rl.add(x, rl.const((C3 + C3) * 2)), rl.const(C3))
    assert_same(fold(before), expect(rl.Function([x], body)))


def _annot(e, on: bool):
    return rl.on_device(e, constrain_result=True) if on else e


def _fold_let(on: bool) -> None:
    c = np.array(1, "float32")
    x = rl.var("x", shape=(1,))
    t1, t2, t3 = rl.var("t1"), rl.var("t2"), rl.var("t3")
    before = rl.Function([x], rl.Let(t1, _annot(rl.const(c), on), rl.Let(
        t2, _annot(rl.add(t1, t1), on), rl.Let(t3, _annot(rl.add(t2, x), on), t3))))
    x = rl.var("x", shape=(1,))
    t3 = rl.var("t3")
    value = _annot(rl.add(_annot(rl.const(c + c), on), x), on)
    assert_same(fold(before), expect(rl.Function([x], rl.Let(t3, value, t3))))


# TVM's test_fold_let
def test_fold_let() -> None:
    _fold_let(False)


# TVM's test_fold_let_with_on_device: folded constants keep their on_device annotations
def test_fold_let_with_on_device() -> None:
    _fold_let(True)


# TVM's test_fold_tuple
def test_fold_tuple() -> None:
    c = rl.const(np.array(1, "float32"))
    x = rl.var("x", shape=(1,))
    y = rl.Tuple([x, c])
    z = rl.add(rl.add(rl.TupleGetItem(y, 1), c), rl.TupleGetItem(y, 0))
    before = rl.Function([x], z)
    x = rl.var("x", shape=(1,))
    expected = rl.Function([x], rl.add(rl.const(np.array(2, "float32")), x))
    assert_same(fold(before), expect(expected))


# TVM's test_fold_concat
def test_fold_concat() -> None:
    c = np.array([[1, 2, 3]], "float32")
    before = rl.Function([], rl.concatenate((rl.const(c), rl.const(c)), axis=0))
    expected = rl.Function([], rl.const(np.concatenate((c, c), axis=0)))
    assert_same(fold(before), expect(expected))


# TVM's test_fold_if (both conditions)
def test_fold_if() -> None:
    data = np.array([[1, 2, 3]], "float32")
    for cond, want in ((True, data + data), (False, data - data)):
        a, x, y = rl.const(np.array(cond)), rl.const(data), rl.const(data)
        before = rl.Function([], rl.If(a, rl.add(x, y), rl.subtract(x, y)))
        assert_same(fold(before), expect(rl.Function([], rl.const(want))))


# TVM's test_fold_shape_of: shape_of of a non-constant with a static shape folds
def test_fold_shape_of() -> None:
    for dtype in ("int32", "float32"):
        x, y = rl.var("x", shape=(8, 9, 10)), rl.var("y", shape=(8, 9, 10))
        before = rl.Function([x, y], rl.shape_of(rl.add(x, y), dtype=dtype))
        expected = rl.Function([x, y], rl.const(np.array((8, 9, 10)).astype(dtype), dtype))
        assert_same(fold(before), expect(expected))


# TVM's test_fold_batch_norm: SimplifyInference, FoldConstant and FoldScaleAxis turn
# conv2d + batch_norm with zero parameters into conv2d + a constant bias
def test_fold_batch_norm() -> None:
    data = rl.var("data", shape=(1, 3, 224, 224))
    weight = rl.const(np.zeros((16, 3, 3, 3), "float32"))
    zeros = rl.const(np.zeros((16,), "float32"))
    conv = rl.nn.conv2d(data, weight, kernel_size=(3, 3), channels=16, padding=(1, 1))
    bn = rl.TupleGetItem(rl.nn.batch_norm(conv, zeros, zeros, zeros, zeros), 0)
    after = fold(rl.Function([data], bn),
                 "InferType,SimplifyInference,FoldConstant,FoldScaleAxis,InferType", skip=("interp",),
                 opt_level=3)
    data = rl.var("data", shape=(1, 3, 224, 224))
    conv = rl.nn.conv2d(data, rl.const(np.zeros((16, 3, 3, 3))), kernel_size=(3, 3),
                        channels=16, padding=(1, 1))
    expected = rl.Function([data], rl.add(conv, rl.const(np.zeros((16, 1, 1)))))
    assert_same(after, expect(expected))


# TVM's test_fold_dropout: a stateful op (nn.dropout) is not folded
def test_fold_dropout() -> None:
    dropout = rl.nn.dropout(rl.const(np.arange(10).astype("float32")))
    before = rl.Function([], rl.add(rl.TupleGetItem(dropout, 0), rl.const(1.0)))
    assert_same(fold(before), expect(before))


# TVM's test_fold_quantize: qnn.quantize is folded only with fold_qnn=true
def test_fold_quantize() -> None:
    def before():
        q = rl.qnn.quantize(rl.const(np.array([1.0, 2.0, 3.0], "float32")), rl.const(0.5),
                            rl.const(0))
        x = rl.var("x", shape=(1, 2, 3), dtype="int8")
        return rl.Function([x], rl.subtract(x, q))
    assert_same(fold(before()), expect(before()))
    x = rl.var("x", shape=(1, 2, 3), dtype="int8")
    expected = rl.Function([x], rl.subtract(x, rl.const(np.array([2, 4, 6], "int8"))))
    assert_same(fold(before(), "InferType,FoldConstant{fold_qnn=true},InferType"), expect(expected))


QNN = "InferType,FoldConstant{fold_qnn=true},InferType"


# TVM's test_fold_qnn_const: qnn.add, qnn.dense of constants folded only with fold_qnn
def test_fold_qnn_const() -> None:
    def k(v, dtype=None):
        return rl.const(v, dtype) if dtype else rl.const(v)

    def tail(weight):
        a = rl.var("a", shape=(2, 3), dtype="float32")
        dense = rl.qnn.dense(rl.qnn.quantize(a, k(1.0), k(0)), weight,
                             input_zero_point=k(0), kernel_zero_point=k(0),
                             input_scale=k(2.0), kernel_scale=k(2.0), units=None)
        b = rl.var("b", shape=(2,), dtype="float32")
        bias = rl.qnn.add(dense, rl.qnn.quantize(b, k(1.0), k(0), out_dtype="int32"),
                          lhs_scale=k(2.0), lhs_zero_point=k(0), rhs_scale=k(2.0),
                          rhs_zero_point=k(0), output_scale=k(1.0), output_zero_point=k(0))
        return rl.Function([a, b], bias)

    def before():
        ones = k(np.ones((2, 3), "uint8"), "uint8")
        add = rl.qnn.add(ones, ones, lhs_scale=k(2.0), lhs_zero_point=k(0), rhs_scale=k(2.0),
                         rhs_zero_point=k(0), output_scale=k(1.0), output_zero_point=k(0))
        return tail(add)
    assert_same(fold(before()), expect(before()))
    expected = tail(k(np.array([[4, 4, 4], [4, 4, 4]], "uint8"), "uint8"))
    assert_same(fold(before(), QNN), expect(expected))


# TVM's test_fold_qnn_conv2d_qnn_mul
def test_fold_qnn_conv2d_qnn_mul() -> None:
    def before():
        ones = rl.const(np.ones((1, 1, 2, 2), "uint8"), "uint8")
        op0 = rl.qnn.conv2d(ones, ones, input_zero_point=rl.const(0, "int32"),
                            kernel_zero_point=rl.const(0, "int32"),
                            input_scale=rl.const(1.0, "float32"),
                            kernel_scale=rl.const(1.0, "float32"), kernel_size=(2, 2),
                            channels=1)
        one, zero = rl.const(1.0, "float32"), rl.const(0, "int32")
        op = rl.qnn.mul(op0, rl.const(np.array([10], "int32"), "int32"), one, zero, one, zero,
                        one, zero)
        return rl.Function([], op)
    assert_same(fold(before()), expect(before()))
    expected = rl.Function([], rl.const(np.array([[[[40]]]], "int32"), "int32"))
    assert_same(fold(before(), QNN), expect(expected))


# TVM's test_fold_requantize
def test_fold_requantize() -> None:
    def before():
        q = rl.qnn.requantize(rl.const(np.array([1, 2, 3], "int8"), "int8"),
                              input_scale=rl.const(2.0, "float32"),
                              input_zero_point=rl.const(1, "int32"),
                              output_scale=rl.const(1.0, "float32"),
                              output_zero_point=rl.const(1, "int32"))
        x = rl.var("x", shape=(3,), dtype="int8")
        return rl.Function([x], rl.add(q, x))
    assert_same(fold(before()), expect(before()))
    x = rl.var("x", shape=(3,), dtype="int8")
    expected = rl.Function([x], rl.add(rl.const(np.array([1, 3, 5], "int8"), "int8"), x))
    assert_same(fold(before(), QNN), expect(expected))


# TVM's test_pass_link_params (without the AOT executor attribute): an int8 constant is
# cast by the folder's evaluator
def test_pass_link_params() -> None:
    after = fold(rl.cast(rl.const(10, "int8"), dtype="int32"))
    assert_same(after, expect(rl.const(10, "int32")))
