"""TfIdfVectorizer over integer tokens against onnxruntime, both backends: TF, IDF and
TFIDF, with and without weights, 1-D and batched input, skips, sizes from 1 to 3,
output columns in any order, and the refusals."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import helper
from onnx_check import check_model, make_model

from relaylang.frontend.onnx import OnnxImportError, from_onnx

# pool: unigrams 2 3 5 4, bigrams (5 6) (7 8) (6 7), trigram (2 3 5)
POOL = dict(pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5], ngram_counts=[0, 4, 10])


def _model(shape, dtype="int32", **attrs):
    width = max(attrs["ngram_indexes"]) + 1
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **POOL, **attrs)
    out = (list(shape[:-1]) + [width], "float32")
    return make_model([node], inputs={"x": (shape, dtype)}, outputs={"y": out}, opset=9)


TOKENS = np.array([[1, 2, 3, 5, 6, 7, 8, 6, 7, 2, 3, 5, 4],
                   [5, 6, 7, 5, 6, 2, 4, 3, 5, 7, 8, 2, 3]])


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("lo,hi,skip", [(1, 1, 0), (1, 2, 0), (2, 2, 3), (1, 3, 2), (3, 3, 5)])
def test_tfidf(mode, lo, hi, skip) -> None:
    attrs = dict(mode=mode, min_gram_length=lo, max_gram_length=hi, max_skip_count=skip,
                 ngram_indexes=[7, 0, 2, 1, 3, 4, 5, 6])
    if mode != "TF":
        attrs["weights"] = [0.5, 1.0, 2.0, 0.25, 3.0, 1.5, 0.75, 4.0]
    check_model(_model((2, 13), **attrs), {"x": TOKENS.astype(np.int32)})


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_tfidf_one_row_and_shared_columns(dtype) -> None:
    # two n-grams counted into one column; no weights (IDF gives 1 where present)
    for mode in ("TF", "IDF"):
        attrs = dict(mode=mode, min_gram_length=1, max_gram_length=2, max_skip_count=1,
                     ngram_indexes=[0, 1, 1, 2, 3, 3, 4, 5])
        check_model(_model((13,), dtype, **attrs), {"x": TOKENS[0].astype(dtype)})


def test_tfidf_refusals() -> None:
    attrs = dict(mode="BM25", min_gram_length=1, max_gram_length=2, max_skip_count=0,
                 ngram_indexes=list(range(8)))
    with pytest.raises(OnnxImportError, match="mode 'BM25'"):
        from_onnx(_model((2, 13), **attrs))
    attrs["mode"] = "TF"
    with pytest.raises(OnnxImportError, match="int32 or int64 tokens"):
        from_onnx(_model((2, 13), "float32", **attrs))
    attrs.update(mode="TFIDF", ngram_indexes=[0, 0, 1, 2, 3, 4, 5, 6],
                 weights=[1.0, 2.0, 1, 1, 1, 1, 1, 1])
    with pytest.raises(OnnxImportError, match="different weights share output column 0"):
        from_onnx(_model((2, 13), **attrs))
