"""ONNX reductions and ArgMax/ArgMin against onnxruntime, on both backends."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper
from onnx_check import check_model, make_model, run_relay

import relaylang as rl
from relaylang.frontend.onnx import OnnxImportError

REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
              "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
# the opset from which the axes are an input
INPUT_SINCE = {op: (13 if op == "ReduceSum" else 18) for op in REDUCE_OPS}

def _rng(*key: object) -> np.random.Generator:
    """A generator seeded by `key`: the same data whatever order the tests run in."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _data(op_type: str, shape: tuple[int, ...], dtype: str = "float32") -> np.ndarray:
    rng = _rng(op_type, shape, dtype)
    if dtype.startswith(("int", "uint")):
        lo = 1 if op_type == "ReduceLogSum" else (-3 if dtype.startswith("int") else 0)
        return rng.integers(lo, 4, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    x = rng.standard_normal(shape).astype(dtype)
    if op_type == "ReduceLogSum":
        return np.abs(x) + np.asarray(0.1, dtype)
    if op_type == "ReduceProd":                  # keep products away from under/overflow
        return (np.sign(x) * (0.5 + np.abs(x) / 2)).astype(dtype)
    return x


def _model(op_type: str, shape: tuple[int, ...], dtype: str, opset: int,
           axes: list[int] | None = None, empty_axes_input: bool = False,
           outputs: object = ("y",), **attrs):
    """One reduction node: `axes` as the attribute or the input the opset wants (None:
    omitted; `empty_axes_input`: an empty axes input)."""
    inputs, inits = ["x"], {}
    if opset >= INPUT_SINCE[op_type]:
        if axes is not None or empty_axes_input:
            inputs.append("axes")
            inits["axes"] = np.asarray(axes or [], np.int64)
    elif axes is not None:
        attrs["axes"] = axes
    node = helper.make_node(op_type, inputs, ["y"], **attrs)
    return make_model([node], inputs={"x": (shape, dtype)}, outputs=outputs,
                      initializers=inits, opset=opset)


def _check(op_type: str, shape: tuple[int, ...], dtype: str = "float32", opset: int = 18,
           axes: list[int] | None = None, x: np.ndarray | None = None, **attrs) -> None:
    empty = attrs.pop("empty_axes_input", False)
    model = _model(op_type, shape, dtype, opset, axes, empty, **attrs)
    check_model(model, {"x": _data(op_type, shape, dtype) if x is None else x})


# (shape, axes, keepdims): size-1 dims, odd sizes, negative axes, all axes listed
CASES = [((1, 5, 1), [1], 1),
         ((3, 1, 7), [-1, 0], 0),
         ((2, 3, 5), [0, 1, 2], 0),
         ((4, 3, 2, 3), [-3, 3], 1),
         ((5,), [-1], 0)]


@pytest.mark.parametrize("op_type", REDUCE_OPS)
@pytest.mark.parametrize("attr_form", [True, False], ids=["axes_attr", "axes_input"])
def test_reductions_over_awkward_shapes(op_type: str, attr_form: bool) -> None:
    opset = 11 if attr_form else INPUT_SINCE[op_type]
    for shape, axes, keepdims in CASES:
        _check(op_type, shape, opset=opset, axes=axes, keepdims=keepdims)


@pytest.mark.parametrize("op_type", REDUCE_OPS)
def test_oldest_opsets_and_the_last_attribute_opset(op_type: str) -> None:
    # opset 1 (axes attribute, non-negative axes) and the last opset before the input
    _check(op_type, (3, 4), opset=1, axes=[1], keepdims=1)
    _check(op_type, (2, 3, 3), opset=INPUT_SINCE[op_type] - 1, axes=[-2], keepdims=0)


@pytest.mark.parametrize("op_type", REDUCE_OPS)
@pytest.mark.parametrize("opset", ["attr", "input"])
def test_no_axes_reduce_everything_and_keepdims_defaults_to_1(op_type: str,
                                                               opset: str) -> None:
    version = 11 if opset == "attr" else INPUT_SINCE[op_type]
    _check(op_type, (3, 1, 4), opset=version)                     # keepdims default: 1
    _check(op_type, (3, 1, 4), opset=version, keepdims=0)         # a scalar
    if opset == "input":
        _check(op_type, (2, 5), opset=version, empty_axes_input=True, keepdims=0)
        _check(op_type, (2, 5), opset=version, empty_axes_input=True,
               noop_with_empty_axes=0)


@pytest.mark.parametrize("op_type", REDUCE_OPS)
def test_noop_with_empty_axes(op_type: str) -> None:
    # no axes + noop: each element reduced alone (L1 -> |x|, SumSquare -> x*x, ...)
    opset = INPUT_SINCE[op_type]
    _check(op_type, (2, 1, 3), opset=opset, noop_with_empty_axes=1)
    _check(op_type, (3, 5), opset=opset, empty_axes_input=True, noop_with_empty_axes=1,
           keepdims=0)
    # axes given: noop does not matter
    _check(op_type, (3, 5), opset=opset, axes=[0], noop_with_empty_axes=1, keepdims=0)


def test_reduce_sum_opset_12_attribute_and_13_input() -> None:
    x = _data("ReduceSum", (2, 3, 4))
    check_model(_model("ReduceSum", (2, 3, 4), "float32", 12, [2, 0]), {"x": x})
    check_model(_model("ReduceSum", (2, 3, 4), "float32", 13, [2, 0]), {"x": x})
    check_model(_model("ReduceSum", (2, 3, 4), "float32", 13, [2, 0], keepdims=0), {"x": x})


@pytest.mark.parametrize("op_type", REDUCE_OPS)
def test_rank_zero_input(op_type: str) -> None:
    x = np.asarray(1.75, np.float32)
    _check(op_type, (), opset=11, x=x)
    _check(op_type, (), opset=INPUT_SINCE[op_type], x=x, keepdims=0)


INT_OPS = [op for op in REDUCE_OPS if op != "ReduceLogSumExp"]


@pytest.mark.parametrize("op_type", INT_OPS)
@pytest.mark.parametrize("dtype", ["int32", "int64", "float64"])
def test_dtypes(op_type: str, dtype: str) -> None:
    # integer ReduceMean truncates toward zero; integer ReduceL2/ReduceLogSum truncate
    # their float64 result
    _check(op_type, (3, 1, 5), dtype, opset=11, axes=[-1, 1], keepdims=0)
    _check(op_type, (2, 7), dtype, opset=INPUT_SINCE[op_type], axes=[1])
    _check(op_type, (2, 7), dtype, opset=INPUT_SINCE[op_type])


def test_integer_mean_truncates_and_l2_logsum_round_toward_zero() -> None:
    x = np.array([[-3, -4, 0], [7, 1, 0], [-1, 0, 0]], np.int32)
    _check("ReduceMean", x.shape, "int32", opset=18, axes=[1], x=x)
    y = np.array([[3, 4], [1, 1], [5, 6], [0, 0]], np.int64)
    _check("ReduceL2", y.shape, "int64", opset=18, axes=[1], x=y)
    _check("ReduceL2", y.shape, "int64", opset=18, x=-y, noop_with_empty_axes=1)
    _check("ReduceLogSum", y.shape, "int64", opset=18, axes=[1], x=y + 1)


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_max_min_small_integers(op_type: str, dtype: str) -> None:
    _check(op_type, (4, 3), dtype, opset=12, axes=[0], keepdims=0)
    _check(op_type, (4, 3), dtype, opset=18, axes=[-1])


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin"])
def test_max_min_bool_from_opset_20(op_type: str) -> None:
    _check(op_type, (3, 4), "bool", opset=20, axes=[1], keepdims=0)
    _check(op_type, (3, 4), "bool", opset=20)
    x = np.array([[True, True], [False, False], [True, False]])
    _check(op_type, x.shape, "bool", opset=20, axes=[1], x=x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_sum_exp_extremes(dtype: str) -> None:
    inf, nan = np.inf, np.nan
    x = np.array([[1, inf, 3], [-inf, -inf, -inf], [1000, 999, 1], [inf, -inf, 2],
                  [nan, 1, 2], [-1000, -1001, -1002], [88, 89, 90], [0, 0, 0]], dtype)
    for opset in (11, 18):
        _check("ReduceLogSumExp", x.shape, dtype, opset=opset, axes=[1], x=x)
        _check("ReduceLogSumExp", x.shape, dtype, opset=opset, axes=[-1], x=x, keepdims=0)
    some = x[[0, 2, 5, 7]]
    _check("ReduceLogSumExp", some.shape, dtype, opset=18, x=some, noop_with_empty_axes=1)
    finite = x[[2, 5, 6, 7]]
    _check("ReduceLogSumExp", finite.shape, dtype, opset=18, axes=[0], x=finite, keepdims=0)


@pytest.mark.parametrize("op_type", [op for op in REDUCE_OPS if op != "ReduceMean"])
def test_reductions_over_no_elements(op_type: str) -> None:
    # sum/L1/L2/SumSquare 0, prod 1, max -inf, min +inf, LogSum/LogSumExp -inf
    # (ReduceMean of nothing is left out: onnxruntime gives 0, ONNX leaves it undefined)
    _check(op_type, (2, 0, 3), opset=INPUT_SINCE[op_type], axes=[1])
    _check(op_type, (2, 0, 3), opset=11, axes=[1, 2], keepdims=0)


# ---------------------------------------------------------------- ArgMax / ArgMin

def _arg_model(op_type: str, shape: tuple[int, ...], dtype: str, opset: int,
               outputs: object = ("y",), **attrs):
    node = helper.make_node(op_type, ["x"], ["y"], **attrs)
    return make_model([node], inputs={"x": (shape, dtype)}, outputs=outputs, opset=opset)


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "int8", "uint8"])
def test_arg_reductions(op_type: str, dtype: str) -> None:
    shapes = [((1, 5, 1), 1), ((3, 1, 7), -1), ((4, 3, 2), 0), ((5,), 0), ((2, 3, 5), -2)]
    for k, (shape, axis) in enumerate(shapes):
        # few distinct values: ties everywhere
        x = _rng(op_type, shape, dtype).integers(0, 3, size=shape).astype(dtype)
        for last in (0, 1):
            model = _arg_model(op_type, shape, dtype, 13, axis=axis, keepdims=(k + last) % 2,
                               select_last_index=last)
            check_model(model, {"x": x})


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
def test_arg_reductions_defaults_and_opsets(op_type: str) -> None:
    x = _rng(op_type).integers(0, 3, size=(4, 3, 5)).astype(np.float32)
    check_model(_arg_model(op_type, x.shape, "float32", 1), {"x": x})      # axis 0, keepdims
    check_model(_arg_model(op_type, x.shape, "float32", 1, axis=2, keepdims=0), {"x": x})
    check_model(_arg_model(op_type, x.shape, "float32", 11, axis=-1), {"x": x})
    check_model(_arg_model(op_type, x.shape, "float32", 12, axis=1, select_last_index=1),
                {"x": x})
    mod, _ = rl.frontend.from_onnx(_arg_model(op_type, x.shape, "float32", 13, axis=1))
    out = mod["main"].body.checked_type
    assert (tuple(out.shape), out.dtype) == ((4, 1, 5), "int64")


