"""relaylang as a backend of `onnx.backend.test` (ONNX's conformance runner).

    from relaylang.frontend.onnx_backend import RelayBackend
    rep = RelayBackend.prepare(model)                    # the interpreter
    rep = RelayBackend.prepare(model, target="llvm")     # the LLVM backend (rl.build)
    outputs = rep.run([x])                               # a list of numpy arrays

    import onnx.backend.test
    backend_test = onnx.backend.test.BackendTest(RelayBackend, __name__)

`prepare` imports the model with `rl.frontend.from_onnx` (keywords `shape`, `dtype`,
`opset`, `freeze_params` pass through) and makes an executor once: the interpreter with
the initializers bound as constants, or the library `rl.build(mod, target="llvm",
params=params)` compiles. A model whose conversion needs the values of graph inputs
(`NeedsInputValues`: axes, sizes, scales, shapes fed as inputs) is imported at each run
instead, with those inputs bound to the run's values (`from_onnx(bind=...)`), one
program per distinct set of values (cached). A model with sequence or optional graph
inputs is imported per run likewise, specialised to their structure (each sequence's
length and element shapes, each optional's presence: `shape=` of `from_onnx`); a
sequence is given as a list of arrays, an empty optional as None, and sequence and
optional outputs come back the same way. An op without a converter raises the importer's
`UnsupportedOps` (a converter's refusal its `OnnxImportError`), so a runner reports
what is missing. `run` takes the graph inputs that are not initializers, in the graph's
order (a list), or by ONNX name (a dict), and returns the graph outputs in order.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from onnx.backend.base import Backend, BackendRep

from .onnx import NeedsInputValues, OnnxImportError, from_onnx

TARGETS = ("interp", "llvm")


class RelayBackendRep(BackendRep):
    """A prepared model: `run(inputs)` -> the outputs as a list of numpy arrays."""

    def __init__(self, model: Any, mod: Any, params: Mapping[str, np.ndarray],
                 target: str = "interp", convert: Mapping[str, Any] | None = None,
                 bind_inputs: Sequence[str] = (), structured_inputs: Sequence[str] = ()):
        self.model = model
        self.target = target
        inits = {i.name for i in model.graph.initializer}
        # the graph inputs a caller gives, in order: @main's first parameters (the importer
        # makes them first, in the graph's order; initializers follow as parameters)
        self.input_names = [vi.name for vi in model.graph.input if vi.name not in inits]
        self.output_names = [vi.name for vi in model.graph.output]
        # a model whose conversion needs the values of some inputs (`bind_inputs`: axes,
        # sizes, scales fed at run time) is imported per run, specialised to them
        self.convert = dict(convert or {})
        self.bind_inputs = list(bind_inputs)
        # sequence and optional inputs: imported per run, specialised to the run's
        # sequence lengths, element shapes and presence (`shape=` of from_onnx)
        self.structured_inputs = list(structured_inputs)
        self.specialised: dict[Any, tuple[Any, Any, list[str]]] = {}
        self.mod, self.params, self.executor = mod, dict(params), None
        if mod is not None:
            self.executor = self._executor(mod, self.params, self.input_names)

    def _executor(self, mod: Any, params: Mapping[str, np.ndarray],
                  arg_names: Sequence[str]) -> Any:
        from ..backend.build import create_executor
        main = mod["main"]
        arg_params = [p.name_hint for p in main.params if p.name_hint not in params]
        if len(arg_params) != len(arg_names):
            raise OnnxImportError(
                f"the imported @main takes {len(arg_params)} inputs, the graph declares "
                f"{len(arg_names)}")
        return create_executor(mod, target=self.target, params=dict(params))

    def _specialisation(self, args: Sequence[np.ndarray]) -> tuple[Any, list[int]]:
        """The executor for these values of the bound inputs (imported on first use) and
        the positions of the inputs it takes."""
        values = dict(zip(self.input_names, args))
        structure = {n: _structure(values[n]) for n in self.structured_inputs}
        while True:
            key = tuple((n, values[n].dtype.str, values[n].shape, values[n].tobytes())
                        for n in self.bind_inputs) + tuple(structure.items())
            found = self.specialised.get(key)
            if found is not None:
                executor, _, kept = found
                return executor, [self.input_names.index(n) for n in kept]
            bind = {n: values[n] for n in self.bind_inputs}
            convert = dict(self.convert)
            if structure:
                convert["shape"] = {**dict(convert.get("shape") or {}), **structure}
            try:
                mod, params = from_onnx(self.model, bind=bind, **convert)
            except NeedsInputValues as e:
                more = [n for n in e.inputs if n not in self.bind_inputs]
                if not more:
                    raise
                self.bind_inputs.extend(more)
                continue
            kept = [n for n in self.input_names if n not in bind]
            executor = self._executor(mod, params, kept)
            self.specialised[key] = (executor, mod, kept)
            return executor, [self.input_names.index(n) for n in kept]

    def run(self, inputs: Any, **kwargs: Any) -> list[np.ndarray]:
        if isinstance(inputs, Mapping):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise ValueError(f"missing model inputs: {', '.join(missing)}")
            args = [inputs[n] for n in self.input_names]
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            args = list(inputs)
            if len(args) != len(self.input_names):
                raise ValueError(f"the model takes {len(self.input_names)} inputs "
                                 f"({', '.join(self.input_names)}), got {len(args)}")
        args = [_input(a, n in self.structured_inputs)
                for n, a in zip(self.input_names, args)]
        if self.executor is not None:
            out = self.executor(*args)
        else:
            executor, positions = self._specialisation(args)
            out = executor(*[_structured_arg(args[i]) for i in positions])
        outs = list(out) if isinstance(out, (tuple, list)) and len(self.output_names) != 1 \
            else [out]
        return [_array(o) for o in outs]


def _input(value: Any, structured: bool = False) -> Any:
    """A run's input as relaylang takes it: an array (`_to_relay`); for a sequence or
    optional input (`structured`), a sequence (a list) as a tuple of them, an empty
    optional as None."""
    if not structured:
        return _to_relay(np.asarray(value))
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return tuple(_to_relay(np.asarray(v)) for v in value)
    return _to_relay(np.asarray(value))


def _structure(value: Any) -> Any:
    """What the import of a sequence or optional input is specialised to (its `shape=`
    entry): None for an absent optional, a tuple of element shapes for a sequence, the
    shape of a tensor."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(tuple(int(d) for d in v.shape) for v in value)
    return tuple(int(d) for d in value.shape)


