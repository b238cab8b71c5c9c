"""ONNX DFT, STFT, HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix and Det
against onnxruntime, on both backends: real and complex signals, every axis form (the
opset-17 attribute, the opset-20 input, negative axes), size-1, odd, prime and
power-of-two lengths, dft_length padding and truncation, one-sided and inverse
transforms (the inverse real transform against numpy.fft.irfft where onnxruntime's
differs), windows of every size and output type, and the refusals."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper
from onnx_check import check_model, make_model, run_relay

from relaylang.frontend.onnx import NeedsInputValues, OnnxImportError

TARGETS = ("interp", "llvm")


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _signal(shape: tuple, dtype: str = "float32") -> np.ndarray:
    return (_rng(shape, dtype).standard_normal(shape) * 2).astype(dtype)


# ---------------------------------------------------------------- DFT

def _dft_model(shape: tuple, dtype: str = "float32", opset: int = 17, axis: int | None = None,
               dft_length: int | None = None, outputs: object = ("y",), **attrs):
    """One DFT node over input x: the axis as the attribute (opset < 20) or an initializer
    input (opset 20), dft_length as an initializer input (None: omitted)."""
    inputs, inits = ["x", ""], {}
    if dft_length is not None:
        inputs[1] = "n"
        inits["n"] = np.array(dft_length, np.int64)
    if opset >= 20:
        if axis is not None:
            inputs.append("axis")
            inits["axis"] = np.array(axis, np.int64)
    elif axis is not None:
        attrs["axis"] = axis
    while inputs[-1] == "":
        inputs.pop()
    node = helper.make_node("DFT", inputs, ["y"], **attrs)
    return make_model([node], {"x": (shape, dtype)}, outputs, initializers=inits, opset=opset)


DFT_CASES = [
    # (shape, opset, axis, dft_length, attributes)
    ((2, 7, 1), 17, None, None, {}),                    # axis 1 by default
    ((2, 5, 3, 1), 17, 2, None, {}),
    ((2, 5, 3, 1), 17, -2, None, {}),                   # the last signal axis
    ((2, 5, 3, 2), 17, -3, None, {}),                   # complex, counted from the back
    ((3, 1, 1), 17, 1, None, {}),                       # one sample
    ((1, 13, 2), 17, 1, None, {}),                      # prime length
    ((2, 8, 2), 17, 1, None, {}),                       # power of two
    ((4, 6, 1), 17, 0, None, {}),                       # the batch axis
    ((2, 5, 1), 17, 1, 9, {}),                          # zero padding
    ((2, 9, 2), 17, 1, 4, {}),                          # truncation
    ((2, 9, 1), 17, 1, None, {"onesided": 1}),
    ((2, 10, 1), 17, 1, None, {"onesided": 1}),
    ((2, 10, 1), 17, 1, 7, {"onesided": 1}),
    ((2, 7, 2), 17, 1, None, {"inverse": 1}),
    ((2, 6, 3, 2), 17, 2, 5, {"inverse": 1}),
    ((2, 4, 3, 2), 17, 1, None, {"inverse": 1, "onesided": 1}),   # irfft, n = 2(m-1)
    ((2, 4, 3, 2), 17, 1, 7, {"inverse": 1, "onesided": 1}),      # irfft, odd n
    ((1, 5, 2), 17, 1, 8, {"inverse": 1, "onesided": 1}),
    ((2, 7, 1), 20, None, None, {}),                    # axis -2 by default
    ((2, 5, 3, 1), 20, 1, None, {}),
    ((2, 5, 3, 2), 20, -3, None, {}),
    ((2, 5, 3, 1), 20, -2, 6, {"onesided": 1}),
    ((2, 6, 2), 20, 1, None, {"inverse": 1}),
    ((2, 3, 2), 20, -2, None, {"inverse": 1, "onesided": 1}),
]


@pytest.mark.parametrize("shape, opset, axis, length, attrs", DFT_CASES,
                         ids=[f"{c[0]}-op{c[1]}-axis{c[2]}-n{c[3]}-{c[4]}" for c in DFT_CASES])
def test_dft(shape, opset, axis, length, attrs) -> None:
    x = _signal(shape)
    model = _dft_model(shape, opset=opset, axis=axis, dft_length=length, **attrs)
    check_model(model, {"x": x}, rtol=1e-4, atol=1e-4)


def test_dft_float64_and_a_second_signal_axis() -> None:
    # onnxruntime's float64 transform is accurate to about 1e-8 only (its twiddle factors);
    # relaylang's is numpy.fft's in float64
    x = _signal((2, 3, 11, 2), "float64")
    z = x[..., 0] + 1j * x[..., 1]
    for axis, inverse, want in ((2, 0, np.fft.fft(z, axis=2)), (1, 1, np.fft.ifft(z, axis=1))):
        model = _dft_model(x.shape, "float64", axis=axis, inverse=inverse)
        check_model(model, {"x": x}, rtol=1e-6, atol=1e-6)
        for target in TARGETS:
            (got,) = run_relay(model, {"x": x}, target=target)
            np.testing.assert_allclose(got, np.stack([want.real, want.imag], -1),
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("m, n", [(4, 2), (4, 3), (4, 5), (4, 8), (1, 1), (2, 1), (3, 10)])
def test_inverse_real_dft_is_numpy_irfft(m: int, n: int) -> None:
    # lengths whose one-sided spectrum has more or fewer than m points: onnxruntime's
    # results differ from irfft there, ONNX's reference (and relaylang) compute irfft
    x = _signal((2, m, 3, 2))
    z = x[..., 0].astype(np.float64) + 1j * x[..., 1]
    want = np.fft.irfft(z, n=n, axis=1)[..., None]
    model = _dft_model(x.shape, axis=1, dft_length=n, inverse=1, onesided=1)
    for target in TARGETS:
        (got,) = run_relay(model, {"x": x}, target=target)
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_dft_refusals() -> None:
    typed = {"y": ((None, None, None), "float32")}
    with pytest.raises(OnnxImportError, match="trailing dimension"):
        run_relay(_dft_model((2, 5, 1), axis=2, outputs=typed), {"x": _signal((2, 5, 1))})
    with pytest.raises(OnnxImportError, match="out of range"):
        run_relay(_dft_model((2, 5, 1), axis=-4, outputs=typed), {"x": _signal((2, 5, 1))})
    with pytest.raises(OnnxImportError, match="must be 1 \\(real\\) or 2"):
        run_relay(_dft_model((2, 5, 3), axis=1, outputs=typed), {"x": _signal((2, 5, 3))})
    with pytest.raises(OnnxImportError, match="dft_length must be positive"):
        run_relay(_dft_model((2, 1, 2), axis=1, inverse=1, onesided=1, outputs=typed),
                  {"x": _signal((2, 1, 2))})
    # a run-time dft_length decides the output shape
    node = helper.make_node("DFT", ["x", "n"], ["y"], axis=1)
    model = make_model([node], {"x": ((2, 5, 1), "float32"), "n": ((), "int64")},
                       {"y": ((2, None, 2), "float32")}, opset=17)
    with pytest.raises(NeedsInputValues, match="dft_length"):
        run_relay(model, {"x": _signal((2, 5, 1)), "n": np.array(5, np.int64)})
    node = helper.make_node("DFT", ["x"], ["y"], axis=1)
    model = make_model([node], {"x": ((2, 5, 1), "int32")}, {"y": ((2, 5, 2), "int32")},
                       opset=17)
    with pytest.raises(OnnxImportError, match="float tensor"):
        run_relay(model, {"x": np.zeros((2, 5, 1), np.int32)})


# ---------------------------------------------------------------- STFT

def _stft_model(shape: tuple, step: int, frame: int | None = None, window: int | None = None,
                dtype: str = "float32", outputs: object = ("y",), **attrs):
    inputs = ["x", "step", "w" if window is not None else "", "frame" if frame else ""]
    inits = {"step": np.array(step, np.int64)}
    if frame:
        inits["frame"] = np.array(frame, np.int64)
    while inputs[-1] == "":
        inputs.pop()
    graph_inputs = {"x": (shape, dtype)}
    if window is not None:
        graph_inputs["w"] = ((window,), dtype)
    node = helper.make_node("STFT", inputs, ["y"], **attrs)
    return make_model([node], graph_inputs, outputs, initializers=inits, opset=17)


STFT_CASES = [
    # (signal shape, frame_step, frame_length, window length, attributes)
    ((1, 32, 1), 8, 16, None, {}),
    ((2, 37, 1), 5, 9, None, {}),                         # odd frames, a partial tail
    ((2, 30, 1), 4, None, 10, {}),                        # the window gives the length
    ((1, 25, 1), 3, 7, 7, {"onesided": 0}),
    ((2, 20, 2), 6, None, 8, {"onesided": 0}),           # complex signal
    ((1, 16, 1), 1, 16, None, {}),                        # one frame
    ((3, 9, 1), 2, 1, None, {}),                          # one-sample frames
]


@pytest.mark.parametrize("shape, step, frame, window, attrs", STFT_CASES,
                         ids=[f"{c[0]}-step{c[1]}-frame{c[2]}-w{c[3]}-{c[4]}"
                              for c in STFT_CASES])
def test_stft(shape, step, frame, window, attrs) -> None:
    inputs = {"x": _signal(shape)}
    if window is not None:
        inputs["w"] = np.hanning(window + 2)[1:-1].astype(np.float32)
    model = _stft_model(shape, step, frame, window, **attrs)
    check_model(model, inputs, rtol=1e-4, atol=1e-4)


def test_stft_float64() -> None:
    inputs = {"x": _signal((1, 40, 1), "float64"), "w": np.hamming(12)}
    check_model(_stft_model((1, 40, 1), 7, None, 12, "float64"), inputs,
                rtol=1e-9, atol=1e-9)


def test_stft_refusals() -> None:
    x = _signal((1, 10, 1))
    typed = {"y": ((None,) * 4, "float32")}
    with pytest.raises(OnnxImportError, match="frame length 12"):
        run_relay(_stft_model((1, 10, 1), 2, 12, outputs=typed), {"x": x})
    with pytest.raises(OnnxImportError, match="differs from the window"):
        run_relay(_stft_model((1, 10, 1), 2, 5, 4, outputs=typed),
                  {"x": x, "w": np.ones(4, np.float32)})
    with pytest.raises(OnnxImportError, match="frame_step must be positive"):
        run_relay(_stft_model((1, 10, 1), 0, 4, outputs=typed), {"x": x})
    with pytest.raises(OnnxImportError, match=r"\[batch, length, 1 or 2\]"):
        run_relay(_stft_model((10, 1), 2, 4, outputs=typed), {"x": x[0]})


# ---------------------------------------------------------------- windows

WINDOWS = ["HannWindow", "HammingWindow", "BlackmanWindow"]


ONNX_DTYPES = {TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64",
               TensorProto.FLOAT16: "float16", TensorProto.INT32: "int32",
               TensorProto.UINT8: "uint8", TensorProto.INT64: "int64"}


def _window_model(op: str, size: int, size_dtype: str = "int64", **attrs):
    node = helper.make_node(op, ["size"], ["y"], **attrs)
    dtype = ONNX_DTYPES[attrs.get("output_datatype", TensorProto.FLOAT)]
    return make_model([node], {}, {"y": ((max(size, 0),), dtype)},
                      initializers={"size": np.array(size, size_dtype)}, opset=17)


def _window_formula(op: str, size: int, periodic: int) -> np.ndarray:
    n, d = np.arange(float(size)), float(size if periodic else size - 1)
    if op == "HannWindow":
        return np.sin(np.pi * n / d) ** 2
    if op == "HammingWindow":
        return 25 / 46 - 21 / 46 * np.cos(2 * np.pi * n / d)
    return (-0.5 * np.cos(2 * np.pi * n / d) + 0.08 * np.cos(4 * np.pi * n / d)) + 0.42


@pytest.mark.parametrize("op", WINDOWS)
@pytest.mark.parametrize("size", [1, 2, 7, 10])
@pytest.mark.parametrize("periodic", [1, 0])
def test_window(op: str, size: int, periodic: int) -> None:
    # a symmetric window of one sample is 0/0: NaN in onnxruntime and here (assert_allclose
    # takes NaN as equal to NaN)
    check_model(_window_model(op, size, periodic=periodic), {}, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("op", WINDOWS)
def test_window_output_types(op: str) -> None:
    # onnxruntime's float64 windows carry float32 coefficients and pi to 9 digits: 1e-7
    # apart; relaylang's are the formula in float64
    model = _window_model(op, 9, "int32", output_datatype=TensorProto.DOUBLE)
    check_model(model, {}, rtol=1e-6, atol=1e-7)
    for target in TARGETS:
        (got,) = run_relay(model, {}, target=target)
        np.testing.assert_allclose(got, _window_formula(op, 9, 1), rtol=1e-15, atol=1e-15)
    check_model(_window_model(op, 8, periodic=0, output_datatype=TensorProto.INT32), {})
    check_model(_window_model(op, 6, output_datatype=TensorProto.UINT8), {})


@pytest.mark.parametrize("op", WINDOWS)
def test_window_float16_is_rounded_once(op: str) -> None:
    model = _window_model(op, 11, periodic=0, output_datatype=TensorProto.FLOAT16)
    for target in TARGETS:
        (got,) = run_relay(model, {}, target=target)
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, _window_formula(op, 11, 0).astype(np.float16))


def test_window_refusals() -> None:
    node = helper.make_node("HannWindow", ["size"], ["y"])
    model = make_model([node], {"size": ((), "int64")}, {"y": ((None,), "float32")},
                       opset=17)
    with pytest.raises(NeedsInputValues, match="window size"):
        run_relay(model, {"size": np.array(4, np.int64)})
    with pytest.raises(OnnxImportError, match="NaN"):
        run_relay(_window_model("HammingWindow", 1, periodic=0,
                                output_datatype=TensorProto.INT32), {})
    for size in (0, -3):
        with pytest.raises(OnnxImportError, match="must be positive"):
            run_relay(_window_model("BlackmanWindow", size), {})


# ---------------------------------------------------------------- MelWeightMatrix

def _mel_model(bins: int, length: int, rate: int, low: float, high: float,
               int_dtype: str = "int64", **attrs):
    dtype = ONNX_DTYPES[attrs.get("output_datatype", TensorProto.FLOAT)]
    out = {"y": ((max(length, 0) // 2 + 1, max(bins, 0)), dtype)}
    names = ["bins", "length", "rate", "low", "high"]
    values = [np.array(bins, int_dtype), np.array(length, int_dtype),
              np.array(rate, int_dtype), np.array(low, np.float32), np.array(high, np.float32)]
    node = helper.make_node("MelWeightMatrix", names, ["y"], **attrs)
    return make_model([node], {}, out, initializers=dict(zip(names, values)), opset=17)


MEL_CASES = [
    (8, 16, 8192, 0.0, 4096.0),
    (10, 64, 16000, 20.0, 8000.0),
    (40, 512, 16000, 0.0, 7600.0),
    (3, 9, 1000, 100.0, 450.0),                 # odd dft_length
    (1, 2, 100, 0.0, 30.0),
    (20, 32, 8000, 300.0, 3000.0),              # narrow band: empty and one-bin triangles
]


@pytest.mark.parametrize("bins, length, rate, low, high", MEL_CASES, ids=str)
def test_mel_weight_matrix(bins, length, rate, low, high) -> None:
    check_model(_mel_model(bins, length, rate, low, high), {}, rtol=1e-6, atol=1e-7)


def test_mel_weight_matrix_output_types() -> None:
    check_model(_mel_model(10, 64, 16000, 20.0, 8000.0, "int32",
                           output_datatype=TensorProto.DOUBLE), {}, rtol=1e-12, atol=1e-12)
    check_model(_mel_model(6, 30, 4000, 0.0, 2000.0, output_datatype=TensorProto.INT64), {})


def test_mel_weight_matrix_refusals() -> None:
    with pytest.raises(OnnxImportError, match="upper_edge_hertz"):
        run_relay(_mel_model(8, 16, 8000, 0.0, 9000.0), {})
    with pytest.raises(OnnxImportError, match="must be positive"):
        run_relay(_mel_model(0, 16, 8000, 0.0, 4000.0), {})


# ---------------------------------------------------------------- Det

def _det_model(shape: tuple, dtype: str = "float32", opset: int = 22):
    node = helper.make_node("Det", ["x"], ["y"])
    return make_model([node], {"x": (shape, dtype)}, ["y"], opset=opset)


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (1, 1), (4, 5, 5), (2, 3, 4, 4), (1, 7, 7)],
                         ids=str)
def test_det(shape: tuple) -> None:
    x = _signal(shape)
    check_model(_det_model(shape), {"x": x}, rtol=1e-4, atol=1e-5)
    check_model(_det_model(shape, opset=11), {"x": x}, rtol=1e-4, atol=1e-5)


def test_det_float64_and_special_matrices() -> None:
    x = _signal((3, 6, 6), "float64")        # onnxruntime's Det is float32 only
    want = np.linalg.det(x)
    for target in TARGETS:
        (got,) = run_relay(_det_model(x.shape, "float64"), {"x": x}, target=target)
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12)
    special = np.array([[[1, 2, 3], [2, 4, 6], [0, 1, 1]],          # singular
                        [[0, 1, 2], [0, 3, 4], [0, 5, 7]],          # zero first column
                        [[0, 1, 0], [1, 0, 0], [0, 0, 1]],          # odd permutation
                        [[0, 0, 2], [0, 3, 0], [4, 0, 0]]], np.float32)
    check_model(_det_model(special.shape), {"x": special}, atol=1e-6)


def test_det_refusals() -> None:
    node = helper.make_node("Det", ["x"], ["y"])
    model = make_model([node], {"x": ((2, 3), "float32")}, {"y": ((), "float32")}, opset=22)
    with pytest.raises(OnnxImportError, match="square"):
        run_relay(model, {"x": np.zeros((2, 3), np.float32)})


def test_dft_and_stft_float16() -> None:
    # onnxruntime has no float16 DFT: against numpy.fft on the float16 values
    x = _signal((2, 9, 2), "float16")
    z = x[..., 0].astype(np.float64) + 1j * x[..., 1]
    want = np.fft.fft(z, n=12, axis=1)[:, :7]
    model = _dft_model(x.shape, "float16", axis=1, dft_length=12, onesided=1,
                       outputs={"y": ((2, 7, 2), "float16")})
    s = _signal((1, 20, 1), "float16")
    frames = np.stack([s[0, i:i + 8, 0] for i in range(0, 13, 4)]).astype(np.float64)
    spectra = np.fft.rfft(frames, axis=-1)[None]
    stft = _stft_model(s.shape, 4, 8, dtype="float16",
                       outputs={"y": ((1, 4, 5, 2), "float16")})
    for target in TARGETS:
        (got,) = run_relay(model, {"x": x}, target=target)
        assert got.dtype == np.float16 and got.shape == (2, 7, 2)
        np.testing.assert_allclose(got, np.stack([want.real, want.imag], -1), rtol=1e-2,
                                   atol=2e-2)
        (got,) = run_relay(stft, {"x": s}, target=target)
        assert got.dtype == np.float16 and got.shape == (1, 4, 5, 2)
        np.testing.assert_allclose(got, np.stack([spectra.real, spectra.imag], -1),
                                   rtol=1e-2, atol=2e-2)
