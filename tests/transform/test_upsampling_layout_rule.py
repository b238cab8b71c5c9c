"""The layout rule of nn.upsampling, nn.upsampling3d and their dyn twins (TVM's
UpsamplingInferCorrectLayout, relaylang/transform/layout/rules.py `upsampling_rule`) and
image.resize1d's (`spatial`, TVM's ResizeInferCorrectLayout): through the golden harness
(re-parse, idempotence, same values on the interpreter), and built for llvm."""
from __future__ import annotations

import numpy as np
from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.expr import Call
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.transform import temp_alter_op_layout
from relaylang.transform.layout.desired_layouts import DesiredLayouts


def fn(body):
    return rl.Function(rl.analysis.free_vars(body), body)


def lt(x, src, dst):
    return rl.layout_transform(x, src_layout=src, dst_layout=dst)


def convert(body, desired: dict) -> IRModule:
    return run_golden(IRModule.from_expr(fn(body)),
                      f"ConvertLayout{{desired_layouts={DesiredLayouts.of(desired)}}}",
                      opt_level=3)


def conv(x, w, **kw):
    return rl.nn.conv2d(x, w, channels=8, kernel_size=(3, 3), padding=(1, 1), **kw)


def test_upsampling_keeps_its_layout_when_h_and_w_move() -> None:
    # NCHW -> NHWC moves H and W: upsampling stays NCHW and its input gets NCHW back
    def params():
        return rl.var("x", shape=(1, 8, 6, 6)), rl.var("w", shape=(8, 8, 3, 3))
    x, w = params()
    after = convert(rl.nn.upsampling(conv(x, w), scale_h=2, scale_w=2),
                    {"nn.conv2d": ["NHWC", "HWIO"]})
    x, w = params()
    y = conv(lt(x, "NCHW", "NHWC"), lt(w, "OIHW", "HWIO"), data_layout="NHWC",
             kernel_layout="HWIO")
    assert_same(after, IRModule.from_expr(fn(rl.nn.upsampling(lt(y, "NHWC", "NCHW"),
                                                                scale_h=2, scale_w=2))))


def test_resize1d_takes_the_desired_layout() -> None:
    x = rl.var("x", shape=(1, 4, 9))
    after = convert(rl.image.resize1d(rl.nn.relu(x), size=(5,)), {"image.resize1d": ["NWC"]})
    x = rl.var("x", shape=(1, 4, 9))
    y = rl.image.resize1d(lt(rl.nn.relu(x), "NCW", "NWC"), size=(5,), layout="NWC")
    assert_same(after, IRModule.from_expr(fn(lt(y, "NWC", "NCW"))))


def _blocked_alter(attrs, inputs, tinfos, out_type):
    data, weight = inputs
    new_attrs = dict(attrs.items())
    new_attrs.update(data_layout="NCHW4c", kernel_layout="OIHW4i4o", out_layout="NCHW4c")
    return rl.nn.contrib_conv2d_NCHWc(data, weight, **new_attrs)


def test_blocked_upsampling_builds_to_the_interpreters_values() -> None:
    # bilinear upsampling and the dyn twin, both in NCHW4c after AlterOpLayout, built
    x, w = rl.var("x", shape=(1, 8, 5, 7)), rl.var("w", shape=(8, 8, 3, 3))
    y = rl.nn.upsampling(conv(x, w), scale_h=2, scale_w=1.5, method="bilinear",
                         align_corners=True)
    z = rl.dyn.nn.upsampling(conv(x, w), rl.const(np.array(3.0, "float32")),
                             rl.const(np.array(1.0, "float32")))
    mod = IRModule.from_expr(fn(rl.Tuple([y, z])))
    with temp_alter_op_layout("nn.conv2d", _blocked_alter):
        after = run_golden(mod, "AlterOpLayout", opt_level=3)
        ups = [n for n in post_order(after["main"]) if isinstance(n, Call)
               and getattr(n.op, "name", "") in ("nn.upsampling", "dyn.nn.upsampling")]
        assert [c.attrs.layout for c in ups] == ["NCHW4c", "NCHW4c"], rl.astext(after)
        lib = rl.build(mod, target="llvm", cache=False)    # built with the same alteration
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, 8, 5, 7)).astype("float32")
    b = rng.standard_normal((8, 8, 3, 3)).astype("float32")
    for got, want in zip(lib(a, b), rl.evaluate(mod, a, b)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
