"""Passes over IR modules, one module per pass (TVM's relay.transform).

`pass_infra.py` holds the machinery (Pass, Sequential, PassContext, instruments,
the registry); every other module of this package defines passes and registers
them by name, so `get_pass("ToANormalForm")` finds them without a list here.
`optimize(mod, opt_level=3)` runs relay.build's pipeline (`tvm_pipeline.py`: the module is
not named `optimize`, which would replace the function on this package once imported).
"""
from .bind_params import BindParams, BindParamsError
from .byoc import AnnotateTarget, MergeCompilerRegions, MergeComposite, PartitionGraph
from .gradient import gradient
from .infer_type import InferType
from .instruments import PassTimingInstrument, PrintIR, VerifyEach
from .pass_infra import (
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PassInstrument,
    PassNotFound,
    Sequential,
    function_pass,
    get_pass,
    list_passes,
    module_pass,
    register_pass,
)
from .tvm_pipeline import default_pipeline, missing_passes, optimize

__all__ = ["AnnotateTarget", "BindParams", "BindParamsError", "FunctionPass", "InferType",
           "MergeCompilerRegions", "MergeComposite", "ModulePass", "PartitionGraph", "Pass",
           "PassContext", "PassInfo", "PassInstrument", "PassNotFound", "PassTimingInstrument",
           "PrintIR", "Sequential", "VerifyEach", "default_pipeline", "function_pass", "get_pass",
           "gradient", "list_passes", "missing_passes", "module_pass", "optimize", "register_pass"]


# The layout passes' registries, by the module that keeps each (TVM's op attributes
# FTVMAlterOpLayout and FInferCorrectLayout).
_LAYOUT_API = {"register_alter_op_layout": "alter_op_layout",
               "temp_alter_op_layout": "alter_op_layout",
               "get_alter_op_layout": "alter_op_layout",
               "register_infer_correct_layout": "rules",
               "temp_infer_correct_layout": "rules"}


def __getattr__(name: str) -> object:
    """Registered passes by name: `rl.transform.FoldConstant()`; the layout registries
    (`rl.transform.register_alter_op_layout`, `register_infer_correct_layout`)."""
    if name in _LAYOUT_API:
        import importlib
        module = importlib.import_module(f".layout.{_LAYOUT_API[name]}", __name__)
        return getattr(module, name)
    from .pass_infra import _PASSES, _load_passes, canonical_name
    _load_passes()
    cls = _PASSES.get(canonical_name(name))
    if cls is None or cls.name != name:
        raise AttributeError(f"module 'relaylang.transform' has no attribute {name!r}")
    return cls
