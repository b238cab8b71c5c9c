"""Every LLVM lowering of the transform family against the interpreter (the NumPy
kernels): negative axes, size-1 and size-0 dimensions, odd sizes, per dtype where the
op moves values of any dtype (bit for bit: `rtol=0`). The calls of one case run as one
program (a tuple of results), so each case compiles one module."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

from relaylang.op.registry import all_ops, implementation

HEAD = '#[version = "0.0.5"]\n'
DTYPES = ["float32", "float16", "float64", "int8", "int32", "int64", "uint8", "bool"]


def _values(shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("uint"):
        return rng.integers(0, 200, shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-100, 100, shape).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _program(params: str, calls: list[str]) -> str:
    return HEAD + f"def @main({params}) {{ ({', '.join(calls)}) }}\n"


def test_every_transform_is_lowered() -> None:
    names = {op.name for op in all_ops() if op.package.endswith("op.transform")}
    assert names
    assert {n for n in names if implementation(n, "llvm") is None} == set()


SHAPE_CALLS = [
    "reshape(%x, newshape=[17, 3])", "reshape(%x, newshape=[-1])",
    "reshape(%x, newshape=[3, 17, 1])", "reshape(%x, newshape=[1, 51])",
    "reshape(%x, newshape=[51, 1, 1])", "reshape(%z, newshape=[6, 0])",
    "reshape(%w, newshape=[4, 3, 5])", "reshape_like(%x, %x)",
    "transpose(%x, axes=[2, 0, 1])", "transpose(%x)", "transpose(%x, axes=[-1, 1, 0])",
    "transpose(%z, axes=[1, 2, 0])",
    "squeeze(%x, axis=[1])", "squeeze(%x)", "expand_dims(%x, axis=-1, num_newaxis=2)",
    "expand_dims(%x, axis=0)",
    "concatenate((%x, %x, %y), axis=-1)", "concatenate((%z, %z), axis=1)",
    "concatenate((%x, %x), axis=0)", "concatenate((%y, %z2, %y), axis=2)",
    "concatenate((%y,), axis=0)",
    "stack((%x, %x, %x), axis=1)", "stack((%x, %x), axis=-1)", "stack((%z,), axis=0)",
    "split(%x, indices_or_sections=[2, 9], axis=2)",
    "split(%x, indices_or_sections=3, axis=0)", "split(%x, indices_or_sections=[1], axis=-3)",
    "strided_slice(%x, begin=[0, 0, 1], end=[3, 1, 17], strides=[2, 1, 3])",
    "strided_slice(%x, begin=[-1, 0, 16], end=[-4, 1, 0], strides=[-1, 1, -4])",
    "strided_slice(%x, begin=[1], end=[2], strides=[1], axes=[2])",
    'strided_slice(%x, begin=[1, 0, 2], end=[-1, 1, 5], strides=[1, 1, 1], slice_mode="size")',
    "slice_like(%x, %y)", "slice_like(%x, %y, axes=[-1])",
    "broadcast_to(%y, shape=[2, 3, 4, 5])", "broadcast_to_like(%y, %w)",
    "tile(%x, reps=[2, 1, 1])", "tile(%y, reps=[2, 1, 2, 1])", "tile(%y, reps=[3])",
    "tile(%z, reps=[2, 2])",
    "repeat(%x, repeats=2, axis=-1)", "repeat(%y, repeats=3)", "repeat(%x, repeats=2, axis=0)",
    "reverse(%x, axis=-1)", "reverse(%x, axis=0)", "reverse(%z, axis=1)",
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_shape_ops(dtype: str) -> None:
    params = (f"%x: Tensor[(3, 1, 17), {dtype}], %y: Tensor[(3, 1, 5), {dtype}], "
              f"%z: Tensor[(2, 0, 3), {dtype}], %z2: Tensor[(3, 1, 0), {dtype}], "
              f"%w: Tensor[(3, 4, 5), {dtype}]")
    rng = np.random.default_rng(1)
    args = [_values(s, dtype, rng) for s in [(3, 1, 17), (3, 1, 5), (2, 0, 3), (3, 1, 0),
                                            (3, 4, 5)]]
    assert_matches_interpreter(_program(params, SHAPE_CALLS), *args, rtol=0)    # exact


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "bool"])
def test_layout_transform(dtype: str) -> None:
    calls = ['layout_transform(%x, src_layout="NCHW", dst_layout="NHWC")',
             'layout_transform(%x, src_layout="NCHW", dst_layout="NCHW4c")',
             'layout_transform(%x, src_layout="NCHW", dst_layout="NCHW3c")',
             'layout_transform(%x, src_layout="NCHW", dst_layout="NCHW2c2w")',
             'layout_transform(%p, src_layout="NCHW4c", dst_layout="NCHW")',
             'layout_transform(%p, src_layout="NCHW4c", dst_layout="NCHW8c")',
             'layout_transform(%p, src_layout="NCHW4c", dst_layout="NHWC2c")',
             'layout_transform(%z, src_layout="NCHW", dst_layout="NCHW4c")']
    params = (f"%x: Tensor[(2, 7, 3, 5), {dtype}], %p: Tensor[(1, 3, 2, 3, 4), {dtype}], "
              f"%z: Tensor[(1, 0, 2, 2), {dtype}]")
    rng = np.random.default_rng(2)
    args = [_values(s, dtype, rng) for s in [(2, 7, 3, 5), (1, 3, 2, 3, 4), (1, 0, 2, 2)]]
    assert_matches_interpreter(_program(params, calls), *args, rtol=0)


@pytest.mark.parametrize("itype", ["int32", "int64", "int8"])
def test_indexing_ops(itype: str) -> None:
    # (NumPy's take cannot wrap int8 indices by the 135 elements of the flattened %x)
    wrap = ['take(%x, %i, mode="wrap")'] if itype != "int8" else []
    calls = ["take(%x, %i)", *wrap, "take(%x, %i, axis=1)",
             'take(%x, %i, axis=-1, mode="wrap")', 'take(%x, %k, axis=0, mode="fast")',
             'take(%x, %n, axis=2, mode="fast")', "take(%x, %b, axis=2, batch_dims=1)",
             'take(%x, %b, axis=2, batch_dims=-1, mode="wrap")', "take(%x, %s, axis=1)",
             "take(%x, %e, axis=1)",
             "gather(%x, %g, axis=-1)", "gather(%x, %g0, axis=0)",
             "gather_nd(%x, %nd)", "gather_nd(%x, %nd1, batch_dims=1)",
             "one_hot(%i, 5f, -1f, depth=7, axis=-1, dtype=\"float32\")",
             "one_hot(%k, 1i16, 0i16, depth=3, axis=0, dtype=\"int32\")",
             "one_hot(%i, 2f, 0f, depth=4, axis=1)",
             "reverse_sequence(%x, %l, seq_axis=2, batch_axis=0)",
             "reverse_sequence(%x, %l2, seq_axis=0, batch_axis=1)"]
    params = (f"%x: Tensor[(3, 5, 9), float32], %i: Tensor[(2, 3), {itype}], "
              f"%k: Tensor[(4), {itype}], %n: Tensor[(3), {itype}], "
              f"%b: Tensor[(3, 2), {itype}], %s: Tensor[(), {itype}], "
              f"%e: Tensor[(0, 2), {itype}], %g: Tensor[(3, 4, 2), {itype}], "
              f"%g0: Tensor[(2, 5, 9), {itype}], %nd: Tensor[(2, 4), {itype}], "
              f"%nd1: Tensor[(1, 3, 2), {itype}], %l: Tensor[(3), {itype}], "
              f"%l2: Tensor[(5), {itype}]")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5, 9)).astype("float32")

    def ints(shape: tuple, lo: int, hi: int) -> np.ndarray:
        return rng.integers(lo, hi, shape).astype(itype)
    args = [x, ints((2, 3), -30, 30), ints((4,), -3, 3), ints((3,), -9, 9),
            ints((3, 2), -12, 12), np.array(-2, itype), ints((0, 2), 0, 1),
            ints((3, 4, 2), -9, 9), ints((2, 5, 9), -3, 3),
            np.stack([rng.integers(-3, 3, 4), rng.integers(0, 5, 4)]).astype(itype),
            ints((1, 3, 2), -5, 5), np.array([0, 4, 20], itype), np.array([1, -1, 3, 9, 2],
                                                                          itype)]
    assert_matches_interpreter(_program(params, calls), *args, rtol=0)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int64", "bool"])
def test_take_dtypes(dtype: str) -> None:
    rng = np.random.default_rng(4)
    calls = ["take(%x, %i, axis=0)", 'take(%x, %i, mode="wrap")',
             "gather_nd(%x, %j)", "gather(%x, %g, axis=1)"]
    params = (f"%x: Tensor[(4, 6), {dtype}], %i: Tensor[(5), int32], "
              f"%j: Tensor[(2, 3), int64], %g: Tensor[(4, 2), int32]")
    args = [_values((4, 6), dtype, rng), rng.integers(-8, 8, 5).astype("int32"),
            np.stack([rng.integers(0, 4, 3), rng.integers(-6, 6, 3)]).astype("int64"),
            rng.integers(0, 6, (4, 2)).astype("int32")]
    assert_matches_interpreter(_program(params, calls), *args, rtol=0)


def _arange(start: str, stop: str, step: str, dtype: str) -> str:
    """A static arange: the text repeats the inputs as attributes (TVM's ArangeAttrs)."""
    return (f"arange({start}, {stop}, {step}, start={start}, stop={stop}, step={step}, "
            f'dtype="{dtype}")')


def test_creation_ops() -> None:
    calls = ['zeros(shape=[3, 17], dtype="float32")', 'ones(shape=[5], dtype="int8")',
             'zeros(shape=[2, 0], dtype="int32")', 'ones(shape=[], dtype="float16")',
             'ones(shape=[4], dtype="bool")',
             'full(%f, shape=[3, 2], dtype="int32")', "full(%f, shape=[7])",
             'full(%f, shape=[2], dtype="float16")', 'full(%f, shape=[3], dtype="bool")',
             "full_like(%x, %fx)", "full_like(%e, %fx)",
             _arange("0f", "4f", "1f", "float32"), _arange("2.5f", "-3f", "-0.7f", "float32"),
             _arange("-3", "17", "2", "int32"), _arange("1i16", "100i16", "3i16", "int16"),
             _arange("0.1f16", "30f16", "0.3f16", "float16"),
             _arange("0.5f64", "2f64", "0.1f64", "float64"),
             "shape_of(%x)", 'shape_of(%e, dtype="int32")', "shape_of(%f)"]
    params = ("%x: Tensor[(3, 1, 17), int8], %e: Tensor[(2, 0), int8], %f: Tensor[(), float32], "
              "%fx: Tensor[(), int8]")
    rng = np.random.default_rng(5)
    args = [rng.integers(-9, 9, (3, 1, 17)).astype("int8"), np.zeros((2, 0), "int8"),
            np.array(-2.75, "float32"), np.array(-7, "int8")]
    assert_matches_interpreter(_program(params, calls), *args)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "int64", "uint8",
                                   "bool"])
