"""LLVM lowerings of nn.lrn, nn.fast_softmax, reinterpret, vm.shape_of and
vm.reshape_tensor against the interpreter (the NumPy kernels): float32, float16,
float64 and integer dtypes, size-1 and size-0 dims, odd sizes, negative axes, windows
wider than the axis. A vm.reshape_tensor with the wrong element count has no lowering
(NoLowering); float <-> integer reinterpret is tested in test_bitcast_lowering.py."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, fused_module

import relaylang as rl
from relaylang.backend.llvm.lower import NoLowering, lower_primitive

HEAD = '#[version = "0.0.5"]\n'
FLOATS = ["float32", "float16", "float64"]


def _program(params: list[tuple[str, tuple, str]], calls: list[str]) -> str:
    decl = ", ".join(f"%{n}: Tensor[{s if s else '()'}, {d}]" for n, s, d in params)
    body = f"({', '.join(calls)},)" if len(calls) == 1 else f"({', '.join(calls)})"
    return HEAD + f"def @main({decl}) {{ {body} }}\n"


def _floats(shape: tuple, dtype: str, rng: np.random.Generator, scale: float = 2.0
            ) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _ints(shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _assert_no_lowering(text: str) -> None:
    mod = fused_module(text)
    fn = mod["main"].body
    fn = fn.fields[0].op if isinstance(fn, rl.ir.expr.Tuple) else fn.op
    assert isinstance(fn, rl.ir.expr.Function)
    with pytest.raises(NoLowering):
        lower_primitive(fn, "no_lowering")


# ---------------------------------------------------------------- nn.lrn

@pytest.mark.parametrize("dtype", FLOATS)
def test_lrn(dtype: str) -> None:
    rng = np.random.default_rng(11)
    x = _floats((2, 5, 7), dtype, rng)
    o = _floats((1, 1, 3), dtype, rng)
    e = _floats((2, 0, 3), dtype, rng)
    v = _floats((17,), dtype, rng)
    calls = ["nn.lrn(%x)",                                                 # defaults
             "nn.lrn(%x, size=3, axis=1, bias=1f, alpha=0.5f, beta=0.75f)",
             "nn.lrn(%x, size=4, axis=-1, bias=1.5f, alpha=0.3f, beta=0.5f)",   # even size
             "nn.lrn(%x, size=1, axis=0, bias=1f, alpha=1f, beta=1f)",
             "nn.lrn(%x, size=9, axis=-2, bias=2f, alpha=0.2f, beta=0.6f)",     # wider than 5
             "nn.lrn(%x, size=2, axis=2, bias=0.5f, alpha=2f, beta=2f)",
             "nn.lrn(%o, size=3, axis=1, alpha=0.5f)",
             "nn.lrn(%o, size=5, axis=-1, bias=1f, alpha=0.5f)",
             "nn.lrn(%e, size=3, axis=0)", "nn.lrn(%e, size=5, axis=-1)",
             "nn.lrn(%v, size=5, axis=0, bias=1f, alpha=0.1f, beta=0.75f)"]
    text = _program([("x", (2, 5, 7), dtype), ("o", (1, 1, 3), dtype),
                     ("e", (2, 0, 3), dtype), ("v", (17,), dtype)], calls)
    assert_matches_interpreter(text, x, o, e, v)


def test_lrn_along_an_empty_axis() -> None:
    """Along a size-0 axis the NumPy kernel fails (sliding_window_view of the padded
    axis, shorter than the window); the native result is the empty tensor."""
    from llvm_check import run_native
    text = _program([("e", (2, 0, 3), "float32")], ["nn.lrn(%e, size=3, axis=1)"])
    with pytest.raises(Exception, match="window shape"):
        rl.evaluate(rl.parse(text), np.zeros((2, 0, 3), "float32"))
    (got,) = run_native(text, np.zeros((2, 0, 3), "float32"))
    assert got.shape == (2, 0, 3) and got.dtype == np.float32


def test_lrn_special_values() -> None:
    x = np.array([[0.0, -0.0, np.nan, 1.0], [np.inf, -np.inf, 3e18, -2.5],
                  [1e-30, 5.0, -7.0, 0.25]], dtype="float32")
    text = _program([("x", (3, 4), "float32")],
                    ["nn.lrn(%x, size=3, axis=1, bias=1f, alpha=0.5f, beta=0.75f)",
                     "nn.lrn(%x, size=2, axis=0, bias=1f, alpha=1f, beta=0.5f)"])
    assert_matches_interpreter(text, x)


def test_lrn_of_integers_has_no_lowering() -> None:
    _assert_no_lowering(_program([("x", (2, 3), "int32")], ["nn.lrn(%x, size=3, axis=1)"]))


# ---------------------------------------------------------------- nn.fast_softmax

@pytest.mark.parametrize("dtype", FLOATS)
def test_fast_softmax(dtype: str) -> None:
    rng = np.random.default_rng(12)
    x = _floats((3, 1, 17), dtype, rng)
    v = _floats((17,), dtype, rng)
    e = _floats((2, 0, 3), dtype, rng)
    one = _floats((1,), dtype, rng)
    calls = ["nn.fast_softmax(%x)", "nn.fast_softmax(%x, axis=0)",
             "nn.fast_softmax(%x, axis=-2)", "nn.fast_softmax(%x, axis=1)",
             "nn.fast_softmax(%v)", "nn.fast_softmax(%v, axis=0)",
             "nn.fast_softmax(%e)", "nn.fast_softmax(%e, axis=0)",
             "nn.fast_softmax(%one)"]
    text = _program([("x", (3, 1, 17), dtype), ("v", (17,), dtype), ("e", (2, 0, 3), dtype),
                     ("one", (1,), dtype)], calls)
    assert_matches_interpreter(text, x, v, e, one)


def test_fast_softmax_along_an_empty_axis() -> None:
    """Along a size-0 axis the NumPy kernel fails (a maximum over nothing); the native
    result is the empty tensor."""
    from llvm_check import run_native
    text = _program([("e", (2, 0, 3), "float32")], ["nn.fast_softmax(%e, axis=1)"])
    with pytest.raises(Exception, match="zero-size array"):
        rl.evaluate(rl.parse(text), np.zeros((2, 0, 3), "float32"))
    (got,) = run_native(text, np.zeros((2, 0, 3), "float32"))
    assert got.shape == (2, 0, 3) and got.dtype == np.float32


def test_fast_softmax_is_tvms_fast_exp() -> None:
    """float32 follows the kernel's fast_exp steps (bit for bit; the sum's order may
    differ): within 2e-7 (relative) of the NumPy kernel over exponents in [-87, 0], where
    fast_exp is up to 4e-6 from exp (an exact exp fails this tolerance; denormal results
    within a few of their ulps), and down to the flush below -87.3."""
    rng = np.random.default_rng(13)
    x = rng.uniform(-87.0, 0.0, (8, 301)).astype("float32")
    x[:, 0] = 0.0                          # the row maximum: exponents are x itself
    x[0, 1:6] = [-87.3, -87.4, -88.0, -90.0, -1000.0]
    text = _program([("x", (8, 301), "float32")], ["nn.fast_softmax(%x, axis=-1)"])
    native = assert_matches_interpreter(text, x, rtol=2e-7, atol=1e-43)  # denormals: ulps
    exact = np.exp(x.astype(np.float64))
    exact /= exact.sum(axis=-1, keepdims=True)
    got = np.asarray(native[0], dtype=np.float64)
    big = exact > 1e-30
    assert np.max(np.abs(got[big] / exact[big] - 1)) > 1e-6    # it is not the exact exp
    assert np.all(got[0, 3:6] == 0.0)                          # fast_exp flushes to 0


def test_fast_softmax_special_values() -> None:
    x = np.array([[0.0, -np.inf, 1.0], [np.nan, 1.0, 2.0], [np.inf, 1.0, 2.0],
                  [-np.inf, -np.inf, -np.inf], [100.0, -100.0, 50.0]], dtype="float32")
    text = _program([("x", (5, 3), "float32")],
                    ["nn.fast_softmax(%x)", "nn.fast_softmax(%x, axis=0)"])
    assert_matches_interpreter(text, x)


# ---------------------------------------------------------------- reinterpret

@pytest.mark.parametrize("src,dst", [("int8", "uint8"), ("uint8", "int8"),
                                     ("int16", "uint16"), ("uint16", "int16"),
                                     ("int32", "uint32"), ("uint32", "int32"),
                                     ("int64", "uint64"), ("uint64", "int64"),
                                     ("int32", "int32"), ("bool", "bool"),
                                     ("float32", "float32"), ("float16", "float16"),
                                     ("float64", "float64")])
def test_reinterpret_same_bits(src: str, dst: str) -> None:
    rng = np.random.default_rng(14)

    def values(shape: tuple) -> np.ndarray:
        if src.startswith("float"):
            a = _floats(shape, src, rng, 100.0)
            if a.size >= 3:
                a.reshape(-1)[:3] = [np.nan, -np.inf, -0.0]
            return a
        return _ints(shape, src, rng)
    shapes = [(3, 17), (1,), (2, 0, 3), ()]
    args = [values(s) for s in shapes]
    if src.startswith("int"):                    # the extremes of the width
        info = np.iinfo(src)
        args[0].reshape(-1)[:3] = [info.min, info.max, -1]
    params = [(f"a{k}", s, src) for k, s in enumerate(shapes)]
    calls = [f'reinterpret(%a{k}, dtype="{dst}")' for k in range(len(shapes))]
    native = assert_matches_interpreter(_program(params, calls), *args)
    for got, a in zip(native, args):
        assert got.tobytes() == a.tobytes()


def test_reinterpret_fused_with_arithmetic() -> None:
    """A reinterpret between elementwise ops fuses into one kernel."""
    rng = np.random.default_rng(15)
    x = _ints((5, 7), "int8", rng)
    y = np.array([3, 250, 0, 1, 255, 128, 7], dtype="uint8")
    text = HEAD + ('def @main(%x: Tensor[(5, 7), int8], %y: Tensor[(7), uint8]) { '
                   'add(reinterpret(negative(%x), dtype="uint8"), %y) }\n')
    mod = fused_module(text)
    assert isinstance(mod["main"].body.op, rl.ir.expr.Function)    # one primitive function
    assert_matches_interpreter(text, x, y)


# ---------------------------------------------------------------- vm.shape_of

def test_vm_shape_of() -> None:
    calls = ["vm.shape_of(%x)", 'vm.shape_of(%x, dtype="int32")', "vm.shape_of(%e)",
             'vm.shape_of(%e, dtype="int8")', "vm.shape_of(%f)", 'vm.shape_of(%f, dtype="int32")',
             "vm.shape_of(%h)", 'vm.shape_of(%o, dtype="uint16")',
             "shape_of(%x)"]
    params = [("x", (3, 1, 17), "int8"), ("e", (2, 0), "int64"), ("f", (), "float32"),
              ("h", (4, 5), "float16"), ("o", (1,), "bool")]
    rng = np.random.default_rng(16)
    args = [_ints((3, 1, 17), "int8", rng), np.zeros((2, 0), "int64"),
            np.array(-2.75, "float32"), _floats((4, 5), "float16", rng),
            np.array([True])]
    native = assert_matches_interpreter(_program(params, calls), *args)
    assert native[0].tolist() == [3, 1, 17] and native[0].dtype == np.int64
    assert native[4].shape == () and int(native[4]) == 0


# ---------------------------------------------------------------- vm.reshape_tensor

@pytest.mark.parametrize("dtype", FLOATS + ["int8", "int32", "uint64", "bool"])
def test_vm_reshape_tensor(dtype: str) -> None:
    rng = np.random.default_rng(17)

    def values(shape: tuple) -> np.ndarray:
        return _floats(shape, dtype, rng) if dtype.startswith("float") else _ints(
            shape, dtype, rng)
    cases = [((2, 3, 5), (5, 6)), ((2, 3, 5), (30,)), ((2, 3, 5), (1, 6, 1, 5)),
             ((3, 1, 17), (17, 3)), ((1,), ()), ((), (1, 1)), ((2, 0, 3), (0, 6)),
             ((2, 0, 3), (3, 0, 2)), ((7, 11), (11, 7))]
    params, calls, args = [], [], []
    for k, (src, dst) in enumerate(cases):
        params += [(f"d{k}", src, dtype), (f"s{k}", (len(dst),), "int64")]
        calls.append(f"vm.reshape_tensor(%d{k}, %s{k}, newshape={list(dst)})")
        args += [values(src), np.array(dst, dtype="int64")]
    native = assert_matches_interpreter(_program(params, calls), *args)
    for got, (_, dst) in zip(native, cases):
        assert got.shape == dst


def test_vm_reshape_tensor_with_wrong_count_has_no_lowering() -> None:
    _assert_no_lowering(_program([("d", (2, 3), "float32"), ("s", (2,), "int64")],
                                 ["vm.reshape_tensor(%d, %s, newshape=[4, 2])"]))
