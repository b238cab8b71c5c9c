"""Passes over IR modules, one module per pass (TVM's relay.transform).

The pass infrastructure (registry by name, Sequential, PassContext,
instruments) is not built yet; `InferType` and `BindParams` are usable on their own.
"""
from .bind_params import BindParams, BindParamsError
from .infer_type import InferType

__all__ = ["BindParams", "BindParamsError", "InferType"]
