"""The op registry (`registry.py`) and the op families that fill it."""
from .registry import OpDef, OpPattern, all_ops, get, get_op_def, register_op

__all__ = ["OpDef", "OpPattern", "all_ops", "get", "get_op_def", "register_op"]
