"""Type relations and NumPy kernels of the tensor family (relaylang/op/tensor/__init__.py,
relaylang/op/tensor/numpy_kernels.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from relaylang.ir.attrs import make_attrs
from relaylang.ir.dtype import canonical_dtype
from relaylang.ir.node import ANY, MetaObject
from relaylang.ir.types import IncompleteType, TensorType, TupleType, TypeVar
from relaylang.op import get_op_def
from relaylang.op.numpy_support import np_dtype
from relaylang.op.relation import TypeRelError
from relaylang.op.tensor import BINARY, UNARY, CastAttrs, ClipAttrs

SYM = MetaObject("tir.SizeVar", '{"name": "n"}')


def T(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def rel(name, *args, attrs=None):
    return get_op_def(name).type_rel(list(args), attrs)


def run(name, *inputs, attrs=None):
    return get_op_def(name).kernel([np.asarray(x) for x in inputs], attrs)


def rel_error(name, *args, attrs=None) -> TypeRelError:
    with pytest.raises(TypeRelError) as info:
        rel(name, *args, attrs=attrs)
    return info.value


def cast_attrs(dtype):
    return make_attrs(CastAttrs, {"dtype": dtype})


def clip_attrs(lo, hi):
    return make_attrs(ClipAttrs, {"a_min": lo, "a_max": hi})


def same_type(a, b):
    return isinstance(a, TensorType) and isinstance(b, TensorType) \
        and a.shape == b.shape and a.dtype == b.dtype


# ---------------------------------------------------------------- unary relations

@pytest.mark.parametrize("name", sorted(n for n, (_, r) in UNARY.items() if r is None
                                        and n not in ("logical_not", "bitwise_not")))
def test_unary_keeps_shape_and_dtype(name):
    t = T((2, ANY, SYM), "float16")
    assert same_type(rel(name, t), t)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_classifiers_return_bool(name):
    assert same_type(rel(name, T((3, ANY))), T((3, ANY), "bool"))
    assert same_type(rel(name, T((), "int32")), T((), "bool"))


def test_unary_waits_for_unknown_argument():
    assert rel("exp", IncompleteType()) is None
    assert rel("exp", TypeVar("A")) is None


def test_unary_rejects_a_tuple():
    e = rel_error("exp", TupleType((T((1,)),)))
    assert "data must be a tensor" in e.message and e.arg == 0


def test_logical_not_needs_bool():
    assert same_type(rel("logical_not", T((4,), "bool")), T((4,), "bool"))
    e = rel_error("logical_not", T((4,), "int32"))
    assert "data must be a bool tensor, got dtype int32" in e.message and e.arg == 0


def test_bitwise_not_needs_integer_or_bool():
    assert same_type(rel("bitwise_not", T((4,), "uint8")), T((4,), "uint8"))
    assert same_type(rel("bitwise_not", T((4,), "bool")), T((4,), "bool"))
    e = rel_error("bitwise_not", T((4,), "float32"))
    assert "must be an integer or bool tensor, got dtype float32" in e.message and e.arg == 0


def test_clip_is_identity():
    t = T((ANY, 3), "int8")
    assert same_type(rel("clip", t, attrs=clip_attrs(0, 6)), t)


# ---------------------------------------------------------------- binary relations

@pytest.mark.parametrize("lhs, rhs, out", [
    ((3, 1, 5), (4, 5), (3, 4, 5)),
    ((), (2, 3), (2, 3)),
    ((2, 3), (), (2, 3)),
    ((ANY, 3), (4, 1), (4, 3)),         # a known non-1 size decides `?`
    ((ANY,), (1,), (ANY,)),
    ((ANY,), (ANY,), (ANY,)),
    ((1,), (ANY,), (ANY,)),
    ((SYM, 1), (1, 7), (SYM, 7)),
    ((SYM,), (SYM,), (SYM,)),
])
def test_broadcast_shapes(lhs, rhs, out):
    assert same_type(rel("add", T(lhs), T(rhs)), T(out))


def test_broadcast_failure_names_the_dimension():
    e = rel_error("multiply", T((2, 3)), T((4,)))
    assert "(2, 3) and (4,) do not broadcast" in e.message
    assert "dimension 1 is 3 against 4" in e.message
    assert e.arg == 1 and e.dim == 1


def test_binary_dtype_mismatch():
    e = rel_error("add", T((2,), "float32"), T((2,), "int32"))
    assert e.message == "lhs has dtype float32 but rhs has dtype int32" and e.arg == 1


def test_binary_rejects_non_tensor():
    e = rel_error("add", T((2,)), TupleType(()))
    assert "rhs must be a tensor" in e.message and e.arg == 1


def test_binary_waits_for_either_argument():
    assert rel("add", T((2,)), IncompleteType()) is None
    assert rel("add", IncompleteType(), T((2,))) is None


@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater",
                                  "greater_equal"])
def test_comparisons_return_bool(name):
    assert same_type(rel(name, T((2, 1), "int64"), T((3,), "int64")), T((2, 3), "bool"))


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_binaries_need_bool(name):
    assert same_type(rel(name, T((2,), "bool"), T((2,), "bool")), T((2,), "bool"))
    e = rel_error(name, T((2,), "int32"), T((2,), "int32"))
    assert "lhs must be a bool tensor, got dtype int32" in e.message and e.arg == 0


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_binaries_need_integers(name):
    assert same_type(rel(name, T((2,), "int16"), T((2,), "int16")), T((2,), "int16"))
    e = rel_error(name, T((2,), "float32"), T((2,), "float32"))
    assert "must be an integer or bool tensor" in e.message and e.arg == 0


@pytest.mark.parametrize("name", ["left_shift", "right_shift"])
def test_shifts_need_integers(name):
    assert same_type(rel(name, T((2,), "uint32"), T((1,), "uint32")), T((2,), "uint32"))
    e = rel_error(name, T((2,), "bool"), T((2,), "bool"))
    assert "lhs must be an integer tensor, got dtype bool" in e.message


# ---------------------------------------------------------------- where, casts

def test_where_broadcasts_three_ways():
    out = rel("where", T((3, 1), "bool"), T((1, 4)), T((4,)))
    assert same_type(out, T((3, 4)))
    assert same_type(rel("where", T((), "bool"), T((ANY, 2)), T((2,))), T((ANY, 2)))


def test_where_errors():
    e = rel_error("where", T((2,), "float32"), T((2,)), T((2,)))
    assert "condition must be a bool tensor, got dtype float32" in e.message and e.arg == 0
    e = rel_error("where", T((2,), "bool"), T((2,)), T((2,), "float16"))
    assert "x has dtype float32 but y has dtype float16" in e.message and e.arg == 2
    e = rel_error("where", T((2,), "bool"), T((2,)), T((3,)))
    assert "do not broadcast" in e.message and e.arg == 2
    e = rel_error("where", T((5,), "bool"), T((2,)), T((2,)))
    assert "(5,) and (2,) do not broadcast" in e.message and e.arg == 0
    assert rel("where", T((2,), "bool"), IncompleteType(), T((2,))) is None


def test_cast_relations():
    assert same_type(rel("cast", T((ANY, 2)), attrs=cast_attrs("int8")), T((ANY, 2), "int8"))
    assert same_type(rel("cast", T((2,)), attrs=cast_attrs("float")), T((2,), "float32"))
    e = rel_error("cast", T((2,)), attrs=cast_attrs("float31"))
    assert e.message == "`float31` is not a dtype"
    assert same_type(rel("cast_like", T((2, 3), "int8"), T((7,), "float16")),
                     T((2, 3), "float16"))
    assert rel("cast_like", T((2,)), IncompleteType()) is None


def test_reinterpret_needs_equal_bit_widths():
    assert same_type(rel("reinterpret", T((2,), "float32"), attrs=cast_attrs("uint32")),
                     T((2,), "uint32"))
    e = rel_error("reinterpret", T((2,), "float32"), attrs=cast_attrs("int8"))
    assert "cannot reinterpret float32 (32 bits) as int8 (8 bits)" in e.message and e.arg == 0


def test_canonical_dtype():
    assert canonical_dtype("float") == "float32"
    assert canonical_dtype("uint") == "uint32"
    assert canonical_dtype("bfloat16") == "bfloat16"
    assert canonical_dtype("float32x4") == "float32x4"
    assert canonical_dtype("int7") is None
    assert canonical_dtype("bool8") is None
    assert canonical_dtype("half") is None


# ---------------------------------------------------------------- kernel semantics

def test_integer_division_family_follows_c_and_floor_rules():
    a = np.array([-7, 7, -7, 7], dtype="int32")
    b = np.array([2, 2, -2, -2], dtype="int32")
    assert run("divide", a, b).tolist() == [-3, 3, 3, -3]            # toward zero
    assert run("trunc_divide", a, b).tolist() == [-3, 3, 3, -3]
    assert run("floor_divide", a, b).tolist() == [-4, 3, 3, -4]
    assert run("mod", a, b).tolist() == [-1, 1, -1, 1]               # sign of the dividend
    assert run("trunc_mod", a, b).tolist() == [-1, 1, -1, 1]
    assert run("floor_mod", a, b).tolist() == [1, 1, -1, -1]         # sign of the divisor


def test_integer_division_is_exact_for_int64():
    a = np.array([2**62 + 1, -(2**62) - 3], dtype="int64")
    b = np.array([3, 3], dtype="int64")
    assert run("divide", a, b).tolist() == [(2**62 + 1) // 3, -((2**62 + 3) // 3)]


def test_float_division_family():
    a = np.array([-7.5, 7.5], dtype="float32")
    b = np.array([2.0, -2.0], dtype="float32")
    assert run("divide", a, b).tolist() == [-3.75, -3.75]
    assert run("floor_divide", a, b).tolist() == [-4.0, -4.0]
    assert run("trunc_divide", a, b).tolist() == [-3.0, -3.0]
    assert run("floor_mod", a, b).tolist() == [0.5, -0.5]
    assert run("mod", a, b).tolist() == [-1.5, 1.5]
    assert run("trunc_mod", a, b).tolist() == [-1.5, 1.5]


def test_round_is_half_away_from_zero():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, -1.2, 3.7], dtype="float64")
    assert run("round", x).tolist() == [1, 2, 3, -1, -3, 0, -1, 4]
    h = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.4998, -1.2, 3.7], dtype="float16")
    assert run("round", h).tolist() == [1, 2, 3, -1, -3, 0, -1, 4]


def test_rounding_is_identity_on_integers():
    big = np.array([2**62 + 1], dtype="int64")             # not representable in float64
    for name in ("floor", "ceil", "round", "trunc"):
        assert run(name, big).tolist() == big.tolist()


@pytest.mark.parametrize("dtype, tol", [("float64", 2e-15), ("float32", 1e-7)])
def test_erf_matches_math_erf(dtype, tol):
    x = np.concatenate([np.linspace(-7, 7, 1401), [1e-30, -1e-10, 1.999, 2.0, 2.001, 30.0]])
    got = run("erf", x.astype(dtype))
    want = np.array([math.erf(v) for v in x.astype(dtype).astype("float64")])
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # fast_erf is TVM's polynomial approximation: within 5e-7 of erf in float32 (fast_math.py)
    np.testing.assert_allclose(run("fast_erf", x.astype(dtype)), want,
                               atol=5e-7 if dtype == "float32" else 1e-6)


def test_erf_special_values():
    got = run("erf", np.array([np.nan, np.inf, -np.inf, 0.0]))
    assert np.isnan(got[0]) and got[1:].tolist() == [1.0, -1.0, 0.0]


def test_math_functions_against_formulas():
    x = np.array([0.25, 1.0, 4.0, 9.0], dtype="float32")
    np.testing.assert_allclose(run("rsqrt", x), [2.0, 1.0, 0.5, 1 / 3], rtol=1e-6)
    np.testing.assert_allclose(run("sigmoid", x), [1 / (1 + math.exp(-v)) for v in x], rtol=1e-6)
    np.testing.assert_allclose(run("log2", x), [-2.0, 0.0, 2.0, math.log2(9)], rtol=1e-6)
    assert run("sigmoid", np.array([-1000.0], dtype="float32")).tolist() == [0.0]


def test_math_on_integers_converts_back():
    assert run("sqrt", np.array([16, 17], dtype="int32")).tolist() == [4, 4]
    assert run("sqrt", np.array([16], dtype="int32")).dtype == np.int32


def test_clip_bounds_convert_to_the_dtype():
    x = np.arange(-5, 6, dtype="int32")
    assert run("clip", x, attrs=clip_attrs(-2.7, 3.9)).tolist() == \
        [-2, -2, -2, -2, -1, 0, 1, 2, 3, 3, 3]
    # a_min wins when the bounds cross: max(min(x, a_max), a_min)
    assert run("clip", x, attrs=clip_attrs(2, 1)).tolist() == [2] * 11
    assert run("clip", np.array([-300, 300], dtype="int16"),
               attrs=clip_attrs(-1e30, float("inf"))).tolist() == [-300, 300]
    f = np.array([-1.0, 0.5, 7.0], dtype="float32")
    assert run("clip", f, attrs=clip_attrs(0.0, 6.0)).tolist() == [0.0, 0.5, 6.0]


def test_cast_and_reinterpret():
    f = np.array([-1.7, 0.0, 2.9], dtype="float32")
    assert run("cast", f, attrs=cast_attrs("int32")).tolist() == [-1, 0, 2]
    assert run("cast", f, attrs=cast_attrs("bool")).tolist() == [True, False, True]
    assert run("cast", f, attrs=cast_attrs("float")).dtype == np.float32
    assert run("cast_like", f, np.zeros(1, "int8")).dtype == np.int8
    one = run("reinterpret", np.array(1.0, dtype="float32"), attrs=cast_attrs("uint32"))
    assert one.shape == () and int(one) == 0x3F800000


def test_integer_power():
    a = np.array([2, -1, -1, 1, 3, 0, 5], dtype="int32")
    b = np.array([-1, -3, -2, -5, 3, 0, 2], dtype="int32")
    assert run("power", a, b).tolist() == [0, -1, 1, 1, 27, 1, 25]


def test_bool_arithmetic_wraps_like_one_bit_integers():
    t, f = np.array([True, True, False]), np.array([True, False, False])
    assert run("add", t, f).tolist() == [False, True, False]
    assert run("subtract", t, f).tolist() == [False, True, False]
    assert run("multiply", t, f).tolist() == [True, False, False]
    assert run("negative", t).tolist() == t.tolist()


def test_bitwise_and_shifts_against_python_ints():
    a = np.array([0b1100, -8, 5], dtype="int32")
    b = np.array([0b1010, 1, 2], dtype="int32")
    assert run("bitwise_and", a, b).tolist() == [x & y for x, y in zip(a.tolist(), b.tolist())]
    assert run("bitwise_xor", a, b).tolist() == [x ^ y for x, y in zip(a.tolist(), b.tolist())]
    assert run("right_shift", a, b).tolist() == [x >> y for x, y in zip(a.tolist(), b.tolist())]
    assert run("left_shift", a, b).tolist() == [x << y for x, y in zip(a.tolist(), b.tolist())]
    assert run("bitwise_not", a).tolist() == [~x for x in a.tolist()]


def test_classifiers_on_integers_and_floats():
    assert run("isnan", np.array([1, 2], dtype="int8")).tolist() == [False, False]
    assert run("isfinite", np.array([1, 2], dtype="int8")).tolist() == [True, True]
    x = np.array([np.nan, np.inf, 1.0], dtype="float32")
    assert run("isnan", x).tolist() == [True, False, False]
    assert run("isinf", x).tolist() == [False, True, False]
    assert run("isfinite", x).tolist() == [False, False, True]


def test_where_kernel():
    cond = np.array([[True], [False]])
    x, y = np.array([1, 2, 3], dtype="int16"), np.array(9, dtype="int16")
    assert run("where", cond, x, y).tolist() == [[1, 2, 3], [9, 9, 9]]


def test_scalar_inputs_give_0d_arrays():
    out = run("add", np.array(1.5, dtype="float32"), np.array(2.0, dtype="float32"))
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float32
    assert isinstance(run("exp", np.array(0.0, dtype="float16")), np.ndarray)


def test_kernels_load_numpy_lazily():
    import subprocess
    import sys
    code = ("import sys, relaylang.op as op; op.all_ops(); "
            "print('numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- kernel agrees with relation

def random_value(t: TensorType, rng: np.random.Generator) -> np.ndarray:
    dtype = np_dtype(t.dtype)
    if dtype == bool:
        return rng.random(t.shape) < 0.5
    if dtype.kind in "iu":
        # Never 0: integer division and remainder by zero are run-time errors.
        low = 1 if dtype.kind == "u" else -9
        values = rng.integers(low, 10, size=t.shape)
        return np.where(values == 0, 1, values).astype(dtype)
    return rng.normal(size=t.shape).astype(dtype)


FLOAT, INT, BOOLEAN = "float32", "int32", "bool"
SHAPES = [((2, 3), (2, 3)), ((4, 1, 3), (5, 1)), ((), (3,)), ((0, 2), (2,))]


def _unary_cases():
    for name in UNARY:
        dtypes = [BOOLEAN] if name == "logical_not" else [INT, "uint8"] \
            if name == "bitwise_not" else [FLOAT, "float16", "float64", INT]
        for dtype in dtypes:
            for shape in [(2, 3), (), (0, 4)]:
                yield name, [T(shape, dtype)], None


def _binary_cases():
    for name in BINARY:
        dtypes = [BOOLEAN] if name.startswith("logical") else [INT, "uint16", "int64"] \
            if "bitwise" in name or "shift" in name else [FLOAT, INT, "float16", "int8"]
        for dtype in dtypes:
            for lhs, rhs in SHAPES:
                yield name, [T(lhs, dtype), T(rhs, dtype)], None


OTHER_CASES = [
    ("where", [T((3, 1), BOOLEAN), T((1, 4)), T((4,))], None),
    ("where", [T((), BOOLEAN), T((2,), INT), T((), INT)], None),
    ("clip", [T((2, 3))], clip_attrs(-0.5, 0.5)),
    ("clip", [T((5,), "uint8")], clip_attrs(2.5, 6)),
    ("cast", [T((2, 3))], cast_attrs("int8")),
    ("cast", [T((), INT)], cast_attrs("float16")),
    ("cast", [T((4,), BOOLEAN)], cast_attrs("float")),
    ("cast_like", [T((2, 3), INT), T((1,), "float64")], None),
    ("reinterpret", [T((2, 3))], cast_attrs("int32")),
    ("reinterpret", [T((), "int16")], cast_attrs("float16")),
]

CASES = [*_unary_cases(), *_binary_cases(), *OTHER_CASES]


def test_cases_cover_every_elemwise_op():
    covered = {name for name, _, _ in CASES}
    assert covered == set(UNARY) | set(BINARY) | {"where", "clip", "cast", "cast_like",
                                                   "reinterpret"}


@pytest.mark.parametrize("name, args, attrs", CASES,
                         ids=[f"{n}-{'-'.join(a.dtype for a in args)}-{i}"
                              for i, (n, args, _) in enumerate(CASES)])
def test_kernel_output_matches_relation(name, args, attrs):
    result = rel(name, *args, attrs=attrs)
    rng = np.random.default_rng(sum(map(ord, name)))
    out = get_op_def(name).kernel([random_value(a, rng) for a in args], attrs)
    assert isinstance(out, np.ndarray)
    assert out.shape == result.shape
    assert out.dtype == np_dtype(result.dtype)


def test_inference_reports_relation_errors_at_the_argument():
    import relaylang as rl
    src = ('#[version = "0.0.5"]\n'
           'def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4), float32]) {\n'
           '  add(%x, %y)\n'
           '}\n')
    with pytest.raises(rl.DiagnosticError) as info:
        rl.transform.InferType()(rl.parse(src))
    [d] = info.value.diagnostics
    assert d.message == "add: shapes (2, 3) and (4,) do not broadcast: dimension 1 is 3 against 4"
    assert (d.span.line, d.span.column) == (3, 11)


@pytest.mark.parametrize("name", ["divide", "floor_divide", "mod", "floor_mod"])
def test_integer_division_by_zero_is_an_error(name):
    kernel = get_op_def(name).kernel
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        kernel([np.array([1, 2], "int32"), np.array([1, 0], "int32")], None)
    out = kernel([np.array([1.0], "float32"), np.array([0.0], "float32")], None)
    assert out.dtype == np.float32           # floats follow IEEE: inf or nan, no error
