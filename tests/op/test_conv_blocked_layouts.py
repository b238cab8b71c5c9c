"""nn.conv1d/2d/3d in blocked layouts (op/nn/conv_layouts.py: TVM's Conv2DRel takes any
layout convertible from NCHW / OIHW) and TVM's depthwise weight with a channel multiplier
((C, M, k...) in OIHW terms, TFLite's HWOI). Each is checked against the plain
convolution of the re-laid operands: the relation's shapes and errors, the NumPy kernel,
the LLVM lowering (weights as parameters and as build-time constants), the passes of
-O3, and the gradient rule against finite differences."""
from __future__ import annotations

import numpy as np
import pytest
from grad_check import check_rule

import relaylang as rl
from relaylang.ir.diagnostics import DiagnosticError

HEAD = '#[version = "0.0.5"]\n'


def _blocked(x: np.ndarray, layout: str) -> np.ndarray:
    """An array in the canonical order (NCHW data, OIHW weight, or their 1-D / 3-D
    forms: the layout's axes N or O first) in `layout` (layout_transform's kernel)."""
    from relaylang.op.nn.conv_layouts import numpy_relayout, plain_layout
    spatial = "".join(a for a in plain_layout(layout) if a in "DHW")
    canonical = ("NC" if "N" in layout else "OI") + spatial
    return numpy_relayout(x, canonical, layout)


def _conv_text(dshape: tuple, wshape: tuple, attrs: str, dtype: str = "float32") -> str:
    return HEAD + (f"def @main(%x: Tensor[{dshape}, {dtype}], %w: Tensor[{wshape}, {dtype}]) "
                   f"{{ nn.conv2d(%x, %w, {attrs}) }}\n")


CASES = [
    # plain data, plain weight, data layout, kernel layout, out layout, attrs
    ((1, 32, 9, 7), (64, 32, 3, 3), "NCHW16c", "OIHW16i16o", "", "padding=[1, 1, 1, 1]"),
    ((2, 8, 6, 5), (8, 8, 1, 1), "NCHW4c", "OIHW4o4i", "NCHW2c", "strides=[2, 1]"),
    ((1, 4, 7, 7), (6, 4, 3, 3), "NHWC2c", "HWIO1i2o", "NHWC", "padding=[0, 1, 2, 0]"),
    ((1, 16, 5, 5), (16, 4, 3, 3), "NCHW8c", "OIHW4i", "", "groups=4, padding=[1, 1, 1, 1]"),
    ((1, 8, 1, 1), (16, 8, 1, 1), "NCHW8c", "OIHW8i16o", "NCHW16c", ""),
]


