"""Stages computed from constant parameters alone (a blocked convolution's or dense's
re-laid weight) are packed once at build (`lower_primitive(..., constant_params=...)`,
`rl.build` binds the packed tensors as constants of the plan) instead of by every call.

The core does not pack when the kernel would lose its parallel loop by it (the packed
stage was the prologue the scheduler needed); the `force_packing` fixture lifts that
rule so that packing itself is checked over every shape."""
from __future__ import annotations

import re

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.llvm import loop_ir as L
from relaylang.backend.llvm.jit import aligned_empty, compile_kernels
from relaylang.backend.llvm.lower import PackedPrimFunc, lower_primitive

RTOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-7}

# (data shape, weight shape, attrs, dtype)
CONVS = [
    ((1, 16, 10, 10), (32, 16, 3, 3), "padding=[1, 1, 1, 1]", "float32"),
    ((2, 16, 9, 9), (16, 16, 3, 3), "strides=[2, 2], padding=[1, 1, 1, 1]", "float32"),
    ((1, 32, 1, 1), (64, 32, 1, 1), "", "float32"),                         # size-1 dims
    ((1, 1, 6, 7), (8, 1, 3, 3), "", "float32"),                            # one in channel
    ((1, 16, 8, 8), (32, 8, 3, 3), "padding=[1, 1, 1, 1], groups=2", "float32"),
    ((1, 16, 8, 8), (16, 1, 3, 3), "padding=[1, 1, 1, 1], groups=16", "float32"),  # depthwise
    ((1, 3, 6, 6), (50, 3, 3, 3), "", "float32"),     # channels last, 50 -> 64 zero-padded
    ((1, 16, 7, 7), (32, 16, 3, 3), "padding=[1, 1, 1, 1]", "float16"),
    ((1, 8, 6, 6), (16, 8, 3, 3), "strides=[2, 2]", "float64"),
]


@pytest.fixture
def force_packing(monkeypatch):
    from llvm_check import set_schedule_default
    set_schedule_default(monkeypatch, "schedule.par_min", 0)


