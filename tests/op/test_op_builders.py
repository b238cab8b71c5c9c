"""The generated op builders (relaylang/op/make.py): `rl.nn.conv2d(x, w, strides=(2, 2))`.

Every registered op is built through its generated function; every op is also
type-checked, and for every op the built IR is the IR that parsing the same call
written as Relay text gives, so Python and text agree on inputs and attributes.
"""
from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Any

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.attrs import make_attrs
from relaylang.ir.expr import Call, Constant, Tuple, Var
from relaylang.ir.types import (
    FuncType,
    GlobalTypeVar,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeData,
)
from relaylang.op import OpDef, all_ops, get, get_op_def
from relaylang.op.make import OpCallError, OpNamespace, get_builder, namespace


def T(shape: tuple[int, ...], dtype: str = "float32") -> TensorType:
    return TensorType(tuple(shape), dtype)


def op_names() -> list[str]:
    return [d.name for d in all_ops()]


def builder_of(name: str) -> Any:
    """`rl.nn.conv2d` for "nn.conv2d": the way users reach a builder."""
    target: Any = rl
    for part in name.split("."):
        target = getattr(target, part)
    return target


# ---------------------------------------------------------------- every op builds

_CANDIDATES = (1, 1.0, "float32", "NCHW", (1,), ((0, 0),))


def build_minimal(opdef: OpDef) -> tuple[Call, dict[str, Any]]:
    """A call of `opdef` on untyped variables, with a value for each required attribute
    found by trying candidates (the schema says which it needs; no table here); and
    those attributes."""
    inputs = [rl.var(n) for n in opdef.input_names]
    kwargs: dict[str, Any] = {}
    for _ in range(10):
        try:
            return get_builder(opdef.name)(*inputs, **kwargs), kwargs
        except OpCallError as e:
            assert "missing required attribute" in e.message or e.key in kwargs, e.message
            tried = [c for c in _CANDIDATES]
            if e.key in kwargs:
                tried = tried[[id(c) for c in tried].index(id(kwargs[e.key])) + 1:]
            kwargs[e.key] = tried[0]
    raise AssertionError(f"could not build {opdef.name}")


@pytest.mark.parametrize("name", op_names())
def test_every_op_builds_a_call_of_itself(name: str) -> None:
    opdef = get_op_def(name)
    call, required = build_minimal(opdef)
    assert isinstance(call, Call) and call.op is get(name)
    assert len(call.args) == max(opdef.num_inputs, 0)      # variadic: built with none
    assert all(isinstance(a, Var) for a in call.args)
    assert [a.name_hint for a in call.args] == list(opdef.input_names)
    if opdef.attrs is None:
        assert call.attrs is None
    else:
        assert isinstance(call.attrs, opdef.attrs)
    # The Python signature marks exactly the attributes that must be given as required.
    params = inspect.signature(get_builder(name)).parameters.values()
    assert {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY
            and p.default is inspect.Parameter.empty} == set(required)


