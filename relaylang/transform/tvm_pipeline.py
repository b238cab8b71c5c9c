"""The standard optimisation pipeline: `optimize(mod, opt_level=3)` and `relay opt -O3`.

Mirrors what apache/tvm's `relay.build` runs before code generation:
src/relay/backend/utils.cc `GetPassPrefix` (the passes below, in its order),
then `FuseOps` (src/relay/backend/graph_executor_codegen.cc / build_module.cc).
Each pass keeps its own `opt_level`, and the `PassContext` decides which run,
so `-O1` is RemoveUnusedFunctions, ToBasicBlockNormalForm and SimplifyInference
(and SimplifyExpr, level 0 here as in TVM), `-O2` adds FoldConstant, `-O3`
adds EliminateCommonSubexpr and CanonicalizeOps.

    def @main(%x) {                          def @main(%x) {
      %0 = nn.conv2d(%x, meta[..][0]);         %0 = nn.conv2d(%x, meta[..][5]);
      %1 = nn.batch_norm(%0, meta[..][1],  ->   %1 = add(%0, meta[..][6]);
             meta[..][2], ...);                 nn.relu(%1)
      nn.relu(%1.0)                           }  (the BN scale folded into the weight by
    }   (weights bound by BindParams)            FoldScaleAxis; then FuseOps groups them)

Passes are looked up by name in the registry when the pipeline is built, never
imported: a TVM pass that does not exist yet (`missing_passes()` names
them) is left out, and one that appears later (FuseOps, CombineParallelDense)
joins the pipeline at its place without editing this file. InferType runs
where the next pass needs types (FoldConstant reads `checked_type`) and last,
so the result is typed like TVM's.
"""
from __future__ import annotations

from ..ir.module import IRModule
from .pass_infra import Pass, PassContext, PassNotFound, Sequential, get_pass

# TVM's order. "InferType" entries are ours or TVM's (before AlterOpLayout);
# the rest are TVM's pass names, used where registered.
TVM_PIPELINE: tuple[str, ...] = (
    "InferType",
    "RemoveUnusedFunctions",
    "ToBasicBlockNormalForm",
    "QnnCanonicalize",             # relay.qnn.transform.Legalize: qnn ops as ordinary ops
    "SimplifyInference",
    "EliminateCommonSubexpr",
    "CombineParallelConv2D",
    "CombineParallelDense",
    "CombineParallelBatchMatmul",
    "InferType",                   # FoldConstant needs types: CSE and BBNF drop them
    "FoldConstant",
    "FoldScaleAxis",
    "SimplifyExpr",
    "CanonicalizeCast",
    "CanonicalizeOps",
    "FlattenAtrousConv",
    "InferType",
    "AlterOpLayout",
    "SimplifyExprPostAlterOp",
    "FastMath",
    "FoldConstant",
    "FuseOps",
    "InferType",                   # the result is typed, as relay.build's is
)


def _lookup(name: str) -> Pass | None:
    try:
        return get_pass(name)
    except PassNotFound:
        return None


def missing_passes() -> list[str]:
    """The TVM passes of the pipeline that are not registered (yet), in pipeline order."""
    seen: list[str] = []
    for name in TVM_PIPELINE:
        if name not in seen and _lookup(name) is None:
            seen.append(name)
    return seen


def default_pipeline(opt_level: int = 3) -> Sequential:
    """relay.build's passes that exist now, in TVM's order; the context's opt level gates them.

    `opt_level` is the level the pipeline is meant for: it names the Sequential
    (`O3`); which passes actually run is decided by the `PassContext` in force."""
    passes = [p for p in map(_lookup, TVM_PIPELINE) if p is not None]
    return Sequential(passes, name=f"O{opt_level}")


def optimize(mod: IRModule, opt_level: int = 3) -> IRModule:
    """`mod` through `default_pipeline` under the current context at `opt_level`.

    The current context's instruments, required and disabled passes still apply;
    only its opt level is replaced, as `PassContext(opt_level=3)` would in TVM. The
    instruments are not entered again (`PassContext.derived`), as TVM's relay.build
    runs in the caller's context."""
    with PassContext.current().derived(opt_level=opt_level):
        return default_pipeline(opt_level)(mod)
