"""What runs a built library (`rl.build`): the executor side of the LLVM backend.

One job per module: `plan.py` (the execution plan of a dataflow `@main`: values, steps,
storage slots, JSON), `memory.py` (64-byte aligned buffers and liveness-based storage
planning), `threads.py` (the persistent pool that splits a kernel's parallel loop),
`kernels.py` (native kernels from the core, `backend/llvm/`, and the NumPy fallback for
primitive functions without a lowering), `extern.py` (steps run by Python code through
a ctypes callback with the kernels' ABI: external functions writing the executor's
buffers in place, BYOC regions by their codegens), `graph_runtime.py` (runs a plan), `mixed.py`
(the interpreter's machine calling native kernels for primitive functions: programs with
control flow), `library.py` (`Library`, what `rl.build` returns) and `library_file.py`
(the one-file format of `export_library` / `rl.runtime.load_module`).
"""
