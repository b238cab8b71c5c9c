"""The loop IR's BitCast and the LLVM lowering of reinterpret between floats and
integers against the interpreter (NumPy's `view`): every float dtype to and from the
signed and unsigned integers of its width, bit for bit (NaNs with payloads, signalling
NaNs, infinities, -0.0, subnormals, integer extremes), over odd shapes, size-1, size-0
and 0-d tensors, fused with arithmetic on either side."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import fused_module, run_native

import relaylang as rl
from relaylang.backend.llvm import loop_ir as L
from relaylang.backend.llvm.lower import lower_primitive
from relaylang.backend.llvm.te import LowerContext, LoweringError

HEAD = '#[version = "0.0.5"]\n'
SHAPES = [(3, 17), (1,), (2, 0, 3), ()]
UINT = {"float16": "uint16", "float32": "uint32", "float64": "uint64"}
PAIRS = [(f, i) for f in UINT for i in (UINT[f], UINT[f][1:])]      # (float, int)

# bit patterns every case holds: NaNs (quiet, with payload, signalling, negative),
# +-inf, -0.0, the smallest subnormal, the largest finite value
SPECIAL = {
    "float16": [0x7E00, 0x7E01, 0x7C01, 0xFE00, 0x7C00, 0xFC00, 0x8000, 0x0001, 0x7BFF],
    "float32": [0x7FC00000, 0x7FC00123, 0x7F800001, 0xFFC00000, 0x7F800000, 0xFF800000,
                0x80000000, 0x00000001, 0x7F7FFFFF],
    "float64": [0x7FF8000000000000, 0x7FF8000000000123, 0x7FF0000000000001,
                0xFFF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
                0x8000000000000000, 0x0000000000000001, 0x7FEFFFFFFFFFFFFF],
}


def _program(params: list[tuple[str, tuple, str]], calls: list[str]) -> str:
    decl = ", ".join(f"%{n}: Tensor[{s if s else '()'}, {d}]" for n, s, d in params)
    body = f"({', '.join(calls)},)" if len(calls) == 1 else f"({', '.join(calls)})"
    return HEAD + f"def @main({decl}) {{ {body} }}\n"


def _bits(shape: tuple, dtype: str, rng: np.random.Generator, special: str) -> np.ndarray:
    """Random bit patterns of `dtype` (any bits), the special ones first."""
    u = np.dtype(UINT[special])
    raw = rng.integers(0, np.iinfo(u).max, shape, dtype=u, endpoint=True)
    flat = raw.reshape(-1)
    pats = np.array(SPECIAL[special], dtype=u)[:flat.size]
    flat[:pats.size] = pats
    return raw.view(dtype)


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, \
        (got.dtype, got.shape, want.dtype, want.shape)
    assert got.tobytes() == want.tobytes()


def _check(text: str, *args: np.ndarray) -> tuple:
    """Natively and with the interpreter: the same bits."""
    mod = rl.parse(text)
    want = rl.evaluate(mod, *args)
    got = run_native(text, *args)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same_bits(np.asarray(g), np.asarray(w))
    return got


@pytest.mark.parametrize("src,dst", PAIRS + [(i, f) for f, i in PAIRS])
def test_reinterpret_float_int_bits(src: str, dst: str) -> None:
    rng = np.random.default_rng(21)
    special = src if src in UINT else dst
    args = [_bits(s, src, rng, special) for s in SHAPES]
    params = [(f"a{k}", s, src) for k, s in enumerate(SHAPES)]
    calls = [f'reinterpret(%a{k}, dtype="{dst}")' for k in range(len(SHAPES))]
    got = _check(_program(params, calls), *args)
    for g, a in zip(got, args):                   # and NumPy's view itself
        _same_bits(np.asarray(g), a.view(dst))


@pytest.mark.parametrize("dtype", list(UINT))
def test_reinterpret_fused_both_sides(dtype: str) -> None:
    """Arithmetic before and after the bit cast, in one kernel: a float16 compute
    (rounded) read as bits, and bits read as a float16 the next op widens."""
    rng = np.random.default_rng(22)
    ity = UINT[dtype][1:]
    x = (rng.standard_normal((5, 7)) * 3).astype(dtype)
    k = rng.integers(-50, 50, (7,)).astype(ity)
    one = {"float16": "1f16", "float32": "1f", "float64": "1f64"}[dtype]
    text = HEAD + (f"def @main(%x: Tensor[(5, 7), {dtype}], %k: Tensor[(7), {ity}]) {{ "
                   f'(add(reinterpret(multiply(%x, %x), dtype="{ity}"), %k), '
                   f'subtract(reinterpret(add(reinterpret(%x, dtype="{ity}"), %k), '
                   f'dtype="{dtype}"), {one})) }}\n')
    mod = fused_module(text)
    body = mod["main"].body
    assert all(isinstance(f.op, rl.ir.expr.Function) for f in body.fields)
    _check(text, x, k)


def test_loop_ir_bitcast_node() -> None:
    buf = L.Buffer("x", (4,), "float32")
    i = L.Var("i")
    e = L.BitCast(L.Load(buf, (i,)), "int32")
    assert e.dtype == "int32" and str(e) == "bitcast<int32>(x[i])"
    assert L.children(e) == (e.value,)
    j = L.Var("j")
    moved = L.substitute(e, {id(i): j})
    assert isinstance(moved, L.BitCast) and str(moved) == "bitcast<int32>(x[j])"
    for bad in ("int16", "float64", "bool"):
        with pytest.raises(TypeError):
            L.BitCast(L.Load(buf, (i,)), bad)


def test_lowering_context_bitcast() -> None:
    b = LowerContext()
    x = b.placeholder((3,), "float16", "x")
    assert b.bitcast(x[0], "float16") is not None
    e = b.bitcast(x[0], "uint16")
    assert isinstance(e, L.BitCast) and e.dtype == "uint16"
    with pytest.raises(LoweringError):
        b.bitcast(x[0], "int32")
    with pytest.raises(LoweringError):
        b.bitcast(1.5, "int32")


def test_reinterpret_prints_a_bitcast() -> None:
    text = _program([("x", (2, 3), "float32")], ['reinterpret(%x, dtype="int32")'])
    fn = fused_module(text)["main"].body.fields[0].op
    prim = lower_primitive(fn, "bits")
    assert "bitcast<int32>(" in str(prim)
    same = _program([("x", (2, 3), "int32")], ['reinterpret(%x, dtype="uint32")'])
    prim = lower_primitive(fused_module(same)["main"].body.fields[0].op, "same")
    assert "bitcast" not in str(prim)              # one width of integers: a value cast
