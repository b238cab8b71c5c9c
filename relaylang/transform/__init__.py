"""Passes over IR modules, one module per pass (TVM's relay.transform).

The pass infrastructure (registry by name, Sequential, PassContext,
instruments) is not built yet; `InferType` is usable on its own.
"""
from .infer_type import InferType

__all__ = ["InferType"]
