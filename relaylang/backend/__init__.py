"""Running programs: the reference interpreter (`interpreter.py`) and its values."""
