"""PartialEvaluate (`partial_evaluate.py`): an online partial evaluator on an explicit-stack
machine (`machine.py`) over static values (`values.py`) and match patterns (`patterns.py`)."""
