"""The data sets `relay train` trains on: scikit-learn's digits (the default) or arrays of
an .npz file.

`digits_split()` is the split of benchmarks/train_digits_mlp.py: the 1,797 8x8 images of
`sklearn.datasets.load_digits()` (shipped inside the scikit-learn wheel: nothing is
downloaded), pixels divided by 16, the first 1,300 to train and the other 497 held out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

N_TRAIN = 1300        # the first N_TRAIN digits train; the other 497 are held out
NPZ_KEYS = ("x_train", "y_train", "x_test", "y_test")


@dataclass(frozen=True)
class DataSet:
    """Inputs (N, features...) and integer class labels (N,) to train on and to test."""
    x_train: Any
    y_train: Any
    x_test: Any
    y_test: Any
    name: str = "data"


class DataError(Exception):
    """A data set that cannot be had: an unusable .npz file, scikit-learn missing (the
    message says why)."""


def digits_split() -> DataSet:
    """scikit-learn's digits: float32 pixels in [0, 1], int64 labels; 1,300 train, 497 test."""
    import numpy as np
    try:
        from sklearn.datasets import load_digits  # ships the data; no download
    except ImportError:
        raise DataError("the digits data set comes with scikit-learn, which is not "
                        "installed (pip install scikit-learn), or give arrays with "
                        "--data") from None
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return DataSet(x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:], "digits")


def load_npz(path: str) -> DataSet:
    """The arrays x_train, y_train, x_test, y_test of the .npz file `path`."""
    import numpy as np
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = [k for k in NPZ_KEYS if k not in f.files]
            if missing:
                raise DataError(f"the data file has no array {', '.join(missing)} (it needs "
                                f"{', '.join(NPZ_KEYS)})")
            arrays = [np.asarray(f[k]) for k in NPZ_KEYS]
    except OSError as e:
        raise DataError(f"cannot read the data file: {e.strerror or e}") from None
    except ValueError as e:
        raise DataError(f"not an .npz file of arrays: {e}") from None
    x_train, y_train, x_test, y_test = arrays
    for xs, ys, what in ((x_train, y_train, "train"), (x_test, y_test, "test")):
        if ys.ndim != 1 or not np.issubdtype(ys.dtype, np.integer):
            raise DataError(f"y_{what} must hold integer class labels, one per row "
                            f"(shape {ys.shape}, dtype {ys.dtype})")
        if len(xs) != len(ys):
            raise DataError(f"x_{what} has {len(xs)} rows but y_{what} {len(ys)} labels")
    return DataSet(x_train, y_train.astype(np.int64), x_test, y_test.astype(np.int64), path)
