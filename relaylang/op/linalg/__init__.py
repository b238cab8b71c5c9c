"""The linalg family: the determinant.

`det(data)`: the determinant of each square matrix in the last two axes of a float
tensor of shape (..., n, n); the result has shape (...) and the input's dtype (ONNX's
Det; TVM's Relay has no such op, the name follows its unprefixed tensor ops). The
determinant of a 0 x 0 matrix is 1. The relation is in `relations.py`; the NumPy kernel
(`numpy_kernels.py`) is numpy.linalg.det (LU factorisation with partial pivoting) in
float64, rounded to the input dtype; the LLVM lowering (`llvm_lowering.py`) is the same
elimination written as one stage per pivot step.
"""
from __future__ import annotations

from ..registry import OpPattern, declare_op
from .relations import det_rel

declare_op("det", inputs=("data",), rel=det_rel, pattern=OpPattern.OPAQUE,
           doc="The determinant of each square matrix in the last two axes of a float "
               "tensor (..., n, n): a tensor (...) of its dtype.")
