"""Elementwise ONNX operators against onnxruntime on both backends: unary math, binary
arithmetic with broadcasting, comparisons and logic, variadic ops, Where, Cast, Clip and
the activations, over each opset range. Several ops share one model (one output each)
so that a backend compiles once per case. Opsets 1-6, which onnxruntime does not run,
are checked against NumPy on both backends."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper
from onnx_check import check_model, make_model, run_relay

import relaylang as rl
from relaylang.frontend.onnx import OnnxImportError


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _multi(ops, inputs, opset, attrs=None, ins=("x",)):
    """One model applying each op of `ops` to `ins`, one output per op."""
    attrs = attrs or {}
    nodes = [helper.make_node(o.split(":")[0], list(ins), [f"y{k}"], **attrs.get(o, {}))
             for k, o in enumerate(ops)]
    return make_model(nodes, inputs=inputs, outputs=[f"y{k}" for k in range(len(ops))],
                      opset=opset)


def _floats(shape, dtype, low=-3.0, high=3.0, seed=0):
    return _rng(seed).uniform(low, high, size=shape).astype(dtype)


def _ints(shape, dtype, low=-9, high=10, seed=0, nonzero=False):
    a = _rng(seed).integers(low, high, size=shape).astype(dtype)
    if nonzero:
        a[a == 0] = 1
    return a


def _check_numpy(model, inputs, want, **kwargs):
    """For opsets onnxruntime does not run: relaylang's outputs equal `want` (NumPy)."""
    for target in ("interp", "llvm"):
        got = run_relay(model, inputs, target=target, **kwargs)
        for g, w in zip(got, want):
            w = np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, (target, g.shape, g.dtype)
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=target)


# ---------------------------------------------------------------- unary math

UNARY_ANY = ["Abs", "Neg", "Exp", "Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh",
             "Floor", "Ceil", "Round", "Sign", "Erf", "Sigmoid", "Tanh", "Reciprocal",
             "Asin", "Acos", "Atanh"]
UNARY_POSITIVE = ["Log", "Sqrt", "Acosh"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("opset", [13, 22])
def test_unary_math(dtype: str, opset: int) -> None:
    ops = UNARY_ANY
    if dtype == "float64":     # onnxruntime's float64 kernels: a subset
        ops = ["Abs", "Neg", "Exp", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos",
               "Sigmoid", "Tanh", "Reciprocal"]
    shape = (3, 1, 5)
    x = _floats(shape, dtype, -0.99, 0.99)
    x.flat[:4] = [0.5, -1.5, 2.5, 0.0]           # Round: halves
    check_model(_multi(ops, {"x": (shape, dtype)}, opset), {"x": x})
    pos_ops = UNARY_POSITIVE if dtype == "float32" else ["Log", "Sqrt"]
    p = _floats((1,), dtype, 1.0, 9.0) if opset == 13 else _floats((), dtype, 1.0, 9.0)
    check_model(_multi(pos_ops, {"x": (p.shape, dtype)}, opset), {"x": p})


def test_unary_math_early_opsets() -> None:
    x = _floats((2, 3), "float32", -0.9, 0.9)
    check_model(_multi(["Abs", "Neg", "Exp", "Floor", "Ceil", "Sigmoid", "Tanh",
                        "Reciprocal", "Relu"], {"x": ((2, 3), "float32")}, 6), {"x": x})
    check_model(_multi(["Sin", "Cos", "Tan", "Asin", "Acos", "Atan"],
                       {"x": ((2, 3), "float32")}, 7), {"x": x})
    check_model(_multi(["Sinh", "Cosh", "Asinh", "Atanh", "Sign", "Erf", "IsNaN"],
                       {"x": ((2, 3), "float32")}, 9), {"x": x})


def test_unary_float16() -> None:
    x = _floats((4, 3), "float16", -0.9, 0.9)
    check_model(_multi(["Abs", "Neg", "Exp", "Sin", "Floor", "Round", "Sigmoid", "Tanh",
                        "Relu", "Softsign", "Shrink", "Elu", "HardSigmoid"],
                       {"x": ((4, 3), "float16")}, 13), {"x": x},
                rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "uint8"])
def test_unary_integers(dtype: str) -> None:
    x = _ints((3, 1, 4), dtype, 0 if dtype == "uint8" else -9)
    ops = ["Abs", "Sign"] + (["Neg"] if dtype != "uint8" else []) + \
        (["Relu"] if dtype in ("int32", "int8") else [])
    check_model(_multi(ops, {"x": ((3, 1, 4), dtype)}, 14), {"x": x})