def _rand(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _conv_text(dshape, wshape, attrs, dtype, bias=True):
    sep = ", " if attrs else ""
    conv = f"nn.conv2d(%x, %w{sep}{attrs}, channels={wshape[0]}, kernel_size=[{wshape[2]}, {wshape[3]}])"
    body = f"nn.relu(nn.bias_add({conv}, %b))" if bias else conv
    return (f'#[version = "0.0.5"]\n'
            f"def @main(%x: Tensor[{dshape}, {dtype}], %w: Tensor[{wshape}, {dtype}], "
            f"%b: Tensor[({wshape[0]},), {dtype}]) {{ {body} }}")


def _close(got, want, dtype):
    np.testing.assert_allclose(np.asarray(got, dtype="float64"), np.asarray(want, "float64"),
                               rtol=RTOL[dtype], atol=RTOL[dtype])


def _stores(prim: L.PrimFunc, stem: str) -> bool:
    """Whether the printed loop IR of `prim` stores to a buffer named `stem...`."""
    return re.search(rf"^\s*{stem}\w*\[.*\] = ", str(prim), re.MULTILINE) is not None


def _primitive(mod):
    from relaylang.ir.expr import Function
    from relaylang.ir.traverse import post_order
    fused = rl.transform.InferType()(rl.transform.FuseOps(fuse_opt_level=2)(
        rl.transform.InferType()(mod)))
    return [n for n in post_order(fused["main"].body) if type(n) is Function]


@pytest.mark.parametrize("dshape, wshape, attrs, dtype", CONVS)
def test_conv_with_constant_weight_matches_interpreter(dshape, wshape, attrs, dtype,
                                                      force_packing):
    mod = rl.parse(_conv_text(dshape, wshape, attrs, dtype))
    x, w, b = _rand(dshape, dtype, 1), _rand(wshape, dtype, 2), _rand((wshape[0],), dtype, 3)
    lib = rl.build(mod, target="llvm", params={"w": w, "b": b})
    _close(lib(x), rl.evaluate(mod, x, w, b), dtype)
    plan = lib.graph.plan
    shapes = [c.shape for c in plan.constants]
    assert tuple(wshape) not in shapes          # the weight itself is no longer kept
    assert sum(c.nbytes for c in plan.constants) <= 2 * (w.nbytes + b.nbytes)


def test_main_kernel_no_longer_relays_the_weight():
    # a padded 3x3 convolution: the padded input stays a per-call prologue, the weight
    # is packed (no forcing needed)
    mod = rl.parse(_conv_text((1, 64, 14, 14), (64, 64, 3, 3), "padding=[1, 1, 1, 1]",
                              "float32", bias=False))
    (fn,) = _primitive(mod)
    plain = lower_primitive(fn, name="k")
    assert type(plain) is L.PrimFunc and _stores(plain, "conv_weight_b")
    assert str(lower_primitive(fn, name="k", constant_params=frozenset())) == str(plain)
    prim = lower_primitive(fn, name="k", constant_params=frozenset({1}))
    assert isinstance(prim, PackedPrimFunc)
    assert not _stores(prim, "conv_weight_b")
    assert prim.leaf_inputs == (0,)             # the weight itself is not passed
    assert [tuple(p.shape) for p in prim.inputs] == [(1, 64, 14, 14), (1, 64, 3, 3, 64)]
    (packed,) = prim.packed
    assert packed.sources == (1,) and _stores(packed.packer, "conv_weight_b")
    assert packed.packer.name == "k__pack0"
    # said of the data instead, its padded copy is what is packed
    prim = lower_primitive(fn, name="k", constant_params=frozenset({0}))
    assert prim.leaf_inputs == (1,) and _stores(prim, "conv_weight_b")
    assert [tuple(p.shape) for p in prim.inputs] == [(64, 64, 3, 3), (1, 64, 16, 16)]


def test_built_library_source_has_packer_and_plain_kernel():
    mod = rl.parse(_conv_text((1, 32, 8, 8), (64, 32, 3, 3), "padding=[1, 1, 1, 1]",
                              "float32"))
    w, b = _rand((64, 32, 3, 3), "float32"), _rand((64,), "float32")
    lib = rl.build(mod, target="llvm", params={"w": w, "b": b})
    (step,) = lib.graph.plan.steps
    kinds = [lib.graph.plan.values[v].kind for v in step.inputs]
    assert kinds == ["input", "const", "const"]      # data, bias, packed weight
    assert lib.graph.plan.values[step.inputs[2]].shape == (1, 32, 3, 3, 64)
    source = lib.get_source("ll")
    assert f"{step.kernel}__pack0" in source


@pytest.mark.parametrize("rows, dtype", [(4, "float32"), (6, "float16"), (8, "float64")])
def test_dense_with_constant_weight(rows, dtype, force_packing):
    text = (f'#[version = "0.0.5"]\ndef @main(%x: Tensor[({rows}, 24), {dtype}], '
            f"%w: Tensor[(32, 24), {dtype}]) {{ nn.dense(%x, %w, units=32) }}")
    mod = rl.parse(text)
    x, w = _rand((rows, 24), dtype, 1), _rand((32, 24), dtype, 2)
    lib = rl.build(mod, target="llvm", params={"w": w})
    _close(lib(x), rl.evaluate(mod, x, w), dtype)
    assert [c.shape for c in lib.graph.plan.constants] == [(1, 24, 32)]
    (fn,) = _primitive(mod)
    prim = lower_primitive(fn, name="d", constant_params=frozenset({1}))
    assert _stores(lower_primitive(fn, name="d"), "dense_weight_b")
    assert isinstance(prim, PackedPrimFunc) and not _stores(prim, "dense_weight_b")


def test_export_and_load_round_trip(tmp_path, force_packing):
    mod = rl.parse(_conv_text((1, 16, 8, 8), (32, 16, 3, 3), "padding=[1, 1, 1, 1]",
                              "float32"))
    x = _rand((1, 16, 8, 8), "float32", 1)
    w, b = _rand((32, 16, 3, 3), "float32", 2), _rand((32,), "float32", 3)
    lib = rl.build(mod, target="llvm", params={"w": w, "b": b})
    path = tmp_path / "packed.rlib"
    lib.export_library(path)
    loaded = rl.runtime.load_module(str(path))
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(lib(x)))
    assert [c.shape for c in loaded.graph.plan.constants] == [
        c.shape for c in lib.graph.plan.constants]