# ---------------------------------------------------------------- refusals

def test_dynamic_axes_are_refused() -> None:
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"])
    model = make_model([node], inputs={"x": ((2, 3), "float32"), "axes": ((1,), "int64")},
                       outputs={"y": (["a", "b"], "float32")}, opset=13)
    with pytest.raises(OnnxImportError, match="axes input must be known at import.*'axes'"):
        rl.frontend.from_onnx(model)


UNKNOWN = {"y": (["a", "b"], "float32")}      # ONNX's inference cannot type a bad node


@pytest.mark.parametrize("axes,message", [([2], "out of range"), ([-3], "out of range"),
                                          ([1, -1], "listed twice")])
def test_bad_axes_are_refused(axes: list[int], message: str) -> None:
    for opset in (11, 18):
        model = _model("ReduceMean", (2, 3), "float32", opset, axes, outputs=UNKNOWN)
        with pytest.raises(OnnxImportError, match=message):
            rl.frontend.from_onnx(model)
    model = _arg_model("ArgMax", (2, 3), "float32", 13, outputs=UNKNOWN, axis=axes[0])
    if axes[0] in (2, -3):
        with pytest.raises(OnnxImportError, match="out of range"):
            rl.frontend.from_onnx(model)


def test_integer_log_sum_exp_is_refused() -> None:
    with pytest.raises(OnnxImportError, match="int32 input is not supported"):
        rl.frontend.from_onnx(_model("ReduceLogSumExp", (2, 3), "int32", 18, [1]))


