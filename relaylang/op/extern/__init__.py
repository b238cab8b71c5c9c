"""External functions: Python callables the compiler did not generate, called from Relay.

Two ways in, both in destination-passing style (the callee writes a preallocated output,
as in the MLC course's `call_dps_packed` and TVM's packed functions):

    @rl.register_func("env.linear")                  # functions.py: a name -> a callable
    def linear(x, w, b, out): ...
    # Relay: call_dps_packed(%x, %w, %b, func="env.linear", out_shape=[1, 128], out_dtype="float32")

    rl.register_extern_op("env.relu", relation=lambda x: x, func=my_relu)
    # Relay: env.relu(%x)  -- an op of its own: typed by `relation`, printed and parsed

`call_dps_packed` takes any number of tensors; its result type is the attributes'
`out_shape` and `out_dtype`. An extern op's result type is what its `relation` returns for
the argument types. Both are stateful (the callee may have effects: FoldConstant and
DeadCodeElimination leave their calls alone) and opaque to fusion. The interpreter calls
the function with the argument arrays (read-only views, no copies) and a fresh output
array; the LLVM backend calls it through a ctypes callback with views of its own
buffers (no copies; the output written in place: `backend/native/extern.py`): from the
graph executor's native step runner, per call in mixed mode, and from a whole native
program through a module global holding the callback's address.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ...ir.attrs import Attrs
from ...ir.types import TensorType, Type
from ..registry import OpDef, OpPattern, declare_op, get_op_def, register_op, unregister_op
from ..schema import attrs_schema
from .functions import get_global_func, list_global_func_names, register_func, remove_global_func
from .relations import call_dps_packed_rel, extern_relation


@attrs_schema
class CallDPSPackedAttrs(Attrs):
    func: str
    out_shape: tuple[int, ...]
    out_dtype: str = "float32"

    type_key: ClassVar[str] = "relay.attrs.CallDPSPackedAttrs"


declare_op("call_dps_packed", variadic=True, attrs=CallDPSPackedAttrs,
           rel=call_dps_packed_rel, pattern=OpPattern.OPAQUE, stateful=True,
           doc="Call the global function `func` (rl.register_func) on the tensors, in "
               "destination-passing style: it writes an output of `out_shape` and "
               "`out_dtype`.")


# The Python function of each op `register_extern_op` made (the LLVM backend calls it in
# place through a ctypes callback: backend/native/extern.py).
_EXTERN_FUNCS: dict[str, Callable[..., Any]] = {}


def dps_callee_name(call: Any) -> str | None:
    """The name of the external function a call of `call_dps_packed` or of an extern op
    calls (the op's name for the latter), or None for any other call."""
    name = getattr(call.op, "name", None)
    if name == "call_dps_packed":
        return str(call.attrs.func)
    if name in _EXTERN_FUNCS:
        return name
    return None


def dps_callee(call: Any) -> Callable[..., Any]:
    """The Python function that a call `dps_callee_name` names runs, in
    destination-passing style (`func(*inputs, out)`); KeyError when none is registered."""
    if call.op.name == "call_dps_packed":
        fn = get_global_func(str(call.attrs.func))
        assert fn is not None
        return fn
    return _EXTERN_FUNCS[call.op.name]


def register_extern_op(name: str, relation: Callable[..., Type], func: Callable[..., Any],
                       num_inputs: int = -1, doc: str = "") -> OpDef:
    """Register the op `name` computed by `func(*inputs, out)`: `relation(*input_types)`
    gives its result type (a TensorType; raise ValueError to reject the arguments). The
    op parses, prints, type-checks and runs like any other (see the module docstring)."""
    if get_op_def(name) is not None:
        raise ValueError(f"op {name} is already registered")
    if not callable(func) or not callable(relation):
        raise TypeError(f"register_extern_op({name!r}): relation and func must be callable")

    def kernel(inputs: list, attrs: Any, _name: str = name) -> Any:
        from ...ir.types import TensorType as TT
        from .numpy_kernels import call_dps, value_type
        out = relation(*[value_type(v) for v in inputs])
        if not isinstance(out, TT):
            raise TypeError(f"the relation of {_name} returned {out!r}, not a TensorType")
        return call_dps(_name, func, inputs, tuple(int(d) for d in out.shape), str(out.dtype))
    kernel.__name__ = kernel.__qualname__ = f"extern_kernel[{name}]"
    _EXTERN_FUNCS[name] = func
    return register_op(OpDef(
        name, num_inputs, type_rel=extern_relation(name, relation), kernel=kernel,
        pattern=OpPattern.OPAQUE, stateful=True, doc=doc or f"external op {name}",
        input_names=tuple(f"arg{i}" for i in range(max(num_inputs, 0))),
        package=__name__))


def remove_extern_op(name: str) -> None:
    """Forget an op `register_extern_op` made."""
    opdef = get_op_def(name)
    if opdef is not None and opdef.package == __name__ and name != "call_dps_packed":
        unregister_op(name)
        _EXTERN_FUNCS.pop(name, None)


__all__ = ["CallDPSPackedAttrs", "TensorType", "dps_callee", "dps_callee_name",
           "get_global_func", "list_global_func_names",
           "register_extern_op", "register_func", "remove_extern_op", "remove_global_func"]
