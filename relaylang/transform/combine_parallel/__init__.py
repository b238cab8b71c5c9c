"""CombineParallelConv2D and CombineParallelDense (`conv2d.py`, `dense.py`) on the shared
branch-grouping machinery of TVM's ParallelOpCombiner (`common.py`)."""