@pytest.mark.parametrize("name", op_names())
def test_every_builder_is_reachable_documented_and_named(name: str) -> None:
    fn = builder_of(name)
    assert fn is get_builder(name) is getattr(namespace(name.rpartition(".")[0]),
                                              name.rpartition(".")[2])
    assert getattr(rl.op.make, name.split(".")[0]) is not None
    assert fn.__name__ == name.rpartition(".")[2] and fn.__qualname__ == name
    assert fn.__doc__.startswith(name + "(")
    opdef = get_op_def(name)
    if opdef.doc.strip():
        assert opdef.doc.strip() in fn.__doc__
    params = inspect.signature(fn).parameters
    if opdef.num_inputs < 0:        # variadic: every positional argument is an input
        assert next(iter(params.values())).kind is inspect.Parameter.VAR_POSITIONAL
    else:
        assert list(params)[:opdef.num_inputs] == list(opdef.input_names)
    attrs = [p for p in params.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    if opdef.attrs is not None:
        fields = [f.name for f in dataclasses.fields(opdef.attrs)
                  if f.name not in opdef.input_names]
        assert [p.name for p in attrs] == fields
    else:
        assert attrs == []


# ---------------------------------------------------------------- every op type-checks

S = T(())
V3 = T((3,))
STORAGE = TypeCall(GlobalTypeVar("Storage"), ())
# op, input types (a list of types: a tuple built from a Python list), attributes,
# and the expected output type where it is worth stating.
TYPED: list[tuple[str, list[Any], dict[str, Any], Any]] = [
    ("on_device", [T((2, 3))], {"constrain_result": True}, T((2, 3))),
    ("device_copy", [T((2, 3))], {}, T((2, 3))),
    ("clip", [T((2, 3))], {"a_min": 0.0, "a_max": 6.0}, T((2, 3))),
    ("cumsum", [T((2, 3))], {"axis": 1, "exclusive": True}, T((2, 3))),
    ("cumprod", [T((2, 3), "int32")], {"dtype": "int64"}, T((6,), "int64")),
    ("cast", [T((2, 3))], {"dtype": "int8"}, T((2, 3), "int8")),
    ("cast_like", [T((2, 3)), T((1,), "float16")], {}, T((2, 3), "float16")),
    ("reinterpret", [T((2, 3))], {"dtype": "int32"}, T((2, 3), "int32")),
    ("where", [T((2, 1), "bool"), T((2, 3)), T((3,))], {}, T((2, 3))),
    ("image.resize2d", [T((1, 2, 4, 4))], {"size": (8, 6)}, T((1, 2, 8, 6))),
    ("nn.conv1d", [T((1, 3, 8)), T((4, 3, 3))], {"padding": (1,)}, T((1, 4, 8))),
    ("nn.conv2d", [T((1, 3, 8, 8)), T((4, 3, 3, 3))], {"strides": (2, 2), "padding": (1, 1)},
     T((1, 4, 4, 4))),
    ("nn.conv3d", [T((1, 2, 4, 4, 4)), T((3, 2, 2, 2, 2))], {"dilation": (1, 2, 1)}, None),
    ("nn.contrib_conv2d_NCHWc", [T((1, 2, 6, 6, 8)), T((3, 2, 3, 3, 8, 16))],
     {"padding": (1, 1), "data_layout": "NCHW8c", "kernel_layout": "OIHW8i16o",
      "out_layout": "NCHW16c"}, T((1, 3, 6, 6, 16))),
    ("nn.contrib_depthwise_conv2d_NCHWc", [T((1, 2, 6, 6, 8)), T((2, 1, 3, 3, 1, 8))],
     {"padding": (1, 1), "strides": (2, 2), "groups": 16, "data_layout": "NCHW8c",
      "kernel_layout": "OIHW1i8o", "out_layout": "NCHW8c"}, T((1, 2, 3, 3, 8))),
    ("nn.conv1d_transpose", [T((1, 2, 5)), T((2, 3, 3))], {"strides": (2,)}, None),
    ("nn.conv2d_transpose", [T((1, 4, 3, 3)), T((4, 2, 3, 3))],
     {"strides": (2, 2), "output_padding": (1, 1), "groups": 2}, None),
    ("nn.conv3d_transpose", [T((1, 2, 2, 3, 2)), T((2, 1, 2, 2, 2))], {"padding": (1, 0, 0)},
     None),
    ("nn.dense", [T((2, 5)), T((4, 5))], {"units": 4}, T((2, 4))),
    ("nn.matmul", [T((2, 5)), T((5, 4))], {}, T((2, 4))),
    ("nn.batch_matmul", [T((2, 3, 5)), T((1, 4, 5))], {"transpose_b": True}, T((2, 3, 4))),
    ("nn.bias_add", [T((2, 3, 4)), V3], {}, T((2, 3, 4))),
    ("nn.leaky_relu", [T((2, 3))], {"alpha": 0.2}, T((2, 3))),
    ("nn.prelu", [T((2, 3)), V3], {}, T((2, 3))),
    ("nn.cross_entropy", [T((2, 3)), T((2, 3))], {}, T(())),
    ("nn.cross_entropy_with_logits", [T((2, 3)), T((2, 3))], {}, T(())),
    ("nn.nll_loss", [T((2, 3)), T((2,), "int32"), T((3,))], {"reduction": "sum",
                                                            "ignore_index": 1}, T(())),
    ("nn.softmax", [T((2, 3))], {"axis": 1}, T((2, 3))),
    ("nn.fast_softmax", [T((2, 3))], {"axis": 0}, T((2, 3))),
    ("nn.log_softmax", [T((2, 3), "float64")], {}, T((2, 3), "float64")),
    ("nn.dropout", [T((2, 3))], {"rate": 0.25}, None),
    ("nn.batch_norm", [T((2, 3, 4)), V3, V3, V3, V3], {"epsilon": 1e-3},
     TupleType((T((2, 3, 4)), V3, V3))),
    ("nn.layer_norm", [T((2, 3)), V3, V3], {}, T((2, 3))),
    ("nn.instance_norm", [T((2, 3, 4)), V3, V3], {}, T((2, 3, 4))),
    ("nn.group_norm", [T((2, 6, 4)), T((6,)), T((6,))], {"num_groups": 2}, T((2, 6, 4))),
    ("nn.lrn", [T((1, 4, 3, 3))], {"size": 2}, T((1, 4, 3, 3))),
    ("nn.l2_normalize", [T((2, 3))], {"eps": 1e-5, "axis": [0, 1]}, T((2, 3))),
    ("nn.pad", [T((2, 3), "int32"), T((), "int32")], {"pad_width": [[1, 0], [2, 2]]},
     T((3, 7), "int32")),
    ("nn.upsampling", [T((1, 2, 3, 3))], {"scale_h": 2.0, "scale_w": 2.0}, T((1, 2, 6, 6))),
    ("nn.depth_to_space", [T((1, 4, 2, 2))], {"block_size": 2}, T((1, 1, 4, 4))),
    ("nn.space_to_depth", [T((1, 1, 4, 4))], {"block_size": 2}, T((1, 4, 2, 2))),
    ("nn.max_pool1d", [T((1, 2, 9))], {"pool_size": (3,), "strides": (2,)}, T((1, 2, 4))),
    ("nn.max_pool2d", [T((1, 2, 6, 6))], {"pool_size": (2, 2), "strides": (2, 2)},
     T((1, 2, 3, 3))),
    ("nn.max_pool3d", [T((1, 2, 4, 4, 4))], {"pool_size": (2, 2, 2)}, None),
    ("nn.avg_pool1d", [T((1, 2, 9))], {"pool_size": (2,), "padding": (1,)}, None),
    ("nn.avg_pool2d", [T((1, 6, 7, 2))], {"pool_size": (3, 3), "layout": "NHWC"}, None),
    ("nn.avg_pool3d", [T((1, 2, 5, 4, 4))], {"pool_size": (2, 2, 2), "strides": (2, 2, 2)},
     None),
    ("nn.global_max_pool2d", [T((1, 2, 3, 4))], {}, T((1, 2, 1, 1))),
    ("nn.global_avg_pool2d", [T((1, 3, 4, 2))], {"layout": "NHWC"}, T((1, 1, 1, 2))),
    ("nn.adaptive_max_pool1d", [T((1, 2, 7))], {"output_size": (3,)}, T((1, 2, 3))),
    ("nn.adaptive_avg_pool1d", [T((1, 2, 7))], {}, None),
    ("nn.adaptive_max_pool2d", [T((1, 2, 7, 5))], {"output_size": (2, 4)}, T((1, 2, 2, 4))),
    ("nn.adaptive_avg_pool2d", [T((1, 2, 7, 5))], {"output_size": (1,)}, None),
    ("nn.adaptive_max_pool3d", [T((1, 2, 3, 4, 5))], {"output_size": (2, 2, 2)}, None),
    ("nn.adaptive_avg_pool3d", [T((1, 3, 4, 5, 2))], {"output_size": (2, 3, 1),
                                                      "layout": "NDHWC"}, None),
    ("sum", [T((2, 3, 4))], {"axis": [1]}, T((2, 4))),
    ("mean", [T((2, 3, 4))], {"axis": [0, 2], "keepdims": True}, T((1, 3, 1))),
    ("max", [T((2, 3))], {}, S),
    ("min", [T((2, 3))], {"axis": [0], "exclude": True}, T((2,))),
    ("prod", [T((2, 3))], {"axis": [-1]}, T((2,))),
    ("all", [T((2, 3), "bool")], {"axis": [1]}, T((2,), "bool")),
    ("any", [T((2, 3), "bool")], {}, T((), "bool")),
    ("argmax", [T((2, 3))], {"axis": [1]}, T((2,), "int32")),
    ("argmin", [T((2, 3))], {"axis": [0], "keepdims": True}, T((1, 3), "int32")),
    ("variance", [T((2, 3)), T((2, 1))], {"axis": [1]}, T((2,))),
    ("reshape", [T((2, 3, 4))], {"newshape": [-1, 4]}, T((6, 4))),
    ("reshape_like", [T((2, 3, 4)), T((6, 4))], {}, T((6, 4))),
    ("transpose", [T((2, 3, 4), "int16")], {"axes": (1, 0, 2)}, T((3, 2, 4), "int16")),
    ("expand_dims", [T((2, 3))], {"axis": -1, "num_newaxis": 2}, T((2, 3, 1, 1))),
    ("squeeze", [T((1, 3, 1))], {"axis": (0,)}, T((3, 1))),
    ("concatenate", [[T((2, 3)), T((2, 1))]], {"axis": 1}, T((2, 4))),
    ("argsort", [T((2, 3))], {"axis": 0}, T((2, 3), "int32")),
    ("sort", [T((2, 3))], {"is_ascend": False}, T((2, 3))),
    ("topk", [T((2, 3))], {"k": 2, "dtype": "int64"},
     TupleType((T((2, 2)), T((2, 2), "int64")))),
    ("unique", [T((2, 3))], {"return_counts": True}, None),
    ("argwhere", [T((2, 3), "bool")], {}, None),
    ("scatter_elements", [T((3, 4)), T((2, 4), "int64"), T((2, 4))], {"reduction": "add"},
     T((3, 4))),
    ("scatter_nd", [T((3, 4)), T((1, 2), "int64"), T((2, 4))], {"mode": "max"}, T((3, 4))),
    ("einsum", [[T((2, 3)), T((3, 4))]], {"equation": "ij,jk->ik"}, T((2, 4))),
    ("dft", [T((2, 5)), T((2, 5))], {"inverse": True}, TupleType((T((2, 5)), T((2, 5))))),
    ("det", [T((2, 3, 3))], {}, T((2,))),
    ("qnn.quantize", [T((2, 3)), T((3,)), T((3,), "int8")], {"axis": 1, "out_dtype": "int8"},
     T((2, 3), "int8")),
    ("qnn.dequantize", [T((2, 3), "uint8"), T(()), T((), "uint8")], {}, T((2, 3))),
    ("qnn.requantize", [T((2, 3), "int32"), T((3,)), T((3,), "int32"), T(()), T((), "int32")],
     {"out_dtype": "uint8", "rounding": "TONEAREST"}, T((2, 3), "uint8")),
    ("qnn.conv2d", [T((1, 2, 5, 5), "int8"), T((3, 2, 3, 3), "int8"), T((), "int32"),
                    T((3,), "int32"), T(()), T((3,))], {"padding": (1, 1)},
     T((1, 3, 5, 5), "int32")),
    ("qnn.conv2d_transpose", [T((1, 2, 5, 5), "uint8"), T((2, 3, 3, 3), "int8"),
                              T((), "int32"), T((), "int32"), T(()), T(())],
     {"out_dtype": "int64"}, T((1, 3, 7, 7), "int64")),
    ("qnn.dense", [T((2, 3), "uint8"), T((4, 3), "int8"), T((), "int32"), T((), "int32"),
                   T(()), T(())], {"units": 4}, T((2, 4), "int32")),
    *[(f"qnn.{n}", [T((2, 3), "int8"), T((3,), "int8"), T(()), T((), "int32"), T(()),
                    T((), "int32"), T(()), T((), "int32")], {"lhs_axis": 1}, T((2, 3), "int8"))
      for n in ("add", "subtract", "mul")],
    ("qnn.concatenate", [[T((2, 3), "uint8"), T((2, 1), "uint8")], [T(()), T(())],
                         [T((), "int32"), T((), "int32")], T(()), T((), "int32")],
     {"axis": 1}, T((2, 4), "uint8")),
    ("qnn.avg_pool2d", [T((1, 3, 5, 5), "int8"), T(()), T((), "int32"), T(()),
                        T((), "int32")], {"pool_size": (2, 2)}, T((1, 3, 4, 4), "int8")),
    ("image.grid_sample", [T((1, 3, 4, 5)), T((1, 2, 6, 1))],
     {"method": "bicubic", "padding_mode": "border", "align_corners": False}, T((1, 3, 6, 1))),
    ("image.affine_grid", [T((2, 2, 3))], {"target_shape": (3, 4)}, T((2, 2, 3, 4))),
    ("vision.roi_align", [T((1, 3, 8, 8)), T((4, 5))],
     {"pooled_size": (2, 2), "spatial_scale": 0.5, "sample_ratio": 2}, T((4, 3, 2, 2))),
    ("vision.all_class_non_max_suppression",
     [T((2, 5, 4)), T((2, 3, 5)), T((1,), "int64"), T((1,)), T((1,))], {},
     TupleType((T((30, 3), "int64"), T((1,), "int64")))),
    ("nn.max_pool2d_with_argmax", [T((1, 2, 5, 5))], {"pool_size": (2, 2), "strides": (2, 2)},
     TupleType((T((1, 2, 2, 2)), T((1, 2, 2, 2), "int64")))),
    ("nn.deformable_conv2d", [T((1, 2, 5, 6)), T((1, 18, 3, 4)), T((3, 2, 3, 3))],
     {"kernel_size": (3, 3), "channels": 3}, T((1, 3, 3, 4))),
    ("nn.modulated_deformable_conv2d",
     [T((1, 2, 5, 6)), T((1, 18, 3, 4)), T((3, 2, 3, 3)), T((1, 9, 3, 4))], {}, T((1, 3, 3, 4))),
    ("stack", [[T((2, 3)), T((2, 3))]], {"axis": 2}, T((2, 3, 2))),
    ("split", [T((6, 4))], {"indices_or_sections": 2}, TupleType((T((3, 4)), T((3, 4))))),
    ("take", [T((4, 5)), T((2, 3), "int32")], {"axis": 1, "mode": "wrap"}, T((4, 2, 3))),
    ("strided_slice", [T((4, 5, 6))], {"begin": (1,), "end": (2,), "strides": (1,),
                                       "slice_mode": "size", "axes": (2,)}, T((4, 5, 2))),
    ("slice_like", [T((4, 5)), T((2, 3))], {"axes": (1,)}, T((4, 3))),
    ("broadcast_to", [T((3, 1), "uint8")], {"shape": (2, 3, 4)}, T((2, 3, 4), "uint8")),
    ("broadcast_to_like", [T((1, 4)), T((3, 4))], {}, T((3, 4))),
    ("collapse_sum_like", [T((2, 3, 4)), T((3, 1))], {}, T((3, 1))),
    ("tile", [T((2, 3))], {"reps": (2, 1, 2)}, T((2, 2, 6))),
    ("repeat", [T((2, 3))], {"repeats": 3, "axis": 0}, T((6, 3))),
    ("reverse", [T((2, 3))], {"axis": 0}, T((2, 3))),
    ("reverse_sequence", [T((4, 3)), T((3,), "int32")], {"seq_axis": 0, "batch_axis": 1},
     T((4, 3))),
    ("layout_transform", [T((1, 6, 2, 3))], {"src_layout": "NCHW", "dst_layout": "NHWC"},
     T((1, 2, 3, 6))),
    ("gather", [T((4, 5)), T((4, 2), "int32")], {"axis": 1}, T((4, 2))),
    ("gather_nd", [T((4, 5, 6)), T((2, 3), "int32")], {}, T((3, 6))),
    ("zeros", [], {"shape": (2, 3), "dtype": "int8"}, T((2, 3), "int8")),
    ("ones", [], {"shape": (2,), "dtype": "float16"}, T((2,), "float16")),
    ("full", [T((), "int32")], {"shape": (2, 3), "dtype": "float32"}, T((2, 3))),
    ("full_like", [T((2, 3), "int32"), T((), "int32")], {}, T((2, 3), "int32")),
    ("arange", [S, S, S], {"dtype": "float32"}, None),
    ("one_hot", [T((2, 3), "int32"), S, S], {"depth": 4, "dtype": "int32"},
     T((2, 3, 4), "int32")),
    ("shape_of", [T((2, 3))], {"dtype": "int32"}, T((2,), "int32")),
    # The ops of TVM's lowering (memory/, vm/, call/): `Storage[]` is core.rly's extern type.
    ("memory.alloc_storage", [T((), "int64"), T((2,), "int64"), T((), "int64")],
     {"dtype": "int8"}, STORAGE),
    ("memory.alloc_tensor", [STORAGE, T((), "int64"), T((2,), "int64")],
     {"dtype": "float16", "assert_shape": (2, 3)}, T((2, 3), "float16")),
    ("memory.kill", [T((2, 3))], {}, TupleType(())),
    ("vm.shape_of", [T((2, 3))], {"dtype": "int64"}, T((2,), "int64")),
    ("vm.reshape_tensor", [T((2, 8)), T((3,), "int64")], {"newshape": (2, 4, 2)},
     T((2, 4, 2))),
    ("vm.invoke_tvm_op", [FuncType((T((2,)), S), TupleType((T((2,)), S))), [T((2,)), S],
                          [T((2,)), S]], {}, TupleType(())),
    ("call_lowered", [FuncType((T((2,)), T((2,), "int32")), T((2,))), [T((2,)), T((2,), "int32")]],
     {}, T((2,))),
    ("call_dps_packed", [T((2, 3)), T((3,), "int32")],
     {"func": "env.f", "out_shape": (4,), "out_dtype": "float64"}, T((4,), "float64")),
    # The dyn family: shapes as tensors; results `?` (checked in test_dyn_ops.py).
    ("dyn.reshape", [T((2, 3, 4)), T((2,), "int64")], {"allowzero": True}, None),
    ("dyn.broadcast_to", [T((3, 1)), T((3,), "int32")], {}, None),
    ("dyn.tile", [T((2, 3)), T((3,), "int64")], {}, None),
    ("dyn.zeros", [T((2,), "int64")], {"dtype": "int8"}, None),
    ("dyn.ones", [T((0,), "int64")], {}, None),
    ("dyn.full", [S, T((2,), "int64")], {"dtype": "float16"}, None),
    ("dyn.strided_slice", [T((4, 5, 6))] + [T((2,), "int64")] * 3, {"slice_mode": "size"},
     None),
    ("dyn.expand_dims", [T((2, 3)), T((), "int32")], {"num_newaxis": 2}, None),
    ("dyn.squeeze", [T((1, 3, 1)), T((1,), "int64")], {}, None),
    ("dyn.one_hot", [T((2, 3), "int32"), S, S, T((), "int32")], {"axis": 0}, None),
    ("dyn.nn.pad", [T((2, 3)), T((2, 2), "int64"), S], {"pad_mode": "edge"}, None),
    ("dyn.topk", [T((4, 5)), T((), "int32")], {"axis": 0, "ret_type": "values"}, None),
    ("dyn.image.resize2d", [T((1, 2, 4, 4)), T((2,), "int64"), T((4,))],
     {"method": "nearest_neighbor"}, None),
    ("dyn.nn.upsampling", [T((1, 2, 3, 3)), S, S], {"layout": "NCHW"}, None),
    ("dyn.nn.upsampling3d", [T((1, 2, 3, 3, 3)), S, S, S], {"method": "trilinear"}, None),
    ("dyn.sparse_to_dense", [T((2,), "int32"), T((2,)), S, T((1,), "int64")], {}, None),
    ("image.resize1d", [T((1, 2, 4))], {"size": (7,)}, T((1, 2, 7))),
    ("nn.upsampling3d", [T((1, 2, 3, 3, 2))], {"scale_d": 2.0, "scale_h": 1.0, "scale_w": 1.5},
     T((1, 2, 6, 3, 3))),
    ("sparse_to_dense", [T((2, 2), "int32"), T((2,)), S], {"output_shape": (3, 4)},
     T((3, 4))),
    ("vision.roi_pool", [T((1, 3, 8, 8)), T((4, 5))],
     {"pooled_size": (2, 2), "spatial_scale": 0.5}, T((4, 3, 2, 2))),
]


def type_text(t: Type) -> str:
    if isinstance(t, TypeCall):
        return f"{t.func.name_hint}[{', '.join(type_text(a) for a in t.args)}]"
    if isinstance(t, FuncType):
        return f"fn ({', '.join(type_text(a) for a in t.arg_types)}) -> {type_text(t.ret_type)}"
    if isinstance(t, TupleType):
        return "(" + ", ".join(type_text(f) for f in t.fields) + ("," if len(t.fields) == 1
                                                                    else "") + ")"
    if not t.shape:
        return t.dtype
    return f"Tensor[({', '.join(map(str, t.shape))}), {t.dtype}]"


def value_text(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v!r}f"
    if isinstance(v, str):
        return json.dumps(v)
    return "[" + ", ".join(value_text(x) for x in v) + "]"


def build_and_write(name: str, types: list[Any], attrs: dict[str, Any]) -> tuple[Any, str]:
    """The call built from Python (its inputs typed variables; a list of types is a tuple
    built from a Python list), and the same program as Relay text."""
    params: list[Var] = []
    inputs: list[Any] = []
    texts: list[str] = []
    for t in types:
        if isinstance(t, list):
            vs = [rl.var(f"p{len(params) + i}", type_annotation=f) for i, f in enumerate(t)]
            params += vs
            inputs.append(vs)
            texts.append("(" + ", ".join(f"%{v.name_hint}" for v in vs) + ")")
        else:
            v = rl.var(f"p{len(params)}", type_annotation=t)
            params.append(v)
            inputs.append(v)
            texts.append(f"%{v.name_hint}")
    call = builder_of(name)(*inputs, **attrs)
    fn = rl.Function(params, call)
    sig = ", ".join(f"%{p.name_hint}: {type_text(p.type_annotation)}" for p in params)
    args = texts + [f"{k}={value_text(v)}" for k, v in attrs.items()]
    text = f'#[version = "0.0.5"]\ndef @main({sig}) {{\n  {name}({", ".join(args)})\n}}\n'
    if "Storage[" in sig:
        text = text.replace("\ndef", "\nextern type Storage\ndef", 1)
    return fn, text


def module_of(fn: Any) -> Any:
    """The module of `fn`, with core.rly's `extern type Storage` when a parameter uses it."""
    mod = rl.IRModule.from_expr(fn)
    if any("Storage[" in type_text(p.type_annotation) for p in fn.params
           if not isinstance(p.type_annotation, TupleType)):
        mod.add_type_definition(TypeData(STORAGE.func, (), ()))
    return mod


def result_type(fn: Any) -> Type:
    mod = rl.transform.InferType()(module_of(fn))
    return mod["main"].body.checked_type


@pytest.mark.parametrize("name, types, attrs, expected", TYPED,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TYPED)])
def test_built_call_type_checks_and_equals_the_parsed_text(name, types, attrs, expected):
    fn, text = build_and_write(name, types, attrs)
    parsed = rl.parse(text)
    assert rl.structural_equal(module_of(fn), parsed), (rl.astext(fn), text)
    got = result_type(fn)
    assert rl.structural_equal(got, result_type(parsed["main"]))
    if expected is not None:
        assert rl.structural_equal(got, expected), (type_text(got), type_text(expected))


