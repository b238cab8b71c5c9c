"""Targets' support tables, one module per target, imported by `registry._load_targets`.

A module here registers, with `register_target_op` and `register_pattern_table`, which
operator calls and which composite patterns its target takes: the IR half of a target.
Its codegen belongs to the backend.
"""
