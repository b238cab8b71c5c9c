"""Op input names (OpDef.input_names, TVM's `.add_argument`s) and the one op-signature
formatter (relaylang/op/signature.py) that completion, signature help and hovers share."""
from __future__ import annotations

import keyword

import pytest

from relaylang.op.registry import OpDef, OpPattern, all_ops
from relaylang.op.signature import default_text, first_sentence, op_signature, signature_of


@pytest.mark.parametrize("opdef", all_ops(), ids=lambda o: o.name)
def test_every_op_names_each_of_its_inputs(opdef: OpDef) -> None:
    names = opdef.input_names
    assert len(names) == max(opdef.num_inputs, 0)      # -1: variadic, no names
    assert all(n.isidentifier() and not keyword.iskeyword(n) for n in names)
    assert len(set(names)) == len(names)


def test_the_registry_has_all_its_ops() -> None:
    assert len(all_ops()) >= 159          # the names above are checked for every one


@pytest.mark.parametrize("name, inputs", [
    ("nn.conv2d", ("data", "weight")),
    ("nn.conv2d_transpose", ("data", "weight")),
    ("nn.dense", ("data", "weight")),
    ("nn.matmul", ("tensor_a", "tensor_b")),
    ("nn.batch_matmul", ("tensor_a", "tensor_b")),
    ("nn.bias_add", ("data", "bias")),
    ("nn.prelu", ("data", "alpha")),
    ("nn.batch_norm", ("data", "gamma", "beta", "moving_mean", "moving_var")),
    ("nn.layer_norm", ("data", "gamma", "beta")),
    ("nn.pad", ("data", "pad_val")),
    ("add", ("lhs", "rhs")),
    ("less_equal", ("lhs", "rhs")),
    ("exp", ("data",)),
    ("where", ("condition", "x", "y")),
    ("cast_like", ("data", "dtype_like")),
    ("variance", ("data", "mean")),
    ("concatenate", ("data",)),
    ("take", ("data", "indices")),
    ("reshape_like", ("data", "shape_like")),
    ("broadcast_to_like", ("data", "broadcast_type")),
    ("collapse_sum_like", ("data", "collapse_type")),
    ("reverse_sequence", ("data", "seq_lengths")),
    ("one_hot", ("indices", "on_value", "off_value")),
    ("arange", ("start", "stop", "step")),
    ("full", ("fill_value",)),
    ("zeros", ()),
    ("on_device", ("body",)),
    ("device_copy", ("data",)),
])
def test_input_names_are_tvms(name: str, inputs: tuple[str, ...]) -> None:
    sig = op_signature(name)
    assert sig is not None and sig.parameters[:sig.num_inputs] == tuple(
        (n, f"input {i + 1} of {len(inputs)}") for i, n in enumerate(inputs))
    assert sig.num_inputs == len(inputs)


def test_label_spells_defaults_as_tvms_python_api() -> None:
    sig = op_signature("nn.conv2d")
    assert sig is not None and sig.label == (
        'nn.conv2d(data, weight, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1, '
        'channels=None, kernel_size=None, data_layout="NCHW", kernel_layout="OIHW", '
        'out_layout="", out_dtype="")')
    assert op_signature("nn.conv1d").label.startswith("nn.conv1d(data, weight, strides=(1,), ")
    assert op_signature("nn.batch_norm").label.endswith(
        "axis=1, epsilon=1e-05, center=True, scale=True)")
    assert op_signature("add").label == "add(lhs, rhs)"
    assert op_signature("zeros").label == 'zeros(shape, dtype="")'


def test_required_attributes_have_no_default() -> None:
    sig = op_signature("nn.dense")
    assert sig is not None and sig.label == 'nn.dense(data, weight, units, out_dtype="")'
    assert sig.parameters[2:] == (("units", "required"), ("out_dtype", '""'))
    assert sig.attribute_names == ("units", "out_dtype")


def test_attributes_copied_from_inputs_are_not_repeated() -> None:
    # TVM's ArangeAttrs repeat the inputs start/stop/step.
    assert op_signature("arange").label == "arange(start, stop, step, dtype)"


@pytest.mark.parametrize("opdef", all_ops(), ids=lambda o: o.name)
def test_parameter_labels_appear_in_the_label_in_order(opdef: OpDef) -> None:
    sig = signature_of(opdef)
    assert sig.label == f"{opdef.name}({', '.join(sig.parameter_labels)})"
    assert len(sig.parameter_labels) == len(sig.parameters)
    names = [n for n, _ in sig.parameters]
    assert len(set(names)) == len(names)
    assert sig.doc and "\n" not in sig.doc


def test_default_text() -> None:
    assert default_text((1, 1)) == "(1, 1)" and default_text((0,)) == "(0,)"
    assert default_text(((0, 0), (1, 1))) == "((0, 0), (1, 1))"
    assert default_text("NCHW") == '"NCHW"' and default_text('a"b') == '"a\\"b"'
    assert default_text(None) == "None" and default_text(True) == "True"
    assert default_text(0.25) == "0.25" and default_text(()) == "()"


def test_doc_is_the_first_sentence_of_the_registry_doc() -> None:
    documented = OpDef("nn.example", 1, doc="2D convolution layer (e.g. spatial\n convolution"
                       " over images). This layer creates a kernel.", input_names=("data",))
    assert signature_of(documented).doc == \
        "2D convolution layer (e.g. spatial convolution over images)."
    assert first_sentence("No full stop") == "No full stop"
    assert first_sentence("Sums, e.g. rows. More.") == "Sums, e.g. rows."


def test_doc_without_registry_doc_describes_the_kind_of_op() -> None:
    assert op_signature("nn.conv2d").doc == "Neural-network operator"
    assert op_signature("nn.dropout").doc == "Neural-network operator (stateful)"
    assert op_signature("sum").doc == "Reduction operator"
    assert op_signature("add").doc == "Broadcasting operator"
    assert op_signature("annotation.stop_fusion").doc.startswith("Annotation operator")
    plain = OpDef("example", 0, pattern=OpPattern.INJECTIVE)
    assert signature_of(plain).doc.startswith("Injective operator")


def test_unknown_op_has_no_signature() -> None:
    assert op_signature("nn.no_such_op") is None