def untyped_cases() -> list[str]:
    """The ops without attributes that TYPED does not list: each is type-checked on
    same-shaped tensors of the first dtype its relation accepts."""
    listed = {c[0] for c in TYPED}
    return [d.name for d in all_ops() if d.attrs is None and d.name not in listed]


@pytest.mark.parametrize("name", untyped_cases())
def test_ops_without_attributes_type_check(name: str) -> None:
    opdef = get_op_def(name)
    errors = []
    for dtype in ("float32", "int32", "bool"):
        fn, text = build_and_write(name, [T((2, 3), dtype)] * opdef.num_inputs, {})
        try:
            got = result_type(fn)
        except rl.DiagnosticError as e:
            errors.append(str(e))
            continue
        assert isinstance(got, TensorType) and got.shape == (2, 3)
        assert rl.structural_equal(rl.IRModule.from_expr(fn), rl.parse(text))
        return
    pytest.fail(f"{name} type-checks for none of float32, int32, bool:\n" + "\n".join(errors))


def test_every_op_is_type_checked() -> None:
    covered = {c[0] for c in TYPED} | set(untyped_cases())
    assert sorted(set(op_names()) - covered) == []


# ---------------------------------------------------------------- namespaces


def test_namespaces_come_from_the_registry() -> None:
    heads = {n.split(".")[0] for n in op_names()}
    assert {"nn", "image", "annotation", "add", "concatenate"} <= heads
    assert set(dir(rl.op.make)) >= heads
    assert isinstance(rl.nn, OpNamespace) and rl.nn is rl.op.make.nn is namespace("nn")
    assert "conv2d" in dir(rl.nn) and "relu" in dir(rl.nn) and "add" not in dir(rl.nn)
    assert dir(rl.image) == sorted(n.split(".", 1)[1] for n in op_names()
                                   if n.startswith("image."))
    assert "nn" in dir(rl) and "add" in dir(rl) and "var" in dir(rl)


