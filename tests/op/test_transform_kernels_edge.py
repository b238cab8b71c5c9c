"""Edge cases of the transform family's NumPy kernels found by the LLVM lowerings' tests."""
import numpy as np

import relaylang as rl


def _run(text: str, *args: np.ndarray) -> np.ndarray:
    return rl.evaluate(rl.parse(text), *args)


def test_backward_strided_slice_from_before_the_start_selects_nothing() -> None:
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(3, 4), float32]) {
  strided_slice(%x, begin=[-7], end=[-5], strides=[-1])
}"""
    x = np.arange(12, dtype="float32").reshape(3, 4)
    assert _run(text, x).shape == (0, 4)          # as its type says


def test_take_with_int8_indices_on_a_long_axis() -> None:
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(200), float32], %i: Tensor[(3), int8]) {
  (take(%x, %i, axis=0, mode="wrap"), take(%x, %i, axis=0, mode="clip"))
}"""
    x = np.arange(200, dtype="float32")
    i = np.array([-1, 5, 127], dtype="int8")
    wrap, clip = _run(text, x, i)
    np.testing.assert_array_equal(wrap, [199, 5, 127])
    np.testing.assert_array_equal(clip, [0, 5, 127])
