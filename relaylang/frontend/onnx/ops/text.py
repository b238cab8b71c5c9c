"""Converters of ONNX's text-feature operators over integer tokens: TfIdfVectorizer.
(String pools need a string dtype, which relaylang does not have: refused.)

TfIdfVectorizer counts, per row of X ([C] or [B, C] int32/int64 tokens), how often each
n-gram of the pool occurs, its items `d` positions apart for every skip distance d in
1..max_skip_count + 1 (unigrams once: skips do not change them), for the n-gram sizes in
[min_gram_length, max_gram_length]. The pool is known at import, so each n-gram of size
k and each distance d is a comparison of k strided windows of X against its k tokens:
`all(equal(x[..., j d : C - (k-1) d + j d], g_j))`, summed along the row. The counts go
to the n-gram's output column (ngram_indexes), then TF (counts), IDF (weight where the
count is positive, else 0) or TFIDF (weight times count), as float32; the i-th weight is
the i-th pool n-gram's, as the specification says (onnx's reference implementation
indexes them by output column: the same when ngram_indexes is 0, 1, 2, ...).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....op import make as op
from ..registry import converter

# n-gram x distance windows one node may compare: beyond this the unrolled form is too
# large to build (a pool of thousands of n-grams needs a dedicated op)
_MAX_WINDOWS = 4096


def _pool_ngrams(node: Any, pool: list[int], counts: list[int], lo: int, hi: int
                 ) -> list[tuple[int, tuple[int, ...]]]:
    """(n-gram id (0-based), tokens) of each pool n-gram whose size is in [lo, hi]; ids
    count every n-gram of the pool, in order (sizes 1, 2, ...), as ngram_indexes does."""
    out = []
    ngram_id = 0
    for size_minus_1, start in enumerate(counts):
        size = size_minus_1 + 1
        end = counts[size_minus_1 + 1] if size_minus_1 + 1 < len(counts) else len(pool)
        if end < start or (end - start) % size:
            raise node.error(f"ngram_counts {counts}: the pool's size-{size} part "
                             f"[{start}, {end}) is not a whole number of {size}-grams")
        for k in range(start, end, size):
            if lo <= size <= hi:
                out.append((ngram_id, tuple(pool[k:k + size])))
            ngram_id += 1
    return out


@converter("TfIdfVectorizer", since=9)
def tfidf_vectorizer(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    dtype = ctx.dtype(x)
    if dtype not in ("int32", "int64"):
        raise node.error(f"X must be int32 or int64 tokens, got {dtype} (string pools "
                         "are not supported)")
    if node.attr("pool_strings", None):
        raise node.error("pool_strings needs a string dtype, which relaylang does not have")
    shape = ctx.shape(x)
    if len(shape) not in (1, 2) or not isinstance(shape[-1], int):
        raise node.error(f"X must be [C] or [B, C] with C known at import, got {shape}")
    row = shape[-1]
    lo, hi = int(node.attr("min_gram_length")), int(node.attr("max_gram_length"))
    skips = int(node.attr("max_skip_count"))
    mode = node.attr("mode")
    if mode not in ("TF", "IDF", "TFIDF"):
        raise node.error(f"mode {mode!r} is not TF, IDF or TFIDF")
    if lo < 1 or hi < lo or skips < 0:
        raise node.error(f"bad gram lengths [{lo}, {hi}] or max_skip_count {skips}")
    pool = [int(v) for v in node.attr("pool_int64s", [])]
    counts = [int(v) for v in node.attr("ngram_counts")]
    indexes = [int(v) for v in node.attr("ngram_indexes")]
    weights = [float(v) for v in node.attr("weights", [])]
    if not indexes:
        raise node.error("ngram_indexes is empty")
    width = max(indexes) + 1
    if weights and len(weights) < len(indexes):
        raise node.error(f"{len(weights)} weights for {len(indexes)} n-grams")
    ngrams = _pool_ngrams(node, pool, counts, lo, hi)
    windows = sum(1 if len(g) == 1 else skips + 1 for _, g in ngrams)
    if windows > _MAX_WINDOWS:
        raise node.error(f"{windows} n-gram windows to compare: more than the "
                         f"{_MAX_WINDOWS} this converter unrolls")
    axis = len(shape) - 1
    lead = tuple(shape[:-1])
    columns: dict[int, Any] = {}
    for ngram_id, tokens in ngrams:
        if ngram_id >= len(indexes):
            raise node.error(f"n-gram {ngram_id} has no entry in ngram_indexes")
        k = len(tokens)
        count = None
        for d in (range(1, 2) if k == 1 else range(1, skips + 2)):
            span = (k - 1) * d
            if span >= row:
                continue
            hit = None
            for j, token in enumerate(tokens):
                window = op.strided_slice(x, begin=(j * d,), end=(row - span + j * d,),
                                          strides=(1,), axes=(axis,))
                eq = op.equal(window, ctx.const(np.asarray(token, dtype)))
                hit = eq if hit is None else op.logical_and(hit, eq)
            n = op.sum(op.cast(hit, dtype="int64"), axis=(axis,))
            count = n if count is None else op.add(count, n)
        if count is None:
            continue
        c = indexes[ngram_id]
        columns[c] = count if c not in columns else op.add(columns[c], count)
    zero = ctx.const(np.zeros(lead, np.int64))
    freq = op.stack([columns.get(c, zero) for c in range(width)], axis=axis)
    freq = op.cast(freq, dtype="float32")
    if mode == "TF":
        return freq
    # the i-th weight is the i-th pool n-gram's (the specification, onnxruntime): a
    # column's weight is that of the n-grams counted into it, which must agree
    column_weight = [1.0] * width
    if weights:
        seen: dict[int, float] = {}
        for ngram_id, c in enumerate(indexes):
            if c in seen and seen[c] != weights[ngram_id]:
                raise node.error(f"n-grams of different weights share output column {c}")
            seen[c] = column_weight[c] = weights[ngram_id]
    w = ctx.const(np.asarray(column_weight, np.float32))
    if mode == "IDF":        # the weight where the n-gram occurs (where broadcasts w)
        return op.where(op.greater(freq, ctx.const(np.float32(0))), w,
                        ctx.const(np.float32(0)))
    return op.multiply(freq, w)
