"""The op registry: every op once, with TVM's arity, fusion pattern and attribute schema."""
from __future__ import annotations

import dataclasses
import types
import typing

import pytest

import relaylang.op as op
from relaylang.ir.attrs import AttrError, Attrs, DictAttrs, DType, make_attrs
from relaylang.ir.expr import Op
from relaylang.ir.node import ANY, MetaObject
from relaylang.op import OpDef, OpPattern, attrs_schemas, get_op_def, register_op

E, B, I = OpPattern.ELEMWISE, OpPattern.BROADCAST, OpPattern.INJECTIVE
R, F, O = OpPattern.COMM_REDUCE, OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.OPAQUE

UNARY = ("negative abs exp log log2 log10 sqrt rsqrt sigmoid tanh erf floor ceil round trunc "
         "sign sin cos tan logical_not bitwise_not copy zeros_like ones_like isnan isinf "
         "isfinite fast_exp fast_tanh fast_erf").split()
BINARY = ("add subtract multiply divide floor_divide floor_mod mod power maximum minimum equal "
          "not_equal less less_equal greater greater_equal logical_and logical_or logical_xor "
          "bitwise_and bitwise_or bitwise_xor right_shift left_shift").split()

# name -> (attrs type key or None, num_inputs, pattern), from TVM's registrations.
EXPECTED: dict[str, tuple[str | None, int, OpPattern]] = {
    **{name: (None, 1, E) for name in UNARY},
    **{name: (None, 2, B) for name in BINARY},
    "where": (None, 3, B),
    "clip": ("ClipAttrs", 1, E),
    "cast": ("CastAttrs", 1, E),
    "cast_like": (None, 2, E),
    "reinterpret": ("CastAttrs", 1, E),
    **{name: ("ReduceAttrs", 1, R) for name in "sum mean max min prod all any".split()},
    "argmax": ("ArgReduceAttrs", 1, R),
    "argmin": ("ArgReduceAttrs", 1, R),
    "variance": ("VarianceAttrs", 2, R),
    "reshape": ("ReshapeAttrs", 1, I),
    "reshape_like": ("ReshapeLikeAttrs", 2, I),
    "transpose": ("TransposeAttrs", 1, I),
    "expand_dims": ("ExpandDimsAttrs", 1, B),
    "squeeze": ("SqueezeAttrs", 1, I),
    "concatenate": ("ConcatenateAttrs", 1, I),
    "stack": ("StackAttrs", 1, I),
    "split": ("SplitAttrs", 1, I),
    "take": ("TakeAttrs", 2, I),
    "strided_slice": ("StridedSliceAttrs", 1, I),
    "broadcast_to": ("InitOpAttrs", 1, B),
    "broadcast_to_like": (None, 2, B),
    "tile": ("TileAttrs", 1, B),
    "repeat": ("RepeatAttrs", 1, B),
    "reverse": ("ReverseAttrs", 1, I),
    "zeros": ("InitOpAttrs", 0, E),
    "ones": ("InitOpAttrs", 0, E),
    "full": ("InitOpAttrs", 1, E),
    "full_like": (None, 2, E),
    "layout_transform": ("LayoutTransformAttrs", 1, I),
    "shape_of": ("ShapeOfAttrs", 1, O),
    "gather": ("GatherAttrs", 2, I),
    "gather_nd": ("GatherNDAttrs", 2, I),
    "one_hot": ("OneHotAttrs", 3, F),
    "arange": ("ArangeAttrs", 3, O),
    "collapse_sum_like": (None, 2, R),
    "slice_like": ("SliceLikeAttrs", 2, I),
    "cumsum": ("ScanopAttrs", 1, O),
    "cumprod": ("ScanopAttrs", 1, O),
    "image.resize2d": ("Resize2DAttrs", 1, I),
    "nn.conv1d": ("Conv1DAttrs", 2, F),
    "nn.conv2d": ("Conv2DAttrs", 2, F),
    "nn.conv3d": ("Conv3DAttrs", 2, F),
    "nn.conv2d_transpose": ("Conv2DTransposeAttrs", 2, F),
    "nn.dense": ("DenseAttrs", 2, F),
    "nn.matmul": ("MatmulAttrs", 2, F),
    "nn.batch_matmul": ("BatchMatmulAttrs", 2, F),
    "nn.bias_add": ("BiasAddAttrs", 2, B),
    "nn.batch_norm": ("BatchNormAttrs", 5, F),
    "nn.layer_norm": ("LayerNormAttrs", 3, O),
    "nn.group_norm": ("GroupNormAttrs", 3, O),
    "nn.instance_norm": ("InstanceNormAttrs", 3, O),
    "nn.relu": (None, 1, E),
    "nn.leaky_relu": ("LeakyReluAttrs", 1, E),
    "nn.prelu": ("PReluAttrs", 2, B),
    "nn.softmax": ("SoftmaxAttrs", 1, F),
    "nn.log_softmax": ("SoftmaxAttrs", 1, F),
    "nn.max_pool2d": ("MaxPool2DAttrs", 1, F),
    "nn.avg_pool2d": ("AvgPool2DAttrs", 1, F),
    "nn.global_avg_pool2d": ("GlobalPool2DAttrs", 1, F),
    "nn.global_max_pool2d": ("GlobalPool2DAttrs", 1, F),
    "nn.adaptive_avg_pool2d": ("AdaptivePool2DAttrs", 1, F),
    "nn.adaptive_max_pool2d": ("AdaptivePool2DAttrs", 1, F),
    "nn.pad": ("PadAttrs", 2, I),
    "nn.dropout": ("DropoutAttrs", 1, O),
    "nn.batch_flatten": (None, 1, I),
    "nn.upsampling": ("UpSamplingAttrs", 1, I),
    "nn.lrn": ("LRNAttrs", 1, O),
    "nn.l2_normalize": ("L2NormalizeAttrs", 1, F),
    "nn.depth_to_space": ("SubPixelAttrs", 1, I),
    "nn.space_to_depth": ("SubPixelAttrs", 1, I),
    "on_device": ("OnDeviceAttrs", 1, O),
    "device_copy": ("DeviceCopyAttrs", 1, O),
    "annotation.stop_fusion": (None, 1, O),
}