def _structured_arg(value: Any) -> Any:
    """The argument of an input's parameter: an absent optional's is `()`."""
    return () if value is None else value


def _to_relay(a: np.ndarray) -> np.ndarray:
    """ONNX's bfloat16 arrays (ml_dtypes) as relaylang's (bit patterns in BFLOAT16); its
    float8, float4, int4/uint4 and int2/uint2 arrays as relaylang's carriers (ir/lowp.py,
    by bit pattern)."""
    if a.dtype.kind == "V" and a.dtype.fields is None:
        if a.dtype.name == "bfloat16":
            from ..ir.bfloat16 import BFLOAT16
            return a.view(np.uint16).view(BFLOAT16)
        from ..ir.lowp import CARRIERS, from_lowp_bits
        if a.dtype.name in CARRIERS:
            return from_lowp_bits(np.ascontiguousarray(a).view(np.uint8), a.dtype.name)
    return a


def _array(value: Any) -> Any:
    """An output as ONNX gives it: numpy arrays, bfloat16 as ml_dtypes' (when installed,
    as it is with onnx)."""
    if isinstance(value, (tuple, list)):
        return [_array(v) for v in value]
    from ..backend.interpreter.values import ConstructorValue
    if isinstance(value, ConstructorValue):        # an optional: the prelude's Option
        return _array(value.fields[0]) if value.fields else None
    a = np.asarray(value)
    if a.dtype.kind != "V":
        return a
    from ..ir.bfloat16 import BFLOAT16
    from ..ir.lowp import lowp_bits, lowp_name
    name = lowp_name(a.dtype)
    if a.dtype != BFLOAT16 and name is None:
        return a
    try:
        import ml_dtypes
    except ImportError:
        return a
    if name is not None:                       # ir/lowp.py's carriers, by bit pattern
        return lowp_bits(a).view(getattr(ml_dtypes, name))
    return a.view(np.uint16).view(ml_dtypes.bfloat16)