def test_round_half_to_even_special_values() -> None:
    x = np.array([0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5, 0.49999997, -0.49999997,
                  2.4999998, 2.5000002, 1e7 + 0.5, 8388607.5, 8388609.0, -0.0, np.inf,
                  -np.inf, np.nan, 0.7, -0.7], np.float32)
    check_model(_multi(["Round"], {"x": (x.shape, "float32")}, 11), {"x": x})
    check_model(_multi(["Round"], {"x": (x.shape, "float64")}, 22), {"x": x.astype("float64")})


@pytest.mark.parametrize("pos,neg", [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_isinf_isnan(pos: int, neg: int) -> None:
    x = np.array([[np.inf, -np.inf, np.nan, 0.0, 1e38, -3.0]], np.float32)
    nodes = [helper.make_node("IsInf", ["x"], ["a"], detect_positive=pos, detect_negative=neg),
             helper.make_node("IsNaN", ["x"], ["b"])]
    model = make_model(nodes, {"x": ((1, 6), "float32")}, ["a", "b"], opset=20)
    check_model(model, {"x": x})
    model = make_model(nodes, {"x": ((1, 6), "float64")}, ["a", "b"], opset=10 if pos else 13)
    if pos:     # opset 10's IsNaN is opset 9's
        check_model(model, {"x": x.astype("float64")})


def test_not_and_bitwise_not() -> None:
    b = _rng().integers(0, 2, (3, 1, 4)).astype(bool)
    check_model(_multi(["Not"], {"x": (b.shape, "bool")}, 13), {"x": b})
    for dtype in ("int32", "int64", "uint8"):
        x = _ints((2, 5), dtype, 0 if dtype == "uint8" else -50, 100)
        check_model(_multi(["BitwiseNot"], {"x": (x.shape, dtype)}, 18), {"x": x})


# ---------------------------------------------------------------- binary arithmetic

SHAPES = [((3, 1, 4), (2, 4)), ((), (2, 3)), ((5,), ()), ((1,), (3, 1)), ((2, 1, 3), (1, 5, 1)),
          ((7,), (7,))]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_arithmetic_broadcasting(sa, sb, dtype: str) -> None:
    if dtype.startswith("float"):
        a, b = _floats(sa, dtype, seed=1), _floats(sb, dtype, 0.5, 4.0, seed=2)
    else:
        a, b = _ints(sa, dtype, seed=1), _ints(sb, dtype, seed=2, nonzero=True)
    ops = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Less", "Greater",
           "LessOrEqual", "GreaterOrEqual"]
    if dtype.startswith("float"):
        ops.append("Sum")
        if dtype == "float32":
            ops.append("Mean")
    model = _multi(ops, {"a": (sa, dtype), "b": (sb, dtype)}, 14, ins=("a", "b"))
    check_model(model, {"a": a, "b": b})


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint32"])
def test_arithmetic_small_integers_wrap(dtype: str) -> None:
    info = np.iinfo(dtype)
    a = _rng(3).integers(info.min, int(info.max) + 1, (4, 3), dtype=dtype)
    b = _rng(4).integers(max(int(info.min), -100), 100, (3,), dtype=dtype)
    b[b == 0] = 3
    model = _multi(["Add", "Sub", "Mul", "Div"], {"a": ((4, 3), dtype), "b": ((3,), dtype)},
                   14, ins=("a", "b"))
    check_model(model, {"a": a, "b": b})


def test_integer_division_truncates() -> None:
    a = np.array([7, -7, 7, -7, 0, 1, -1, 9], np.int32)
    b = np.array([2, 2, -2, -2, 3, -3, 3, 10], np.int32)
    for dtype, opset in (("int32", 7), ("int64", 13)):
        model = _multi(["Div", "Mod:0", "Mod:1"], {"a": ((8,), dtype), "b": ((8,), dtype)},
                       max(opset, 10), attrs={"Mod:0": {"fmod": 0}, "Mod:1": {"fmod": 1}},
                       ins=("a", "b"))
        check_model(model, {"a": a.astype(dtype), "b": b.astype(dtype)})


@pytest.mark.parametrize("opset", [10, 13])
@pytest.mark.parametrize("dtype", ["int32", "int64", "int8", "uint8"])
def test_mod_integers(dtype: str, opset: int) -> None:
    low = 0 if dtype == "uint8" else -20
    a, b = _ints((3, 1, 4), dtype, low, 20, seed=5), _ints((2, 4), dtype, low, 20, seed=6,
                                                                     nonzero=True)
    model = _multi(["Mod:0", "Mod:1"], {"a": (a.shape, dtype), "b": (b.shape, dtype)}, opset,
                   attrs={"Mod:0": {"fmod": 0}, "Mod:1": {"fmod": 1}}, ins=("a", "b"))
    check_model(model, {"a": a, "b": b})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mod_floats(dtype: str) -> None:
    a = np.array([[5.5, -5.5, 5.5, -5.5, 0.0, 3.0, 1e-3, -7.25, 2.0, -2.0]], dtype)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, np.inf, -0.5, 1.5, -np.inf, np.inf], dtype)
    model = _multi(["Mod"], {"a": (a.shape, dtype), "b": (b.shape, dtype)}, 13,
                   attrs={"Mod": {"fmod": 1}}, ins=("a", "b"))
    check_model(model, {"a": a, "b": b})
    # opset 28: fmod=0 on floats is the floor remainder, the divisor's sign
    model = _multi(["Mod:0", "Mod:1"], {"a": (a.shape, dtype), "b": (b.shape, dtype)}, 28,
                   attrs={"Mod:0": {"fmod": 0}, "Mod:1": {"fmod": 1}}, ins=("a", "b"))
    check_model(model, {"a": a, "b": b})
    ra = _floats((3, 1, 4), dtype, -50, 50, seed=7)
    rb = _floats((2, 4), dtype, 0.5, 6, seed=8) * np.where(_rng(9).random((2, 4)) < 0.5, -1, 1)
    model = _multi(["Mod"], {"a": (ra.shape, dtype), "b": (rb.shape, dtype)}, 28,
                   ins=("a", "b"))
    check_model(model, {"a": ra, "b": rb.astype(dtype)})