def test_unknown_names_suggest_close_matches() -> None:
    with pytest.raises(AttributeError, match=r"'nn.conv2dd'.*`conv2d`"):
        rl.nn.conv2dd
    with pytest.raises(AttributeError, match=r"`multiply`"):
        rl.op.make.mulitply
    with pytest.raises(AttributeError, match="no attribute 'mulitply'"):
        rl.mulitply
    with pytest.raises(AttributeError):
        rl.nn.__wrapped__
    assert not hasattr(rl, "no_such_op_or_name")
    # The helpers of relaylang.op.make are not ops: they do not leak into `rl`.
    assert not hasattr(rl, "get_builder") and not hasattr(rl, "OpCallError")


def test_existing_public_names_win_over_ops() -> None:
    import relaylang.transform as transform_pkg
    assert rl.transform is transform_pkg and rl.op is __import__("relaylang.op").op
    assert rl.parse.__module__ == "relaylang.syntax.parser"
    for name in ("ir", "op", "syntax", "typing", "transform", "backend", "analysis"):
        assert inspect.ismodule(getattr(rl, name)), name
    assert rl.op.get("nn.relu") is get("nn.relu")
    # A root op does not collide with a public name (the public name would win).
    public = set(rl.__all__) | {"ir", "op", "syntax", "typing", "transform", "backend",
                                "analysis"}
    for name in public & {n.split(".")[0] for n in op_names()}:
        assert getattr(rl, name) is not getattr(rl.op.make, name), name