class RelayBackend(Backend):
    """`onnx.backend.base.Backend` over relaylang: CPU only; `target=` "interp" (default)
    or "llvm"."""

    @classmethod
    def is_compatible(cls, model: Any, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> RelayBackendRep:
        if not cls.supports_device(device):
            raise ValueError(f"relaylang runs on the CPU, not on {device}")
        target = kwargs.pop("target", "interp")
        if target not in TARGETS:
            raise ValueError(f"unknown target {target!r} (expected one of {TARGETS})")
        convert = {k: kwargs[k] for k in ("shape", "dtype", "opset", "freeze_params")
                   if k in kwargs}
        from .onnx.importer import load_model
        proto = load_model(model)
        inits = {i.name for i in proto.graph.initializer}
        structured = [vi.name for vi in proto.graph.input if vi.name not in inits and (
            vi.type.HasField("sequence_type") or vi.type.HasField("optional_type"))]
        if structured:
            # imported per run, specialised to the structure of those inputs
            return RelayBackendRep(proto, None, {}, target=target, convert=convert,
                                   structured_inputs=structured)
        try:
            mod, params = from_onnx(proto, **convert)
        except NeedsInputValues as e:
            # imported per run, specialised to those inputs' values (a JIT's answer to
            # axes, sizes or scales fed at run time)
            return RelayBackendRep(proto, None, {}, target=target, convert=convert,
                                   bind_inputs=e.inputs)
        return RelayBackendRep(proto, mod, params, target=target)

    @classmethod
    def run_model(cls, model: Any, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> list[np.ndarray]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: Any, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[Any, tuple[int, ...]]] | None = None,
                 **kwargs: Any) -> list[np.ndarray]:
        """One node on `inputs` (arrays, in the node's input order): a one-node model of
        opset `opset_version` (default: the node op's newest), run like `prepare`'s."""
        from onnx import helper, numpy_helper  # noqa: F401
        arrays = [np.asarray(a) for a in (inputs.values() if isinstance(inputs, Mapping)
                                          else inputs)]
        names = [n for n in node.input if n]
        ins = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype),
                                             list(a.shape)) for n, a in zip(names, arrays)]
        outs = [helper.make_empty_tensor_value_info(n) for n in node.output if n]
        opset = kwargs.pop("opset_version", None)
        graph = helper.make_graph([node], "node", ins, outs)
        if opset is None:
            import onnx.defs
            opset = onnx.defs.get_schema(node.op_type, domain=node.domain).since_version
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(node.domain,
                                                                            opset)])
        _type_outputs(model)
        return cls.prepare(model, device, **kwargs).run(arrays)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return str(device).upper().split(":")[0] == "CPU"


def _type_outputs(model: Any) -> None:
    """Give untyped graph outputs the types ONNX's shape inference finds."""
    import onnx
    inferred = onnx.shape_inference.infer_shapes(model)
    known = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)
             if vi.type.HasField("tensor_type")}
    for o in model.graph.output:
        if not o.type.HasField("tensor_type") and o.name in known:
            o.type.CopyFrom(known[o.name].type)


prepare = RelayBackend.prepare
run_model = RelayBackend.run_model
run_node = RelayBackend.run_node
supports_device = RelayBackend.supports_device

__all__ = ["RelayBackend", "RelayBackendRep", "prepare", "run_model", "run_node",
           "supports_device"]