def test_mod_float_fmod0_before_opset_28_is_refused() -> None:
    model = _multi(["Mod"], {"a": ((2,), "float32"), "b": ((2,), "float32")}, 13,
                   ins=("a", "b"))
    with pytest.raises(OnnxImportError, match="fmod=0"):
        rl.frontend.from_onnx(model)


@pytest.mark.parametrize("base,exp", [("float32", "float32"), ("float64", "float64"),
                                      ("float32", "int64"), ("float32", "float64"),
                                      ("int32", "float32"), ("int64", "int64"),
                                      ("int32", "int64"), ("float64", "int32")])
def test_pow(base: str, exp: str) -> None:
    if base.startswith("float"):
        a = _floats((3, 1, 4), base, 0.1, 3.0, seed=10)
    else:
        a = _ints((3, 1, 4), base, -5, 6, seed=10)
    if exp.startswith("float"):
        b = _floats((2, 4), exp, -2.0, 3.0, seed=11)
        if base.startswith("int"):
            b = np.round(b).astype(exp)      # int base: exact powers
    else:
        b = _ints((2, 4), exp, 0 if base.startswith("int") else -3, 4, seed=11)
    opset = 7 if base == exp and base.startswith("float") else 15
    model = _multi(["Pow"], {"a": (a.shape, base), "b": (b.shape, exp)}, opset, ins=("a", "b"))
    check_model(model, {"a": a, "b": b})


def test_pow_scalar_exponents() -> None:
    x = _floats((2, 5), "float32", -3, 3, seed=12)
    for e in (0.0, 1.0, 2.0, 3.0, 0.5, -1.0, -2.0):
        model = make_model([helper.make_node("Pow", ["x", "e"], ["y"])],
                           {"x": ((2, 5), "float32")}, ["y"],
                           initializers={"e": np.asarray(e, np.float32)}, opset=13)
        check_model(model, {"x": np.abs(x) if e in (0.5,) else x})


# ---------------------------------------------------------------- bits

