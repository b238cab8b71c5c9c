"""Schedule search for the LLVM backend (`rl.tune`, `relay tune`): the distinct kernels of
a model (`tasks.py`), each measured natively under candidate knob values (`measure.py`),
searched with a cost model (`search.py`), the best kept in a JSON database
(`database.py`) that `rl.build(..., tuning_db=...)` applies (`tune.py` drives it)."""
from __future__ import annotations

from .database import Database, TuningDatabaseWarning, load
from .tasks import NotTunable, Task, extract_tasks
from .tune import KernelResult, TuningReport, tune

__all__ = ["Database", "KernelResult", "NotTunable", "Task", "TuningDatabaseWarning",
           "TuningReport", "extract_tasks", "load", "tune"]
