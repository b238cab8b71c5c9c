"""Converters of the ONNX-ML operators (domain ai.onnx.ml) that are tensor arithmetic:
Binarizer, ArrayFeatureExtractor and TreeEnsemble (trees unrolled at import into `where`
selections). (String-valued ones need a string dtype, which relaylang does not have.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....op import make as op
from ..registry import converter

DOMAIN = "ai.onnx.ml"


@converter("Binarizer", since=1, domain=DOMAIN)
def binarizer(ctx: Any, node: Any) -> Any:
    """1 where x > threshold, else 0, in x's dtype."""
    x = node.inputs[0]
    dtype = ctx.dtype(x)
    threshold = ctx.const(np.asarray(float(node.attr("threshold", 0.0))).astype(dtype))
    return op.cast(op.greater(x, threshold), dtype=dtype)


@converter("ArrayFeatureExtractor", since=1, domain=DOMAIN)
def array_feature_extractor(ctx: Any, node: Any) -> Any:
    """The entries of the last axis at `indices` (all of them, flattened); a 1-D input
    gives one row (1, k), as onnxruntime does."""
    data, indices = node.inputs[0], node.inputs[1]
    if ctx.dtype(indices) != "int64":
        raise node.error(f"indices must be int64, got {ctx.dtype(indices)}")
    shape = ctx.shape(data)
    if not shape:
        raise node.error("the input must have at least one axis")
    k_shape = ctx.shape(indices)
    if not all(isinstance(d, int) for d in k_shape):
        raise node.error("the number of indices must be known at import")
    k = int(np.prod(k_shape)) if k_shape else 1
    flat = op.reshape(indices, newshape=(k,))
    picked = op.take(data, flat, axis=len(shape) - 1, mode="fast")
    if len(shape) == 1:
        return op.reshape(picked, newshape=(1, k))
    return picked


# ---------------------------------------------------------------- TreeEnsemble

_LEQ, _LT, _GTE, _GT, _EQ, _NEQ, _MEMBER = range(7)
_SUM_AGG, _AVERAGE_AGG, _MIN_AGG, _MAX_AGG = 1, 0, 2, 3


def _ints(value: Any) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