def test_scans(dtype: str) -> None:
    ops = ["cumsum", "cumprod"]
    attrs = ["", "axis=1", "axis=-1, exclusive=True", "axis=0", "axis=2, exclusive=True",
             "exclusive=True"]
    calls = [f"{op}(%x{', ' + a if a else ''})" for op in ops for a in attrs]
    calls += [f"{op}(%z, axis=1)" for op in ops] + [f"{op}(%z, exclusive=True)" for op in ops]
    if dtype != "bool":
        calls += ['cumsum(%x, axis=1, dtype="int64")', 'cumprod(%x, axis=2, dtype="float64")',
                  'cumsum(%x, axis=1, dtype="bool")', 'cumprod(%x, axis=2, dtype="bool")']
    params = f"%x: Tensor[(3, 5, 7), {dtype}], %z: Tensor[(2, 0, 3), {dtype}]"
    rng = np.random.default_rng(6)
    if dtype == "bool":
        x = rng.random((3, 5, 7)) > 0.2
    elif dtype.startswith("float"):
        x = (rng.random((3, 5, 7)) + 0.5).astype(dtype)
    else:
        x = rng.integers(0 if dtype.startswith("u") else -3, 4, (3, 5, 7)).astype(dtype)
        x[1, 2, :3] = [128, 2, 0] if dtype != "int8" else [-128, 2, 0]   # uint8 wrap to bool
    assert_matches_interpreter(_program(params, calls), x, _values((2, 0, 3), dtype, rng),
                               rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint8", "bool"])
def test_collapse_sum_like(dtype: str) -> None:
    calls = ["collapse_sum_like(%x, %a)", "collapse_sum_like(%x, %b)",
             "collapse_sum_like(%x, %x)", "collapse_sum_like(%x, %c)"]
    params = (f"%x: Tensor[(4, 3, 17), {dtype}], %a: Tensor[(3, 1), {dtype}], "
              f"%b: Tensor[(17), {dtype}], %c: Tensor[(1, 3, 1), {dtype}]")
    rng = np.random.default_rng(7)
    args = [_values(s, dtype, rng) for s in [(4, 3, 17), (3, 1), (17,), (1, 3, 1)]]
    rtol = 1e-2 if dtype == "float16" else 1e-5
    assert_matches_interpreter(_program(params, calls), *args, rtol=rtol, atol=1e-4)


def test_transforms_fused_with_elementwise() -> None:
    text = HEAD + """def @main(%x: Tensor[(4, 6), float32], %y: Tensor[(6, 4), float32],
          %i: Tensor[(5), int64]) {
  %0 = exp(%x);
  %1 = transpose(%0);
  %2 = add(%1, %y);
  %3 = reshape(%2, newshape=[3, 8]);
  %4 = concatenate((%3, %3), axis=1);
  (strided_slice(%4, begin=[0, 1], end=[3, 16], strides=[1, 2]), take(%4, %i, axis=1))
}
"""
    rng = np.random.default_rng(8)
    assert_matches_interpreter(text, rng.standard_normal((4, 6)).astype("float32"),
                               rng.standard_normal((6, 4)).astype("float32"),
                               np.array([0, 15, -1, 40, 3], "int64"))


@pytest.mark.parametrize("call", ["cumsum(%x)", "cumprod(%x, axis=0)", "cumsum(%h, axis=1)"])
def test_scans_left_to_numpy(call: str) -> None:
    """A scan along more than SCAN_MAX elements, or of float16 (NumPy rounds every
    partial sum to float16), has no lowering: the executor runs it with NumPy."""
    from llvm_check import fused_module

    import relaylang as rl
    from relaylang.backend.llvm.lower import NoLowering, lower_primitive
    from relaylang.op.transform.llvm_lowering import SCAN_MAX
    mod = fused_module(_program(f"%x: Tensor[({SCAN_MAX + 1}, 2), float32], "
                                "%h: Tensor[(2, 3), float16]", [call]))
    fn = mod["main"].body.op
    assert isinstance(fn, rl.ir.expr.Function)
    with pytest.raises(NoLowering):
        lower_primitive(fn, "scan")


@pytest.mark.parametrize("dtype", ["float32", "int8", "int64", "bool"])
def test_long_scans_in_blocks(dtype: str) -> None:
    """Scans along more than SCAN_DIRECT elements: block totals, their prefix, and the
    part within the block (317 = 17 blocks of 18, the last one short)."""
    calls = ["cumsum(%x, axis=1)", "cumsum(%x, axis=-1, exclusive=True)",
             "cumprod(%x, axis=1)", "cumprod(%x, axis=1, exclusive=True)", "cumsum(%x)",
             "cumsum(%y, axis=0)", "cumprod(%y, axis=0, exclusive=True)"]
    params = f"%x: Tensor[(2, 317), {dtype}], %y: Tensor[(65, 3), {dtype}]"
    rng = np.random.default_rng(9)
    if dtype == "bool":
        x, y = rng.random((2, 317)) > 0.01, rng.random((65, 3)) > 0.02
    elif dtype == "float32":
        x = (1 + (rng.random((2, 317)) - 0.5) * 0.01).astype(dtype)
        y = (1 + (rng.random((65, 3)) - 0.5) * 0.01).astype(dtype)
    else:
        x, y = rng.integers(-3, 4, (2, 317)).astype(dtype), rng.integers(-3, 4, (65, 3)).astype(
            dtype)
    assert_matches_interpreter(_program(params, calls), x, y, rtol=1e-4)


def test_strided_slice_negative_stride_from_before_the_start() -> None:
    from llvm_check import run_native
    text = _program("%x: Tensor[(3, 4), float32]",
                    ["strided_slice(%x, begin=[-7], end=[-5], strides=[-1])"])
    x = np.arange(12, dtype="float32").reshape(3, 4)
    assert run_native(text, x).shape == (0, 4)             # the type's shape
    assert_matches_interpreter(text, x)                    # the interpreter agrees


# layout_transform between a channel-blocked layout and the plain one (issue 18): the
# blocked -> plain direction is a tiled transpose through a row stage (`_unblock`); each
# case exercises a shape its schedule handles differently
UNBLOCK_CASES = [
    ("NCHW64c", "NCHW", (1, 2, 5, 7, 64)),        # block 64, odd H and W (W < a vector)
    ("NCHW16c", "NCHW", (2, 3, 4, 21, 16)),       # batch 2, W over a vector, not a multiple
    ("NCHW8c", "NCHW", (1, 3, 9, 19, 8)),         # block 8
    ("NCHW16c", "NCHW", (1, 1, 1, 7, 16)),        # one row: the index map
    ("NCHW16c", "NCHW", (1, 4, 1, 1, 16)),        # 1x1 spatial: the index map
    ("NCHW8c", "NCHW", (3, 1, 6, 1, 8)),          # W = 1, H > 1
    ("NCHW4c", "NCHW", (2, 1, 1, 3, 4)),          # size-1 block count and H, batch 2
    ("NCDHW8c", "NCDHW", (1, 2, 3, 2, 5, 8)),     # 3-D
    ("CHW4c", "CHW", (3, 2, 5, 4)),               # the split axis first
    ("NCH16c", "NCH", (2, 3, 5, 16)),             # rank 3
    ("NHWC8c", "NHWC", (1, 3, 2, 2, 8)),          # split axis last: the index map
    ("NCHW1c", "NCHW", (1, 3, 2, 5, 1)),          # block 1
]
BLOCK_CASES = [
    ("NCHW", "NCHW16c", (2, 20, 3, 5)),           # block not dividing the channels
    ("NCHW", "NCHW64c", (1, 64, 5, 7)),
    ("NCHW", "NCHW8c", (1, 8, 1, 1)),
    ("NCHW", "NCHW8c", (2, 13, 9, 17)),
    ("NCHW", "NCHW16c", (1, 3, 1, 19)),           # fewer channels than the block
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "bool"])
def test_layout_transform_blocked_plain(dtype: str) -> None:
    cases = UNBLOCK_CASES + BLOCK_CASES
    params = ", ".join(f"%x{k}: Tensor[({', '.join(map(str, s))}), {dtype}]"
                       for k, (_, _, s) in enumerate(cases))
    calls = [f'layout_transform(%x{k}, src_layout="{a}", dst_layout="{d}")'
             for k, (a, d, _) in enumerate(cases)]
    rng = np.random.default_rng(5)
    args = [_values(s, dtype, rng) for _, _, s in cases]
    assert_matches_interpreter(_program(params, calls), *args, rtol=0)


