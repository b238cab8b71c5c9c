"""Running programs: the reference interpreter (`interpreter/`), the LLVM backend's core
(`llvm/`: lowering, codegen, JIT, kernel cache), the executor side of native code
(`build.py`: `rl.build`; `native/`: execution plans, storage, threads, mixed mode, the
library file; `graph_executor.py`: TVM's GraphModule; `runtime.py`: `load_module`), and
what every backend shares (`params.py`: loading and binding parameter files)."""