def test_an_op_registered_later_gets_its_builder() -> None:
    from relaylang.op import registry

    opdef = OpDef("test_builder_ns.twice", 1, input_names=("data",))
    registry.register_op(opdef)
    try:
        x = rl.var("x")
        call = rl.test_builder_ns.twice(x)
        assert call.op is get("test_builder_ns.twice") and call.args == (x,)
        assert "twice" in dir(rl.test_builder_ns)
    finally:
        registry._OPS.pop(opdef.name)
        registry._OP_NODES.pop(opdef.name)
    with pytest.raises(AttributeError):
        rl.op.make.test_builder_ns


# ---------------------------------------------------------------- inputs


def test_inputs_by_keyword_and_lists_as_tuples() -> None:
    x, w = rl.var("x"), rl.var("w")
    call = rl.nn.dense(data=x, weight=w, units=4)
    assert call.args == (x, w) and call.attrs.units == 4
    a, b = rl.var("a"), rl.var("b")
    cat = rl.concatenate((a, b), axis=1)
    assert isinstance(cat.args[0], Tuple) and cat.args[0].fields == (a, b)
    mixed = rl.stack([a, 1.0])
    assert isinstance(mixed.args[0], Tuple) and isinstance(mixed.args[0].fields[1], Constant)
    assert rl.concatenate([]).args[0].fields == ()


