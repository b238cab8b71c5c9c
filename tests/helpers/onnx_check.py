"""Helpers for the ONNX frontend's tests: build small models with `onnx.helper` and
compare relaylang (interpreter and LLVM backend) with onnxruntime.

    model = make_model([helper.make_node("Relu", ["x"], ["y"])],
                       inputs={"x": ((2, 3), "float32")}, outputs=["y"], opset=13)
    check_model(model, {"x": array})            # both backends vs onnxruntime
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import relaylang as rl

_TYPES = {"float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6,
          "int64": 7, "bool": 9, "float16": 10, "float64": 11, "uint32": 12, "uint64": 13}


def make_model(nodes: Sequence[Any], inputs: Mapping[str, tuple[Any, str]],
               outputs: Sequence[str] | Mapping[str, tuple[Any, str] | None],
               initializers: Mapping[str, np.ndarray] | None = None, opset: int = 17,
               name: str = "test") -> Any:
    """A checked ModelProto of `nodes`; `inputs` name -> (shape, dtype) (a shape may hold
    None or strings for symbolic dims); outputs: names (untyped) or name -> (shape, dtype)."""
    import onnx
    from onnx import helper, numpy_helper
    ins = [helper.make_tensor_value_info(n, _TYPES[dt], list(shape) if shape is not None
                                         else None) for n, (shape, dt) in inputs.items()]
    if isinstance(outputs, Mapping):
        outs = [helper.make_tensor_value_info(n, _TYPES[t[1]], list(t[0]) if t[0] is not None
                                              else None) if t else
                helper.make_empty_tensor_value_info(n) for n, t in outputs.items()]
    else:
        outs = [helper.make_empty_tensor_value_info(n) for n in outputs]
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in (initializers or {}).items()]
    graph = helper.make_graph(list(nodes), name, ins, outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 9)       # what onnxruntime accepts
    if any(not o.type.HasField("tensor_type") for o in model.graph.output):
        # untyped outputs: typed by ONNX's shape inference (the checker wants a type)
        inferred = onnx.shape_inference.infer_shapes(model)
        known = {vi.name: vi for vi in list(inferred.graph.value_info)
                 + list(inferred.graph.output) if vi.type.HasField("tensor_type")}
        for o in model.graph.output:
            if not o.type.HasField("tensor_type") and o.name in known:
                o.type.CopyFrom(known[o.name].type)
            elif not o.type.HasField("tensor_type"):
                o.type.tensor_type.elem_type = 1      # unknown to inference: float
    if all(not n.domain for n in model.graph.node):
        onnx.checker.check_model(model)
    return model


def run_onnxruntime(model: Any, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    return session.run(None, dict(inputs))


def run_relay(model: Any, inputs: Mapping[str, np.ndarray], target: str = "interp",
              freeze_params: bool = False, **kwargs: Any) -> list[np.ndarray]:
    """The model's outputs from relaylang: imported with `from_onnx`, run on `target`
    with the params bound (inputs in @main's parameter order, by sanitised name)."""
    from relaylang.frontend.onnx import sanitize
    mod, params = rl.frontend.from_onnx(model, freeze_params=freeze_params, **kwargs)
    by_name = {sanitize(k): v for k, v in inputs.items()}
    fn = mod["main"]
    args = []
    for p in fn.params:
        name = p.name_hint
        args.append(params[name] if name in params else by_name[name])
    out = rl.evaluate(mod, *args, target=target)
    if isinstance(out, tuple):
        return [np.asarray(o) for o in out]
    return [np.asarray(out)]


def check_model(model: Any, inputs: Mapping[str, np.ndarray],
                targets: Sequence[str] = ("interp", "llvm"), rtol: float = 1e-4,
                atol: float = 1e-5, **kwargs: Any) -> None:
    """relaylang's outputs on each target equal onnxruntime's (values, shapes, dtypes)."""
    want = run_onnxruntime(model, inputs)
    for target in targets:
        got = run_relay(model, inputs, target=target, **kwargs)
        assert len(got) == len(want), (target, len(got), len(want))
        for k, (g, w) in enumerate(zip(got, want)):
            w = np.asarray(w)
            assert g.shape == w.shape, f"{target} output {k}: shape {g.shape} != {w.shape}"
            assert g.dtype == w.dtype, f"{target} output {k}: dtype {g.dtype} != {w.dtype}"
            if w.dtype.kind in "fc":
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                           err_msg=f"{target} output {k}")
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"{target} output {k}")
