"""Bring your own codegen, the IR half (TVM's BYOC flow), one module per pass:

    MergeComposite(patterns)      merge_composite.py        matches -> `Composite=` functions
    AnnotateTarget(["blas"])      annotate_target.py        compiler_begin/compiler_end fences
    MergeCompilerRegions()        merge_compiler_regions.py  largest regions without cycles
    PartitionGraph()              partition_graph.py        regions -> `Compiler=` globals

`registry.py` is where a target says what it takes (`register_target_op`,
`register_pattern_table`); `targets/` holds such tables (`example`, for trying the
passes); `regions.py` is TVM's AnnotatedRegionSet; `annotations.py` builds and reads the
annotation calls; `notes.py` reports notes through the pass context. Codegens and
running partitioned functions belong to the backend.
"""
from .annotate_target import AnnotateTarget
from .merge_compiler_regions import MergeCompilerRegions
from .merge_composite import MergeComposite
from .notes import CollectDiagnostics
from .partition_graph import PartitionGraph
from .registry import (
    get_pattern_table,
    register_pattern_table,
    register_target_op,
    registered_targets,
    supported_ops,
    unregister_target,
)

__all__ = ["AnnotateTarget", "CollectDiagnostics", "MergeCompilerRegions", "MergeComposite",
           "PartitionGraph", "get_pattern_table", "register_pattern_table", "register_target_op",
           "registered_targets", "supported_ops", "unregister_target"]
