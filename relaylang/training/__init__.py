"""Training models written in Relay: `relay train`, `relaylang.training.train`.

    import relaylang as rl
    from relaylang.training import digits_split, train

    mod = rl.parse(open("examples/train_mlp.relay").read())
    trainer, accuracy = train(mod, digits_split(), epochs=30)

`trainer.py` holds the conventions a training module follows, the training step
(gradient plus optimiser update, one native function) and the loop; `data.py` the
data sets (scikit-learn's digits, or arrays of an .npz file).
"""
from __future__ import annotations

from .data import DataError, DataSet, digits_split, load_npz
from .trainer import (
    EpochReport,
    Trainer,
    TrainingProblem,
    check_data,
    step_function,
    step_module,
    train,
    training_problem,
)

__all__ = ["DataError", "DataSet", "EpochReport", "Trainer", "TrainingProblem", "check_data",
           "digits_split", "load_npz", "step_function", "step_module",
           "train", "training_problem"]
