"""nn.contrib_depthwise_conv2d_NCHWc natively against the interpreter (its NumPy kernel:
blocks undone, the plain depthwise convolution, blocked again) over awkward shapes:
blocks of 8/16/64 channels (one block and several), odd spatial sizes, 1x1 spatial
(all border), outputs narrower than the kernel's border columns, stride 2, one-sided
padding, dilation, batch 2, no padding; and the epilogue FuseOps puts after it (bias,
clip) and float16."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'


def _text(ds: tuple, ks: tuple, attrs: str, dtype: str = "float32",
          epilogue: bool = False) -> str:
    cb, c = ds[1], ds[4]
    ws = (cb, 1, ks[0], ks[1], 1, c)
    layouts = (f'groups={cb * c}, data_layout="NCHW{c}c", kernel_layout="OIHW1i{c}o", '
               f'out_layout="NCHW{c}c"')
    full = ", ".join(a for a in (attrs, layouts) if a)
    decl = f"%x: Tensor[{ds}, {dtype}], %w: Tensor[{ws}, {dtype}]"
    call = f"nn.contrib_depthwise_conv2d_NCHWc(%x, %w, {full})"
    if epilogue:
        decl += f", %b: Tensor[({cb}, 1, 1, {c}), {dtype}]"
        call = f"clip(add({call}, %b), a_min=0f, a_max=6f)"
    return HEAD + f"def @main({decl}) {{ {call} }}\n"


CASES = [
    # data shape (N, CB, H, W, c), kernel (KH, KW), attrs
    ((1, 2, 9, 11, 16), (3, 3), "padding=[1, 1, 1, 1]"),
    ((2, 1, 7, 7, 8), (3, 3), "strides=[2, 2], padding=[1, 1, 1, 1]"),        # batch 2
    ((1, 1, 1, 1, 16), (3, 3), "padding=[1, 1, 1, 1]"),                       # 1x1: all border
    ((1, 1, 1, 1, 8), (1, 1), ""),                                            # 1x1 kernel
    ((1, 3, 2, 3, 8), (3, 3), "padding=[1, 1, 1, 1]"),                        # all border
    ((1, 2, 10, 9, 16), (3, 3), "strides=[2, 2], padding=[0, 1, 1, 0]"),      # one-sided
    ((1, 1, 6, 13, 16), (3, 3), "padding=[0, 0, 2, 1]"),                      # left only 2
    ((2, 2, 11, 12, 8), (3, 3), "dilation=[2, 2], padding=[2, 2, 2, 2]"),
    ((1, 1, 8, 17, 64), (3, 3), "padding=[1, 1, 1, 1]"),                      # block of 64
    ((1, 2, 12, 12, 16), (3, 3), ""),                                         # no padding
    ((1, 1, 9, 21, 16), (5, 5), "strides=[1, 2], padding=[2, 2, 2, 2]"),
    ((1, 1, 7, 16, 16), (3, 2), "strides=[2, 3], padding=[1, 0, 1, 2]"),
    ((1, 1, 3, 0, 8), (1, 1), "padding=[0, 1, 0, 1]"),                        # empty width
    ((0, 1, 3, 3, 8), (3, 3), "padding=[1, 1, 1, 1]"),                        # empty batch
]


@pytest.mark.parametrize("ds, ks, attrs", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_depthwise_nchwc_matches_interpreter(ds, ks, attrs):
    rng = np.random.default_rng(sum(ds) + sum(ks))
    x = rng.standard_normal(ds).astype("float32")
    w = rng.standard_normal((ds[1], 1, ks[0], ks[1], 1, ds[4])).astype("float32")
    assert_matches_interpreter(_text(ds, ks, attrs), x, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ds, ks, attrs", [CASES[0], CASES[1], CASES[4], CASES[5]],
                         ids=["3x3", "strided", "border", "one-sided"])
def test_depthwise_nchwc_epilogue_matches_interpreter(ds, ks, attrs):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(ds).astype("float32")
    w = rng.standard_normal((ds[1], 1, ks[0], ks[1], 1, ds[4])).astype("float32")
    bias = rng.standard_normal((ds[1], 1, 1, ds[4])).astype("float32")
    text = _text(ds, ks, attrs, epilogue=True)
    assert_matches_interpreter(text, x, w, bias, rtol=1e-5, atol=1e-5)
    # the epilogue is fused into the convolution's kernel
    from llvm_check import fused_module

    from relaylang.ir.expr import Call, Function
    from relaylang.ir.traverse import post_order
    mod = fused_module(text)
    prims = [n for n in post_order(mod["main"]) if isinstance(n, Function)
             and n is not mod["main"]]
    assert len(prims) == 1
    ops = {m.op.name for m in post_order(prims[0]) if isinstance(m, Call)
           and hasattr(m.op, "name")}
    assert ops == {"nn.contrib_depthwise_conv2d_NCHWc", "add", "clip"}


def test_depthwise_nchwc_float16():
    ds = (1, 1, 5, 6, 16)
    rng = np.random.default_rng(2)
    x = rng.standard_normal(ds).astype("float16")
    w = rng.standard_normal((1, 1, 3, 3, 1, 16)).astype("float16")
    assert_matches_interpreter(_text(ds, (3, 3), "padding=[1, 1, 1, 1]", "float16"), x, w,
                               rtol=2e-2, atol=2e-2)


def test_depthwise_nchwc_float64():
    ds = (2, 1, 6, 5, 8)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(ds)
    w = rng.standard_normal((1, 1, 3, 3, 1, 8))
    assert_matches_interpreter(_text(ds, (3, 3), "strides=[2, 1], padding=[1, 0, 0, 1]",
                                     "float64"), x, w, rtol=1e-10, atol=1e-10)
