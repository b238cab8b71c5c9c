"""The LLVM lowerings of the nn family against the interpreter (the NumPy kernels):
activations, bias_add, pad, batch_flatten, dropout, softmax / log_softmax, the
normalisations, dense / matmul / batch_matmul and the convolutions, per dtype, over odd
shapes, size-1 and size-0 dimensions, negative axes, groups, strides, dilation and
padding. Several ops share one program (a tuple of results) to keep compiles few."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'
FLOATS = ["float32", "float16", "float64"]


def _values(shape: tuple, dtype: str, rng: np.random.Generator, small: bool = False
            ) -> np.ndarray:
    """Random values; `small`: integers in [-3, 3] (every product sum is exact)."""
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if small or not dtype.startswith("float"):
        lo, hi = (-3, 4) if small else (-100, 100)
        if dtype.startswith("uint"):
            lo = 0
        return rng.integers(lo, hi, shape).astype(dtype)
    return (rng.standard_normal(shape) * 2).astype(dtype)


def _program(params: list[tuple[str, tuple, str]], calls: list[str]) -> str:
    decl = ", ".join(f"%{n}: Tensor[{s if s else '()'}, {d}]" for n, s, d in params)
    body = f"({', '.join(calls)},)" if len(calls) == 1 else f"({', '.join(calls)})"
    return HEAD + f"def @main({decl}) {{ {body} }}\n"


@pytest.mark.parametrize("dtype", FLOATS + ["int8", "int32"])
def test_activations_bias_pad_flatten(dtype: str) -> None:
    rng = np.random.default_rng(1)
    shape = (2, 5, 7)
    x = _values(shape, dtype, rng)
    a = _values((5,), dtype, rng)
    c = _values((7,), dtype, rng)
    e = _values((0, 3), dtype, rng)
    if dtype.startswith("float"):
        x[0, 0, :3] = [np.nan, np.inf, -np.inf]
    pv = np.array(3, dtype=dtype)
    calls = ["nn.relu(%x)", "nn.leaky_relu(%x, alpha=0.1f)", "nn.leaky_relu(%x, alpha=2.5f)",
             "nn.prelu(%x, %a)", "nn.prelu(%x, %c, axis=-1)", "nn.bias_add(%x, %a)",
             "nn.bias_add(%x, %c, axis=-1)", "nn.batch_flatten(%x)",
             "nn.batch_flatten(%e)", "nn.relu(%e)",
             "nn.pad(%x, %pv, pad_width=[[0, 0], [1, 2], [2, 1]])",
             "nn.pad(%x, %pv, pad_width=[[1, 0], [0, 3], [1, 1]], pad_mode=\"edge\")",
             "nn.pad(%x, %pv, pad_width=[[1, 1], [4, 2], [6, 1]], pad_mode=\"reflect\")",
             "nn.dropout(%x, rate=0.3f).0", "nn.dropout(%x).1"]
    text = _program([("x", shape, dtype), ("a", (5,), dtype), ("c", (7,), dtype),
                     ("e", (0, 3), dtype), ("pv", (), dtype)], calls)
    assert_matches_interpreter(text, x, a, c, e, pv)


def test_pad_value_of_another_dtype_and_size_one() -> None:
    rng = np.random.default_rng(2)
    x = _values((1, 1, 3), "int32", rng)
    v = np.array(2.7, dtype="float32")
    text = _program([("x", (1, 1, 3), "int32"), ("v", (), "float32"), ("bf", (1,), "float32")], [
        "nn.pad(%x, %v, pad_width=[[1, 1], [0, 2], [3, 0]])",
        "nn.pad(%x, %v, pad_width=[[0, 0], [0, 0], [2, 2]], pad_mode=\"reflect\")",
        "nn.pad(%x, %v, pad_width=[[2, 0], [1, 1], [0, 4]], pad_mode=\"edge\")",
        "nn.relu(%x)", "nn.batch_flatten(%x)", "nn.bias_add(%x, %bf, axis=1)"])
    bf = np.array([2.5], dtype="float32")
    assert_matches_interpreter(text, x, v, bf)


@pytest.mark.parametrize("dtype", FLOATS)
def test_softmax_and_normalisations(dtype: str) -> None:
    rng = np.random.default_rng(3)
    shape = (3, 1, 17)
    x = _values(shape, dtype, rng)
    v = _values((17,), dtype, rng)
    g, bt = _values((3,), dtype, rng), _values((3,), dtype, rng)
    mean = _values((3,), dtype, rng)
    var = np.abs(_values((3,), dtype, rng)) + np.asarray(0.5, dtype)
    calls = ["nn.softmax(%x)", "nn.softmax(%x, axis=0)", "nn.softmax(%x, axis=-2)",
             "nn.softmax(%v)", "nn.log_softmax(%x)", "nn.log_softmax(%x, axis=0)",
             "nn.log_softmax(%v, axis=-1)",
             "nn.layer_norm(%x, %v, %v)",
             "nn.layer_norm(%x, %g, %bt, axis=0, epsilon=1e-3f, center=False)",
             "nn.layer_norm(%x, %v, %v, axis=-1, scale=False)",
             "nn.batch_norm(%x, %g, %bt, %m, %s, axis=-3)",
             ("nn.batch_norm(%x, %g, %bt, %m, %s, axis=0, epsilon=0.01f, center=False, "
             "scale=False).0")]
    text = _program([("x", shape, dtype), ("v", (17,), dtype), ("g", (3,), dtype),
                     ("bt", (3,), dtype), ("m", (3,), dtype), ("s", (3,), dtype)], calls)
    tol = {"float16": 1e-2, "float32": 2e-5, "float64": 1e-7}[dtype]
    assert_matches_interpreter(text, x, v, g, bt, mean, var, rtol=tol,
                               atol=1e-3 if dtype == "float16" else 1e-6)


def test_softmax_special_values() -> None:
    x = np.array([[np.inf, 1.0, 2.0], [-np.inf, 0.0, 1.0], [np.nan, 0.0, 0.0],
                  [1e30, -1e30, 0.0]], dtype="float32")
    text = _program([("x", (4, 3), "float32")], ["nn.softmax(%x)", "nn.log_softmax(%x)"])
    assert_matches_interpreter(text, x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("small", [True, False])
def test_dense_matmul_batch_matmul(dtype: str, small: bool) -> None:
    rng = np.random.default_rng(4)
    shapes = {"x": (3, 19), "w": (5, 19), "x3": (2, 1, 19), "e": (0, 19), "z": (3, 0),
              "wz": (5, 0), "a": (4, 19), "b": (19, 6), "bt": (6, 19), "v": (19,),
              "p": (2, 7, 9), "q": (2, 9, 5), "pt": (2, 9, 7), "qt": (2, 5, 9),
              "q1": (1, 9, 5), "xb": (2, 3, 19), "wb": (16, 19), "xc": (5, 19), "wc": (40, 19)}
    vals = {k: _values(s, dtype, rng, small) for k, s in shapes.items()}
    calls = ["nn.dense(%x, %w, units=5)", "nn.dense(%x3, %w, units=None)",
             "nn.dense(%xb, %wb, units=16)", "nn.dense(%xc, %wc, units=None)",
             "nn.dense(%e, %w, units=None)", "nn.dense(%z, %wz, units=None)",
             "nn.matmul(%a, %b, units=None)", "nn.matmul(%a, %bt, units=None, transpose_b=True)",
             "nn.matmul(%b, %a, units=None, transpose_a=True, transpose_b=True)",
             "nn.matmul(%v, %b, units=None)",
             "nn.batch_matmul(%p, %q, transpose_b=False)", "nn.batch_matmul(%p, %qt, transpose_b=True)",
             "nn.batch_matmul(%pt, %q, transpose_a=True, transpose_b=False)",
             "nn.batch_matmul(%pt, %qt, transpose_a=True, transpose_b=True)",
             "nn.batch_matmul(%p, %q1, transpose_b=False)"]
    text = _program([(k, s, dtype) for k, s in shapes.items()], calls)
    if small:
        assert_matches_interpreter(text, *vals.values(), rtol=0)
    else:
        tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-7}[dtype]
        assert_matches_interpreter(text, *vals.values(), rtol=tol,
                                   atol=2e-2 if dtype == "float16" else 1e-5)


@pytest.mark.parametrize("dtype,out", [("int8", "int32"), ("int32", ""), ("int8", ""),
                                       ("float16", "float32")])
def test_dense_integer_and_out_dtype(dtype: str, out: str) -> None:
    rng = np.random.default_rng(5)
    od = f', out_dtype="{out}"' if out else ""
    shapes = {"x": (3, 21), "w": (4, 21), "xb": (6, 21), "wb": (8, 21),
              "p": (2, 3, 21), "q": (2, 4, 21),
              "d": (1, 3, 6, 5), "k": (4, 3, 3, 3)}
    vals = {k: _values(s, dtype, rng) for k, s in shapes.items()}
    calls = [f"nn.dense(%x, %w, units=None{od})", f"nn.dense(%xb, %wb, units=None{od})", f"nn.batch_matmul(%p, %q, transpose_b=True{od})",
             f"nn.conv2d(%d, %k, padding=[1, 1], channels=4, kernel_size=[3, 3]{od})",
             f"nn.conv2d(%d, %k, strides=[2, 1], channels=4, kernel_size=[3, 3]{od})"]
    text = _program([(k, s, dtype) for k, s in shapes.items()], calls)
    assert_matches_interpreter(text, *vals.values(), rtol=1e-5 if out == "float32" else None)


CONV2D_CASES = [
    # data shape, weight shape, attrs
    ((2, 4, 9, 11), (6, 4, 3, 3), "padding=[1, 1], channels=6, kernel_size=[3, 3]"),
    ((1, 4, 9, 11), (6, 2, 3, 3), ("strides=[2, 1], padding=[1, 2, 0, 1], dilation=[1, 2], "
                                  "groups=2, channels=6, kernel_size=[3, 3]")),
    ((1, 4, 9, 11), (4, 1, 3, 3), "padding=[1, 1], groups=4, channels=4, kernel_size=[3, 3]"),
    ((1, 4, 9, 11), (8, 1, 3, 3), ("strides=[2, 2], padding=[1, 1], groups=4, channels=8, "
                                  "kernel_size=[3, 3]")),
    ((1, 3, 8, 7), (5, 3, 1, 1), "strides=[2, 2], channels=5, kernel_size=[1, 1]"),
    ((1, 3, 8, 7), (5, 3, 2, 3), ("dilation=[3, 2], padding=[2, 0], channels=5, "
                                 "kernel_size=[2, 3]")),
    ((0, 3, 5, 5), (2, 3, 3, 3), "padding=[1, 1], channels=2, kernel_size=[3, 3]"),
    ((2, 1, 1, 1), (1, 1, 1, 1), "channels=1, kernel_size=[1, 1]"),
    ((1, 9, 11, 4), (3, 3, 4, 5), ("padding=[1, 1], channels=5, kernel_size=[3, 3], "
                                  "data_layout=\"NHWC\", kernel_layout=\"HWIO\"")),
    ((1, 9, 11, 4), (3, 3, 4, 1), ("strides=[2, 2], padding=[1, 0, 1, 1], groups=4, "
                                  "channels=4, kernel_size=[3, 3], data_layout=\"NHWC\", "
                                  "kernel_layout=\"HWOI\"")),
    ((1, 9, 11, 4), (6, 4, 3, 3), ("padding=[1, 1], channels=6, kernel_size=[3, 3], "
                                  "data_layout=\"NHWC\", kernel_layout=\"OIHW\"")),
    ((1, 4, 9, 11), (6, 4, 3, 3), ("padding=[1, 1], channels=6, kernel_size=[3, 3], "
                                  "out_layout=\"NHWC\"")),
    # output channel blocks (multiples of 8): plain, grouped, depthwise, NHWC
    ((2, 5, 7, 9), (16, 5, 3, 3), ("strides=[2, 1], padding=[1, 1], channels=16, "
                                  "kernel_size=[3, 3]")),
    ((1, 3, 6, 5), (32, 3, 1, 1), "channels=32, kernel_size=[1, 1]"),
    ((1, 6, 7, 9), (16, 3, 3, 3), "padding=[0, 1], groups=2, channels=16, kernel_size=[3, 3]"),
    ((1, 16, 7, 9), (16, 1, 3, 3), ("padding=[1, 2], dilation=[2, 1], groups=16, channels=16, "
                                   "kernel_size=[3, 3]")),
    ((1, 8, 7, 9), (8, 1, 3, 3), ("strides=[2, 2], padding=[1, 1], groups=8, channels=8, "
                                 "kernel_size=[3, 3], out_layout=\"NHWC\"")),
    ((1, 7, 9, 3), (3, 3, 3, 8), ("padding=[1, 1], channels=8, kernel_size=[3, 3], "
                                 "data_layout=\"NHWC\", kernel_layout=\"HWIO\"")),
    ((1, 7, 9, 8), (3, 3, 8, 1), ("padding=[1, 1], groups=8, channels=8, kernel_size=[3, 3], "
                                 "data_layout=\"NHWC\", kernel_layout=\"HWOI\"")),
]


@pytest.mark.parametrize("dtype", FLOATS)
def test_conv2d(dtype: str) -> None:
    rng = np.random.default_rng(6)
    params, calls, vals = [], [], []
    for k, (ds, ws, attrs) in enumerate(CONV2D_CASES):
        params += [(f"d{k}", ds, dtype), (f"w{k}", ws, dtype)]
        vals += [_values(ds, dtype, rng, small=True), _values(ws, dtype, rng, small=True)]
        calls.append(f"nn.conv2d(%d{k}, %w{k}, {attrs})")
    assert_matches_interpreter(_program(params, calls), *vals, rtol=0)


def test_conv2d_fused_with_epilogue_random_values() -> None:
    rng = np.random.default_rng(7)
    x = _values((1, 8, 13, 13), "float32", rng)
    w = _values((16, 8, 3, 3), "float32", rng)
    bias = _values((16,), "float32", rng)
    text = HEAD + ("def @main(%x: Tensor[(1, 8, 13, 13), float32], %w: Tensor[(16, 8, 3, 3), "
                   "float32], %b: Tensor[(16), float32]) { nn.relu(nn.bias_add(nn.conv2d(%x, "
                   "%w, strides=[2, 2], padding=[1, 1], channels=16, kernel_size=[3, 3]), "
                   "%b)) }\n")
    assert_matches_interpreter(text, x, w, bias, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("ds,ws,attrs", [
    ((1, 1, 28, 28), (20, 1, 5, 5), "channels=20, kernel_size=[5, 5]"),
    ((2, 2, 12, 16), (8, 2, 3, 3), "padding=[1, 1], channels=8, kernel_size=[3, 3]"),
    ((1, 3, 9, 17), (5, 3, 3, 3), ("strides=[1, 2], padding=[0, 1, 2, 0], dilation=[2, 1], "
                                  "channels=5, kernel_size=[3, 3], out_layout=\"NHWC\"")),
])
def test_short_reduction_convolutions_use_the_direct_form(ds, ws, attrs) -> None:
    """Cin * KH * KW <= 32 (MNIST's first layer): the direct NCHW form (a tile of output
    columns), no re-laid weight; bias and relu fused."""
    from llvm_check import fused_module, primitive_kernels
    rng = np.random.default_rng(11)
    o = ws[0]
    text = HEAD + (f"def @main(%x: Tensor[{ds}, float32], %w: Tensor[{ws}, float32], "
                   f"%b: Tensor[({o}), float32]) {{ nn.relu(nn.bias_add(nn.conv2d(%x, %w, "
                   f"{attrs}), %b, axis={3 if 'NHWC' in attrs else 1})) }}\n")
    kernels = primitive_kernels(fused_module(text))
    src = "".join(k.module.get_source("ll-raw") for k in kernels.values())
    assert "conv_weight" not in src
    assert_matches_interpreter(text, _values(ds, "float32", rng), _values(ws, "float32", rng),
                               _values((o,), "float32", rng), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
@pytest.mark.parametrize("ds,ws,attrs", [
    ((1, 20, 12, 12), (50, 20, 5, 5), "channels=50, kernel_size=[5, 5]"),
    ((2, 6, 9, 7), (19, 6, 3, 3), ("padding=[1, 1], channels=19, kernel_size=[3, 3], "
                                   "out_layout=\"NHWC\"")),
    ((1, 9, 11, 6), (3, 3, 6, 33), ("strides=[2, 1], channels=33, kernel_size=[3, 3], "
                                   "data_layout=\"NHWC\", kernel_layout=\"HWIO\"")),
])
def test_odd_channel_counts_padded_to_whole_vectors(ds, ws, attrs, dtype: str) -> None:
    """Output channels above 16 and not a multiple of 4 (channels-last form): padded to a
    multiple of 16 with zero weights; the padding never reaches the output."""
    rng = np.random.default_rng(12)
    text = HEAD + (f"def @main(%x: Tensor[{ds}, {dtype}], %w: Tensor[{ws}, {dtype}]) "
                   f"{{ nn.conv2d(%x, %w, {attrs}) }}\n")
    assert_matches_interpreter(text, _values(ds, dtype, rng, small=True),
                               _values(ws, dtype, rng, small=True),
                               rtol=0 if dtype == "int32" else 1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv1d_conv3d(dtype: str) -> None:
    rng = np.random.default_rng(8)
    shapes = {"a": (2, 4, 13), "wa": (6, 2, 3), "b": (1, 3, 5, 6, 7), "wb": (4, 3, 3, 1, 2),
              "c": (1, 13, 4), "wc": (3, 4, 5), "d": (1, 3, 4, 5, 3), "wd": (8, 3, 2, 2, 2)}
    vals = [_values(s, dtype, rng, small=True) for s in shapes.values()]
    calls = [("nn.conv1d(%a, %wa, strides=[2], padding=[1, 2], dilation=[2], groups=2, "
             "channels=6, kernel_size=[3])"),
             ("nn.conv3d(%b, %wb, strides=[1, 2, 1], padding=[1, 0, 1], channels=4, "
             "kernel_size=[3, 1, 2])"),
             ("nn.conv1d(%c, %wc, padding=[1], channels=5, kernel_size=[3], data_layout=\"NWC\", "
             "kernel_layout=\"WIO\")"),
             "nn.conv3d(%d, %wd, padding=[1, 0, 1], channels=8, kernel_size=[2, 2, 2])"]
    text = _program([(k, s, dtype) for k, s in shapes.items()], calls)
    assert_matches_interpreter(text, *vals, rtol=0)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv_transpose(dtype: str) -> None:
    rng = np.random.default_rng(9)
    shapes = {"a": (1, 4, 5, 6), "wa": (4, 3, 3, 3), "b": (2, 4, 5, 4), "wb": (4, 2, 2, 3),
              "c": (1, 2, 7), "wc": (2, 3, 4), "d": (1, 2, 3, 4, 3), "wd": (2, 2, 2, 3, 2),
              "h": (1, 5, 6, 4), "wh": (3, 3, 3, 4)}
    vals = [_values(s, dtype, rng, small=True) for s in shapes.values()]
    calls = [("nn.conv2d_transpose(%a, %wa, channels=3, kernel_size=[3, 3], strides=[2, 2], "
             "padding=[1, 1], output_padding=[1, 0])"),
             ("nn.conv2d_transpose(%b, %wb, channels=4, kernel_size=[2, 3], strides=[1, 2], "
             "padding=[0, 1, 1, 0], dilation=[2, 1], groups=2)"),
             ("nn.conv1d_transpose(%c, %wc, channels=3, kernel_size=[4], strides=[3], "
             "padding=[2], output_padding=[2])"),
             ("nn.conv3d_transpose(%d, %wd, channels=2, kernel_size=[2, 3, 2], "
             "strides=[2, 1, 2], padding=[0, 1, 1])"),
             ("nn.conv2d_transpose(%h, %wh, channels=3, kernel_size=[3, 3], strides=[2, 2], "
             "padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWOI\")")]
    text = _program([(k, s, dtype) for k, s in shapes.items()], calls)
    assert_matches_interpreter(text, *vals, rtol=0)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_sub_pixel_l2_instance_group_norm(dtype: str) -> None:
    rng = np.random.default_rng(10)
    shapes = {"x": (2, 8, 3, 5), "h": (1, 3, 5, 8), "s": (1, 4, 4, 6), "g": (8,), "bt": (8,)}
    vals = [_values(s, dtype, rng) for s in shapes.values()]
    calls = ['nn.depth_to_space(%x, block_size=2)',
             'nn.depth_to_space(%x, block_size=2, mode="CRD")',
             'nn.depth_to_space(%h, block_size=2, layout="NHWC")',
             'nn.depth_to_space(%h, block_size=2, layout="NHWC", mode="CRD")',
             'nn.space_to_depth(%s, block_size=2)',
             'nn.space_to_depth(%s, block_size=2, layout="NHWC")',
             'nn.l2_normalize(%x, eps=1e-3f, axis=[1])',
             'nn.l2_normalize(%x, eps=1e-3f, axis=[-1, 2])',
             'nn.l2_normalize(%x, eps=1e-3f, axis=[])',
             'nn.instance_norm(%x, %g, %bt)',
             'nn.instance_norm(%h, %g, %bt, axis=-1, center=False)',
             'nn.group_norm(%x, %g, %bt, num_groups=4)',
             'nn.group_norm(%x, %g, %bt, num_groups=8, scale=False, epsilon=1e-2f)',
             'nn.group_norm(%h, %g, %bt, num_groups=2, axis=3)']
    text = _program([(k, s, dtype) for k, s in shapes.items()], calls)
    assert_matches_interpreter(text, *vals, rtol=2e-5 if dtype == "float32" else 1e-2,
                               atol=1e-5 if dtype == "float32" else 2e-3)
