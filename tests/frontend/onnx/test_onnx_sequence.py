"""ONNX sequence and optional values (relaylang/frontend/onnx/ops/sequence.py) on both
backends, against onnxruntime where it runs the model, else onnx's ReferenceEvaluator.

Sequences are Relay tuples (lengths known at import; sequence graph inputs specialised
per run by the conformance backend), optionals the prelude's Option."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper

from relaylang.frontend.onnx import OnnxImportError, from_onnx
from relaylang.frontend.onnx_backend import RelayBackend

TARGETS = ("interp", "llvm")
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _tensor(name: str, elem: int, shape: Any) -> Any:
    return helper.make_tensor_value_info(name, elem, shape)


def _seq(name: str, elem: int, shape: Any = None) -> Any:
    return helper.make_value_info(name, helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(elem, shape)))


def _opt(name: str, elem: int, shape: Any) -> Any:
    return helper.make_value_info(name, helper.make_optional_type_proto(
        helper.make_tensor_type_proto(elem, shape)))


def _model(nodes: list[Any], inputs: list[Any], outputs: list[Any], opset: int = 17,
           inits: dict[str, np.ndarray] | None = None) -> Any:
    graph = helper.make_graph(nodes, "seq", inputs, outputs,
                              [numpy_helper.from_array(np.asarray(v), n)
                               for n, v in (inits or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 9)
    onnx.checker.check_model(model)
    return model


def _reference(model: Any, feeds: dict[str, Any], engine: str) -> list[Any]:
    if engine == "ort":
        import onnxruntime as ort
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        return sess.run(None, feeds)
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(model).run(None, feeds)


def _same(got: Any, want: Any) -> None:
    if isinstance(want, (list, tuple)):
        assert isinstance(got, list), f"expected a list, got {type(got)}"
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    if want is None:
        assert got is None
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                  want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def check(model: Any, feeds: dict[str, Any], engine: str = "ort",
          targets: tuple[str, ...] = TARGETS) -> list[Any]:
    want = _reference(model, feeds, engine)
    names = [vi.name for vi in model.graph.input
             if vi.name not in {i.name for i in model.graph.initializer}]
    for target in targets:
        rep = RelayBackend.prepare(model, target=target)
        got = rep.run([feeds[n] for n in names])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    return want


RNG = np.random.default_rng(0)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- sequences of known length

def test_construct_insert_erase_at() -> None:
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "c", "p_front"], ["s2"]),
             helper.make_node("SequenceInsert", ["s2", "a"], ["s3"]),      # at the back
             helper.make_node("SequenceErase", ["s3", "p_neg"], ["s4"]),
             helper.make_node("SequenceAt", ["s4", "p_last"], ["y"]),
             helper.make_node("SequenceAt", ["s4", "p_front"], ["z"]),
             helper.make_node("SequenceLength", ["s4"], ["n"])]
    model = _model(nodes, [_tensor("a", F, [2, 3]), _tensor("b", F, [1, 3]),
                           _tensor("c", F, [3, 3])],
                   [_tensor("y", F, [None, 3]), _tensor("z", F, [None, 3]),
                    _tensor("n", I64, [])],
                   inits={"p_front": np.int64(0), "p_neg": np.int64(-2),
                          "p_last": np.int64(-1)})
    out = check(model, {"a": _x(2, 3), "b": _x(1, 3), "c": _x(3, 3)})
    assert out[0].shape == (2, 3) and out[1].shape == (3, 3) and int(out[2]) == 3


def test_sequence_at_run_time_position() -> None:
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("SequenceAt", ["s", "p"], ["y"])]
    model = _model(nodes, [_tensor("a", F, [5]), _tensor("b", F, [5]), _tensor("c", F, [5]),
                           _tensor("p", I64, [])], [_tensor("y", F, [5])])
    feeds = {"a": _x(5), "b": _x(5), "c": _x(5)}
    for p in (0, 2, -1, -3):
        check(model, {**feeds, "p": np.array(p, np.int64)})


@pytest.mark.parametrize("axis,new_axis", [(0, 0), (-1, 0), (1, 1), (-1, 1), (0, 1)])
def test_concat_from_sequence(axis: int, new_axis: int) -> None:
    shapes = [(3, 1), (3, 1), (3, 1)] if new_axis else [(3, 1), (3, 2), (3, 5)] if axis \
        else [(1, 5), (2, 5), (4, 5)]
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s"]),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis,
                              new_axis=new_axis)]
    model = _model(nodes, [_tensor(n, F, list(s)) for n, s in zip("abc", shapes)],
                   [_tensor("y", F, [None] * (2 + new_axis))])
    check(model, {n: _x(*s) for n, s in zip("abc", shapes)})


@pytest.mark.parametrize("case", ["ones_keepdims", "ones_nokeepdims", "scalar_uneven",
                                  "sizes_with_zero", "sizes_runtime"])
def test_split_to_sequence(case: str) -> None:
    x = _x(3, 7)
    inputs = [_tensor("x", F, [3, 7])]
    feeds: dict[str, Any] = {"x": x}
    inits: dict[str, np.ndarray] = {}
    attrs: dict[str, Any] = {"axis": -1}
    ins = ["x"]
    if case == "ones_nokeepdims":
        attrs["keepdims"] = 0
    elif case == "scalar_uneven":
        inits["split"] = np.int64(3)                  # 3, 3, 1
        ins.append("split")
    elif case == "sizes_with_zero":
        inits["split"] = np.array([2, 0, 5], np.int64)
        ins.append("split")
    elif case == "sizes_runtime":                     # bound per run by the backend
        inputs.append(_tensor("split", I64, [2]))
        feeds["split"] = np.array([4, 3], np.int64)
        ins.append("split")
    nodes = [helper.make_node("SplitToSequence", ins, ["s"], **attrs),
             helper.make_node("SequenceLength", ["s"], ["n"])]
    model = _model(nodes, inputs, [_seq("s", F), _tensor("n", I64, [])], inits=inits)
    check(model, feeds)


def test_split_concat_round_trip_double() -> None:
    nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=1, new_axis=1)]
    model = _model(nodes, [_tensor("x", TensorProto.DOUBLE, [4, 1, 3])],
                   [_tensor("y", TensorProto.DOUBLE, [None, None, None])])
    check(model, {"x": RNG.standard_normal((4, 1, 3))})


def test_sequence_empty_then_insert() -> None:
    nodes = [helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
             helper.make_node("SequenceInsert", ["e", "a"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "b", "p"], ["s2"])]
    model = _model(nodes, [_tensor("a", F, [2]), _tensor("b", F, [1])], [_seq("s2", F)],
                   inits={"p": np.array([0], np.int64)})
    check(model, {"a": _x(2), "b": _x(1)})


# ---------------------------------------------------------------- sequence graph inputs

def test_sequence_input_insert_and_identity() -> None:
    nodes = [helper.make_node("SequenceInsert", ["s", "t", "p"], ["s2"]),
             helper.make_node("Identity", ["s"], ["s3"])]
    model = _model(nodes, [_seq("s", I64, [None]), _tensor("t", I64, [3])],
                   [_seq("s2", I64), _seq("s3", I64)], inits={"p": np.int64(1)})
    seq = [np.arange(4, dtype=np.int64), np.arange(2, dtype=np.int64)]
    check(model, {"s": seq, "t": np.array([7, 8, 9], np.int64)})
    # another length: imported again for it
    rep = RelayBackend.prepare(model)
    got = rep.run([[np.arange(1, dtype=np.int64)], np.array([7, 8, 9], np.int64)])
    assert [g.tolist() for g in got[0]] == [[0], [7, 8, 9]]


def test_sequence_map_ragged_with_tensor() -> None:
    body = helper.make_graph([helper.make_node("Mul", ["e", "w"], ["o"]),
                              helper.make_node("Shape", ["e"], ["sh"])], "body",
                             [_tensor("e", F, ["N"]), _tensor("w", F, ["N"])],
                             [_tensor("o", F, ["N"]), _tensor("sh", I64, [1])])
    nodes = [helper.make_node("SequenceMap", ["s", "w"], ["y", "shapes"], body=body)]
    model = _model(nodes, [_seq("s", F, ["N"]), _tensor("w", F, [1])],
                   [_seq("y", F, ["N"]), _seq("shapes", I64, [1])])
    check(model, {"s": [_x(3), _x(1), _x(6)], "w": _x(1)})


def test_sequence_input_needs_its_shapes_at_import() -> None:
    model = _model([helper.make_node("SequenceLength", ["s"], ["n"])],
                   [_seq("s", F, [None])], [_tensor("n", I64, [])])
    with pytest.raises(OnnxImportError, match="sequence.*shape="):
        from_onnx(model)
    mod, _ = from_onnx(model, shape={"s": [(2,), (5,), (1,)]})
    import relaylang as rl
    assert int(rl.create_executor(mod)(tuple(_x(n) for n in (2, 5, 1)))) == 3


# ---------------------------------------------------------------- refusals

def test_refusals() -> None:
    seq = [helper.make_node("SequenceConstruct", ["a", "a"], ["s"])]
    bad_at = _model(seq + [helper.make_node("SequenceAt", ["s", "p"], ["y"])],
                    [_tensor("a", F, [2])], [_tensor("y", F, [2])],
                    inits={"p": np.int64(2)})
    with pytest.raises(OnnxImportError, match="position 2 is out of range"):
        from_onnx(bad_at)
    bad_split = _model([helper.make_node("SplitToSequence", ["x", "k"], ["s"])],
                       [_tensor("x", F, ["n"])], [_seq("s", F)], inits={"k": np.int64(2)})
    with pytest.raises(OnnxImportError, match="unknown length"):
        from_onnx(bad_split)
    bad_concat = _model(seq + [helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=1)],
                        [_tensor("a", F, [2])], [_tensor("y", F, [None])])
    with pytest.raises(OnnxImportError, match="axis 1 is out of range"):
        from_onnx(bad_concat)
    ragged_at = _model([helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
                        helper.make_node("SequenceAt", ["s", "p"], ["y"])],
                       [_tensor("a", F, [2]), _tensor("b", F, [3]), _tensor("p", I64, [])],
                       [_tensor("y", F, [None])])
    from relaylang.frontend.onnx import NeedsInputValues
    with pytest.raises(NeedsInputValues, match="differ in shape.*known at import"):
        from_onnx(ragged_at)
    # ... which the backend binds per run
    rep = RelayBackend.prepare(ragged_at)
    a, b = _x(2), _x(3)
    _same(rep.run([a, b, np.array(-1, np.int64)])[0], b)
    _same(rep.run([a, b, np.array(0, np.int64)])[0], a)
    opt_in = _model([helper.make_node("OptionalHasElement", ["o"], ["h"])],
                    [_opt("o", F, [4])], [_tensor("h", TensorProto.BOOL, [])], opset=18)
    with pytest.raises(OnnxImportError, match="optional.*presence"):
        from_onnx(opt_in)
    with pytest.raises(OnnxImportError, match="not the shape of a tensor"):
        from_onnx(opt_in, shape={"o": [(4,), (4,)]})


# ---------------------------------------------------------------- optionals

@pytest.mark.parametrize("present", [True, False])
def test_optional_input_has_element(present: bool) -> None:
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["h"])]
    model = _model(nodes, [_opt("o", F, [4])], [_tensor("h", TensorProto.BOOL, [])],
                   opset=18)
    feeds = {"o": _x(4) if present else None}
    out = check(model, feeds, engine="reference")
    assert bool(out[0]) == present


def test_optional_wrap_get_and_empty() -> None:
    empty_type = helper.make_tensor_type_proto(F, [3])
    nodes = [helper.make_node("Optional", ["x"], ["o"]),
             helper.make_node("OptionalHasElement", ["o"], ["h1"]),
             helper.make_node("OptionalGetElement", ["o"], ["g"]),
             helper.make_node("Relu", ["g"], ["y"]),
             helper.make_node("Optional", [], ["e"], type=empty_type),
             helper.make_node("OptionalHasElement", ["e"], ["h2"])]
    B = TensorProto.BOOL
    model = _model(nodes, [_tensor("x", F, [3])],
                   [_tensor("h1", B, []), _tensor("y", F, [3]), _tensor("h2", B, [])],
                   opset=18)
    out = check(model, {"x": _x(3)})
    assert bool(out[0]) and not bool(out[2])


def test_optional_of_sequence_input_get_element() -> None:
    opt_seq = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT32,
                                                                      [2]))))
    nodes = [helper.make_node("OptionalGetElement", ["o"], ["s"]),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)]
    model = _model(nodes, [opt_seq], [_tensor("y", TensorProto.INT32, [None])], opset=18)
    check(model, {"o": [np.array([1, 2], np.int32), np.array([3, 4], np.int32)]},
          engine="reference")


def test_optional_output_is_the_value_or_none() -> None:
    """An Option output comes back as its element (an empty one as None)."""
    nodes = [helper.make_node("Identity", ["o"], ["r"])]
    model = _model(nodes, [_opt("o", F, [2])], [_opt("r", F, [2])], opset=18)
    for target in TARGETS:
        rep = RelayBackend.prepare(model, target=target)
        x = _x(2)
        _same(rep.run([x])[0], x)
        assert rep.run([None])[0] is None


def test_optional_get_element_of_empty_is_refused() -> None:
    nodes = [helper.make_node("Optional", [], ["e"],
                              type=helper.make_tensor_type_proto(F, [3])),
             helper.make_node("OptionalGetElement", ["e"], ["y"])]
    model = _model(nodes, [], [_tensor("y", F, [3])], opset=18)
    with pytest.raises(OnnxImportError, match="empty"):
        from_onnx(model)


# ---------------------------------------------------------------- Loop over sequences

def test_unrolled_loop_grows_a_sequence() -> None:
    """`sequence.unrolled_loop` (for control.py's Loop: a carried sequence changes its
    length per iteration, so the loop is unrolled at import)."""
    from relaylang.frontend.onnx import registry
    from relaylang.frontend.onnx.ops import sequence
    registry._load()
    entries = registry._TABLE[("", "Loop")]
    original = entries[0][1]

    def loop(ctx: Any, node: Any) -> Any:
        out = sequence.unrolled_loop(ctx, node)
        if out is None:
            return original(ctx, node)
        return out[0] if len(out) == 1 else out
    entries[0] = (entries[0][0], loop)
    try:
        _loop_model_check()
    finally:
        entries[0] = (entries[0][0], original)


def _loop_model_check() -> None:
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Add", ["x", "fi"], ["xi"]),
         helper.make_node("SequenceInsert", ["s_in", "xi"], ["s_out"]),
         helper.make_node("Identity", ["fi"], ["scan"])], "body",
        [_tensor("i", I64, []), _tensor("c_in", TensorProto.BOOL, []), _seq("s_in", F, [2])],
        [_tensor("c_out", TensorProto.BOOL, []), _seq("s_out", F, [2]),
         _tensor("scan", F, [])])
    nodes = [helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
             helper.make_node("Loop", ["m", "", "e"], ["s", "scans"], body=body),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)]
    model = _model(nodes, [_tensor("x", F, [2])], [_tensor("y", F, [None]),
                                                    _tensor("scans", F, [None])],
                   inits={"m": np.int64(3)})
    check(model, {"x": _x(2)})