def _case(dshape, wshape, dl, kl, ol, attrs, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(dshape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    full = (f"{attrs}, " if attrs else "") + f'data_layout="{dl}", kernel_layout="{kl}"' + \
        (f', out_layout="{ol}"' if ol else "")
    xb, wb = _blocked(x, dl), _blocked(w, kl)
    text = _conv_text(xb.shape, wb.shape, full)
    plain = _conv_text(dshape, wshape, attrs or "padding=[0, 0, 0, 0]")
    want = np.asarray(rl.evaluate(rl.parse(plain), x, w))
    return text, xb, wb, _blocked(want, ol or dl)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[2]}-{c[3]}" for c in CASES])
def test_blocked_convolution_is_the_plain_one_re_laid(case) -> None:
    text, xb, wb, want = _case(*case)
    mod = rl.transform.InferType()(rl.parse(text))
    assert tuple(mod["main"].body.checked_type.shape) == want.shape
    got = np.asarray(rl.evaluate(mod, xb, wb))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    lib = rl.build(mod, target="llvm")
    assert not lib.fallback_ops
    np.testing.assert_allclose(np.asarray(lib(xb, wb)), want, rtol=1e-4, atol=1e-4)
    lib = rl.build(mod, target="llvm", params={"w": wb})
    np.testing.assert_allclose(np.asarray(lib(xb)), want, rtol=1e-4, atol=1e-4)


def test_a_blocked_conv1d_and_conv3d() -> None:
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((1, 8, 9)).astype("float32"), \
        rng.standard_normal((4, 8, 3)).astype("float32")
    plain = HEAD + ("def @main(%x: Tensor[(1, 8, 9), float32], %w: Tensor[(4, 8, 3), float32]) "
                    "{ nn.conv1d(%x, %w, padding=[1, 1]) }\n")
    want = np.asarray(rl.evaluate(rl.parse(plain), x, w))
    xb, wb = _blocked(x, "NCW4c"), _blocked(w, "OIW4i2o")
    text = HEAD + (f"def @main(%x: Tensor[{xb.shape}, float32], %w: Tensor[{wb.shape}, float32]) "
                   '{ nn.conv1d(%x, %w, padding=[1, 1], data_layout="NCW4c", '
                   'kernel_layout="OIW4i2o", out_layout="NCW") }\n')
    mod = rl.parse(text)
    np.testing.assert_allclose(np.asarray(rl.evaluate(mod, xb, wb)), want, rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(np.asarray(rl.build(mod, target="llvm")(xb, wb)), want,
                               rtol=1e-4, atol=1e-4)
    x3 = rng.standard_normal((1, 4, 3, 4, 5)).astype("float32")
    w3 = rng.standard_normal((4, 4, 1, 2, 3)).astype("float32")
    plain3 = HEAD + ("def @main(%x: Tensor[(1, 4, 3, 4, 5), float32], "
                     "%w: Tensor[(4, 4, 1, 2, 3), float32]) { nn.conv3d(%x, %w) }\n")
    want3 = _blocked(np.asarray(rl.evaluate(rl.parse(plain3), x3, w3)), "NCDHW2c")
    xb3, wb3 = _blocked(x3, "NCDHW2c"), _blocked(w3, "OIDHW2i2o")
    text3 = HEAD + (f"def @main(%x: Tensor[{xb3.shape}, float32], "
                    f"%w: Tensor[{wb3.shape}, float32]) {{ nn.conv3d(%x, %w, "
                    'data_layout="NCDHW2c", kernel_layout="OIDHW2i2o") }\n')
    mod3 = rl.parse(text3)
    np.testing.assert_allclose(np.asarray(rl.evaluate(mod3, xb3, wb3)), want3, rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(np.asarray(rl.build(mod3, target="llvm")(xb3, wb3)), want3,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("text, message", [
    (_conv_text((1, 2, 8, 8, 8), (4, 2, 3, 3, 16, 16), 'data_layout="NCHW16c", '
                'kernel_layout="OIHW16i16o"'), "sub-axis 16c"),
    (_conv_text((1, 2, 8, 8, 16), (4, 2, 3, 3, 16, 16), 'data_layout="NCHW16c", '
                'kernel_layout="OIHW16i16o", out_layout="NCHW48c"'), "does not divide"),
    (_conv_text((1, 2, 8, 8, 16), (4, 3, 3, 3, 16, 16), 'data_layout="NCHW16c", '
                'kernel_layout="OIHW16i16o"'), "input channels"),
    (_conv_text((1, 2, 8, 8, 16), (4, 2, 3, 3, 16, 16), 'data_layout="NCHW16c", '
                'kernel_layout="OIHW16i16o", channels=32'), "channels is 32"),
])
def test_blocked_layout_errors_are_located(text: str, message: str) -> None:
    with pytest.raises(DiagnosticError, match=message) as err:
        rl.transform.InferType()(rl.parse(text))
    assert err.value.diagnostics[0].span is not None


def test_blocked_convolution_gradient() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 2, 5, 4, 4))
    w = rng.standard_normal((2, 2, 3, 3, 4, 2))
    check_rule("nn.conv2d", [x, w], padding=(1, 1, 1, 1), data_layout="NCHW4c",
               kernel_layout="OIHW4i2o", out_layout="NCHW2c")


def test_passes_keep_a_blocked_convolution() -> None:
    """-O3 (AlterOpLayout, FoldScaleAxis, CombineParallelConv2D...), ConvertLayout and the
    gradient pass run on a blocked convolution; the results keep the values."""
    text, xb, wb, want = _case(*CASES[0])
    mod = rl.parse(text)
    for p in (rl.transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}),
              rl.transform.AlterOpLayout(), rl.transform.FoldScaleAxis(),
              rl.transform.CombineParallelConv2D(min_num_branches=2)):
        out = rl.transform.Sequential([rl.transform.InferType(), p])(mod)
        np.testing.assert_allclose(np.asarray(rl.evaluate(out, xb, wb)), want, rtol=1e-4,
                                   atol=1e-4)
    grad = rl.transform.Sequential([rl.transform.InferType(), rl.transform.Gradient()])(
        rl.parse(text.replace("{ nn.conv2d(", "{ sum(nn.conv2d(").replace(") }", ")) }")))
    value, (dx, dw) = rl.evaluate(grad, xb, wb)
    assert np.asarray(dx).shape == xb.shape and np.asarray(dw).shape == wb.shape


# ------------------------------------------------------------ depthwise with a multiplier

@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("multiplier", [1, 2, 3])
def test_depthwise_weight_with_a_multiplier(layout: str, multiplier: int) -> None:
    """TVM's depthwise weight (C, M, k...) in OIHW terms (HWOI beside NHWC, as TFLite
    imports): the same values as the standard (C * M, 1, k...) weight it reshapes to,
    interpreted, native (weight as a parameter and as a constant) and differentiated."""
    c, m = 6, multiplier
    rng = np.random.default_rng(m)
    x = rng.standard_normal((1, c, 7, 9)).astype("float32")
    w = rng.standard_normal((c, m, 3, 3)).astype("float32")
    standard = _conv_text((1, c, 7, 9), (c * m, 1, 3, 3), f"padding=[1, 1, 1, 1], groups={c}")
    want = np.asarray(rl.evaluate(rl.parse(standard), x, w.reshape(c * m, 1, 3, 3)))
    if layout == "NHWC":
        xl, wl, kl = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 0, 1), "HWOI"
        want = want.transpose(0, 2, 3, 1)
    else:
        xl, wl, kl = x, w, "OIHW"
    text = _conv_text(xl.shape, wl.shape, f"padding=[1, 1, 1, 1], groups={c}, "
                      f'channels={c * m}, data_layout="{layout}", kernel_layout="{kl}"')
    mod = rl.parse(text)
    np.testing.assert_allclose(np.asarray(rl.evaluate(mod, xl, wl)), want, rtol=1e-5,
                               atol=1e-5)
    for lib, args in ((rl.build(mod, target="llvm"), (xl, wl)),
                      (rl.build(mod, target="llvm", params={"w": wl}), (xl,))):
        assert not lib.fallback_ops
        np.testing.assert_allclose(np.asarray(lib(*args)), want, rtol=1e-4, atol=1e-4)
    check_rule("nn.conv2d", [xl.astype("float64"), wl.astype("float64")],
               padding=(1, 1, 1, 1), groups=c, channels=c * m, data_layout=layout,
               kernel_layout=kl)
