"""The trained example examples/digits_mlp.relay: its weights (examples/digits_mlp.npz) fit
@main's parameters, classify scikit-learn's held-out digits through the interpreter at
least as well as ACCURACY_THRESHOLD, agree with a NumPy forward pass, and are exactly what
benchmarks/train_digits_mlp.py produces from its seed."""
from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
from bench_helpers import load_benchmark

import relaylang as rl
from relaylang.ir import TensorType

ROOT = Path(__file__).resolve().parents[2]
RELAY = ROOT / "examples" / "digits_mlp.relay"
NPZ = ROOT / "examples" / "digits_mlp.npz"
SAMPLE = ROOT / "examples" / "digits_sample.npy"

# The committed weights score 0.9195 on the 497 held-out images; the threshold sits a
# little below so that a retrained variant still passes, a broken model does not.
ACCURACY_THRESHOLD = 0.90
WEIGHTS = ("w1", "b1", "w2", "b2")
SAMPLE_CLASS = 3


trainer = load_benchmark("train_digits_mlp")


@pytest.fixture(scope="module")
def mod() -> rl.IRModule:
    return rl.parse(RELAY.read_text(), source_name=RELAY.name)


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    with np.load(NPZ) as npz:
        return {k: npz[k] for k in npz.files}


@pytest.fixture(scope="module")
def split():
    return trainer.load_split()


@pytest.fixture(scope="module")
def interpreted(mod, weights, split) -> np.ndarray:
    """@main's output for every held-out image, one interpreter call per image: (497, 10)."""
    _, _, x_test, _ = split
    exe = rl.create_executor(mod)
    w = [weights[k] for k in WEIGHTS]
    return np.concatenate([exe(x_test[i:i + 1], *w) for i in range(len(x_test))])


# ------------------------------------------------------------------ files fit the program


def test_npz_keys_are_the_weight_parameters_with_their_types(mod, weights):
    params = mod["main"].params
    assert [p.name_hint for p in params] == ["x", *WEIGHTS]
    assert sorted(weights) == sorted(WEIGHTS)
    for p in params[1:]:
        ty, array = p.type_annotation, weights[p.name_hint]
        assert isinstance(ty, TensorType)
        assert array.shape == ty.shape and str(array.dtype) == ty.dtype


def test_sample_is_the_first_held_out_image_scaled_to_unit_range(split):
    sample = np.load(SAMPLE)
    _, _, x_test, y_test = split
    assert sample.shape == (1, 64) and sample.dtype == np.float32
    assert np.array_equal(sample, x_test[:1])
    assert sample.min() >= 0.0 and sample.max() <= 1.0 and sample.max() == 1.0
    assert y_test[0] == SAMPLE_CLASS


def test_split_is_1300_train_497_held_out(split):
    x_train, y_train, x_test, y_test = split
    assert x_train.shape == (1300, 64) and x_test.shape == (497, 64)
    assert set(y_train) == set(y_test) == set(range(10))


# ------------------------------------------------------------------ the interpreter


def test_held_out_accuracy_through_the_interpreter(interpreted, split):
    _, _, _, y_test = split
    assert interpreted.shape == (497, 10) and interpreted.dtype == np.float32
    accuracy = float((interpreted.argmax(axis=1) == y_test).mean())
    assert accuracy >= ACCURACY_THRESHOLD, accuracy


def test_header_states_the_measured_accuracy_and_the_threshold(interpreted, split):
    _, _, _, y_test = split
    head = RELAY.read_text().partition('#[version = "0.0.5"]')[0]
    accuracy = float((interpreted.argmax(axis=1) == y_test).mean())
    assert f"is {accuracy:.4f}" in head
    assert f"at least {ACCURACY_THRESHOLD:.2f}" in head


def test_interpreter_matches_a_numpy_forward_pass(interpreted, weights, split):
    _, _, x_test, _ = split
    expected = trainer.forward(weights, x_test)
    np.testing.assert_allclose(interpreted, expected, rtol=1e-5, atol=1e-6)
    assert np.array_equal(interpreted.argmax(axis=1), expected.argmax(axis=1))
    np.testing.assert_allclose(interpreted.sum(axis=1), 1.0, rtol=1e-5)


def test_rl_evaluate_on_the_sample_predicts_the_header_class(mod, weights):
    out = rl.evaluate(mod, np.load(SAMPLE), *(weights[k] for k in WEIGHTS))
    assert out.shape == (1, 10) and int(out.argmax()) == SAMPLE_CLASS
    head = RELAY.read_text().partition('#[version = "0.0.5"]')[0]
    listed = re.search(r"//   \[(.*?)\]", head, re.DOTALL).group(1)
    numbers = [float(v) for v in re.findall(r"[0-9.]+e[-+][0-9]+", listed)]
    np.testing.assert_allclose(out[0], numbers, rtol=1e-3, atol=1e-20)
    assert f"on class {SAMPLE_CLASS}" in head