def test_numbers_and_arrays_are_wrapped_with_const() -> None:
    x = rl.var("x", shape=(2,))
    call = rl.add(x, 1.0)
    assert isinstance(call.args[1], Constant) and call.args[1].data.dtype == np.float32
    assert rl.multiply(x, 2).args[1].data.dtype == np.int32
    arr = np.arange(2, dtype="float16")
    wrapped = rl.add(arr, [1.0, 2.0])
    assert wrapped.args[0].data.dtype == np.float16 and wrapped.args[1].data.shape == (2,)
    padded = rl.nn.pad(x, 0.0, pad_width=[[1, 1]])
    assert padded.args[1].data.dtype == np.float32 and padded.args[1].data.shape == ()
    assert rl.structural_equal(result_type(rl.Function([x], padded)), T((4,)))


def test_attribute_values_are_converted_from_python_and_numpy() -> None:
    x = rl.var("x")
    call = rl.reshape(x, newshape=np.array([2, -1]))
    assert call.attrs.newshape == (2, -1)
    assert rl.sum(x, axis=[np.int64(1)]).attrs.axis == (1,)
    assert rl.cast(x, dtype=np.float16).attrs.dtype == "float16"
    assert rl.cast(x, dtype=np.dtype("int8")).attrs.dtype == "int8"
    assert rl.nn.leaky_relu(x, alpha=np.float32(0.5)).attrs.alpha == 0.5
    # Attributes equal what the parser makes from the same text (shared checker).
    assert rl.nn.conv2d(x, x, strides=[2, 2]).attrs == make_attrs(
        get_op_def("nn.conv2d").attrs, {"strides": (2, 2)}, "nn.conv2d")


