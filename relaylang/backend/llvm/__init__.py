"""The LLVM backend: loop IR (`loop_ir`), the lowering context (`te`), scheduling,
lowering of primitive functions (`lower`), codegen with llvmlite (`codegen`), the JIT
and kernels (`jit`) and the on-disk kernel cache (`cache`). See /work/llvm_spec.md.

Importing this package imports nothing heavy; llvmlite loads with `codegen`/`jit`.
"""