def test_weight_shared_by_two_convs_is_packed_once(force_packing):
    text = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(1, 16, 8, 8), float32], '
            "%w: Tensor[(16, 16, 3, 3), float32]) {\n"
            "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);\n"
            "  %1 = nn.relu(%0);\n"
            "  nn.conv2d(%1, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3])\n}")
    mod = rl.parse(text)
    x, w = _rand((1, 16, 8, 8), "float32", 1), _rand((16, 16, 3, 3), "float32", 2)
    # the NCHW convolutions' packing (two convolutions in a row are otherwise a region
    # AlterOpLayout computes as nn.contrib_conv2d_NCHWc, its weights blocked at build time)
    with rl.transform.PassContext(disabled_pass=["AlterOpLayout"]):
        lib = rl.build(mod, target="llvm", params={"w": w})
    _close(lib(x), rl.evaluate(mod, x, w), "float32")
    plan = lib.graph.plan
    assert [c.shape for c in plan.constants] == [(1, 16, 3, 3, 16)]
    assert len(plan.steps) == 2
    assert len({s.kernel for s in plan.steps}) == 2     # conv+relu and conv
    packed = {v for s in plan.steps for v in s.inputs if plan.values[v].kind == "const"}
    assert len(packed) == 1


def test_weight_also_read_by_another_step_stays(force_packing):
    text = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(1, 16, 8, 8), float32], '
            "%w: Tensor[(16, 16, 3, 3), float32]) {\n"
            "  (nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]),\n"
            "   multiply(%w, 2f))\n}")
    mod = rl.parse(text)
    x, w = _rand((1, 16, 8, 8), "float32", 1), _rand((16, 16, 3, 3), "float32", 2)
    lib = rl.build(mod, target="llvm", params={"w": w})
    got, want = lib(x), rl.evaluate(mod, x, w)
    for g, r in zip(got, want):
        _close(g, r, "float32")
    shapes = sorted(c.shape for c in lib.graph.plan.constants)
    assert shapes == [(1, 16, 3, 3, 16), (16, 16, 3, 3)]


def test_constant_of_a_kernel_without_packable_stage_is_untouched():
    # a direct convolution (2 x 3 x 3 = 18 products per output) reads its weight as it is
    text = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(1, 2, 16, 16), float32], '
            "%w: Tensor[(4, 2, 3, 3), float32]) { nn.conv2d(%x, %w, channels=4, "
            "kernel_size=[3, 3]) }")
    mod = rl.parse(text)
    x, w = _rand((1, 2, 16, 16), "float32", 1), _rand((4, 2, 3, 3), "float32", 2)
    lib = rl.build(mod, target="llvm", params={"w": w})
    _close(lib(x), rl.evaluate(mod, x, w), "float32")
    plan = lib.graph.plan
    (step,) = plan.steps
    assert [plan.values[v].kind for v in step.inputs] == ["input", "const"]
    np.testing.assert_array_equal(plan.constants[0], w)
    (fn,) = _primitive(mod)
    assert type(lower_primitive(fn, name="k", constant_params=frozenset({1}))) is L.PrimFunc


