"""The ops of TVM's lowering pipeline (relaylang/op/memory/, vm/, call/): relations as
TVM's (src/relay/op/memory/memory.cc, vm/vm.cc, call/call.cc), reference kernels where
the op has a meaning of its own, and an "only meaningful after lowering" error at the
call where it has not."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.machine import InterpreterError
from relaylang.ir.attrs import make_attrs
from relaylang.ir.expr import Constant
from relaylang.ir.node import ANY, MetaObject
from relaylang.ir.types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    TensorType,
    TupleType,
    TypeCall,
)
from relaylang.op import get_op_def
from relaylang.op.registry import NoImplementation
from relaylang.op.relation import TypeRelError


def T(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


I64 = T((), "int64")
STORAGE = TypeCall(GlobalTypeVar("Storage"), ())
DEVICE = MetaObject("VirtualDevice", '{"type_key":"VirtualDevice"}')


def attrs(name, **values):
    schema = get_op_def(name).attrs
    return None if schema is None else make_attrs(schema, values, name)


# (op, input types, attributes, inputs for the kernel or None when it only means something
# after lowering). The registry-wide test (test_op_registry_complete.py) reads this table.
AGREEMENT = [
    ("vm.shape_of", [T((2, 3))], {"dtype": "int32"}, [np.zeros((2, 3), "float32")]),
    ("vm.reshape_tensor", [T((2, 8)), T((3,), "int64")], {"newshape": (2, 4, 2)},
     [np.arange(16, dtype="float32").reshape(2, 8), np.array([2, 4, 2], "int64")]),
    ("memory.kill", [T((2,))], {}, [np.zeros((2,), "float32")]),
    ("memory.alloc_storage", [I64, T((2,), "int64"), I64], {"virtual_device": DEVICE}, None),
    ("memory.alloc_tensor", [STORAGE, I64, T((2,), "int64")],
     {"const_shape": Constant(np.array([3, 2], "int64"))}, None),
    ("vm.invoke_tvm_op", [FuncType((T((2,)),), T((2,))), TupleType((T((2,)),)),
                          TupleType((T((2,)),))], {}, None),
    ("call_lowered", [FuncType((T((2,)),), T((2,))), TupleType((T((2,)),))], {}, None),
]


@pytest.mark.parametrize("name, types, values, inputs", AGREEMENT, ids=[c[0] for c in AGREEMENT])
def test_kernel_agrees_with_relation(name, types, values, inputs):
    opdef = get_op_def(name)
    a = attrs(name, **values)
    result = opdef.type_rel(types, a)
    assert result is not None
    if inputs is None:
        with pytest.raises(NoImplementation, match="only meaningful after lowering"):
            opdef.kernel([None] * opdef.num_inputs, a)
        return
    out = opdef.kernel(inputs, a)
    if isinstance(result, TupleType):
        assert out == () and result.fields == ()
    else:
        assert out.shape == result.shape and str(out.dtype) == result.dtype


def test_relations_as_tvm():
    storage = get_op_def("memory.alloc_storage").type_rel([I64, T((2,), "int64"), I64],
                                                          attrs("memory.alloc_storage"))
    assert rl.structural_equal(storage, STORAGE)
    const = Constant(np.array([3, 2], "int32"))
    got = get_op_def("memory.alloc_tensor").type_rel(
        [STORAGE, I64, T((2,), "int64")], attrs("memory.alloc_tensor", const_shape=const,
                                                dtype="int8"))
    assert (got.shape, got.dtype) == ((3, 2), "int8")
    got = get_op_def("memory.alloc_tensor").type_rel(
        [STORAGE, I64, T((2,), "int64")], attrs("memory.alloc_tensor", assert_shape=(ANY, 4)))
    assert (got.shape, got.dtype) == ((ANY, 4), "float32")
    scalar = get_op_def("memory.alloc_tensor").type_rel(
        [STORAGE, I64, T((), "int64")], attrs("memory.alloc_tensor", assert_shape=()))
    assert scalar.shape == ()
    assert get_op_def("memory.kill").type_rel([IncompleteType()], None).fields == ()
    got = get_op_def("call_lowered").type_rel(
        [FuncType((T((2,)), T((), "int32")), T((5,))), TupleType((T((2,)), T((), "int32")))],
        attrs("call_lowered"))
    assert got.shape == (5,)
    # Unknown arguments: wait.
    assert get_op_def("call_lowered").type_rel([IncompleteType(), TupleType(())], None) is None
    assert get_op_def("vm.reshape_tensor").type_rel(
        [IncompleteType(), T((1,), "int64")], attrs("vm.reshape_tensor", newshape=(2,))) is None


@pytest.mark.parametrize("name, types, values, message", [
    ("memory.alloc_storage", [T((), "int32"), T((2,), "int64"), I64], {}, "size must be an int64"),
    ("memory.alloc_storage", [I64, T((2,), "int64"), T((2,), "int64")], {}, "alignment must"),
    ("memory.alloc_tensor", [T((2,)), I64, T((2,), "int64")], {"assert_shape": (1, 2)},
     "storage must be Storage"),
    ("memory.alloc_tensor", [STORAGE, I64, T((2,), "int64")],
     {"const_shape": Constant(np.array([3, 2, 1], "int64"))}, "const_shape has 3 dimensions"),
    ("memory.alloc_tensor", [STORAGE, I64, T((2,), "int64")],
     {"const_shape": Constant(np.array([3.0, 2.0], "float32"))}, "int32 or int64"),
    ("memory.alloc_tensor", [STORAGE, I64, T((2,), "int64")], {}, "const_shape or assert_shape"),
    ("vm.reshape_tensor", [TupleType(()), T((1,), "int64")], {"newshape": (1,)},
     "data must be a tensor"),
    ("vm.invoke_tvm_op", [T((2,)), TupleType(()), TupleType(())], {}, "op must be a function"),
    ("vm.invoke_tvm_op", [FuncType((T((2,)),), T((2,))), TupleType((T((3,)),)),
                          TupleType((T((2,)),))], {}, "ins must have type"),
    ("call_lowered", [FuncType((T((2,)),), T((2,))), T((2,))], {}, "call_args must be a tuple"),
    ("call_lowered", [FuncType((T((2,)),), T((2,))), TupleType((T((2,), "int8"),))], {},
     "call_args must have type"),
])
def test_relations_reject_bad_inputs(name, types, values, message):
    with pytest.raises(TypeRelError, match=message):
        get_op_def(name).type_rel(types, attrs(name, **values))


def test_flags_as_tvm():
    for name in ("memory.alloc_storage", "memory.alloc_tensor", "memory.kill", "vm.shape_of",
                 "vm.invoke_tvm_op", "vm.reshape_tensor", "call_lowered"):
        opdef = get_op_def(name)
        assert opdef.non_computational and opdef.pattern == 8
        assert opdef.stateful == (name in ("memory.kill", "vm.invoke_tvm_op"))
    names = [f.name for f in dataclasses.fields(get_op_def("memory.alloc_tensor").attrs)]
    assert names == ["dtype", "const_shape", "assert_shape"]
    assert attrs("memory.alloc_storage").dtype == "float32"


PROGRAM = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32], %size: int64) {
  %0 = vm.shape_of(%x, dtype="int64");
  %1 = vm.reshape_tensor(%x, %0, newshape=[2, 8]);
  let %_ = memory.kill(%x);
  %2 = memory.alloc_storage(%size, %0, %size);
  (%0, %1, %2)
}
"""