# ---------------------------------------------------------------- errors


def test_unknown_keyword() -> None:
    x, w = rl.var("x"), rl.var("w")
    with pytest.raises(OpCallError) as info:
        rl.nn.conv2d(x, w, stride=(2, 2))
    e = info.value
    assert isinstance(e, TypeError) and e.op_name == "nn.conv2d" and e.key == "stride"
    assert "`stride`" in e.message and "`nn.conv2d`" in e.message
    assert "strides, padding, dilation" in e.message and "did you mean `strides`" in e.message
    with pytest.raises(OpCallError, match=r"add\(\) takes no attributes, got `axis`"):
        rl.add(x, w, axis=1)


def test_ill_typed_keyword() -> None:
    x, w = rl.var("x"), rl.var("w")
    with pytest.raises(OpCallError) as info:
        rl.nn.conv2d(x, w, strides="2")
    assert info.value.key == "strides"
    assert str(info.value) == ("nn.conv2d(): attribute `strides` expects a list of dimensions "
                               "or None, got a string")
    with pytest.raises(OpCallError, match=r"nn.dense\(\): attribute `units` expects .*float"):
        rl.nn.dense(x, w, units=2.5)
    with pytest.raises(OpCallError, match=r"`groups` expects an integer, got a boolean"):
        rl.nn.conv2d(x, w, groups=True)
    with pytest.raises(OpCallError, match=r"`dtype` expects a dtype string, got an integer"):
        rl.cast(x, dtype=32)