# ------------------------------------------------------------------ the ops

def _schema(name: str) -> type[Attrs]:
    opdef = get_op_def(name)
    assert opdef is not None and opdef.attrs is not None, name
    return opdef.attrs


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_op_registered_as_in_tvm(name: str) -> None:
    key, arity, pattern = EXPECTED[name]
    opdef = get_op_def(name)
    assert opdef is not None, name
    assert opdef.num_inputs == arity
    assert opdef.pattern == pattern
    if key is None:
        assert opdef.attrs is None
    else:
        assert opdef.attrs is not None and opdef.attrs.type_key == "relay.attrs." + key


@pytest.mark.parametrize("name", ["logsumexp", "std", "stop_fusion", "nn.relu6", "bogus"])
def test_names_tvm_does_not_register_are_absent(name: str) -> None:
    # logsumexp/std are Python compositions in TVM, the fusion barrier is
    # `annotation.stop_fusion`: TVM's parser rejects these names.
    assert get_op_def(name) is None
    with pytest.raises(KeyError):
        op.get(name)


def test_only_dropout_is_stateful() -> None:
    stateful = {d.name for d in op.all_ops() if d.stateful}
    # TVM's TOpIsStateful, and external calls (the callee may have effects)
    assert stateful == {"nn.dropout", "memory.kill", "vm.invoke_tvm_op", "call_dps_packed"}


def test_no_duplicate_names_and_reregistration_fails() -> None:
    names = [d.name for d in op.all_ops()]
    assert len(names) == len(set(names))
    before = get_op_def("add")
    with pytest.raises(ValueError, match="add"):
        register_op(OpDef("add", 2))
    assert get_op_def("add") is before


def test_get_returns_one_shared_op_node() -> None:
    first = op.get("add")
    assert isinstance(first, Op) and first.name == "add"
    assert op.get("add") is first
    assert op.get("nn.conv2d") is not first


def test_every_op_schema_is_listed_by_type_key() -> None:
    schemas = attrs_schemas()
    for opdef in op.all_ops():
        if opdef.attrs is not None and opdef.attrs is not DictAttrs:   # free-form, no schema
            assert schemas[opdef.attrs.type_key] is opdef.attrs
    # Schemas that no op owns are still findable (meta[relay.attrs.CompilerAttrs][0]).
    assert schemas["relay.attrs.CompilerAttrs"].type_key == "relay.attrs.CompilerAttrs"
    assert schemas["relay.attrs.CastHintAttrs"].type_key == "relay.attrs.CastHintAttrs"


