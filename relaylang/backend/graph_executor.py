"""`rl.graph_executor.GraphModule`: TVM's graph executor interface over a built library.

    m = rl.graph_executor.GraphModule(lib)
    m.set_input("x", x)                   # or m.set_input(x=x, w=w)
    m.run()                               # or m.run(x=x)
    y = m.get_output(0); m.get_num_outputs(); m.get_input("x")

Inputs are checked (one-line `InputError`) when they are set; `run` runs the library's
entry on them. Outputs are the leaves of the result in order (a tuple result of n
tensors has n outputs); they are fresh arrays each run.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .native.library import Library


class GraphModule:
    def __init__(self, lib: Library, entry: str | None = None):
        self.lib = lib
        self.entry = entry or lib.entry
        self._params = lib.entry_params(self.entry)
        self._inputs: dict[str, Any] = {}
        self._outputs: list[Any] | None = None

    # ------------------------------------------------------------ inputs
    def _param(self, name: str | int) -> tuple[str, Any]:
        from .interpreter.executor import InputError
        if isinstance(name, int):
            if not 0 <= name < len(self._params):
                raise InputError(f"@{self.entry} has {len(self._params)} input(s), no input "
                                 f"{name}")
            return self._params[name]
        key = name.removeprefix("%")
        for n, t in self._params:
            if n == key:
                return n, t
        names = ", ".join("%" + n for n, _ in self._params) or "none"
        raise InputError(f"@{self.entry} has no input %{key} (inputs: {names})")

    def set_input(self, key: str | int | None = None, value: Any = None, **params: Any) -> None:
        """`set_input("x", arr)`, `set_input(0, arr)` or `set_input(x=arr, w=arr2)`."""
        from .interpreter.executor import convert_argument
        from .native.kernels import aligned_value
        items = ([(key, value)] if key is not None else []) + list(params.items())
        for k, v in items:
            name, ty = self._param(k)
            # copied once here when not C-contiguous and aligned, not at each run
            self._inputs[name] = aligned_value(
                convert_argument(v, ty, f"input %{name} of @{self.entry}"))

    def get_input(self, name: str | int) -> Any:
        from .interpreter.executor import InputError
        key, _ = self._param(name)
        if key not in self._inputs:
            raise InputError(f"input %{key} of @{self.entry} is not set")
        return self._inputs[key]

    def get_num_inputs(self) -> int:
        return len(self._params)

    # ------------------------------------------------------------ running
    def run(self, **inputs: Any) -> None:
        from .interpreter.executor import InputError
        from .native.kernels import flatten
        if inputs:
            self.set_input(**inputs)
        missing = [n for n, _ in self._params if n not in self._inputs]
        if missing:
            raise InputError(f"@{self.entry}: input(s) not set: "
                             + ", ".join("%" + n for n in missing))
        result = self.lib[self.entry](*(self._inputs[n] for n, _ in self._params))
        self._outputs = flatten(result) if isinstance(result, tuple) else [result]

    def get_num_outputs(self) -> int:
        from .native.library import num_leaves
        if self._outputs is not None:
            return len(self._outputs)
        return num_leaves(self.lib.result_type())

    def get_output(self, index: int) -> Any:
        if self._outputs is None:
            raise RuntimeError("get_output: run() has not been called")
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"output {index} out of range: the module has "
                             f"{len(self._outputs)} output(s)")
        return self._outputs[index]

    def __repr__(self) -> str:
        return f"<GraphModule @{self.entry} of {self.lib!r}>"
