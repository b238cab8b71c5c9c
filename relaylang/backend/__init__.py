"""Running programs: the reference interpreter (`interpreter/`), and what every
backend shares (`params.py`: loading and binding parameter files)."""
