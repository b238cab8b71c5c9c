"""Annotation and device-placement ops (relaylang/op/annotation/): identity relations
and identity kernels, so that programs TVM printed after device planning type-check and run."""
from __future__ import annotations

import numpy as np
import pytest

from relaylang.ir.attrs import make_attrs
from relaylang.ir.node import ANY, MetaObject
from relaylang.ir.types import FuncType, IncompleteType, TensorType, TupleType, TypeVar
from relaylang.op import get_op_def
from relaylang.op.annotation import ANNOTATIONS, DeviceCopyAttrs, OnDeviceAttrs

DEVICE = MetaObject("VirtualDevice", '{"device_type": 1}')
ATTRS = {
    "on_device": make_attrs(OnDeviceAttrs, {"virtual_device": DEVICE}),
    "device_copy": make_attrs(DeviceCopyAttrs, {"src_virtual_device": DEVICE,
                                                "dst_virtual_device": DEVICE}),
}
NAMES = ["on_device", "device_copy", *ANNOTATIONS]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("arg", [
    TensorType((2, ANY), "float16"),
    TensorType((), "int8"),
    TupleType((TensorType((3,), "float32"), TupleType(()))),
    FuncType((TensorType((1,), "float32"),), TensorType((1,), "float32")),
])
def test_relation_is_identity(name, arg):
    assert get_op_def(name).type_rel([arg], ATTRS.get(name)) is arg


@pytest.mark.parametrize("name", NAMES)
def test_relation_waits_for_unknown_argument(name):
    rel = get_op_def(name).type_rel
    assert rel([IncompleteType()], ATTRS.get(name)) is None
    assert rel([TypeVar("A")], ATTRS.get(name)) is None
    assert rel([TupleType((IncompleteType(),))], ATTRS.get(name)) is None


@pytest.mark.parametrize("name", NAMES)
def test_kernel_passes_values_through(name):
    kernel = get_op_def(name).kernel
    x = np.arange(6, dtype="float32").reshape(2, 3)
    out = kernel([x], ATTRS.get(name))
    assert out.shape == (2, 3) and out.dtype == np.float32 and out.tolist() == x.tolist()
    pair = (np.array(1, dtype="int8"), np.zeros((0,), dtype="bool"))
    assert kernel([pair], ATTRS.get(name)) == pair


@pytest.mark.parametrize("name", NAMES)
def test_kernel_output_matches_relation(name):
    t = TensorType((4, 1), "int32")
    result = get_op_def(name).type_rel([t], ATTRS.get(name))
    out = get_op_def(name).kernel([np.ones((4, 1), dtype="int32")], ATTRS.get(name))
    assert isinstance(out, np.ndarray)
    assert out.shape == result.shape and str(out.dtype) == result.dtype


def test_on_device_defaults_to_unconstrained():
    attrs = make_attrs(OnDeviceAttrs, {})
    assert attrs.virtual_device is None and attrs.constrain_body and not attrs.constrain_result
    t = TensorType((1,), "float32")
    assert get_op_def("on_device").type_rel([t], attrs) is t
