"""nn.contrib_conv2d_NCHWc natively against the interpreter (its NumPy kernel: blocks
undone, the plain convolution, blocked again) over awkward shapes: 1x1 spatial, odd
sizes, stride 2, one-sided padding, dilation, batch 2, blocks 3/8/16/64, the flattened
narrow outputs, K blocking (uneven chunks), and an epilogue (bias, residual add, relu)
fused after it."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'


def _text(ds: tuple, ws: tuple, attrs: str, epilogue: bool, dtype: str) -> str:
    ob, oc = ws[0], ws[5]
    decl = f"%x: Tensor[{ds}, {dtype}], %w: Tensor[{ws}, {dtype}]"
    call = f"nn.contrib_conv2d_NCHWc(%x, %w, {attrs})"
    if epilogue:
        decl += f", %b: Tensor[({ob}, 1, 1, {oc}), {dtype}], %r: Tensor[?OUT?, {dtype}]"
        call = f"nn.relu(add(add({call}, %b), %r))"
    return HEAD + f"def @main({decl}) {{ {call} }}\n"


CASES = [
    # data shape (N, CB, H, W, ic), weight (OB, CB, KH, KW, ic, oc), attrs
    ((1, 2, 9, 11, 8), (2, 2, 3, 3, 8, 16), "padding=[1, 1, 1, 1]"),
    ((2, 1, 7, 7, 16), (1, 1, 1, 1, 16, 16), ""),                                # batch 2, flat
    ((1, 1, 1, 1, 16), (3, 1, 1, 1, 16, 8), ""),                                 # 1x1 spatial
    ((1, 1, 1, 1, 8), (1, 1, 3, 3, 8, 16), "padding=[1, 1, 1, 1]"),              # 1x1, padded
    ((1, 1, 13, 17, 3), (1, 1, 7, 7, 3, 64), "strides=[2, 2], padding=[3, 3, 3, 3]"),  # stem
    ((2, 2, 13, 21, 3), (1, 2, 7, 5, 3, 16), "strides=[2, 1], padding=[3, 0, 1, 2]"),  # whole
    ((1, 2, 10, 9, 8), (2, 2, 3, 3, 8, 8), "strides=[2, 2], padding=[0, 1, 1, 0]"),  # one-sided
    ((1, 1, 6, 40, 16), (1, 1, 3, 3, 16, 16), "padding=[0, 0, 2, 1]"),
    ((2, 3, 11, 5, 8), (1, 3, 3, 2, 8, 32), "dilation=[2, 1], padding=[1, 1, 1, 1]"),
    ((1, 1, 20, 24, 64), (1, 1, 1, 1, 64, 64), "strides=[2, 2]"),
    ((1, 4, 14, 14, 16), (2, 4, 3, 3, 16, 64), "padding=[1, 1, 1, 1]"),         # flat 14x14
    # K blocking (chunks of the blocks x kernel positions, conv.k_merge=2: 45 in chunks
    # of 12, 12, 12, 9)
    ((1, 5, 9, 26, 8), (1, 5, 3, 3, 8, 64), "padding=[1, 1, 1, 1]"),
    ((2, 6, 8, 30, 16), (2, 6, 1, 1, 16, 64), "strides=[1, 1]"),
]


def _layouts(ds: tuple, ws: tuple) -> str:
    return (f'data_layout="NCHW{ds[4]}c", kernel_layout="OIHW{ws[4]}i{ws[5]}o", '
            f'out_layout="NCHW{ws[5]}c"')


@pytest.mark.parametrize("ds, ws, attrs", CASES, ids=[str(c[0]) for c in CASES])
def test_nchwc_matches_interpreter(ds, ws, attrs):
    rng = np.random.default_rng(sum(ds) + sum(ws))
    x = rng.standard_normal(ds).astype("float32")
    w = rng.standard_normal(ws).astype("float32")
    full = ", ".join(a for a in (attrs, _layouts(ds, ws)) if a)
    assert_matches_interpreter(_text(ds, ws, full, False, "float32"), x, w,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ds, ws, attrs", [CASES[0], CASES[1], CASES[5]],
                         ids=["3x3", "flat", "strided"])
def test_nchwc_epilogue_matches_interpreter(ds, ws, attrs):
    from relaylang.ir.attrs import make_attrs
    from relaylang.ir.types import TensorType
    from relaylang.op import get_op_def
    d = get_op_def("nn.contrib_conv2d_NCHWc")
    kw = {"data_layout": f"NCHW{ds[4]}c", "kernel_layout": f"OIHW{ws[4]}i{ws[5]}o",
          "out_layout": f"NCHW{ws[5]}c"}
    for part in filter(None, attrs.split("], ")):
        k, v = part.split("=")
        kw[k] = tuple(int(t) for t in v.strip("[]").split(","))
    out = d.type_rel([TensorType(ds, "float32"), TensorType(ws, "float32")],
                     make_attrs(d.attrs, kw)).shape
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s).astype("float32")
            for s in (ds, ws, (ws[0], 1, 1, ws[5]), out)]
    full = ", ".join(a for a in (attrs, _layouts(ds, ws)) if a)
    text = _text(ds, ws, full, True, "float32").replace("?OUT?", str(tuple(out)))
    assert_matches_interpreter(text, *args, rtol=1e-4, atol=1e-4)


def test_nchwc_float16():
    ds, ws = (1, 1, 5, 6, 8), (1, 1, 3, 3, 8, 16)
    rng = np.random.default_rng(2)
    x = rng.standard_normal(ds).astype("float16")
    w = rng.standard_normal(ws).astype("float16")
    text = _text(ds, ws, "padding=[1, 1, 1, 1], " + _layouts(ds, ws), False, "float16")
    assert_matches_interpreter(text, x, w, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("chunk", [0, 16384, 131072])
def test_nchwc_k_chunks_match_interpreter(chunk):
    """Every K chunk size of the knob gives the interpreter's values."""
    from relaylang.backend.llvm import knobs
    ds, ws = (1, 5, 9, 26, 8), (1, 5, 3, 3, 8, 64)
    rng = np.random.default_rng(chunk)
    x = rng.standard_normal(ds).astype("float32")
    w = rng.standard_normal(ws).astype("float32")
    text = _text(ds, ws, "padding=[1, 1, 1, 1], " + _layouts(ds, ws), False, "float32")
    with knobs.using(knobs.Settings(every={"schedule.k_chunk_bytes": chunk})):
        assert_matches_interpreter(text, x, w, rtol=1e-4, atol=1e-4)