@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift_unsigned(dtype: str, direction: str) -> None:
    bits = np.dtype(dtype).itemsize * 8
    x = _rng(13).integers(0, 200, (3, 1, 4)).astype(dtype)
    y = _rng(14).integers(0, bits, (2, 4)).astype(dtype)
    model = make_model([helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction)],
                       {"x": (x.shape, dtype), "y": (y.shape, dtype)}, ["z"], opset=11)
    check_model(model, {"x": x, "y": y})


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift_opset_28(dtype: str, direction: str) -> None:
    bits = np.dtype(dtype).itemsize * 8
    low = 0 if dtype.startswith("u") else -100
    x = _rng(15).integers(low, 100, (2, 6)).astype(dtype)
    x[0, :3] = [0, 1, 100] if low == 0 else [-1, -100, 77]
    y = np.array([0, 1, 3, bits - 1, bits, bits + 5], dtype=dtype)
    if not dtype.startswith("u"):
        y[-1] = -2
    model = make_model([helper.make_node("BitShift", ["x", "y"], ["z"], direction=direction)],
                       {"x": (x.shape, dtype), "y": (y.shape, dtype)}, ["z"], opset=28)
    check_model(model, {"x": x, "y": y})


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8"])
def test_bitwise_binary(dtype: str) -> None:
    low = 0 if dtype == "uint8" else -100
    a, b = _ints((3, 1, 4), dtype, low, 100, seed=16), _ints((2, 4), dtype, low, 100, seed=17)
    model = _multi(["BitwiseAnd", "BitwiseOr", "BitwiseXor"],
                   {"a": (a.shape, dtype), "b": (b.shape, dtype)}, 18, ins=("a", "b"))
    check_model(model, {"a": a, "b": b})


# ---------------------------------------------------------------- comparisons and logic

@pytest.mark.parametrize("opset", [7, 13])
def test_logic_and_bool_equal(opset: int) -> None:
    a = _rng(18).integers(0, 2, (3, 1, 4)).astype(bool)
    b = _rng(19).integers(0, 2, (2, 4)).astype(bool)
    ops = ["And", "Or", "Xor"] + (["Equal"] if opset >= 11 else [])
    model = _multi(ops, {"a": (a.shape, "bool"), "b": (b.shape, "bool")}, opset,
                   ins=("a", "b"))
    check_model(model, {"a": a, "b": b})


@pytest.mark.parametrize("opset", [7, 9, 12, 16])
def test_comparisons_opsets(opset: int) -> None:
    a = np.array([[1.0, np.nan, -2.0, 3.0, 0.0]], np.float32)
    b = np.array([[1.0], [np.nan], [0.0]], np.float32)
    ops = ["Less", "Greater"] + (["Equal"] if opset >= 11 else []) + \
        (["LessOrEqual", "GreaterOrEqual"] if opset >= 12 else [])
    model = _multi(ops, {"a": (a.shape, "float32"), "b": (b.shape, "float32")}, opset,
                   ins=("a", "b"))
    check_model(model, {"a": a, "b": b})
    if opset in (7, 9):         # ints: Equal since opset 7, Less and Greater since 9
        ai, bi = _ints((3, 1, 4), "int32", seed=20), _ints((4,), "int32", seed=21)
        ops = ["Equal"] + (["Less", "Greater"] if opset == 9 else [])
        model = _multi(ops, {"a": (ai.shape, "int32"),
                                                       "b": (bi.shape, "int32")}, opset,
                       ins=("a", "b"))
        check_model(model, {"a": ai, "b": bi})


# ---------------------------------------------------------------- variadic

@pytest.mark.parametrize("opset", [6, 8, 13])
def test_variadic(opset: int) -> None:
    shapes = [(2, 3), (2, 3), (2, 3)] if opset < 8 else [(3, 1, 4), (2, 4), (), (1, 1, 4)]
    xs = {f"x{k}": _floats(s, "float32", seed=22 + k) for k, s in enumerate(shapes)}
    inputs = {n: (v.shape, "float32") for n, v in xs.items()}
    for ins in (list(xs), list(xs)[:1], list(xs)[:2]):
        nodes = [helper.make_node(o, ins, [f"y{k}"])
                 for k, o in enumerate(["Sum", "Mean", "Max", "Min"])]
        model = make_model(nodes, {n: inputs[n] for n in ins}, [f"y{k}" for k in range(4)],
                           opset=opset)
        check_model(model, {n: xs[n] for n in ins})


