"""Training examples/train_mlp.relay (issue 20): its loss differentiated by the gradient
pass, the Adam (or SGD) update in Relay, one native function per step, trained on
scikit-learn's digits to at least the held-out accuracy of the NumPy-trained
examples/digits_mlp.npz; and `relay train`, which runs it and fails cleanly on bad input."""
from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from bench_helpers import load_benchmark

import relaylang as rl
from relaylang import cli
from relaylang.ir.diagnostics import DiagnosticError
from relaylang.training import (
    Trainer,
    digits_split,
    step_function,
    training_problem,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "train_mlp.relay"
DIGITS_RELAY = ROOT / "examples" / "digits_mlp.relay"
DIGITS_NPZ = ROOT / "examples" / "digits_mlp.npz"

EPOCHS = 30                 # relay train's default; about 0.1 s of training
# The accuracy the default run must reach: the NumPy-trained model's (0.9195, computed
# below with the LLVM build); seed 0 reaches 0.9276 (seeds 0-4: 0.9276 to 0.9356).
THRESHOLD = 0.9195

numpy_trainer = load_benchmark("train_digits_mlp")


@pytest.fixture(scope="module")
def data():
    return digits_split()


@pytest.fixture(scope="module")
def mod() -> rl.IRModule:
    return rl.parse(EXAMPLE.read_text(), source_name=EXAMPLE.name)


@pytest.fixture(scope="module")
def problem(mod):
    return training_problem(mod)


@pytest.fixture(scope="module")
def trained(problem, data):
    trainer = Trainer(problem, seed=0)
    trainer.fit(data.x_train, data.y_train, EPOCHS)
    return trainer


def numpy_model_accuracy(data) -> float:
    """examples/digits_mlp.npz (trained by benchmarks/train_digits_mlp.py) on the 497
    held-out images, each run through the LLVM build of examples/digits_mlp.relay."""
    lib = rl.build(rl.parse(DIGITS_RELAY.read_text()), target="llvm")
    with np.load(DIGITS_NPZ) as f:
        w = [f[k] for k in ("w1", "b1", "w2", "b2")]
    predicted = [int(np.argmax(lib(data.x_test[i:i + 1], *w))) for i in range(len(data.x_test))]
    return float(np.mean(np.array(predicted) == data.y_test))


# ------------------------------------------------------------------ the example


def test_conventions_are_read_from_the_file(problem):
    assert (problem.batch, problem.classes, problem.one_hot) == (32, 10, True)
    assert [(n, s) for n, s, _ in problem.weights] == [
        ("w1", (64, 64)), ("b1", (64,)), ("w2", (10, 64)), ("b2", (10,))]


def test_loss_at_zero_weights_is_log_10(mod, data):
    """The header's expected result: uniform scores give the loss log(10)."""
    y = np.eye(10, dtype="float32")[data.y_train[:32]]
    zeros = [np.zeros(s, "float32") for s in ((64, 64), (64,), (10, 64), (10,))]
    loss = rl.evaluate(mod, data.x_train[:32], y, *zeros)
    assert math.isclose(float(loss), math.log(10), rel_tol=1e-6)


def test_one_step_is_one_native_function(problem, trained):
    trainer = trained
    assert trainer.step_lib.mode == "graph"
    assert trainer.step_lib.fallback_ops == []
    fn = step_function(problem, "adam")
    assert [p.name_hint for p in fn.params][-2:] == ["lr_c1", "rsqrt_c2"]
    # %x and %y are not trained: their gradients are not computed (the kernels are
    # forward dense x2, backward dense x1 and matmul x2 for the weights)
    dense = [k for k in trainer.step_lib.kernel_names if "dense" in k or "matmul" in k]
    assert len(dense) == 5


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_a_step_matches_the_numpy_trainer(problem, data, optimizer):
    """One step from the same weights and minibatch: loss and updated weights agree with
    benchmarks/train_digits_mlp.py's hand-written gradients and Adam (float64)."""
    trainer = Trainer(problem, seed=3, optimizer=optimizer)
    start = {k: v.astype(np.float64) for k, v in trainer.weight_dict.items()}
    x, y = data.x_train[100:132], data.y_train[100:132]
    losses = []
    for _ in range(2):
        losses.append(trainer.step(x, np.eye(10, dtype="float32")[y]))
    params = {k: v.copy() for k, v in start.items()}
    opt = numpy_trainer.Adam(params, lr=0.01)
    for i in range(2):
        loss, grads = numpy_trainer.gradients(params, x.astype(np.float64), y)
        assert math.isclose(losses[i], loss, rel_tol=1e-4, abs_tol=1e-5)
        if optimizer == "adam":
            opt.step(params, grads)
        else:
            for k, g in grads.items():
                params[k] -= 0.1 * g
    for k, v in trainer.weight_dict.items():
        np.testing.assert_allclose(v, params[k], rtol=1e-4, atol=1e-5)


def test_training_reaches_the_numpy_models_accuracy(trained, data):
    reference = numpy_model_accuracy(data)
    assert reference == pytest.approx(0.9195, abs=1e-4)
    accuracy = trained.accuracy(data.x_test, data.y_test)
    assert accuracy >= THRESHOLD
    assert accuracy >= reference


def test_the_loss_decreases(trained):
    losses = [r.loss for r in trained.history]
    assert len(losses) == EPOCHS
    assert losses[0] > 0.5 and losses[-1] < 0.02
    assert losses[4] < losses[0] / 5
    # decreasing, give or take the noise of minibatches: each block of five epochs
    # has a lower mean than the block before it
    means = [sum(losses[i:i + 5]) / 5 for i in range(0, EPOCHS, 5)]
    assert all(b < a for a, b in itertools.pairwise(means)), means


def test_predict_pads_the_last_minibatch(trained, data):
    scores = trained.predict(data.x_test[:40])
    assert scores.shape == (40, 10)
    np.testing.assert_allclose(scores[:32], trained.predict(data.x_test[:32]), rtol=1e-5,
                               atol=1e-6)


def test_class_index_labels_and_nll_loss_train_the_same(data):
    """%y as class indices, the loss as nn.nll_loss: the same losses as one-hot rows."""
    text = EXAMPLE.read_text().replace(
        "%y: Tensor[(32, 10), float32]", "%y: Tensor[(32), int64]").replace(
        "  %2 = multiply(%1, %y);\n  %3 = sum(%2, axis=[1]);\n  %4 = mean(%3);\n"
        "  negative(%4)",
        '  nn.nll_loss(%1, %y, ones(shape=[10], dtype="float32"), reduction="mean", '
        'ignore_index=-100)')
    problem = training_problem(rl.parse(text))
    assert not problem.one_hot
    a = Trainer(problem, seed=1)
    a.fit(data.x_train, data.y_train, 2)
    b = Trainer(training_problem(rl.parse(EXAMPLE.read_text())), seed=1)
    b.fit(data.x_train, data.y_train, 2)
    assert [r.loss for r in a.history] == pytest.approx([r.loss for r in b.history],
                                                        rel=1e-4)


CONTROL = """#[version = "0.0.5"]
def @main(%x: Tensor[(8, 4), float32], %y: Tensor[(8, 3), float32], %w: Tensor[(3, 4), float32], %b: Tensor[(3), float32]) -> float32 {
  %0 = @predict(%x, %w, %b);
  %1 = mean(sum(multiply(nn.log_softmax(%0), %y), axis=[1]));
  LOSS
}

def @predict(%xs: Tensor[(8, 4), float32], %ws: Tensor[(3, 4), float32], %bs: Tensor[(3), float32]) -> Tensor[(8, 3), float32] {
  nn.bias_add(nn.dense(%xs, %ws), %bs)
}

def @twice(%n: int32, %v: float32) -> float32 {
  if (equal(%n, 0)) { %v } else { @twice(subtract(%n, 1), multiply(%v, 1f)) }
}
"""


def test_a_loss_with_control_flow_trains_through_the_higher_order_gradient():
    """`if` or recursion in the loss: first order refuses them, so the trainer
    differentiates in higher-order mode (mixed mode); the losses are those of the same
    loss without them."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4)).astype("float32")
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0)
    runs, modes = [], []
    for loss in ("negative(%1)", "if (greater(%1, 0f)) { %1 } else { negative(%1) }",
                 "@twice(2, negative(%1))"):
        trainer = Trainer(training_problem(rl.parse(CONTROL.replace("LOSS", loss))),
                          seed=0, lr=0.05)
        trainer.fit(x, y, 3)
        runs.append([r.loss for r in trainer.history])
        modes.append(trainer.step_lib.mode)
    assert modes == ["graph", "mixed", "mixed"]
    assert runs[1] == pytest.approx(runs[0], rel=1e-5)
    assert runs[2] == pytest.approx(runs[0], rel=1e-5)
    assert runs[0][-1] < runs[0][0]


# ------------------------------------------------------------------ bad modules


def located(text: str, **names: str) -> str:
    with pytest.raises(DiagnosticError) as e:
        training_problem(rl.parse(text, source_name="m.relay"), **names)
    d = e.value.diagnostics[0]
    assert d.span is not None and d.span.source_name == "m.relay"
    return d.message


def test_missing_parameters_are_located():
    assert "@main has no parameter %y" in located(DIGITS_RELAY.read_text())
    assert "@main has no parameter %images" in located(EXAMPLE.read_text(), inputs="images")


def test_a_loss_that_is_not_a_scalar_is_located():
    text = EXAMPLE.read_text().replace("  %4 = mean(%3);\n  negative(%4)", "  %3").replace(
        "%b2: Tensor[(10), float32]) -> float32 {", "%b2: Tensor[(10), float32]) {")
    assert "must return the loss, a float scalar" in located(text)


def test_predict_must_take_the_weights_in_order():
    text = EXAMPLE.read_text().replace("%0 = @predict(%x, %w1, %b1, %w2, %b2)",
                                       "%0 = @predict(%x, %w1, %b1, %w2, %b2, %b2)").replace(
        "%bias2: Tensor[(10), float32]) ->",
        "%bias2: Tensor[(10), float32], %extra: Tensor[(10), float32]) ->")
    assert "@predict must take the minibatch of inputs and then @main's weights" in \
        located(text)


def test_integer_weights_are_located():
    text = EXAMPLE.read_text().replace(
        "%b2: Tensor[(10), float32]) -> float32 {",
        "%b2: Tensor[(10), float32], %k: Tensor[(3), int32]) -> float32 {")
    assert "%k of @main is trained, so it must be a float tensor" in located(text)


# ------------------------------------------------------------------ relay train


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["train", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_relay_train_prints_loss_per_epoch_and_accuracy(tmp_path, capsys):
    out_path = tmp_path / "w.npz"
    code, out, err = run([str(EXAMPLE), "--epochs", "3", "--quiet", "--out", str(out_path)],
                         capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split()[:2] for line in lines if line.startswith("epoch")] == [
        ["epoch", "1/3"], ["epoch", "2/3"], ["epoch", "3/3"]]
    assert "loss 1.0" in out or "loss 0." in out
    assert "test accuracy 0.8" in out or "test accuracy 0.9" in out
    with np.load(out_path) as f:
        assert sorted(f.files) == ["b1", "b2", "w1", "w2"]


def test_relay_train_on_an_npz_data_set(tmp_path, data, capsys):
    path = tmp_path / "d.npz"
    np.savez(path, x_train=data.x_train[:64], y_train=data.y_train[:64],
             x_test=data.x_test[:10], y_test=data.y_test[:10])
    code, out, err = run([str(EXAMPLE), "--epochs", "1", "--data", str(path),
                          "--optimizer", "sgd"], capsys)
    assert code == 0, err
    assert "64 train, 10 test" in out and "(2 steps" in out


@pytest.mark.parametrize("case", ["missing", "no-labels", "bad-data", "wrong-rows",
                                  "bad-epochs", "bad-init"])
def test_relay_train_fails_cleanly(case, tmp_path, data, capsys):
    args: list[str] = [str(EXAMPLE)]
    expect = ""
    if case == "missing":
        args, expect = [str(tmp_path / "nope.relay")], "nope.relay: error: cannot read file"
    elif case == "no-labels":
        args = [str(DIGITS_RELAY)]
        expect = "digits_mlp.relay:26:1: error: @main has no parameter %y"
    elif case == "bad-data":
        path = tmp_path / "d.npz"
        np.savez(path, x_train=data.x_train)
        args += ["--data", str(path)]
        expect = "d.npz: error: the data file has no array y_train"
    elif case == "wrong-rows":
        path = tmp_path / "d.npz"
        np.savez(path, x_train=data.x_train[:, :10], y_train=data.y_train,
                 x_test=data.x_test[:, :10], y_test=data.y_test)
        args += ["--data", str(path)]
        expect = "train_mlp.relay:34:11: error: the training inputs are rows of shape (10,)"
    elif case == "bad-epochs":
        args += ["--epochs", "0"]
        expect = "--epochs: error: must be at least 1"
    elif case == "bad-init":
        path = tmp_path / "p.npz"
        np.savez(path, w9=np.zeros(3, "float32"))
        args += ["--init", str(path)]
        expect = "no weight of @main is named %w9"
    code, out, err = run(args, capsys)
    assert code == 1
    assert expect in err
    assert "Traceback" not in err + out