def test_packing_keeps_the_parallel_loop():
    """A 1x1 convolution has no padded input: its re-laid weight is the prologue that
    lets the scheduler run the rest in parallel. Packed, the kernel keeps a parallel loop
    at least as long (or the knob `schedule.par_min`), else it is not packed; either way
    it is right."""
    from relaylang.backend.llvm.knobs import host, schedule_defaults
    par_min = schedule_defaults(host())["schedule.par_min"][0]
    text = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(1, 32, 28, 28), float32], '
            "%w: Tensor[(64, 32, 1, 1), float32]) { nn.conv2d(%x, %w, channels=64, "
            "kernel_size=[1, 1]) }")
    mod = rl.parse(text)
    (fn,) = _primitive(mod)
    plain = lower_primitive(fn, name="k")
    prim = lower_primitive(fn, name="k", constant_params=frozenset({1}))
    assert plain.parallel_extent > 1
    assert prim.parallel_extent >= min(plain.parallel_extent, par_min)
    x, w = _rand((1, 32, 28, 28), "float32", 1), _rand((64, 32, 1, 1), "float32", 2)
    lib = rl.build(mod, target="llvm", params={"w": w})
    _close(lib(x), rl.evaluate(mod, x, w), "float32")


def _run_packed(prim, leaves):
    """Run a (Packed)PrimFunc on the flat inputs `leaves` of its primitive function."""
    packers = [p.packer for p in getattr(prim, "packed", ())]
    kernels = compile_kernels([prim] + packers)
    inputs = [leaves[k] for k in getattr(prim, "leaf_inputs", range(len(leaves)))]
    for p in getattr(prim, "packed", ()):
        (ob,) = p.packer.outputs
        out = aligned_empty(ob.shape, ob.dtype)
        kernels[p.packer.name]([leaves[s] for s in p.sources] + [out])
        inputs.append(out)
    outs = [aligned_empty(b.shape, b.dtype) for b in prim.outputs]
    kernels[prim.name](inputs + outs)
    return outs


@pytest.mark.parametrize("which", ["data", "weights"])
def test_tuple_parameters_map_to_their_leaves(which, force_packing):
    """A tuple parameter is one input per field: the constant parameter's leaves are
    found after it (data tuple) or are several (a tuple of weights)."""
    if which == "data":
        text = ('#[version = "0.0.5"]\ndef @main(%t: (Tensor[(1, 8, 6, 6), float32], '
                "Tensor[(1, 8, 6, 6), float32]), %w: Tensor[(16, 16, 3, 3), float32]) {\n"
                "  nn.conv2d(concatenate(%t, axis=1), %w, channels=16, kernel_size=[3, 3])\n}")
        shapes = [(1, 8, 6, 6), (1, 8, 6, 6), (16, 16, 3, 3)]
        consts, kept, sources = {1}, (0, 1), (2,)
    else:
        text = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(1, 16, 6, 6), float32], '
                "%ws: (Tensor[(8, 16, 3, 3), float32], Tensor[(8, 16, 3, 3), float32])) {\n"
                "  nn.conv2d(%x, concatenate(%ws), channels=16, kernel_size=[3, 3])\n}")
        shapes = [(1, 16, 6, 6), (8, 16, 3, 3), (8, 16, 3, 3)]
        consts, kept, sources = {1}, (0,), (1, 2)
    mod = rl.transform.InferType()(rl.parse(text))
    fn = mod["main"]
    prim = lower_primitive(fn, name="t", constant_params=frozenset(consts))
    assert isinstance(prim, PackedPrimFunc)
    assert prim.leaf_inputs == kept and prim.packed[0].sources == sources
    leaves = [_rand(s, "float32", k) for k, s in enumerate(shapes)]
    args = ((leaves[0], leaves[1]), leaves[2]) if which == "data" else (
        leaves[0], (leaves[1], leaves[2]))
    (out,) = _run_packed(prim, leaves)
    _close(out, rl.evaluate(mod, *args), "float32")
