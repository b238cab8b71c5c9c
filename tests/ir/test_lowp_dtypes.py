"""The float8/float4 and 4-/2-bit integer dtypes (relaylang/ir/lowp.py): the codecs
checked against ml_dtypes (installed with onnx; not a relaylang dependency) on every bit
pattern and on many float32 values, the dtype spellings, parsing and printing, type
checking, the cast kernel, arithmetic computed in float32, and the LLVM backend."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.dtype import canonical_dtype, dtype_bits, dtype_kind
from relaylang.ir.lowp import (
    CARRIERS,
    FLOAT_LOWP,
    INT_FORMATS,
    LOWP_DTYPES,
    from_lowp,
    from_lowp_bits,
    lowp_bits,
    lowp_bits_of,
    lowp_name,
    to_lowp,
)
from relaylang.op import make as op

md = pytest.importorskip("ml_dtypes")

HEADER = '#[version = "0.0.5"]\n'


def _float32_samples() -> np.ndarray:
    """Specials, every float16 value, random float32 bit patterns (NaNs, subnormals and
    huge values included), float32 subnormals."""
    rng = np.random.default_rng(20261125)
    special = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-45, -1e-45, 1e38,
                        -1e38, 3.4028235e38, 2.0 ** -126, 2.0 ** -127, 2.0 ** -149],
                       np.float32)
    halves = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    rand = rng.integers(0, 2 ** 32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    subnormal = rng.integers(1, 0x800000, 5_000, dtype=np.uint32).view(np.float32)
    signalling = np.array([0x7F800001, 0x7FA00000, 0xFF900000, 0x7FBFFFFF], np.uint32)
    return np.concatenate([special, halves, rand, subnormal, signalling.view(np.float32)])


SAMPLES = _float32_samples()


def _pattern_count(name: str) -> int:
    return 1 << lowp_bits_of(name)


def _same_float32(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))


# ---------------------------------------------------------------- codecs vs ml_dtypes

@pytest.mark.parametrize("name", FLOAT_LOWP)
def test_float_decoding_matches_ml_dtypes_on_every_pattern(name: str) -> None:
    codes = np.arange(_pattern_count(name), dtype=np.uint8)
    ours = from_lowp(from_lowp_bits(codes, name))
    theirs = codes.view(getattr(md, name)).astype(np.float32)
    assert ours.dtype == np.float32
    assert _same_float32(ours, theirs)          # NaNs too: sign and payload


@pytest.mark.parametrize("name", FLOAT_LOWP)
def test_float_encoding_matches_ml_dtypes(name: str) -> None:
    t = getattr(md, name)
    codes = np.arange(_pattern_count(name), dtype=np.uint8)
    values = codes.view(t).astype(np.float32)
    finite = np.unique(values[np.isfinite(values)]).astype(np.float64)
    mids = ((finite[1:] + finite[:-1]) / 2).astype(np.float32)     # ties (exact in float32)
    up, down = np.float32(np.inf), np.float32(-np.inf)
    with np.errstate(all="ignore"):
        x = np.concatenate([SAMPLES, values, mids, np.nextafter(mids, up),
                            np.nextafter(mids, down), values * np.float32(1.0001),
                            values * np.float32(64.0), values / np.float32(64.0)])
    with np.errstate(all="ignore"):
        theirs = x.astype(t).view(np.uint8)
    ours = lowp_bits(to_lowp(x, name))
    bad = np.nonzero(ours != theirs)[0]
    assert bad.size == 0, [(float(x[i]), int(ours[i]), int(theirs[i])) for i in bad[:5]]


@pytest.mark.parametrize("name", FLOAT_LOWP)
def test_float_round_trip_keeps_every_value(name: str) -> None:
    codes = np.arange(_pattern_count(name), dtype=np.uint8)
    carried = from_lowp_bits(codes, name)
    back = lowp_bits(to_lowp(from_lowp(carried), name))
    values = from_lowp(carried)
    keep = ~np.isnan(values)
    assert np.array_equal(back[keep], codes[keep])
    assert np.isnan(from_lowp(from_lowp_bits(back[~keep], name))).all()


def test_float_formats_round_to_nearest_even_and_overflow_as_they_define() -> None:
    def bits(values: list[float], name: str) -> list[int]:
        return lowp_bits(to_lowp(np.array(values, np.float32), name)).tolist()
    # e4m3fn: 464 is the tie between 448 and (NaN's) 480: even, 448; beyond, NaN
    assert bits([448, 464, 465, -1e9, np.inf, np.nan], "float8_e4m3fn") == \
        [0x7E, 0x7E, 0x7F, 0xFF, 0x7F, 0x7F]
    assert bits([57344, 61439, 61440, np.inf, -np.inf], "float8_e5m2") == \
        [0x7B, 0x7B, 0x7C, 0x7C, 0xFC]
    assert bits([-0.0, 1e9, np.nan, 240], "float8_e4m3fnuz") == [0, 0x80, 0x80, 0x7F]
    assert bits([1.25, 1.75, 7, 1e9, -np.inf], "float4_e2m1fn") == [2, 4, 7, 7, 15]
    assert bits([1.5, 3, 0.75, 1.4, 0.0, -2, 2.0 ** -130], "float8_e8m0fnu") == \
        [128, 129, 127, 127, 255, 255, 0]


@pytest.mark.parametrize("name", tuple(INT_FORMATS))
def test_integer_formats_match_ml_dtypes(name: str) -> None:
    bits, signed = INT_FORMATS[name]
    t = getattr(md, name)
    wide = np.int8 if signed else np.uint8
    codes = np.arange(1 << bits, dtype=np.uint8)
    carried = from_lowp_bits(codes, name)
    assert np.array_equal(from_lowp(carried), codes.view(t).astype(wide))
    assert np.array_equal(lowp_bits(carried), codes)
    floats = SAMPLES[np.isfinite(SAMPLES) & (np.abs(SAMPLES) < 2 ** 31)]
    floats = np.concatenate([floats, np.arange(-40, 40, 0.25, dtype=np.float32)])
    with np.errstate(all="ignore"):
        assert np.array_equal(from_lowp(to_lowp(floats, name)), floats.astype(t).astype(wide))
    ints = np.arange(-300, 300, dtype=np.int32)
    assert np.array_equal(from_lowp(to_lowp(ints, name)), ints.astype(t).astype(wide))
    assert from_lowp(to_lowp(np.array([np.nan, np.inf, -np.inf]), name)).tolist() == [0, 0, 0]


def test_carriers_are_distinct_structured_dtypes() -> None:
    assert len(set(CARRIERS.values())) == len(LOWP_DTYPES)
    for name, dtype in CARRIERS.items():
        assert dtype.itemsize == 1 and dtype.names == (name,) and lowp_name(dtype) == name
    assert lowp_name(np.dtype(np.uint8)) is None
    with pytest.raises(TypeError):          # arithmetic on a carrier fails loudly
        np.add(to_lowp([1.0], "float8_e5m2"), to_lowp([1.0], "float8_e5m2"))


# ---------------------------------------------------------------- dtypes, text, types

@pytest.mark.parametrize("name", LOWP_DTYPES)
def test_dtype_spellings(name: str) -> None:
    assert canonical_dtype(name) == name
    assert dtype_bits(name) == lowp_bits_of(name)
    assert dtype_kind(name) == ("float" if name.startswith("float") else
                                "uint" if name.startswith("uint") else "int")
    assert canonical_dtype(name + "x4" if name.startswith("float") else name + "y") is None


@pytest.mark.parametrize("name", LOWP_DTYPES)
def test_parse_print_and_type_check(name: str) -> None:
    text = HEADER + f"""def @main(%x: Tensor[(2,), {name}], %y: Tensor[(2), float32]) {{
  (cast(%x, dtype="float32"), cast(%y, dtype="{name}"), cast_like(%y, %x))
}}
"""
    mod = rl.transform.InferType()(rl.parse(text))
    printed = rl.astext(mod)
    assert f"%x: Tensor[(2), {name}]" in printed
    ret = mod["main"].checked_type.ret_type
    assert [f.dtype for f in ret.fields] == ["float32", name, name]
    assert rl.astext(rl.transform.InferType()(rl.parse(printed))) == printed


def test_reinterpret_needs_the_same_width() -> None:
    ok = rl.parse(HEADER + """def @main(%x: Tensor[(3), float8_e5m2], %y: Tensor[(3), int4]) {
  (reinterpret(%x, dtype="uint8"), reinterpret(%y, dtype="float4_e2m1fn"))
}""")
    rl.transform.InferType()(ok)
    bad = rl.parse(HEADER + """def @main(%x: Tensor[(3), float8_e5m2]) {
  reinterpret(%x, dtype="int4")
}""")
    with pytest.raises(rl.DiagnosticError, match="8 bits"):
        rl.transform.InferType()(bad)


@pytest.mark.parametrize("name", LOWP_DTYPES)
def test_constants_print_as_metadata_and_read_back(name: str) -> None:
    values = [1, -2, 3] if name in INT_FORMATS else [1.5, -2.0, 0.25]
    x = rl.var("x", shape=(3,), dtype=name)
    c = rl.const(values, name)
    assert lowp_name(c.data.dtype) == name
    mod = rl.IRModule.from_expr(rl.Function([x], rl.Tuple([op.add(x, c), rl.const(1, name)])))
    text = rl.astext(rl.transform.InferType()(mod))
    again = rl.parse(text)
    assert rl.astext(rl.transform.InferType()(again)) == text
    read = again["main"].body.fields[0].args[1].data
    assert read.dtype == CARRIERS[name] and np.array_equal(lowp_bits(read), lowp_bits(c.data))


# ---------------------------------------------------------------- kernels

def _evaluate(text: str, *args: object, target: str = "interp") -> object:
    mod = rl.transform.InferType()(rl.parse(HEADER + text))
    if target == "interp":
        return rl.create_executor(mod)(*args)
    return rl.build(mod, target="llvm")(*args)


@pytest.mark.parametrize("name", LOWP_DTYPES)
@pytest.mark.parametrize("source", ["float32", "float16", "float64", "int32", "bfloat16"])
def test_cast_kernel_matches_ml_dtypes(name: str, source: str) -> None:
    rng = np.random.default_rng(3)
    x32 = np.concatenate([rng.standard_normal(40).astype(np.float32) * 8,
                          np.array([0.5, -0.0, 700, -1e6, 3.0], np.float32)])
    if source == "int32":
        x32 = np.round(x32)
    if name == "float8_e8m0fnu":
        x32 = np.abs(x32) + np.float32(0.01)
    if source == "bfloat16":
        from relaylang.op.numpy_support import from_bfloat16, to_bfloat16
        arg = to_bfloat16(x32)
        ref_in = from_bfloat16(arg)
    else:
        with np.errstate(over="ignore"):
            arg = x32.astype(source)
        ref_in = arg.astype(np.float32) if source != "int32" else arg
    text = f"""def @main(%x: Tensor[({len(x32)}), {source}]) {{
  %0 = cast(%x, dtype="{name}");
  (%0, cast(%0, dtype="float32"), cast(%0, dtype="int32"))
}}"""
    carried, back, as_int = _evaluate(text, arg)
    t = getattr(md, name)
    with np.errstate(all="ignore"):
        theirs = ref_in.astype(t)
    assert carried.dtype == CARRIERS[name]
    if name in INT_FORMATS:
        wide = np.int8 if INT_FORMATS[name][1] else np.uint8
        assert np.array_equal(from_lowp(carried), theirs.astype(wide))
    else:
        assert np.array_equal(lowp_bits(carried), theirs.view(np.uint8))
        assert np.array_equal(back, theirs.astype(np.float32), equal_nan=True)
    finite = np.isfinite(back)
    assert np.array_equal(as_int[finite], back[finite].astype(np.int32))


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                  "float4_e2m1fn", "float8_e8m0fnu"])
def test_arithmetic_is_float32_rounded_once(name: str) -> None:
    t = getattr(md, name)
    rng = np.random.default_rng(5)
    xs = to_lowp(np.abs(rng.standard_normal((2, 3))) + 0.5, name)
    ys = to_lowp(np.abs(rng.standard_normal((2, 3))) + 0.5, name)
    text = f"""def @main(%x: Tensor[(2, 3), {name}], %y: Tensor[(2, 3), {name}]) {{
  (add(%x, %y), multiply(%x, %y), sum(%x, axis=[1]), transpose(%x), maximum(%x, %y),
   less(%x, %y), concatenate((%x, %y), axis=1))
}}"""
    out = _evaluate(text, xs, ys)
    x, y = from_lowp(xs), from_lowp(ys)
    refs = [x + y, x * y, x.sum(axis=1), x.T, np.maximum(x, y)]
    for got, ref in zip(out[:5], refs):
        assert got.dtype == CARRIERS[name]
        assert np.array_equal(lowp_bits(got), ref.astype(np.float32).astype(t).view(np.uint8))
    assert np.array_equal(out[5], x < y)
    assert np.array_equal(lowp_bits(out[6]), lowp_bits(np.concatenate([xs, ys], axis=1)))


def test_integer_arithmetic_wraps() -> None:
    xs, ys = to_lowp([7, -8, 3], "int4"), to_lowp([1, -1, 3], "int4")
    total, product = _evaluate("""def @main(%x: Tensor[(3), int4], %y: Tensor[(3), int4]) {
  (add(%x, %y), multiply(%x, %y))
}""", xs, ys)
    assert from_lowp(total).tolist() == [-8, 7, 6] and from_lowp(product).tolist() == [7, 8 - 16, -7]


def test_interpreter_converts_python_values() -> None:
    out = _evaluate('def @main(%x: Tensor[(3), float8_e5m2]) { cast(%x, dtype="float32") }',
                    [1.0, 3.0, -0.1])
    assert out.tolist() == pytest.approx([1.0, 3.0, -0.09375])
    with pytest.raises(Exception, match="dtype"):
        _evaluate('def @main(%x: Tensor[(3), float8_e5m2]) { %x }',
                  to_lowp([1, 2, 3], "float8_e4m3fn"))


@pytest.mark.parametrize("name", LOWP_DTYPES)
def test_llvm_build_runs_casts_like_the_interpreter(name: str) -> None:
    text = f"""def @main(%x: Tensor[(5), float32], %y: Tensor[(2, 3), {name}]) {{
  %0 = cast(%x, dtype="{name}");
  %1 = cast(%0, dtype="float32");
  (%0, add(%1, 1f), cast(%y, dtype="float16"), reshape(%y, newshape=[3, 2]))
}}"""
    x = np.array([0.3, -1.7, 5.5, 100.0, 2.0], np.float32)
    y = to_lowp(np.array([[1, 2, 3], [0, 1, 2]]), name)
    mod = rl.transform.InferType()(rl.parse(HEADER + text))
    lib = rl.build(mod, target="llvm")
    native = lib(x, y)
    interp = rl.create_executor(mod)(x, y)
    for a, b in zip(native, interp):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    assert "cast" in lib.fallback_ops         # the NumPy kernel runs the conversions


def test_llvm_build_with_control_flow_runs_like_the_interpreter() -> None:
    mod = rl.transform.InferType()(rl.parse(HEADER + """
def @main(%x: Tensor[(3), float8_e4m3fn], %c: bool) {
  if (%c) { add(%x, %x) } else {
    cast(multiply(cast(%x, dtype="float32"), 3f), dtype="float8_e4m3fn")
  }
}"""))
    lib = rl.build(mod, target="llvm")
    x = to_lowp([1.0, 2.0, -3.0], "float8_e4m3fn")
    for c, want in ((True, [2.0, 4.0, -6.0]), (False, [3.0, 6.0, -9.0])):
        got = lib(x, np.array(c))
        assert got.dtype == CARRIERS["float8_e4m3fn"] and from_lowp(got).tolist() == want
        assert got.tobytes() == rl.create_executor(mod)(x, np.array(c)).tobytes()