# ------------------------------------------------------------------ the training script


def test_retraining_reproduces_the_committed_weights(split, tmp_path):
    # Bit-for-bit on this machine; a tolerance keeps the test honest where another BLAS
    # sums in another order.
    x_train, y_train, _, _ = split
    params = trainer.train(x_train, y_train, seed=trainer.SEED)
    out = tmp_path / "w.npz"
    trainer.save(params, out)
    with np.load(out) as new, np.load(NPZ) as committed:
        assert sorted(new.files) == sorted(committed.files)
        for key in committed.files:
            np.testing.assert_allclose(new[key], committed[key], rtol=1e-5, atol=1e-6)


def test_training_main_writes_weights_and_reports_held_out_accuracy(tmp_path, capsys):
    out, sample = tmp_path / "w.npz", tmp_path / "s.npy"
    assert trainer.main(["--epochs", "3", "--out", str(out), "--sample", str(sample),
                         "--quiet"]) == 0
    text = capsys.readouterr().out
    accuracy = float(re.search(r"held-out accuracy (0\.\d+) \(497 images\)", text).group(1))
    assert 0.5 < accuracy <= 1.0           # three epochs already learn most of it
    with np.load(out) as npz:
        assert sorted(npz.files) == sorted(WEIGHTS)
        assert npz["w1"].dtype == np.float32
    assert np.array_equal(np.load(sample), np.load(SAMPLE))


def test_different_seeds_give_different_weights(split):
    x_train, y_train, _, _ = split
    a = trainer.train(x_train[:200], y_train[:200], seed=1, epochs=1)
    b = trainer.train(x_train[:200], y_train[:200], seed=2, epochs=1)
    assert not np.array_equal(a["w1"], b["w1"])


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(7)
    params = trainer.init_params(rng, hidden=5)
    params["b1"] = rng.uniform(0.1, 0.5, size=5)     # keep ReLU units away from the kink
    x = rng.uniform(0, 1, size=(4, 64))
    y = np.array([0, 3, 9, 3])
    _, grads = trainer.gradients(params, x, y)
    eps = 1e-6
    for name, index in (("w1", (2, 10)), ("b1", (4,)), ("w2", (3, 1)), ("b2", (9,))):
        shifted = {k: v.copy() for k, v in params.items()}
        shifted[name][index] += eps
        up, _ = trainer.gradients(shifted, x, y)
        shifted[name][index] -= 2 * eps
        down, _ = trainer.gradients(shifted, x, y)
        assert grads[name][index] == pytest.approx((up - down) / (2 * eps), rel=1e-4, abs=1e-8)


def test_saved_npz_is_readable_by_numpy_and_independent_of_the_clock(tmp_path, weights):
    path = tmp_path / "a.npz"
    trainer.save(weights, path)
    with zipfile.ZipFile(path) as zf:     # np.savez would stamp the current time
        assert [i.filename for i in zf.infolist()] == [f"{k}.npy" for k in WEIGHTS]
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    with np.load(io.BytesIO(path.read_bytes())) as npz:
        assert all(np.array_equal(npz[k], weights[k]) for k in WEIGHTS)


# ------------------------------------------------------------------ relay run


RUN_ARGS = ["run", str(RELAY), "--params", str(NPZ), "--input", f"x={SAMPLE}"]


def test_relay_run_prints_probabilities_whose_argmax_is_the_sample_class(capsys, weights):
    from relaylang.cli import main
    assert main(RUN_ARGS) == 0
    printed = capsys.readouterr().out
    probs = np.array([float(v) for v in re.findall(r"\d\.\d+e[-+]\d+", printed)])
    assert probs.shape == (10,), printed
    assert int(probs.argmax()) == SAMPLE_CLASS and probs.max() > 0.99
    expected = trainer.forward(weights, np.load(SAMPLE))[0]
    np.testing.assert_allclose(probs, expected, rtol=1e-5, atol=1e-12)


def test_relay_run_output_file_equals_rl_evaluate(tmp_path, capsys, mod, weights):
    from relaylang.cli import main
    out = tmp_path / "probs.npy"
    assert main([*RUN_ARGS, "--output", str(out)]) == 0
    capsys.readouterr()
    expected = rl.evaluate(mod, np.load(SAMPLE), *(weights[k] for k in WEIGHTS))
    assert np.array_equal(np.load(out), expected)