@converter("TreeEnsemble", since=1, domain=DOMAIN)
def tree_ensemble(ctx: Any, node: Any) -> Any:
    """Each tree becomes nested `where`s over the comparisons of its nodes (built from
    the leaves up with an explicit stack), selecting its leaf's contribution: a row of
    n_targets values holding the leaf weight at its target and the aggregation's
    identity elsewhere (0 for SUM and AVERAGE, the dtype's max for MIN, min for MAX);
    the trees' rows are then summed, averaged, or reduced with minimum / maximum."""
    x = node.inputs[0]
    shape = ctx.shape(x)
    if len(shape) != 2:
        raise node.error(f"X must be 2-D (N, features), got shape {shape}")
    dtype = ctx.dtype(x)
    if dtype not in ("float32", "float64", "float16"):
        raise node.error(f"X must be a float tensor, got {dtype}")
    if int(node.attr("post_transform", 0)) != 0:
        raise node.error("post_transform other than NONE is not supported")
    agg = int(node.attr("aggregate_function", _SUM_AGG))
    if agg not in (_SUM_AGG, _AVERAGE_AGG, _MIN_AGG, _MAX_AGG):
        raise node.error(f"aggregate_function {agg} is not one of 0..3")
    n_targets = int(node.attr("n_targets"))
    features = _ints(node.attr("nodes_featureids"))
    modes = _ints(node.attr("nodes_modes"))
    splits = np.asarray(node.attr("nodes_splits"), np.float64).reshape(-1)
    true_ids, false_ids = _ints(node.attr("nodes_truenodeids")), \
        _ints(node.attr("nodes_falsenodeids"))
    true_leaf, false_leaf = _ints(node.attr("nodes_trueleafs")), \
        _ints(node.attr("nodes_falseleafs"))
    leaf_targets = _ints(node.attr("leaf_targetids"))
    leaf_weights = np.asarray(node.attr("leaf_weights"), np.float64).reshape(-1)
    missing = _ints(node.attr("nodes_missing_value_tracks_true", [0] * len(modes)))
    members = np.asarray(node.attr("membership_values", []), np.float64).reshape(-1)
    n_nodes = len(modes)
    if not (len(features) == len(splits) == len(true_ids) == len(false_ids)
            == len(true_leaf) == len(false_leaf) == n_nodes):
        raise node.error("the nodes_* attributes differ in length")
    if len(leaf_targets) != len(leaf_weights):
        raise node.error("leaf_targetids and leaf_weights differ in length")
    # each MEMBER node's set: the next run of membership_values up to a NaN
    sets: dict[int, list[float]] = {}
    runs = [[]] if members.size else []
    for v in members:
        if np.isnan(v):
            runs.append([])
        else:
            runs[-1].append(float(v))
    member_nodes = [k for k, m in enumerate(modes) if m == _MEMBER]
    if len([r for r in runs if r]) < len(member_nodes) and member_nodes:
        raise node.error("membership_values lists fewer sets than there are MEMBER nodes")
    if runs and not runs[-1]:
        runs.pop()
    for k, values in zip(member_nodes, runs):
        sets[k] = values
    n_features = shape[1]
    finfo = np.finfo(dtype)
    fill = {_SUM_AGG: 0.0, _AVERAGE_AGG: 0.0, _MIN_AGG: float(finfo.max),
            _MAX_AGG: float(finfo.min)}[agg]
    columns: dict[int, Any] = {}

    def column(f: int) -> Any:
        if not (0 <= f < n_features if isinstance(n_features, int) else f >= 0):
            raise node.error(f"feature id {f} is outside X's {n_features} features")
        if f not in columns:
            columns[f] = op.strided_slice(x, begin=(f,), end=(f + 1,), strides=(1,),
                                          axes=(1,))                   # (N, 1)
        return columns[f]

    def const(value: Any) -> Any:
        return ctx.const(np.asarray(value, dtype))

    def condition(k: int) -> Any:
        col = column(features[k])
        mode = modes[k]
        if mode == _MEMBER:
            test = None
            for v in sets.get(k, []):
                eq = op.equal(col, const(v))
                test = eq if test is None else op.logical_or(test, eq)
            if test is None:
                test = op.not_equal(col, col)          # an empty set: never (NaN aside)
        else:
            compare = {_LEQ: op.less_equal, _LT: op.less, _GTE: op.greater_equal,
                       _GT: op.greater, _EQ: op.equal, _NEQ: op.not_equal}.get(mode)
            if compare is None:
                raise node.error(f"node mode {mode} is not one of 0..6")
            test = compare(col, const(splits[k]))
        if missing[k]:
            test = op.logical_or(test, op.isnan(col))
        return test

    def leaf(j: int) -> Any:
        if not 0 <= j < len(leaf_weights):
            raise node.error(f"leaf id {j} is outside the {len(leaf_weights)} leaves")
        t = leaf_targets[j]
        if not 0 <= t < n_targets:
            raise node.error(f"leaf target {t} is outside n_targets={n_targets}")
        row = np.full((1, n_targets), fill, np.float64)
        row[0, t] = leaf_weights[j]
        return const(row)

    def tree(root: int) -> Any:
        # degenerate tree: a root whose both branches are the same leaf
        if true_leaf[root] and false_leaf[root] and true_ids[root] == false_ids[root]:
            return leaf(true_ids[root])
        done: dict[int, Any] = {}
        stack = [(root, False)]
        seen = 0
        while stack:
            k, expanded = stack.pop()
            if not 0 <= k < n_nodes:
                raise node.error(f"node id {k} is outside the {n_nodes} nodes")
            branches = ((true_ids[k], true_leaf[k]), (false_ids[k], false_leaf[k]))
            if not expanded:
                seen += 1
                if seen > n_nodes:
                    raise node.error("the tree's node links form a cycle")
                stack.append((k, True))
                stack.extend((c, False) for c, is_leaf in branches
                             if not is_leaf and c not in done)
                continue
            picked = [leaf(c) if is_leaf else done[c] for c, is_leaf in branches]
            done[k] = op.where(condition(k), picked[0], picked[1])
        return done[root]

    roots = _ints(node.attr("tree_roots"))
    if not roots:
        raise node.error("tree_roots is empty")
    rows = [tree(r) for r in roots]
    total = rows[0]
    combine = {_SUM_AGG: op.add, _AVERAGE_AGG: op.add, _MIN_AGG: op.minimum,
               _MAX_AGG: op.maximum}[agg]
    for r in rows[1:]:
        total = combine(total, r)
    if agg == _AVERAGE_AGG:
        total = op.divide(total, const(len(roots)))
    if isinstance(shape[0], int):
        total = op.broadcast_to(total, shape=(shape[0], n_targets))   # a leaf-only tree
    return total