def test_missing_required_attribute() -> None:
    x = rl.var("x")
    with pytest.raises(OpCallError, match=r"^cast\(\): missing required attribute `dtype`$"):
        rl.cast(x)
    with pytest.raises(OpCallError, match=r"missing required attribute `a_min`"):
        rl.clip(x, a_max=1.0)


def test_wrong_number_of_inputs() -> None:
    x = rl.var("x")
    with pytest.raises(OpCallError) as info:
        rl.nn.conv2d(x)
    assert str(info.value) == ("nn.conv2d() is missing 1 input `weight`: it takes 2 inputs "
                               "(data, weight)")
    with pytest.raises(OpCallError) as info:
        rl.reshape(x, (2, 3))
    assert str(info.value) == ("reshape() takes 1 input (data) but 2 positional arguments "
                               "were given; attributes are keywords: newshape=..., "
                               "allowzero=...")
    with pytest.raises(OpCallError, match=r"add\(\) takes 2 inputs \(lhs, rhs\) but 3"):
        rl.add(x, x, x)
    with pytest.raises(OpCallError, match=r"missing 2 inputs `lhs`, `rhs`"):
        rl.add()
    with pytest.raises(OpCallError, match="both positionally and as a keyword"):
        rl.nn.relu(x, data=x)


def test_input_that_is_not_an_expression() -> None:
    with pytest.raises(OpCallError, match=r"nn.relu\(\): input `data` must be a Relay "
                                          r"expression .* got str"):
        rl.nn.relu("x")
    with pytest.raises(OpCallError, match=r"input `data\[1\]` must be"):
        rl.concatenate([rl.var("a"), object()])
