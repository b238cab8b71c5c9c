"""Passes over IR modules, one module per pass (TVM's relay.transform).

`pass_infra.py` holds the machinery (Pass, Sequential, PassContext, instruments,
the registry); every other module of this package defines passes and registers
them by name, so `get_pass("ToANormalForm")` finds them without a list here.
"""
from .bind_params import BindParams, BindParamsError
from .infer_type import InferType
from .instruments import PassTimingInstrument, PrintIR, VerifyEach
from .pass_infra import (FunctionPass, ModulePass, Pass, PassContext, PassInfo, PassInstrument,
                         PassNotFound, Sequential, function_pass, get_pass, list_passes,
                         module_pass, register_pass)

__all__ = ["BindParams", "BindParamsError", "FunctionPass", "InferType", "ModulePass", "Pass",
           "PassContext", "PassInfo", "PassInstrument", "PassNotFound", "PassTimingInstrument",
           "PrintIR", "Sequential", "VerifyEach", "function_pass", "get_pass", "list_passes",
           "module_pass", "register_pass"]


def __getattr__(name: str) -> object:
    """Registered passes by name: `rl.transform.FoldConstant()`."""
    from .pass_infra import _PASSES, _load_passes, canonical_name
    _load_passes()
    cls = _PASSES.get(canonical_name(name))
    if cls is None or cls.name != name:
        raise AttributeError(f"module 'relaylang.transform' has no attribute {name!r}")
    return cls