def test_interpreter_reports_only_after_lowering_at_the_call():
    mod = rl.parse(PROGRAM)
    x = np.arange(16, dtype="float32").reshape(2, 8)
    with pytest.raises(InterpreterError) as info:
        rl.evaluate(mod, x, np.array(64, "int64"))
    e = info.value
    assert (e.span.line, e.span.column) == (6, 8)
    assert e.message.startswith("memory.alloc_storage allocates device storage: it is only "
                                "meaningful after lowering")


def test_interpreter_runs_the_ops_with_reference_semantics():
    mod = rl.parse(PROGRAM.replace("  %2 = memory.alloc_storage(%size, %0, %size);\n", "")
                   .replace("(%0, %1, %2)", "(%0, %1, %_)"))
    x = np.arange(16, dtype="float32").reshape(2, 8)
    shape, same, unit = rl.evaluate(mod, x, np.array(64, "int64"))
    assert shape.dtype == np.int64 and shape.tolist() == [2, 8]
    assert same.tolist() == x.tolist() and unit == ()


def test_reshape_tensor_kernel_checks_its_shape_tensor():
    kernel = get_op_def("vm.reshape_tensor").kernel
    with pytest.raises(ValueError, match="disagrees with newshape"):
        kernel([np.zeros((2, 8)), np.array([4, 4])], attrs("vm.reshape_tensor", newshape=(2, 8)))
    out = kernel([np.zeros((2, 8)), np.array([4, 4])], attrs("vm.reshape_tensor",
                                                            newshape=(ANY, 4)))
    assert out.shape == (4, 4)
