"""The execution plan of a dataflow `@main`: values, steps and storage slots.

After -O3 (FuseOps included) a model's `@main` is a graph of calls to `Primitive=1`
functions over its parameters, constants, tuples and tuple projections. `make_plan`
turns it into a flat list of steps, each running one kernel (native, or the NumPy
fallback of a primitive function without a lowering) from input values to output
values; a value is one tensor: an entry input, a constant bound at build, a temporary
held in a storage slot (slots are planned once, from liveness, `memory.plan_storage`),
or an output (fresh for each call, since the caller keeps it). Tuples exist only while
planning: a tuple is the list of its tensors' values, a projection picks one.

Anything else in `@main` (if, match, closures, references, calls of globals, dynamic
shapes) raises `NotAGraph`: such a program runs in mixed mode (`mixed.py`).
A plan is plain data and round-trips through JSON (`to_json` / `from_json`); the
constants are kept beside it, as arrays.

A native step's kernel may take some of its inputs packed at build (`build.py`: a
constant re-laid out once by a packer kernel, bound as a new constant): its `inputs` are
then the kernel's flat input list (value ids), no longer one entry per parameter of the
primitive function, and `drop_unused_constants` removes the constants no step reads any
more.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...ir.dtype import CARRIED
from ...ir.expr import Call, Constant, Function, GlobalVar, Let, Op, Tuple, TupleGetItem, Var
from ...ir.types import TensorType, TupleType, Type
from .memory import plan_storage


class NotAGraph(Exception):
    """`@main` is not a static dataflow graph of primitive calls (the reason is the message)."""


INPUT, CONST, TEMP, OUTPUT = "input", "const", "temp", "output"


@dataclass
class Value:
    shape: tuple[int, ...]
    dtype: str
    kind: str                 # INPUT, CONST, TEMP or OUTPUT
    ref: int = -1             # INPUT: leaf index of the inputs; CONST: constant index;
                              # TEMP: storage slot

    @property
    def nbytes(self) -> int:
        count = int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        if self.dtype in CARRIED:           # bfloat16, ir/lowp.py's dtypes: their carriers
            from ...op.numpy_support import carrier_dtype
            return count * carrier_dtype(self.dtype).itemsize
        return count * np.dtype(self.dtype).itemsize


@dataclass
class Step:
    kernel: str               # the kernel's name (native), or the fallback function's
    native: bool
    inputs: list[Any]         # per parameter of the function: a value id, or a nested list
                              # (a kernel with packed constants: its flat input list)
    outputs: list[int]        # the output tensors' values, in order
    ops: list[str] = field(default_factory=list)
    flops: int = 0            # floating-point operations of one call (conv, dense, matmul;
                              # `profiler.function_flops`), 0 when none or unknown
    extern: str = ""          # run by Python code through a callback (native/extern.py):
                              # "dps" an external function, else the BYOC target's name


@dataclass
class Plan:
    params: list[tuple[str, Any]]        # (name, type) of each entry parameter
    inputs: list[Any]                    # per parameter: value id or nested list
    values: list[Value]
    steps: list[Step]
    outputs: Any                         # value id or nested list: the result's structure
    result_type: Any
    slots: list[int] = field(default_factory=list)        # bytes per storage slot
    constants: list[np.ndarray] = field(default_factory=list)

    # ------------------------------------------------------------ JSON
    def to_json(self) -> dict[str, Any]:
        return {
            "params": [[n, type_to_json(t)] for n, t in self.params],
            "inputs": self.inputs,
            "values": [[list(v.shape), v.dtype, v.kind, v.ref] for v in self.values],
            "steps": [{"kernel": s.kernel, "native": s.native, "inputs": s.inputs,
                       "outputs": s.outputs, "ops": s.ops, "flops": s.flops,
                       **({"extern": s.extern} if s.extern else {})}
                      for s in self.steps],
            "outputs": self.outputs,
            "result_type": type_to_json(self.result_type),
            "slots": self.slots,
        }

    @staticmethod
    def from_json(data: dict[str, Any], constants: list[np.ndarray]) -> Plan:
        return Plan(
            params=[(n, type_from_json(t)) for n, t in data["params"]],
            inputs=data["inputs"],
            values=[Value(tuple(s), d, k, r) for s, d, k, r in data["values"]],
            steps=[Step(s["kernel"], s["native"], s["inputs"], s["outputs"], s["ops"],
                        int(s.get("flops", 0)), str(s.get("extern", "")))
                   for s in data["steps"]],
            outputs=data["outputs"],
            result_type=type_from_json(data["result_type"]),
            slots=list(data["slots"]),
            constants=constants,
        )


def type_to_json(ty: Type) -> Any:
    if isinstance(ty, TupleType):
        return {"tuple": [type_to_json(f) for f in ty.fields]}
    assert isinstance(ty, TensorType)
    return {"shape": [int(d) for d in ty.shape], "dtype": ty.dtype}


def type_from_json(data: Any) -> Type:
    if "tuple" in data:
        return TupleType(tuple(type_from_json(f) for f in data["tuple"]))
    return TensorType(tuple(data["shape"]), data["dtype"])


def leaves(structure: Any) -> list[int]:
    """The value ids of a (nested) structure, in order."""
    out: list[int] = []
    stack = [structure]
    while stack:
        s = stack.pop()
        if isinstance(s, list):
            stack.extend(reversed(s))
        else:
            out.append(s)
    return out


def _static(ty: Type | None, what: str) -> Type:
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif not isinstance(t, TensorType):
            raise NotAGraph(f"{what} is not a tensor or a tuple of tensors")
        elif not all(type(d) is int for d in t.shape):
            raise NotAGraph(f"{what} has a dimension that is not known when building")
    assert ty is not None
    return ty


class _Builder:
    def __init__(self) -> None:
        self.values: list[Value] = []
        self.steps: list[Step] = []
        self.constants: list[np.ndarray] = []
        self.functions: list[Function] = []      # the primitive function of each step
        self.memo: dict[int, Any] = {}           # node id -> structure

    def new(self, ty: TensorType, kind: str, ref: int = -1) -> int:
        self.values.append(Value(tuple(int(d) for d in ty.shape), ty.dtype, kind, ref))
        return len(self.values) - 1

    def structure(self, ty: Type, kind: str, counter: list[int] | None = None) -> Any:
        if isinstance(ty, TupleType):
            return [self.structure(f, kind, counter) for f in ty.fields]
        assert isinstance(ty, TensorType)
        ref = -1
        if counter is not None:
            ref, counter[0] = counter[0], counter[0] + 1
        return self.new(ty, kind, ref)


def make_plan(main: Function, wrap_op: Any, externals: Mapping[str, Function] | None = None
              ) -> tuple[Plan, list[Function]]:
    """The plan of typed `main` and the primitive function of each step (same order).

    `wrap_op(call)` makes a typed primitive function of one op call left outside any
    (`Call(op, args)` directly in `@main`). `externals`: global functions a step may
    call (by name: BYOC's partitioned `Compiler=` functions with a codegen); a call of
    any other global is `NotAGraph`."""
    externals = externals or {}
    b = _Builder()
    counter = [0]
    params: list[tuple[str, Any]] = []
    inputs: list[Any] = []
    for p in main.params:
        ty = _static(p.checked_type or p.type_annotation, f"parameter %{p.name_hint}")
        params.append((p.name_hint, ty))
        s = b.structure(ty, INPUT, counter)
        inputs.append(s)
        b.memo[id(p)] = s
    result_type = _static(main.body.checked_type, "the result of @main")
    # Evaluation with an explicit stack; a Let binds its variable before its body.
    work: list[tuple[Any, bool]] = [(main.body, False)]
    while work:
        node, ready = work.pop()
        if id(node) in b.memo:
            continue
        kind = type(node)
        if kind is Let:
            if not ready:
                if id(node.value) in b.memo:
                    b.memo[id(node.var)] = b.memo[id(node.value)]
                    work.append((node, True))
                    work.append((node.body, False))
                else:
                    work.append((node, False))
                    work.append((node.value, False))
                continue
            b.memo[id(node)] = b.memo[id(node.body)]
            continue
        if kind is Var:
            raise NotAGraph(f"variable %{node.name_hint} is not bound in the graph")
        if kind is Constant:
            ty = TensorType(tuple(int(d) for d in node.data.shape), str(node.data.dtype))
            b.constants.append(np.asarray(node.data, order="C"))
            b.memo[id(node)] = b.new(ty, CONST, len(b.constants) - 1)
            continue
        if kind is Function:
            if node.attrs is not None and node.attrs.get("Primitive", 0):
                b.memo[id(node)] = ("fn", node)
                continue
            raise NotAGraph("a function value (closure)")
        operands = node.args if kind is Call and type(node.op) is GlobalVar and \
            node.op.name_hint in externals else _operands(node)
        missing = [c for c in operands if id(c) not in b.memo]
        if missing and not ready:
            work.append((node, True))
            work.extend((c, False) for c in reversed(missing))
            continue
        if missing:
            raise NotAGraph("an expression that is not a dataflow graph")
        if kind is Tuple:
            b.memo[id(node)] = [b.memo[id(f)] for f in node.fields]
        elif kind is TupleGetItem:
            b.memo[id(node)] = b.memo[id(node.tuple_value)][node.index]
        else:
            assert kind is Call
            callee = node.op
            fn = b.memo.get(id(callee)) if type(callee) is not Op else None
            if type(callee) is Op:
                fn = wrap_op(node)
            elif type(callee) is GlobalVar:
                fn = externals[callee.name_hint]
                for p in fn.params:
                    _static(p.checked_type, f"a parameter of @{callee.name_hint}")
            elif isinstance(fn, tuple) and fn[0] == "fn":
                fn = fn[1]
            else:
                raise NotAGraph("a call of something other than a primitive function")
            _static(fn.body.checked_type, "a primitive function's result")
            args = [b.memo[id(a)] for a in node.args]
            out = b.structure(fn.body.checked_type, TEMP)
            b.steps.append(Step("", False, args, leaves(out)))
            b.functions.append(fn)
            b.memo[id(node)] = out
    outputs = b.memo[id(main.body)]
    if isinstance(outputs, tuple):
        raise NotAGraph("@main returns a function")
    for vid in leaves(outputs):
        if b.values[vid].kind == TEMP:
            b.values[vid].kind = OUTPUT
    plan = Plan(params, inputs, b.values, b.steps, outputs, result_type,
                constants=b.constants)
    return plan, b.functions


def constant_params(plan: Plan, step: Step) -> frozenset[int]:
    """The parameters of `step`'s primitive function bound to constants of the plan (a
    tuple parameter when every field is one)."""
    out = set()
    for i, arg in enumerate(step.inputs):
        ids = leaves(arg)
        if ids and all(plan.values[v].kind == CONST for v in ids):
            out.add(i)
    return frozenset(out)


def drop_unused_constants(plan: Plan) -> None:
    """Remove (in place) the constants neither a step nor the result reads, renumbering
    values and constants. Storage slots are not planned yet (`plan_slots` comes after)."""
    used: set[int] = set(leaves(plan.outputs)) | set(leaves(plan.inputs))
    for step in plan.steps:
        used.update(leaves(step.inputs))
        used.update(step.outputs)
    keep = [i for i, v in enumerate(plan.values) if v.kind != CONST or i in used]
    if len(keep) == len(plan.values):
        return
    remap = {old: new for new, old in enumerate(keep)}
    constants: list[np.ndarray] = []
    const_remap: dict[int, int] = {}
    values = []
    for i in keep:
        v = plan.values[i]
        if v.kind == CONST:
            if v.ref not in const_remap:
                const_remap[v.ref] = len(constants)
                constants.append(plan.constants[v.ref])
            v = Value(v.shape, v.dtype, v.kind, const_remap[v.ref])
        values.append(v)
    plan.values = values
    plan.constants = constants
    plan.inputs = [_renumber(s, remap) for s in plan.inputs]
    plan.outputs = _renumber(plan.outputs, remap)
    for step in plan.steps:
        step.inputs = [_renumber(s, remap) for s in step.inputs]
        step.outputs = [remap[v] for v in step.outputs]


def _renumber(structure: Any, remap: dict[int, int]) -> Any:
    """A (nested) structure of value ids with each id `v` replaced by `remap[v]`."""
    if isinstance(structure, list):
        return [_renumber(s, remap) for s in structure]
    return remap[structure]


def _operands(node: Any) -> tuple:
    kind = type(node)
    if kind is Call:
        if type(node.op) is Op:
            return tuple(node.args)
        return (node.op, *node.args)
    if kind is Tuple:
        return tuple(node.fields)
    if kind is TupleGetItem:
        return (node.tuple_value,)
    raise NotAGraph(f"{kind.__name__.lower()} expressions (control flow, references, ADTs "
                    "or globals)")


def plan_slots(plan: Plan, inplace: dict[int, set[int]]) -> None:
    """Assign the temporaries of `plan` to storage slots (in place: `value.ref`,
    `plan.slots`). `inplace[step]`: parameter positions whose buffer that step's single
    output may reuse (when the input dies there and its slot is large enough)."""
    sizes: dict[int, int] = {}
    defined: dict[int, int] = {}
    last_use: dict[int, int] = {}
    reuse: dict[int, int] = {}
    for i, step in enumerate(plan.steps):
        for v in leaves(step.inputs):
            last_use[v] = i
        for v in step.outputs:
            if plan.values[v].kind == TEMP:
                sizes[v] = plan.values[v].nbytes
                defined[v] = i
        positions = inplace.get(i, ())
        if positions and len(step.outputs) == 1 and plan.values[step.outputs[0]].kind == TEMP:
            for pos in sorted(positions):
                arg = step.inputs[pos]
                if isinstance(arg, int) and plan.values[arg].kind == TEMP and \
                        leaves(step.inputs).count(arg) == 1:
                    reuse[step.outputs[0]] = arg
                    break
    slot_of, slot_bytes = plan_storage(sizes, defined, last_use, reuse)
    for v, slot in slot_of.items():
        plan.values[v].ref = slot
    plan.slots = slot_bytes