@pytest.mark.parametrize("dtype", ["int32", "int64", "float64"])
def test_variadic_max_min_integer_dtypes(dtype: str) -> None:
    shapes = [(3, 1, 4), (2, 4), (1,)]
    if dtype == "float64":
        xs = {f"x{k}": _floats(s, dtype, seed=30 + k) for k, s in enumerate(shapes)}
    else:
        xs = {f"x{k}": _ints(s, dtype, seed=30 + k) for k, s in enumerate(shapes)}
    ops = ["Max", "Min"] + (["Sum"] if dtype == "float64" else [])
    nodes = [helper.make_node(o, list(xs), [f"y{k}"]) for k, o in enumerate(ops)]
    model = make_model(nodes, {n: (v.shape, dtype) for n, v in xs.items()},
                       [f"y{k}" for k in range(len(ops))], opset=13)
    check_model(model, xs)


# ---------------------------------------------------------------- where, cast

@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "float64"])
def test_where(dtype: str) -> None:
    c = _rng(40).integers(0, 2, (3, 1, 4)).astype(bool)
    if dtype.startswith(("int", "uint")):
        x, y = _ints((2, 4), dtype, seed=41), _ints((), dtype, seed=42)
    else:
        x, y = _floats((2, 4), dtype, seed=41), _floats((1,), dtype, seed=42)
    # onnxruntime has no bool Where
    model = make_model([helper.make_node("Where", ["c", "x", "y"], ["z"])],
                       {"c": (c.shape, "bool"), "x": (x.shape, dtype), "y": (y.shape, dtype)},
                       ["z"], opset=16)
    check_model(model, {"c": c, "x": x, "y": y})


CAST_TARGETS = {"float32": 1, "uint8": 2, "int8": 3, "int16": 5, "int32": 6, "int64": 7,
                "bool": 9, "float16": 10, "float64": 11, "uint32": 12, "uint64": 13}


@pytest.mark.parametrize("src", ["float32", "float64", "int32", "int64", "bool", "uint8"])
@pytest.mark.parametrize("opset", [6, 13, 19])
def test_cast(src: str, opset: int) -> None:
    if src.startswith("float"):
        x = _floats((3, 1, 5), src, 0.0, 100.0, seed=50)
        x.flat[:3] = [0.0, 1.5, 99.9]
    elif src == "bool":
        x = _rng(50).integers(0, 2, (3, 1, 5)).astype(bool)
    else:
        x = _ints((3, 1, 5), src, 0, 120, seed=50)
    targets = dict(CAST_TARGETS)
    if opset < 9:
        targets.pop("bool")   # opset 6 declares bool, onnxruntime runs it from opset 9 on
    nodes = [helper.make_node("Cast", ["x"], [f"y{k}"], to=code)
             for k, code in enumerate(targets.values())]
    model = make_model(nodes, {"x": (x.shape, src)}, [f"y{k}" for k in range(len(targets))],
                       opset=opset)
    check_model(model, {"x": x})


def test_cast_negative_floats_and_truncation() -> None:
    x = np.array([-2.7, -0.5, 0.5, 2.7, -100.2, 1e9], np.float32)
    codes = [6, 7, 3, 11, 9]
    nodes = [helper.make_node("Cast", ["x"], [f"y{k}"], to=c) for k, c in enumerate(codes)]
    model = make_model(nodes, {"x": (x.shape, "float32")}, [f"y{k}" for k in range(5)],
                       opset=13)
    check_model(model, {"x": np.where(np.abs(x) > 1e8, 3.0, x).astype(np.float32)})


def test_cast_opset_1_string_to_and_bad_targets() -> None:
    x = np.array([[1.25, -3.5]], np.float32)
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to="INT32")],
                       {"x": ((1, 2), "float32")}, {"y": ((1, 2), "int32")}, opset=1)
    _check_numpy(model, {"x": x}, [x.astype(np.int32)])
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=8)],
                       {"x": ((1, 2), "float32")}, ["y"], opset=13)
    with pytest.raises(OnnxImportError, match="Cast"):
        rl.frontend.from_onnx(model)


@pytest.mark.parametrize("src,like", [("float32", "int32"), ("int64", "float64"),
                                      ("float64", "float32"), ("int32", "bool"),
                                      ("bool", "float32")])
def test_cast_like(src: str, like: str) -> None:
    x = (_rng(51).integers(0, 2, (2, 1, 3)).astype(bool) if src == "bool"
         else _floats((2, 1, 3), src, -5, 5, seed=51) if src.startswith("float")
         else _ints((2, 1, 3), src, seed=51))
    t = np.zeros((4,), like)
    model = make_model([helper.make_node("CastLike", ["x", "t"], ["y"])],
                       {"x": (x.shape, src), "t": (t.shape, like)}, ["y"], opset=19)
    check_model(model, {"x": x, "t": t})