@pytest.mark.parametrize("op_type", REDUCE_OPS)
def test_float16(op_type: str) -> None:
    # relaylang computes float16 in float32 and rounds per op: within ~2 float16 ulps
    x = _data(op_type, (3, 5), "float16")
    for axes in ([1], None):
        model = _model(op_type, (3, 5), "float16", INPUT_SINCE[op_type], axes, keepdims=0)
        check_model(model, {"x": x}, rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
def test_arg_reductions_float16(op_type: str) -> None:
    x = _rng(op_type, "float16").integers(0, 3, size=(3, 4, 5)).astype(np.float16)
    for last in (0, 1):
        check_model(_arg_model(op_type, x.shape, "float16", 13, axis=-1, keepdims=0,
                               select_last_index=last), {"x": x})


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin", "ArgMax", "ArgMin"])
def test_nan_as_onnx_reference(op_type: str) -> None:
    # NaN is the extremum (ONNX's reference evaluator, NumPy); onnxruntime skips NaNs
    # instead, so this case is checked against the reference evaluator
    from onnx.reference import ReferenceEvaluator
    x = np.array([[1, np.nan, 3], [2, 1, -1], [np.nan, np.nan, 0]], np.float32)
    if op_type.startswith("Arg"):
        model = _arg_model(op_type, x.shape, "float32", 13, axis=1, keepdims=0)
    else:
        model = _model(op_type, x.shape, "float32", 18, [1], keepdims=0)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    for target in ("interp", "llvm"):
        (got,) = run_relay(model, {"x": x}, target=target)
        assert got.dtype == (np.int64 if op_type.startswith("Arg") else np.float32)
        np.testing.assert_array_equal(got, want, err_msg=target)