def test_layout_transform_unblock_fused() -> None:
    """Blocked -> plain with consumers fused into its primitive function: elementwise
    (the output is still written in the row stage's order), a broadcast add, a
    reduction and a reshape (they read the row stage in their own order), and a round
    trip through a blocked layout."""
    s = (2, 3, 4, 9, 16)
    params = ("%x: Tensor[(2, 3, 4, 9, 16), float32], %b: Tensor[(48, 1, 1), float32], "
              "%y: Tensor[(1, 20, 6, 5), float32]")
    lt = 'layout_transform(%x, src_layout="NCHW16c", dst_layout="NCHW")'
    calls = [f"nn.relu({lt})", f"add({lt}, %b)", f"sum({lt}, axis=[2, 3])",
             f"reshape({lt}, newshape=[2, -1])",
             ('layout_transform(layout_transform(%y, src_layout="NCHW", dst_layout="NCHW8c"),'
              ' src_layout="NCHW8c", dst_layout="NCHW")')]
    rng = np.random.default_rng(6)
    args = [_values(s, "float32", rng), _values((48, 1, 1), "float32", rng),
            _values((1, 20, 6, 5), "float32", rng)]
    assert_matches_interpreter(_program(params, calls), *args, rtol=1e-5, atol=1e-4)


def test_layout_transform_unblock_is_a_tiled_transpose() -> None:
    """NCHW16c -> NCHW of a batch of 2 is one parallel loop over (block, batch, row),
    each iteration copying its W x 16 tile into a local row and storing the output's
    rows (W innermost) from it."""
    from llvm_check import fused_module

    from relaylang.backend.llvm.lower import lower_primitive
    text = _program("%x: Tensor[(2, 3, 5, 7, 16), float32]",
                    ['layout_transform(%x, src_layout="NCHW16c", dst_layout="NCHW")'])
    prim = lower_primitive(fused_module(text)["main"].body.op, name="k")
    text = str(prim)
    assert "parallel_extent=30" in text, text
    assert "float32[7, 16]" in text, text          # the local row
    inner = [ln.strip() for ln in text.splitlines() if "vectorized" in ln]
    assert inner[-1].startswith("for out_") and "range(0, 7)" in inner[-1], text