# ---------------------------------------------------------------- clip

@pytest.mark.parametrize("bounds", [(-1.0, 2.0), (None, 0.5), (-0.5, None), (None, None),
                                    (2.0, -1.0), (0.25, 0.25)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_clip_11_inputs(bounds, dtype: str) -> None:
    is_int = dtype.startswith("int")
    x = _ints((3, 1, 5), dtype, seed=60) if is_int else _floats((3, 1, 5), dtype, seed=60)
    if not is_int:
        x.flat[:2] = [np.inf, -np.inf]
    lo, hi = bounds
    if is_int:
        lo = None if lo is None else int(np.floor(lo * 3))
        hi = None if hi is None else int(np.floor(hi * 3))
    inits = {}
    if lo is not None:
        inits["lo"] = np.asarray(lo, dtype)
    if hi is not None:
        inits["hi"] = np.asarray(hi, dtype)
    names = ["x", "lo" if lo is not None else "", "hi" if hi is not None else ""]
    while names[-1] == "":
        names.pop()
    model = make_model([helper.make_node("Clip", names, ["y"])], {"x": (x.shape, dtype)},
                       ["y"], initializers=inits, opset=11 if dtype == "float32" else 12)
    check_model(model, {"x": x})
    check_model(model, {"x": x}, freeze_params=True)


def test_clip_dynamic_bounds() -> None:
    x = _floats((2, 5), "float32", seed=61)
    lo, hi = np.asarray(-0.5, np.float32), np.asarray(1.0, np.float32)
    model = make_model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                       {"x": ((2, 5), "float32"), "lo": ((), "float32"),
                        "hi": ((), "float32")}, ["y"], opset=13)
    check_model(model, {"x": x, "lo": lo, "hi": hi})
    check_model(model, {"x": x, "lo": hi, "hi": lo})          # min > max: all max


@pytest.mark.parametrize("attrs", [{}, {"min": -1.0}, {"max": 0.5}, {"min": -0.5, "max": 1.5}])
def test_clip_6_attributes(attrs) -> None:
    x = _floats((3, 1, 4), "float32", seed=62)
    x.flat[:2] = [np.inf, -np.inf]
    model = make_model([helper.make_node("Clip", ["x"], ["y"], **attrs)],
                       {"x": (x.shape, "float32")}, ["y"], opset=6)
    check_model(model, {"x": x})


def test_clip_1_against_numpy() -> None:
    x = np.array([[np.inf, -np.inf, 0.3, -3.0, 3.0]], np.float64)
    model = make_model([helper.make_node("Clip", ["x"], ["y"], min=-1.0)],
                       {"x": (x.shape, "float64")}, {"y": (x.shape, "float64")}, opset=1)
    big = np.finfo(np.float64).max
    _check_numpy(model, {"x": x}, [np.minimum(np.maximum(x, -1.0), big)])


# ---------------------------------------------------------------- activations

ACTIVATIONS = ["Relu", "LeakyRelu", "LeakyRelu:a", "Elu", "Elu:a", "Selu", "Selu:a",
               "Sigmoid", "HardSigmoid", "HardSigmoid:a", "Softplus", "Softsign", "Tanh",
               "ThresholdedRelu", "ThresholdedRelu:a", "Shrink", "Shrink:a", "Celu",
               "Celu:a", "HardSwish", "Mish", "Gelu", "Gelu:tanh"]
ACT_ATTRS = {"LeakyRelu:a": {"alpha": 0.3}, "Elu:a": {"alpha": 0.5},
             "Selu:a": {"alpha": 1.5, "gamma": 2.0}, "HardSigmoid:a": {"alpha": 0.4, "beta": 0.3},
             "ThresholdedRelu:a": {"alpha": -0.5}, "Shrink:a": {"lambd": 1.0, "bias": 0.25},
             "Celu:a": {"alpha": 2.0}, "Gelu:tanh": {"approximate": "tanh"}}


@pytest.mark.parametrize("shape", [(3, 1, 5), (), (1,)])
def test_activations_float32(shape) -> None:
    x = _floats(shape, "float32", -4, 4, seed=70)
    if shape == (3, 1, 5):
        x.flat[:6] = [0.0, -0.0, 100.0, -100.0, 1.0, -1.0]
    check_model(_multi(ACTIVATIONS, {"x": (shape, "float32")}, 20, attrs=ACT_ATTRS), {"x": x})


def test_activations_opset_22_and_early() -> None:
    x = _floats((2, 7), "float32", -4, 4, seed=71)
    ops = ["Elu", "Selu", "HardSigmoid", "Softplus", "Softsign", "ThresholdedRelu", "Mish",
           "HardSwish", "Celu"]
    check_model(_multi(ops, {"x": ((2, 7), "float32")}, 22), {"x": x})
    ops = ["Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "HardSigmoid", "Softplus",
           "Softsign", "Tanh"]
    check_model(_multi(ops, {"x": ((2, 7), "float32")}, 6), {"x": x})
    check_model(_multi(["ThresholdedRelu", "Shrink", "Celu"], {"x": ((2, 7), "float32")}, 12),
                {"x": x})


def test_activations_float64() -> None:
    x = _floats((2, 1, 3), "float64", -4, 4, seed=72)
    check_model(_multi(["Relu", "Sigmoid", "Tanh", "Shrink", "Shrink:a", "LeakyRelu:a"],
                       {"x": (x.shape, "float64")}, 16, attrs=ACT_ATTRS), {"x": x})
    check_model(_multi(["Celu:a"], {"x": (x.shape, "float64")}, 28, attrs=ACT_ATTRS), {"x": x})


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8"])
def test_shrink_integers(dtype: str) -> None:
    x = _ints((3, 5), dtype, 0 if dtype == "uint8" else -6, 7, seed=73)
    attrs = {"Shrink": {"lambd": 1.5, "bias": 1.0 if dtype != "uint8" else 0.0},
             "Shrink:a": {"lambd": 2.0, "bias": 0.0}}
    check_model(_multi(["Shrink", "Shrink:a"], {"x": (x.shape, dtype)}, 9, attrs=attrs),
                {"x": x})


@pytest.mark.parametrize("sx,ss", [((2, 3, 4, 5), (3, 1, 1)), ((2, 3, 4, 5), (5,)),
                                   ((2, 3), ()), ((3, 1, 4), (1, 4)), ((4,), (4,))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prelu(sx, ss, dtype: str) -> None:
    x, s = _floats(sx, dtype, seed=74), _floats(ss, dtype, 0.0, 1.0, seed=75)
    model = make_model([helper.make_node("PRelu", ["x", "s"], ["y"])],
                       {"x": (sx, dtype), "s": (ss, dtype)}, ["y"], opset=16)
    check_model(model, {"x": x, "s": s})
    if dtype == "float32":
        model = make_model([helper.make_node("PRelu", ["x", "s"], ["y"])],
                           {"x": (sx, dtype)}, ["y"], initializers={"s": s}, opset=7)
        check_model(model, {"x": x})


def test_prelu_slope_must_broadcast_to_x() -> None:
    # the checker refuses this model: built by hand
    from onnx import TensorProto
    graph = helper.make_graph([helper.make_node("PRelu", ["x", "s"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
                               helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    with pytest.raises(OnnxImportError, match="slope"):
        rl.frontend.from_onnx(model)


def test_cast_through_bfloat16() -> None:
    x = np.array([[1.0, 1.00390625, 1.01171875, -3.1415927, 1e30, 65504.0]], np.float32)
    model = make_model([helper.make_node("Cast", ["x"], ["b"], to=16),
                        helper.make_node("Cast", ["b"], ["y"], to=1)],
                       {"x": (x.shape, "float32")}, ["y"], opset=13)
    check_model(model, {"x": x})


@pytest.mark.parametrize("node,message", [
    (helper.make_node("BitShift", ["x", "x"], ["y"], direction="UP"), "direction"),
    (helper.make_node("Mod", ["x", "x"], ["y"], fmod=2), "fmod"),
])
def test_bad_attributes(node, message: str) -> None:
    from onnx import TensorProto
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.UINT8, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(OnnxImportError, match=message):
        rl.frontend.from_onnx(model)


def test_gelu_bad_approximate() -> None:
    model = make_model([helper.make_node("Gelu", ["x"], ["y"], approximate="fast")],
                       {"x": ((2,), "float32")}, {"y": ((2,), "float32")}, opset=20)
    with pytest.raises(OnnxImportError, match="approximate"):
        rl.frontend.from_onnx(model)


# ---------------------------------------------------------------- opsets 1-6 (no onnxruntime)

def test_legacy_broadcast_binary_ops() -> None:
    a = _floats((2, 3, 4, 5), "float32", 0.5, 2.0, seed=80)
    cases = [((5,), {}, lambda b: b), ((4, 5), {}, lambda b: b),
             ((3, 4), {"axis": 1}, lambda b: b[:, :, None]),
             ((2,), {"axis": 0}, lambda b: b[:, None, None, None]),
             ((3,), {"axis": -3}, lambda b: b[:, None, None]), ((), {}, lambda b: b)]
    fns = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
           "Pow": np.power}
    for k, (sb, attrs, align) in enumerate(cases):
        b = _floats(sb, "float32", 0.5, 2.0, seed=81 + k)
        nodes = [helper.make_node(o, ["a", "b"], [f"y{j}"], broadcast=1, **attrs)
                 for j, o in enumerate(fns)]
        model = make_model(nodes, {"a": (a.shape, "float32"), "b": (sb, "float32")},
                           {f"y{j}": (a.shape, "float32") for j in range(len(fns))}, opset=6)
        want = [f(a, align(b)).astype(np.float32) for f in fns.values()]
        _check_numpy(model, {"a": a, "b": b}, want)


def test_legacy_comparisons_and_logic() -> None:
    a = _ints((2, 3), "int32", seed=90)
    b = _ints((3,), "int32", seed=91)
    nodes = [helper.make_node(o, ["a", "b"], [f"y{j}"], broadcast=1)
             for j, o in enumerate(["Equal", "Less", "Greater"])]
    model = make_model(nodes, {"a": ((2, 3), "int32"), "b": ((3,), "int32")},
                       {f"y{j}": ((2, 3), "bool") for j in range(3)}, opset=1)
    _check_numpy(model, {"a": a, "b": b}, [a == b, a < b, a > b])
    p, q = a > 0, b > 0
    nodes = [helper.make_node(o, ["p", "q"], [f"y{j}"], broadcast=1)
             for j, o in enumerate(["And", "Or", "Xor"])]
    model = make_model(nodes, {"p": ((2, 3), "bool"), "q": ((3,), "bool")},
                       {f"y{j}": ((2, 3), "bool") for j in range(3)}, opset=1)
    _check_numpy(model, {"p": p, "q": q}, [p & q, p | q, p ^ q])


def test_legacy_same_shape_and_refusal() -> None:
    a, b = _floats((2, 3), "float32", seed=92), _floats((2, 3), "float32", seed=93)
    model = make_model([helper.make_node("Add", ["a", "b"], ["y"])],
                       {"a": ((2, 3), "float32"), "b": ((2, 3), "float32")},
                       {"y": ((2, 3), "float32")}, opset=1)
    _check_numpy(model, {"a": a, "b": b}, [a + b])
    model = make_model([helper.make_node("Mul", ["a", "b"], ["y"])],
                       {"a": ((2, 3), "float32"), "b": ((3,), "float32")},
                       {"y": ((2, 3), "float32")}, opset=6)
    with pytest.raises(OnnxImportError, match="broadcast=0"):
        rl.frontend.from_onnx(model)


def test_legacy_prelu_and_sum() -> None:
    x = _floats((2, 3), "float32", seed=94)
    s = np.asarray([0.25], np.float32)
    model = make_model([helper.make_node("PRelu", ["x", "s"], ["y"]),
                        helper.make_node("Sum", ["x", "x", "x"], ["z"])],
                       {"x": ((2, 3), "float32")},
                       {"y": ((2, 3), "float32"), "z": ((2, 3), "float32")},
                       initializers={"s": s}, opset=6)
    _check_numpy(model, {"x": x}, [np.where(x < 0, x * 0.25, x), x + x + x])


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 5), (1, 3, 2, 2)])
def test_legacy_prelu_per_channel_slope(shape) -> None:
    # before opset 7 a 1-D slope of X's channel count is one slope per channel (axis 1),
    # as PyTorch exported PReLU(num_parameters=C)
    x = _floats(shape, "float32", seed=95)
    s = np.asarray([0.25, -0.5, 2.0], np.float32)
    model = make_model([helper.make_node("PRelu", ["x", "s"], ["y"])],
                       {"x": (shape, "float32")}, {"y": (shape, "float32")},
                       initializers={"s": s}, opset=6)
    slope = s.reshape((3,) + (1,) * (len(shape) - 2))
    _check_numpy(model, {"x": x}, [np.where(x < 0, x * slope, x)])
