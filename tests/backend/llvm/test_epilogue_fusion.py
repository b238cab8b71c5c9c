"""Fused epilogues (backend/llvm/schedule.py `_fuse_epilogues`): an output that is an
element-wise function of a reduction (a convolution's or dense's bias, ReLU, residual
add) is written from the accumulators as the reduction stores its result, with no local
stage and no second pass. Checked: the loop IR has no stage left where the fusion
applies and keeps it where it must not (the stage read elsewhere, at another index, or
in another dtype); every reduction form (row-blocked tiles, K-blocked chunks whose
epilogue runs after the last chunk, scalar accumulators, argmax, a lone column
reduction) gives the interpreter's values on awkward shapes."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, fused_module, set_schedule_default

import relaylang as rl
from relaylang.backend.llvm import loop_ir as L
from relaylang.backend.llvm.lower import lower_primitive
from relaylang.ir.expr import Call, Function

HEAD = '#[version = "0.0.5"]\n'


def _kernels(text: str, constant_params: frozenset[int] = frozenset()) -> list[L.PrimFunc]:
    mod = fused_module(text)
    found = []
    stack = [mod["main"].body]
    while stack:
        e = stack.pop()
        if isinstance(e, Call):
            if isinstance(e.op, Function):
                found.append(e.op)
            stack.extend(e.args)
        elif hasattr(e, "fields"):
            stack.extend(e.fields)
    return [lower_primitive(f, f"k{i}", constant_params=constant_params)
            for i, f in enumerate(found)]


def _locals(prim: L.PrimFunc) -> list[str]:
    """Names of the local buffers the kernel allocates, tiles of accumulators aside."""
    names, stack = [], [prim.body]
    while stack:
        s = stack.pop()
        if isinstance(s, L.Allocate):
            if "_tile" not in s.buffer.name:
                names.append(s.buffer.name)
            stack.append(s.body)
        elif isinstance(s, L.For):
            stack.append(s.body)
        elif isinstance(s, L.Seq):
            stack.extend(s.stmts)
        elif isinstance(s, L.IfThenElse):
            stack.extend(x for x in (s.then, s.otherwise) if x is not None)
    return names


CONV = ('nn.contrib_conv2d_NCHWc(%x, %w, padding=[{pad}, {pad}, {pad}, {pad}], '
        'channels={oc}, kernel_size=[{k}, {k}], data_layout="NCHW{ib}c", '
        'kernel_layout="OIHW{ib}i{ob}o", out_layout="NCHW{ob}c")')


def _conv_program(h: int, w: int, ic: int, oc: int, ib: int, ob: int, k: int, pad: int,
                  epilogue: str) -> tuple[str, list[tuple[int, ...]]]:
    conv = CONV.format(pad=pad, oc=oc, k=k, ib=ib, ob=ob)
    oh, ow = h + 2 * pad - k + 1, w + 2 * pad - k + 1
    shapes = [(1, ic // ib, h, w, ib), (oc // ob, ic // ib, k, k, ib, ob),
              (oc // ob, 1, 1, ob), (1, oc // ob, oh, ow, ob)]
    body = epilogue.format(conv=conv)
    decl = ", ".join(f"%{n}: Tensor[{s}, float32]" for n, s in zip("xwbr", shapes))
    return HEAD + f"def @main({decl}) {{ {body} }}\n", shapes


RESIDUAL = "nn.relu(add(add({conv}, %b), %r))"


def test_a_convolution_writes_bias_relu_and_residual_from_its_accumulators() -> None:
    text, _ = _conv_program(5, 20, 16, 32, 16, 16, 3, 1, RESIDUAL)
    (prim,) = _kernels(text, frozenset({1}))
    assert "conv2d_nchwc" not in _locals(prim), str(prim)
    stores = [s for s in _stores(prim) if s.buffer is prim.outputs[0]]
    assert stores and all(any(isinstance(n, L.Load) and n.buffer.name == "p3"
                              for n in L.walk(s.value)) for s in stores)


def _stores(prim: L.PrimFunc) -> list[L.Store]:
    out, stack = [], [prim.body]
    while stack:
        s = stack.pop()
        if isinstance(s, L.Store):
            out.append(s)
        elif isinstance(s, (L.Allocate, L.For)):
            stack.append(s.body)
        elif isinstance(s, L.Seq):
            stack.extend(s.stmts)
        elif isinstance(s, L.IfThenElse):
            stack.extend(x for x in (s.then, s.otherwise) if x is not None)
    return out


@pytest.mark.parametrize("h, w, ic, oc, ib, ob, k, pad", [
    (9, 13, 16, 32, 16, 16, 3, 1),     # odd sizes, padding
    (1, 1, 8, 16, 8, 16, 1, 0),        # 1x1 spatial
    (7, 5, 16, 16, 16, 16, 3, 0),      # no padding, odd width
    (6, 11, 32, 48, 16, 16, 1, 0),     # 1x1 convolution, three output blocks
])
@pytest.mark.parametrize("epilogue", [RESIDUAL, "add({conv}, %b)", "{conv}",
                                      "multiply(sigmoid(add({conv}, %b)), add({conv}, %b))",
                                      "add(nn.relu({conv}), %r)"])
def test_convolution_epilogues_match_the_interpreter(h, w, ic, oc, ib, ob, k, pad,
                                                     epilogue) -> None:
    text, shapes = _conv_program(h, w, ic, oc, ib, ob, k, pad, epilogue)
    rng = np.random.default_rng(h * 31 + w)
    vals = [rng.standard_normal(s).astype("float32") for s in shapes]
    assert_matches_interpreter(text, *vals, rtol=1e-4, atol=1e-4)


def test_k_blocked_chunks_apply_the_epilogue_after_the_last_chunk(monkeypatch) -> None:
    """K blocking keeps partial sums in the result: the epilogue then runs as a pass
    over the rows once every chunk is in (a residual read once, not per chunk)."""
    set_schedule_default(monkeypatch, "schedule.k_chunk_bytes", 1024)
    monkeypatch.setattr("relaylang.op.nn.conv_nchwc_lowering.NCHWC_K_CHUNK_BYTES", 1024)
    text, shapes = _conv_program(3, 50, 32, 16, 16, 16, 3, 1, RESIDUAL)
    (prim,) = _kernels(text, frozenset({1}))
    assert "for kc" in str(prim) and "conv2d_nchwc" not in _locals(prim), str(prim)
    rng = np.random.default_rng(3)
    vals = [rng.standard_normal(s).astype("float32") for s in shapes]
    assert_matches_interpreter(text, *vals, rtol=1e-4, atol=1e-4)
    mod = rl.parse(text)
    lib = rl.build(mod, target="llvm", params={"w": vals[1], "b": vals[2]})
    np.testing.assert_allclose(lib(vals[0], vals[3]), rl.evaluate(mod, *vals),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape, axis", [((5, 7, 3), -1), ((4, 1, 9), 1), ((1, 6, 33), 2),
                                         ((3, 0, 4), -1)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_reductions_with_epilogues_match_the_interpreter(shape, axis, dtype) -> None:
    """Scalar accumulators (a sum over the last axis), argmax's index, a column sum
    (tiles of columns), each followed by element-wise ops on its result."""
    out_shape = tuple(d for k, d in enumerate(shape) if k != axis % len(shape))
    decl = (f"%x: Tensor[{shape}, {dtype}], %y: Tensor[{out_shape}, {dtype}]")
    text = HEAD + (
        f"def @main({decl}) {{\n"
        f"  (maximum(add(sum(%x, axis=[{axis}]), %y), %y),\n"
        f"   add(cast(argmax(%x, axis=[{axis}]), dtype=\"{dtype}\"), %y),\n"
        f"   multiply(max(%x, axis=[{axis}]), %y))\n}}\n")
    if 0 in shape:
        text = text.replace(f"   add(cast(argmax(%x, axis=[{axis}]), dtype=\"{dtype}\"), %y),\n",
                            "")
    rng = np.random.default_rng(len(shape) + shape[-1])
    x = rng.integers(-5, 6, shape).astype(dtype)
    y = rng.integers(-5, 6, out_shape).astype(dtype)
    assert_matches_interpreter(text, x, y, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("rows", [1, 5, 13])
def test_dense_epilogues_match_the_interpreter(rows: int) -> None:
    text = HEAD + (
        f"def @main(%x: Tensor[({rows}, 37), float32], %w: Tensor[(70, 37), float32], "
        f"%b: Tensor[(70), float32], %r: Tensor[({rows}, 70), float32]) {{\n"
        "  nn.relu(add(nn.bias_add(nn.dense(%x, %w), %b), %r))\n}\n")
    rng = np.random.default_rng(rows)
    vals = [rng.standard_normal(s).astype("float32")
            for s in ((rows, 37), (70, 37), (70,), (rows, 70))]
    assert_matches_interpreter(text, *vals, rtol=1e-4, atol=1e-4)
    mod = rl.parse(text)
    lib = rl.build(mod, target="llvm", params={"w": vals[1], "b": vals[2]})
    np.testing.assert_allclose(lib(vals[0], vals[3]), rl.evaluate(mod, *vals),
                               rtol=1e-4, atol=1e-4)


def test_a_stage_read_elsewhere_or_at_another_index_stays() -> None:
    """Not fused: the reduction's result is also an output (two readers), read
    transposed, or in float16 (the stage accumulates in float32, the output is half)."""
    two = HEAD + ("def @main(%x: Tensor[(6, 40), float32]) {\n"
                  "  %0 = sum(%x, axis=[1]);\n  (%0, nn.relu(%0))\n}\n")
    moved = HEAD + ("def @main(%x: Tensor[(6, 8, 40), float32]) {\n"
                    "  transpose(nn.relu(sum(%x, axis=[2])), axes=[1, 0])\n}\n")
    half = HEAD + ("def @main(%x: Tensor[(6, 40), float16], %y: Tensor[(6), float16]) {\n"
                   "  add(sum(%x, axis=[1]), %y)\n}\n")
    rng = np.random.default_rng(0)
    for text, shapes, dtype in ((two, [(6, 40)], "float32"), (moved, [(6, 8, 40)], "float32"),
                                (half, [(6, 40), (6,)], "float16")):
        vals = [rng.standard_normal(s).astype(dtype) for s in shapes]
        tol = 1e-2 if dtype == "float16" else 1e-5
        assert_matches_interpreter(text, *vals, rtol=tol, atol=tol)
