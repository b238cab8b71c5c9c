"""The scans cumsum and cumprod (transform family): TVM's ScanopAttrs, ScanopRel and
topi's scanop, checked against an independent element-by-element formula."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run, shape

import relaylang as rl
from relaylang.ir.node import ANY
from relaylang.ir.types import IncompleteType
from relaylang.op import get_op_def
from relaylang.op.signature import op_signature

SCANS = ("cumsum", "cumprod")


# ---------------------------------------------------------------- registration

@pytest.mark.parametrize("name", SCANS)
def test_scan_registered_as_in_tvm(name):
    d = get_op_def(name)
    assert d.num_inputs == 1 and d.input_names == ("data",)
    assert d.attrs.type_key == "relay.attrs.ScanopAttrs"
    assert d.attrs.field_defaults() == [("axis", None), ("dtype", ""), ("exclusive", False)]
    assert d.pattern == rl.op.OpPattern.OPAQUE          # kOpaque in transform.cc
    assert (d.layout, d.scale_axis, d.fast_math) == (None, None, None)
    assert get_op_def("cumsum").attrs is get_op_def("cumprod").attrs


def test_scan_signature_and_doc():
    sig = op_signature("cumsum")
    assert sig.label == 'cumsum(data, axis=None, dtype="", exclusive=False)'
    assert sig.doc.startswith("Cumulative sum of the elements along `axis`")
    assert op_signature("cumprod").doc.startswith("Cumulative product")


# ---------------------------------------------------------------- relation

@pytest.mark.parametrize("name", SCANS)
def test_scan_keeps_shape_along_an_axis(name):
    assert shape(name, T((2, 3, 4)), axis=1) == (2, 3, 4)
    assert shape(name, T((2, 3, 4)), axis=-1) == (2, 3, 4)
    assert shape(name, T((2, 3, 4)), axis=-3) == (2, 3, 4)
    assert shape(name, T((2, ANY)), axis=1) == (2, ANY)


@pytest.mark.parametrize("name", SCANS)
def test_scan_without_axis_flattens(name):
    assert shape(name, T((2, 3, 4))) == (24,)
    assert shape(name, T((5,))) == (5,)
    assert shape(name, T(())) == (1,)                   # a scalar scans as a vector of one
    assert shape(name, T((2, 0, 3))) == (0,)
    assert shape(name, T((2, ANY))) == (ANY,)


def test_scan_dtype_override_and_exclusive():
    assert rel("cumsum", T((2, 3), "int8")).dtype == "int8"
    assert rel("cumsum", T((2, 3), "int8"), dtype="int64").dtype == "int64"
    assert rel("cumprod", T((2, 3)), dtype="float16", axis=0).dtype == "float16"
    assert rel("cumsum", T((2, 3), "int32"), dtype="float").dtype == "float32"   # canonical
    out = rel("cumsum", T((2, 3)), axis=0, exclusive=True)
    assert (out.shape, out.dtype) == ((2, 3), "float32")
    assert rel("cumsum", T((2, 3)), exclusive=None).shape == (6,)          # TVM's null Bool


def test_scan_relation_errors():
    rel_error("cumsum", [T((2, 3))], "axis 2 is out of range for a tensor of rank 2", 0, axis=2)
    rel_error("cumsum", [T((2, 3))], "axis -3 is out of range", 0, axis=-3)
    rel_error("cumprod", [T(())], "axis 0 is out of range for a tensor of rank 0", 0, axis=0)
    rel_error("cumsum", [T((2,))], "`float13` is not a dtype", None, dtype="float13")


def test_scan_waits_for_an_unknown_input():
    assert rel("cumsum", IncompleteType(), axis=0) is None


# ---------------------------------------------------------------- kernel

def _wrap(value: int, dtype: np.dtype) -> int:
    """An integer as a `dtype` accumulator holds it: wrapped (bool: the lowest bit)."""
    if dtype.kind == "b":
        return value & 1
    info = np.iinfo(dtype)
    return (value - info.min) % (info.max - info.min + 1) + info.min


def reference(x: np.ndarray, op: str, axis, dtype, exclusive) -> np.ndarray:
    """The scan, one output element at a time: fold the elements before it (and itself
    unless exclusive) along the axis, each cast to `dtype`, in Python numbers; integer
    (and bool) accumulators wrap after each step."""
    dtype = np.dtype(dtype or x.dtype)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = axis % x.ndim
    exact = dtype.kind != "f"
    out = np.zeros(x.shape, dtype=dtype)
    for index in itertools.product(*(range(n) for n in x.shape)):
        acc = 0 if op == "cumsum" else 1
        for k in range(index[axis] + (0 if exclusive else 1)):
            item = np.asarray(x[index[:axis] + (k,) + index[axis + 1:]]).astype(dtype)
            value = int(item) if exact else float(item)
            acc = acc + value if op == "cumsum" else acc * value
            if exact:
                acc = _wrap(acc, dtype)
        out[index] = acc
    return out


def _value(shape_, dtype, rng):
    if dtype == "bool":
        return rng.random(shape_) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-3 if np.dtype(dtype).kind == "i" else 0, 4,
                            size=shape_).astype(dtype)
    return rng.uniform(0.5, 1.5, size=shape_).astype(dtype)


CASES = [
    ("cumsum", (2, 3, 4), "float32", 1, "", False),
    ("cumsum", (2, 3, 4), "float32", -1, "", True),
    ("cumsum", (3, 4), "float64", None, "", False),
    ("cumsum", (3, 4), "int32", None, "", True),
    ("cumsum", (4, 5), "int8", 1, "int8", False),         # wraps in int8
    ("cumsum", (4, 5), "int8", 0, "int64", True),
    ("cumsum", (2, 5), "bool", 1, "", False),             # 1-bit: the parity
    ("cumsum", (2, 5), "bool", 1, "int32", False),        # counts
    ("cumsum", (), "float32", None, "", False),
    ("cumsum", (3, 0), "float32", 1, "", True),
    ("cumprod", (2, 3, 4), "float32", 0, "", False),
    ("cumprod", (2, 3, 4), "float32", 2, "", True),
    ("cumprod", (3, 4), "int32", None, "", False),
    ("cumprod", (3, 6), "uint8", 1, "", True),            # wraps in uint8
    ("cumprod", (2, 5), "bool", 1, "", True),             # all so far
    ("cumprod", (3, 4), "int16", -2, "float32", False),
]


@pytest.mark.parametrize("op, shape_, dtype, axis, out_dtype, exclusive", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_scan_kernel_matches_elementwise_formula(op, shape_, dtype, axis, out_dtype,
                                                 exclusive):
    x = _value(shape_, dtype, np.random.default_rng(sum(map(ord, op)) + len(shape_)))
    got = run(op, x, axis=axis, dtype=out_dtype, exclusive=exclusive)
    want = reference(x, op, axis, out_dtype, exclusive)
    out = rel(op, T(shape_, dtype), axis=axis, dtype=out_dtype, exclusive=exclusive)
    assert got.shape == out.shape and str(got.dtype) == out.dtype
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        assert got.tolist() == want.tolist()


def test_scan_kernel_examples():
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype="int32")
    assert run("cumsum", x, axis=1).tolist() == [[1, 3, 6], [4, 9, 15]]
    assert run("cumsum", x, axis=1, exclusive=True).tolist() == [[0, 1, 3], [0, 4, 9]]
    assert run("cumsum", x).tolist() == [1, 3, 6, 10, 15, 21]
    assert run("cumprod", x, axis=0).tolist() == [[1, 2, 3], [4, 10, 18]]
    assert run("cumprod", x, exclusive=True).tolist() == [1, 1, 2, 6, 24, 120]
    assert run("cumsum", np.array(7.5, "float32")).tolist() == [7.5]
    big = np.array([100, 100, 100], dtype="int8")
    assert run("cumsum", big).tolist() == [100, -56, 44]                     # wraps
    assert run("cumsum", big, dtype="int32").tolist() == [100, 200, 300]
    assert math.isinf(run("cumprod", np.full(3, 1e30, "float32"))[-1])      # no warning


# ---------------------------------------------------------------- text and programs

def test_scan_parses_prints_and_runs():
    text = ('#[version = "0.0.5"]\n'
            'def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n'
            '  cumsum(%x, axis=1, exclusive=True)\n'
            '}\n')
    mod = rl.parse(text)
    assert rl.astext(mod) == text
    assert rl.structural_equal(rl.parse(rl.astext(mod)), mod)
    call = mod["main"].body
    assert (call.attrs.axis, call.attrs.exclusive, call.attrs.dtype) == (1, True, "")
    typed = rl.transform.InferType()(mod)
    assert typed["main"].body.checked_type.shape == (2, 3)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    assert rl.evaluate(mod, x).tolist() == [[0, 0, 1], [0, 3, 7]]


def test_scan_flattening_types_in_a_program():
    mod = rl.parse('#[version = "0.0.5"]\n'
                   'def @main(%x: Tensor[(2, ?), int32]) {\n'
                   '  cumprod(%x, dtype="int64")\n'
                   '}\n')
    ty = rl.transform.InferType()(mod)["main"].body.checked_type
    assert (ty.shape, ty.dtype) == ((ANY,), "int64")


def test_scan_folds_as_a_constant():
    mod = rl.parse('#[version = "0.0.5"]\n'
                   'def @main() {\n'
                   '  cumsum(ones(shape=[4], dtype="int32"), exclusive=True)\n'
                   '}\n')
    folded = rl.transform.FoldConstant()(rl.transform.InferType()(mod))
    assert folded["main"].body.data.tolist() == [0, 1, 2, 3]
