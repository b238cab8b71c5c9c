"""The LLVM lowerings of qnn.quantize and qnn.dequantize against the interpreter, bit for
bit: per tensor, per axis (negative axes, size-1 dims, one-element vectors), per block
(a short last block), every integer output dtype, float16 / float32 / float64 / int32
data, ties, NaN, infinities and saturation; and a quantize fused with its producer."""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from llvm_check import run_native

import relaylang as rl

HEAD = '#[version = "0.0.5"]\n'


def _exact(text: str, *args: np.ndarray) -> np.ndarray:
    mod = rl.parse(text)
    expected = np.asarray(rl.evaluate(mod, *args))
    native = np.asarray(run_native(mod, *args))
    assert native.dtype == expected.dtype and native.shape == expected.shape
    np.testing.assert_array_equal(native, expected)
    return native


def _ty(a: np.ndarray) -> str:
    shape = ", ".join(str(d) for d in a.shape) + ("," if a.ndim == 1 else "")
    return f"Tensor[({shape}), {a.dtype.name}]"


def _data(shape: tuple, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "int32":
        return rng.integers(-3000, 3000, size=shape).astype(dtype)
    x = rng.standard_normal(shape) * 150
    x = np.where(rng.random(shape) < 0.3, np.round(x) + 0.5, x)      # ties
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    flat = x.reshape(-1)
    with np.errstate(over="ignore"):
        for k, v in enumerate([np.nan, np.inf, -np.inf, 1e30, -0.0][:flat.size]):
            flat[k] = v
    return x


CASES = [
    # (data shape, param shape, axis, block_size)
    ((7,), (), -1, 0),
    ((1,), (1,), 0, 0),
    ((3, 1, 5), (5,), -1, 0),
    ((3, 1, 5), (1,), 1, 0),
    ((2, 5, 3), (5,), 1, 0),
    ((2, 5, 3), (5,), -2, 0),
    ((2, 5, 3), (2, 2, 3), 1, 3),
    ((4, 3), (2, 3), -2, 2),
    ((1, 7), (1, 3), 1, 3),
    ((3, 1), (3, 1), 1, 1),
]


@pytest.mark.parametrize("shape, pshape, axis, block", CASES)
@pytest.mark.parametrize("out", ["int8", "uint8", "int16", "uint16", "int32"])
def test_quantize(shape, pshape, axis, block, out) -> None:
    rng = np.random.default_rng(zlib.crc32(repr((shape, pshape, out)).encode()))
    x = _data(shape, "float32", len(shape) + block)
    scale = (rng.integers(1, 8, size=pshape) / 4.0).astype(np.float32)
    info = np.iinfo(out)
    zero = rng.integers(max(info.min, -100), min(info.max, 100), size=pshape).astype(out)
    text = HEAD + (f"def @main(%x: {_ty(x)}, %s: {_ty(scale)}, %z: {_ty(zero)}) {{\n"
                   f'  qnn.quantize(%x, %s, %z, out_dtype="{out}", axis={axis}, '
                   f"block_size={block})\n}}\n")
    got = _exact(text, x, scale, zero)
    if x.size >= 3:                               # -inf saturated, NaN went to the low end
        assert got.reshape(-1)[0] == got.reshape(-1)[2] == info.min


@pytest.mark.parametrize("dtype, sdtype", [("float16", "float16"), ("float64", "float32"),
                                           ("float32", "float64"), ("int32", "float32"),
                                           ("float32", "float16"), ("float16", "float32")])
def test_quantize_precisions(dtype, sdtype) -> None:
    x = _data((3, 11), dtype, 3)
    if dtype == "float16":          # quotients that round differently in float16 (ties)
        x[0, :4] = np.array([2.25, 5.25, 1.25, 12.25], np.float16)
    scale = np.array([0.3, 0.1, 0.7], sdtype)
    zero = np.array([0, -3, 5], "int8")
    text = HEAD + (f"def @main(%x: {_ty(x)}, %s: {_ty(scale)}, %z: {_ty(zero)}) {{\n"
                   f'  qnn.quantize(%x, %s, %z, out_dtype="int8", axis=0)\n}}\n')
    _exact(text, x, scale, zero)


@pytest.mark.parametrize("shape, pshape, axis, block", CASES)
@pytest.mark.parametrize("dtype, out", [("int8", "float32"), ("uint8", "float16"),
                                        ("int16", "float64"), ("uint16", "float32"),
                                        ("int32", "float32")])
def test_dequantize(shape, pshape, axis, block, dtype, out) -> None:
    rng = np.random.default_rng(zlib.crc32(repr((shape, pshape, dtype)).encode()))
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
    x.reshape(-1)[0] = info.max
    scale = (rng.standard_normal(pshape) * 0.37).astype(np.float32)
    zero = rng.integers(max(info.min, -100), min(info.max, 100), size=pshape).astype(dtype)
    text = HEAD + (f"def @main(%x: {_ty(x)}, %s: {_ty(scale)}, %z: {_ty(zero)}) {{\n"
                   f'  qnn.dequantize(%x, %s, %z, out_dtype="{out}", axis={axis}, '
                   f"block_size={block})\n}}\n")
    _exact(text, x, scale, zero)


def test_dequantize_float16_scale() -> None:
    x = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
    scale = np.linspace(0.01, 3.0, 16).astype(np.float16)
    zero = np.arange(16, dtype=np.int8)
    text = HEAD + (f"def @main(%x: {_ty(x)}, %s: {_ty(scale)}, %z: {_ty(zero)}) {{\n"
                   f'  qnn.dequantize(%x, %s, %z, out_dtype="float16", axis=-1)\n}}\n')
    _exact(text, x, scale, zero)


def test_quantize_fused_with_producer_and_round_trip() -> None:
    x = _data((2, 3, 4), "float32", 9)
    scale = np.array([0.5, 0.25, 2.0], np.float32)
    zero = np.array([10, 0, 250], np.uint8)
    text = HEAD + (f"def @main(%x: {_ty(x)}, %s: {_ty(scale)}, %z: {_ty(zero)}) {{\n"
                   f"  %0 = multiply(%x, 3f);\n"
                   f'  %1 = qnn.quantize(%0, %s, %z, out_dtype="uint8", axis=1);\n'
                   f"  qnn.dequantize(%1, %s, %z, axis=1)\n}}\n")
    _exact(text, x, scale, zero)


def test_low_precision_dtypes_run_the_numpy_kernel() -> None:
    # int4 is not in the loop IR: the lowering declines (the executor's fallback runs
    # the NumPy kernel), and rl.build still computes the interpreter's values
    from relaylang.backend.llvm.lower import NoLowering
    x = _data((5,), "float32", 2)
    scale, zero = np.array(0.5, np.float32), np.array(1, np.int8)
    text = HEAD + (f"def @main(%x: {_ty(x)}, %s: {_ty(scale)}, %z: {_ty(zero)}) {{\n"
                   f'  qnn.quantize(%x, %s, %z, out_dtype="int4")\n}}\n')
    with pytest.raises(NoLowering):
        run_native(rl.parse(text), x, scale, zero)
    mod = rl.parse(text)
    got = rl.evaluate(mod, x, scale, zero, target="llvm")
    want = rl.evaluate(mod, x, scale, zero)
    np.testing.assert_array_equal(np.asarray(got).view(np.int8), np.asarray(want).view(np.int8))


def test_bfloat16_runs_the_numpy_kernel_under_llvm() -> None:
    from relaylang.op.numpy_support import from_bfloat16, to_bfloat16
    text = HEAD + ("def @main(%x: Tensor[(2, 4), bfloat16], %s: Tensor[(4,), bfloat16], "
                   "%z: Tensor[(4,), int8]) {\n"
                   '  %0 = qnn.quantize(%x, %s, %z, out_dtype="int8", axis=-1);\n'
                   '  (%0, qnn.dequantize(%0, %s, %z, out_dtype="bfloat16", axis=1))\n}\n')
    mod = rl.parse(text)
    x = to_bfloat16(np.arange(8, dtype=np.float32).reshape(2, 4) * 1.7)
    s = to_bfloat16(np.array([0.3, 0.5, 1, 2], np.float32))
    z = np.array([1, 2, 3, 4], np.int8)
    want = rl.evaluate(mod, x, s, z)
    got = rl.evaluate(mod, x, s, z, target="llvm")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(from_bfloat16(got[1]), from_bfloat16(want[1]))
    # x[1, 2] = 6 * 1.7 = 10.2 (bfloat16 10.1875) with s[2] = 1: rint 10, + z[2] = 3
    assert want[0][1, 2] == 13
