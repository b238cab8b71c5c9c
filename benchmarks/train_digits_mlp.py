"""Train the weights of examples/digits_mlp.relay: a 64 -> 32 -> 10 MLP on scikit-learn's digits.

The data is `sklearn.datasets.load_digits()`: 1,797 real 8x8 handwritten digits
(the UCI "optdigits" test set) that ship inside the scikit-learn wheel, so nothing
is downloaded. Pixels are 0..16; the network sees them divided by 16. The split
is fixed: the first 1,300 images train, the remaining 497 are held out.

The network is the one the .relay file spells out (TVM's `nn.dense` layout,
weights `(units, in_features)`, i.e. `y = x @ W.T + b`):

    probs = softmax(dense(relu(dense(x, w1) + b1), w2) + b2)

Training is NumPy only and deterministic from `--seed`: He-uniform
initialisation, minibatches in a seeded shuffled order, softmax cross-entropy,
Adam written out by hand. Arithmetic is float64; the weights are rounded to
float32 once at the end, so re-running with the same seed writes the same bytes.

    python benchmarks/train_digits_mlp.py            # writes examples/digits_mlp.npz
    python benchmarks/train_digits_mlp.py --out /tmp/w.npz --epochs 5
"""
from __future__ import annotations

import argparse
import io
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NPZ_PATH = ROOT / "examples" / "digits_mlp.npz"
SAMPLE_PATH = ROOT / "examples" / "digits_sample.npy"

N_TRAIN = 1300            # the first N_TRAIN images train; the other 497 are held out
HIDDEN = 32
SEED = 0
EPOCHS = 40
BATCH = 32
LEARNING_RATE = 0.01
SAMPLE_INDEX = 0          # index into the held-out set of examples/digits_sample.npy

Params = dict[str, np.ndarray]


def load_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_test, y_test): pixels scaled to [0, 1] as float32, int64 labels."""
    from sklearn.datasets import load_digits  # ships the data; no download
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]


def init_params(rng: np.random.Generator, hidden: int = HIDDEN) -> Params:
    """He-uniform weights (suits ReLU), zero biases; float64 while training."""
    def he(fan_out: int, fan_in: int) -> np.ndarray:
        bound = np.sqrt(6.0 / fan_in)
        return rng.uniform(-bound, bound, size=(fan_out, fan_in))
    return {"w1": he(hidden, 64), "b1": np.zeros(hidden),
            "w2": he(10, hidden), "b2": np.zeros(10)}


def softmax(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, shifted by the row maximum so exp never overflows."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def forward(p: Params, x: np.ndarray) -> np.ndarray:
    """Class probabilities, shape (N, 10): the computation of examples/digits_mlp.relay."""
    h = np.maximum(x @ p["w1"].T + p["b1"], 0)
    return softmax(h @ p["w2"].T + p["b2"])


def gradients(p: Params, x: np.ndarray, y: np.ndarray) -> tuple[float, Params]:
    """Mean cross-entropy of the batch and its gradient with respect to each parameter."""
    h = np.maximum(x @ p["w1"].T + p["b1"], 0)
    probs = softmax(h @ p["w2"].T + p["b2"])
    n = len(y)
    loss = float(-np.log(probs[np.arange(n), y] + 1e-12).mean())
    dz2 = probs.copy()
    dz2[np.arange(n), y] -= 1.0          # d(loss)/d(logits) of softmax cross-entropy
    dz2 /= n
    dh = (dz2 @ p["w2"]) * (h > 0)       # back through dense 2 and the ReLU
    return loss, {"w2": dz2.T @ h, "b2": dz2.sum(axis=0),
                  "w1": dh.T @ x, "b1": dh.sum(axis=0)}


class Adam:
    """Adam (Kingma and Ba, 2015) with the paper's defaults for beta1, beta2, eps."""

    def __init__(self, params: Params, lr: float, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, params: Params, grads: Params) -> None:
        self.t += 1
        c1, c2 = 1 - self.beta1 ** self.t, 1 - self.beta2 ** self.t
        for k, g in grads.items():
            self.m[k] = self.beta1 * self.m[k] + (1 - self.beta1) * g
            self.v[k] = self.beta2 * self.v[k] + (1 - self.beta2) * g * g
            params[k] -= self.lr * (self.m[k] / c1) / (np.sqrt(self.v[k] / c2) + self.eps)


def train(x: np.ndarray, y: np.ndarray, *, seed: int = SEED, epochs: int = EPOCHS,
          batch: int = BATCH, lr: float = LEARNING_RATE, hidden: int = HIDDEN,
          log=None) -> Params:
    """Train on (x, y); the result is float32 and depends only on the arguments."""
    rng = np.random.default_rng(seed)
    params = init_params(rng, hidden)
    opt = Adam(params, lr)
    x64 = x.astype(np.float64)
    for epoch in range(epochs):
        order = rng.permutation(len(y))
        losses = []
        for start in range(0, len(y), batch):
            idx = order[start:start + batch]
            loss, grads = gradients(params, x64[idx], y[idx])
            opt.step(params, grads)
            losses.append(loss)
        if log is not None:
            log(f"epoch {epoch + 1:3d}  loss {np.mean(losses):.4f}")
    return {k: v.astype(np.float32) for k, v in params.items()}


def accuracy(params: Params, x: np.ndarray, y: np.ndarray) -> float:
    return float((forward(params, x).argmax(axis=1) == y).mean())


def save(params: Params, path: Path) -> None:
    """An uncompressed .npz whose keys are @main's parameter names (w1, b1, w2, b2).

    Written entry by entry with a fixed timestamp (np.savez stamps the current
    time), so the same weights always give the same bytes and retraining leaves
    the committed file unchanged.
    """
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for name in ("w1", "b1", "w2", "b2"):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(params[name]),
                                      allow_pickle=False)
            zf.writestr(zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0)),
                        buf.getvalue())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--out", type=Path, default=NPZ_PATH)
    ap.add_argument("--sample", type=Path, default=SAMPLE_PATH,
                    help="where to write one held-out image, shape (1, 64) float32")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    x_train, y_train, x_test, y_test = load_split()
    start = time.perf_counter()
    params = train(x_train, y_train, seed=args.seed, epochs=args.epochs,
                   log=None if args.quiet else print)
    elapsed = time.perf_counter() - start
    save(params, args.out)
    sample = x_test[SAMPLE_INDEX:SAMPLE_INDEX + 1]
    np.save(args.sample, sample)
    print(f"trained in {elapsed:.2f} s; wrote {args.out}")
    print(f"train accuracy    {accuracy(params, x_train, y_train):.4f} ({len(y_train)} images)")
    print(f"held-out accuracy {accuracy(params, x_test, y_test):.4f} ({len(y_test)} images)")
    predicted = int(forward(params, sample).argmax())
    print(f"sample {args.sample}: label {y_test[SAMPLE_INDEX]}, predicted {predicted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