def test_shared_schemas_are_one_class() -> None:
    assert _schema("sum") is _schema("prod") is _schema("mean")
    assert _schema("nn.global_avg_pool2d") is _schema("nn.global_max_pool2d")
    assert _schema("zeros") is _schema("broadcast_to")


# ------------------------------------------------------------- the schemas

def _sample(annotation: typing.Any) -> typing.Any:
    """A valid value for a required field of type `annotation`."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        return None if type(None) in args else _sample(args[0])
    if origin is tuple:
        return ()
    samples = {int: 3, float: 0.5, bool: True, str: "x", DType: "float16", object: None}
    return samples[annotation]


def _required(schema: type[Attrs]) -> dict[str, typing.Any]:
    hints = typing.get_type_hints(schema)
    return {name: _sample(hints[name]) for name, default in schema.field_defaults()
            if default is dataclasses.MISSING}


ALL_SCHEMAS = sorted(attrs_schemas().items())


@pytest.mark.parametrize("key,schema", ALL_SCHEMAS, ids=[k for k, _ in ALL_SCHEMAS])
def test_schema_defaults_round_trip(key: str, schema: type[Attrs]) -> None:
    assert key.startswith("relay.attrs.")
    assert "type_key" not in {f.name for f in dataclasses.fields(schema)}
    required = _required(schema)
    built = make_attrs(schema, required, key)
    # Writing every default explicitly gives the same attributes ...
    explicit = {name: getattr(built, name) for name, _ in schema.field_defaults()}
    assert make_attrs(schema, explicit, key) == built
    # ... and only the required fields count as non-default (the printer's view).
    assert built.non_default_items() == list(required.items())
    assert [name for name, _ in built.items()] == [f.name for f in dataclasses.fields(schema)]


@pytest.mark.parametrize("key,schema", ALL_SCHEMAS, ids=[k for k, _ in ALL_SCHEMAS])
def test_schema_rejects_unknown_key(key: str, schema: type[Attrs]) -> None:
    with pytest.raises(AttrError) as info:
        make_attrs(schema, {**_required(schema), "no_such_field": 1}, "someop")
    assert info.value.key == "no_such_field"
    assert "no_such_field" in info.value.message


@pytest.mark.parametrize("schema_op,key,value", [
    ("nn.conv2d", "groups", "2"),
    ("nn.conv2d", "strides", "1"),
    ("nn.conv2d", "padding", (1, "x")),
    ("nn.conv2d", "out_dtype", 32),
    ("nn.dense", "units", "16"),
    ("sum", "keepdims", 2),
    ("sum", "axis", 1.5),
    ("strided_slice", "begin", 0),
    ("nn.pad", "pad_width", (1, 2)),
    ("nn.pad", "pad_mode", True),
    ("split", "indices_or_sections", "3"),
    ("nn.leaky_relu", "alpha", "x"),
    ("cast", "dtype", None),
])
def test_wrong_value_type_names_the_key(schema_op: str, key: str, value: typing.Any) -> None:
    schema = _schema(schema_op)
    with pytest.raises(AttrError) as info:
        make_attrs(schema, {**_required(schema), key: value}, schema_op)
    assert info.value.key == key and f"`{key}`" in info.value.message


def test_omitted_required_field_reads_as_none_and_still_prints() -> None:
    # TVM prints required fields always (`units=None`); an omitted one that may be
    # None is read as None, so `nn.dense(%x, %w)` parses and prints `units=None`.
    attrs = make_attrs(_schema("nn.dense"), {}, "nn.dense")
    assert attrs.units is None
    assert ("units", None) in attrs.non_default_items()


# ------------------------------------- spot checks against TVM's headers

def _fields(name: str) -> list[tuple[str, typing.Any]]:
    return _schema(name).field_defaults()


M = dataclasses.MISSING


def test_conv2d_fields_match_tvm() -> None:
    assert _fields("nn.conv2d") == [
        ("strides", (1, 1)), ("padding", (0, 0)), ("dilation", (1, 1)), ("groups", 1),
        ("channels", None), ("kernel_size", None), ("data_layout", "NCHW"),
        ("kernel_layout", "OIHW"), ("out_layout", ""), ("out_dtype", "")]


def test_conv2d_transpose_fields_match_tvm() -> None:
    assert [n for n, _ in _fields("nn.conv2d_transpose")] == [
        "channels", "kernel_size", "strides", "output_padding", "padding", "dilation",
        "groups", "data_layout", "kernel_layout", "out_layout", "out_dtype"]
    assert dict(_fields("nn.conv2d_transpose"))["kernel_layout"] == "IOHW"


def test_dense_fields_match_tvm() -> None:
    assert _fields("nn.dense") == [("units", M), ("out_dtype", "")]
    # units has no default in TVM, so it is always printed: `nn.dense(%x, %w, units=None)`.
    attrs = make_attrs(_schema("nn.dense"), {"units": None})
    assert attrs.non_default_items() == [("units", None)]


def test_reduce_fields_match_tvm() -> None:
    assert _fields("sum") == [("axis", None), ("keepdims", False), ("exclude", False)]
    assert _fields("argmax") == [("axis", None), ("keepdims", False),
                                 ("select_last_index", False), ("exclude", False)]
    assert _fields("variance")[-1] == ("unbiased", False)
    attrs = make_attrs(_schema("sum"), {"axis": (1,), "keepdims": 1})
    assert attrs.non_default_items() == [("axis", (1,)), ("keepdims", True)]


def test_strided_slice_fields_match_tvm() -> None:
    assert _fields("strided_slice") == [
        ("begin", M), ("end", M), ("strides", M), ("slice_mode", "end"), ("axes", M)]
    # TVM prints `strided_slice(%x, begin=[0], end=[1], strides=[1], axes=None)`.
    attrs = make_attrs(_schema("strided_slice"),
                       {"begin": (0,), "end": (1,), "strides": (1,), "axes": None})
    assert [n for n, _ in attrs.non_default_items()] == ["begin", "end", "strides", "axes"]


def test_pad_fields_match_tvm() -> None:
    # pad_value became nn.pad's second input; it is no longer an attribute.
    assert _fields("nn.pad") == [("pad_width", M), ("pad_mode", "constant")]
    attrs = make_attrs(_schema("nn.pad"), {"pad_width": ((0, 0), (1, 1))})
    assert attrs.pad_width == ((0, 0), (1, 1))
    with pytest.raises(AttrError) as info:
        make_attrs(_schema("nn.pad"), {"pad_width": (), "pad_value": 0.0})
    assert info.value.key == "pad_value"


def test_pool_field_order_matches_tvm() -> None:
    assert [n for n, _ in _fields("nn.max_pool2d")] == [
        "pool_size", "strides", "dilation", "padding", "layout", "out_layout", "ceil_mode"]
    assert [n for n, _ in _fields("nn.avg_pool2d")][-1] == "count_include_pad"


def test_value_conversions() -> None:
    leaky = make_attrs(_schema("nn.leaky_relu"), {"alpha": 1})
    assert leaky.alpha == 1.0 and isinstance(leaky.alpha, float)
    split = _schema("split")
    assert make_attrs(split, {"indices_or_sections": 3}).indices_or_sections == 3
    assert make_attrs(split, {"indices_or_sections": (2, 5)}).indices_or_sections == (2, 5)
    conv = make_attrs(_schema("nn.conv2d"), {"channels": ANY, "kernel_size": (3, ANY)})
    assert conv.channels is ANY and conv.kernel_size == (3, ANY)
    # The void dtype prints as "": writing it explicitly is the default.
    assert make_attrs(_schema("nn.dense"),
                      {"units": 4, "out_dtype": ""}).non_default_items() == [("units", 4)]


def test_device_annotations() -> None:
    device = MetaObject("VirtualDevice", '{"device_type": 2}')
    on_device = _schema("on_device")
    assert [n for n, _ in _fields("on_device")] == [
        "virtual_device", "constrain_result", "constrain_body"]
    attrs = make_attrs(on_device, {"virtual_device": device})
    assert attrs.non_default_items() == [("virtual_device", device)]
    copy = _schema("device_copy")
    assert make_attrs(copy, {"dst_virtual_device": device}).src_virtual_device is None
    both = make_attrs(copy, {"src_virtual_device": device, "dst_virtual_device": device})
    assert [n for n, _ in both.non_default_items()] == ["src_virtual_device", "dst_virtual_device"]
