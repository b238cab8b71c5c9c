"""Reference kernels of the memory family: `memory.kill` returns `()`; the allocations
exist only for the VM that TVM lowers to and report so when evaluated."""
from __future__ import annotations

from typing import Any

from ..registry import NoImplementation, implement


def only_after_lowering(name: str, what: str, module: str) -> Any:
    """A kernel for an op that has no meaning in the reference interpreter: evaluating it
    raises NoImplementation, which the interpreter reports at the call. `module`: the
    family's kernel module, where the kernel belongs."""
    def kernel(inputs: list, attrs: Any) -> Any:
        raise NoImplementation(f"{name} {what}: it is only meaningful after lowering (TVM's "
                               "VM executes it), not in the reference interpreter")
    kernel.__name__ = kernel.__qualname__ = f"only_after_lowering[{name}]"
    kernel.__module__ = module
    return kernel


implement("memory.alloc_storage")(
    only_after_lowering("memory.alloc_storage", "allocates device storage", __name__))
implement("memory.alloc_tensor")(
    only_after_lowering("memory.alloc_tensor", "places a tensor in allocated storage", __name__))


@implement("memory.kill")
def kill(inputs: list, attrs: Any) -> tuple:
    """Nothing to release: values are garbage-collected. The result is `()`."""
    return ()
