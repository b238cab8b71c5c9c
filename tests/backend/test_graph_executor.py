"""`rl.graph_executor.GraphModule`: TVM's executor interface over a built library."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.executor import InputError

PROGRAM = '#[version = "0.0.5"]\n' + """
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(2, 3), float32]) {
  %0 = multiply(%x, %w);
  (exp(%0), add(%0, %x))
}
"""


@pytest.fixture(scope="module")
def lib():
    return rl.build(rl.parse(PROGRAM), target="llvm")


def _inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((2, 3)).astype("float32"), \
        rng.standard_normal((2, 3)).astype("float32")


def test_set_input_run_get_output(lib):
    x, w = _inputs()
    expected = rl.evaluate(rl.parse(PROGRAM), x, w)
    m = rl.graph_executor.GraphModule(lib)
    assert m.get_num_outputs() == 2
    assert m.get_num_inputs() == 2
    m.set_input("x", x)
    m.set_input(w=w)
    m.run()
    for i in range(2):
        np.testing.assert_allclose(m.get_output(i), expected[i], rtol=1e-5)
    np.testing.assert_array_equal(m.get_input("x"), x)
    np.testing.assert_array_equal(m.get_input(1), w)


def test_run_with_inputs_and_keyword_params(lib):
    x, w = _inputs()
    expected = rl.evaluate(rl.parse(PROGRAM), x, w)
    m = rl.graph_executor.GraphModule(lib)
    m.run(x=x, w=w)
    np.testing.assert_allclose(m.get_output(1), expected[1], rtol=1e-5)
    m.set_input("%x", np.zeros((2, 3), "float32"))
    m.run()
    np.testing.assert_allclose(m.get_output(1), np.zeros((2, 3), "float32"))


def test_errors(lib):
    m = rl.graph_executor.GraphModule(lib)
    with pytest.raises(InputError, match="no input %z"):
        m.set_input("z", np.zeros(1))
    with pytest.raises(InputError, match="expected shape"):
        m.set_input("x", np.zeros((3, 2), "float32"))
    with pytest.raises(InputError, match="not set"):
        m.get_input("x")
    with pytest.raises(InputError, match="not set: %x, %w"):
        m.run()
    with pytest.raises(RuntimeError, match="run"):
        m.get_output(0)
    x, w = _inputs()
    m.run(x=x, w=w)
    with pytest.raises(IndexError):
        m.get_output(2)


def test_single_output_module():
    text = '#[version = "0.0.5"]\ndef @main(%x: Tensor[(4), float32]) { negative(%x) }'
    m = rl.graph_executor.GraphModule(rl.build(rl.parse(text), target="llvm"))
    assert m.get_num_outputs() == 1
    m.run(x=np.arange(4, dtype="float32"))
    np.testing.assert_array_equal(m.get_output(0), -np.arange(4, dtype="float32"))
