"""The shared completion engine (relaylang/ide): completion lists and signature help on
complete and incomplete text."""
from __future__ import annotations

import relaylang as rl
from relaylang.ide import KINDS, complete, signature_at

ADT = "type List[T] {\n  Cons(T, List[T]),\n  Nil,\n}\n"


def labels(text: str, offset: int | None = None, **kw) -> list[str]:
    return [c.label for c in complete(text, len(text) if offset is None else offset, **kw)]


def by_label(text: str, **kw):
    return {c.label: c for c in complete(text, len(text), **kw)}


def test_after_nn_dot_only_nn_ops():
    found = complete("def @main(%x) { nn.", 19)
    assert found and all(c.kind == "op" and c.label.startswith("nn.") for c in found)
    assert "nn.conv2d" in [c.label for c in found] and "add" not in [c.label for c in found]
    assert {c.replace_start for c in found} == {16}      # the whole dotted name is replaced


def test_partial_op_name_and_its_signature_doc():
    found = by_label("def @main(%x) { nn.con")
    assert set(found) == {"nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.conv1d_transpose",
                          "nn.conv2d_transpose", "nn.conv3d_transpose",
                          "nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc"}
    assert found["nn.conv2d"].detail.startswith(
        'nn.conv2d(data, weight, strides=(1, 1), padding=(0, 0)')
    assert found["nn.conv2d"].detail.endswith('out_layout="", out_dtype="")')
    assert found["nn.conv2d"].doc == "Neural-network operator"


def test_last_dotted_part_matches_too():
    assert "nn.conv2d" in labels("conv")
    assert "add" in labels("ad")


def test_locals_in_scope_with_annotations():
    text = "def @f(%x: Tensor[(2, 3), float32], %y) {\n  let %z = %x;\n  %0 = add(%z, %y);\n  %"
    found = complete(text, len(text))
    assert [c.label for c in found] == ["%0", "%z", "%y", "%x"]       # innermost first
    assert all(c.kind == "local" and c.replace_start == len(text) - 1 for c in found)
    assert found[3].detail == "Tensor[(2, 3), float32]"


def test_locals_of_other_definitions_are_not_in_scope():
    text = "def @f(%x) { %x }\ndef @g(%a) {\n  %"
    assert labels(text) == ["%a"]


def test_locals_of_closed_blocks_are_forgotten():
    text = "def @f(%x) {\n  let %g = fn (%inner) { %inner };\n  %"
    assert labels(text) == ["%g", "%x"]
    assert "%inner" in labels("def @f(%x) {\n  let %g = fn (%inner) { %")


def test_partial_local_filters():
    assert labels("def @f(%xa, %xb, %y) { %x") == ["%xb", "%xa"]


def test_match_pattern_variables_scope_over_their_clause():
    head = ADT + "def @f(%l) {\n  match (%l) {\n    Cons(%h, %t) => "
    assert labels(head + "%") == ["%t", "%h", "%l"]
    assert labels(head + "%h,\n    Nil => %") == ["%l"]


def test_locals_get_inferred_types_from_a_typed_module():
    source = "#[version = \"0.0.5\"]\ndef @f(%x: Tensor[(2), float32]) {\n  let %y = add(%x, %x);\n  %y\n}\n"
    typed = rl.transform.InferType()(rl.parse(source))
    text = "def @f(%x: Tensor[(2), float32]) {\n  let %y = add(%x, %x);\n  %"
    found = by_label(text, module=typed)
    assert found["%y"].detail == "Tensor[(2), float32]"


def test_globals_from_text_and_module():
    mod = rl.parse("#[version = \"0.0.5\"]\ndef @lib(%a: float32) -> float32 { %a }\n")
    found = by_label("def @main(%x: int32) -> int32 { %x }\ndef @g() { @", module=mod)
    assert set(found) == {"@main", "@g", "@lib"}
    assert found["@main"].detail == "(%x: int32) -> int32"
    assert found["@lib"].detail == "(%a: float32) -> float32"
    assert labels("def @main() { @m") == ["@main"]


def test_constructors_and_type_names_on_upper_case():
    found = by_label(ADT + "def @f() { C")
    assert set(found) == {"Cons"} and found["Cons"].kind == "constructor"
    assert found["Cons"].detail == "(T, List[T]) : List[T]"
    found = by_label(ADT + "def @f() { L")
    assert set(found) == {"List"} and found["List"].kind == "type" and found["List"].detail == "[T]"


def test_constructors_from_a_module():
    mod = rl.parse("#[version = \"0.0.5\"]\n" + ADT)
    found = by_label("def @f() { N", module=mod)
    assert found["Nil"].kind == "constructor" and found["Nil"].detail == " : List[T]"


def test_attributes_inside_an_op_call_not_yet_given():
    text = "def @main(%x, %w) { nn.conv2d(%x, %w, strides=[1, 1], "
    found = complete(text, len(text))
    attrs = [c.label for c in found if c.kind == "attribute"]
    assert attrs[:3] == ["padding", "dilation", "groups"] and "strides" not in attrs
    padding = next(c for c in found if c.label == "padding")
    assert padding.doc == "nn.conv2d attribute padding=(0, 0)"
    assert labels(text + "ker") == ["kernel_size", "kernel_layout"]
    required = by_label("def @main(%x) { nn.dense(%x, %w, ")["units"]
    assert "required" in required.doc


def test_nothing_inside_comments_or_strings():
    assert complete("// nn.", 6) == []
    assert complete("/* outer /* inner */ nn.", 24) == []
    assert complete('def @f() { cast(%x, dtype="fl', 29) == []
    assert labels("/* done */ nn.c")[:1] == ["nn.conv1d"]


def test_types_after_colon_and_arrow():
    found = by_label("def @f(%x: fl")
    assert set(found) == {"float32", "float16", "float64"} and found["float32"].kind == "type"
    assert "Tensor" in labels("def @f(%x) -> ")
    assert "List" in labels(ADT + "def @f(%x: ")


def test_commands_only_at_the_start_of_the_input():
    commands = {"help": "show the commands", ":type": "the type of an expression"}
    found = complete(":t", 2, extra_commands=commands)
    assert [(c.label, c.kind, c.doc, c.replace_start) for c in found] == [
        (":type", "command", "the type of an expression", 0)]
    assert [c.label for c in complete("  :", 3, extra_commands=commands)] == [":help", ":type"]
    assert not [c for c in complete("%x :", 4, extra_commands=commands) if c.kind == "command"]


def test_keywords_and_kinds_are_known():
    found = complete("def @f(%x) { le", 15)
    assert [(c.label, c.kind) for c in found] == [("left_shift", "op"), ("less", "op"),
                                                   ("less_equal", "op"), ("let", "keyword"),
                                                   ("nn.leaky_relu", "op")]
    everything = complete("def @f(%x) { ", 13) + complete("%", 1) + complete("@", 1)
    assert {c.kind for c in everything} <= set(KINDS)


def test_offsets_are_code_points():
    text = "// héllo ✓\ndef @f(%x) { %"
    found = complete(text, len(text))
    assert [(c.label, c.replace_start) for c in found] == [("%x", len(text) - 1)]


def test_offset_in_the_middle_of_the_text():
    text = "def @f(%abc) { %a }"
    found = complete(text, text.index("%a }") + 2)
    assert [(c.label, c.replace_start) for c in found] == [("%abc", text.index("%a }"))]


def test_signature_help_active_parameter():
    sig = signature_at("def @m(%x, %w) { nn.conv2d(%x, ", 31)
    assert sig is not None and sig.label.startswith("nn.conv2d(data, weight, strides=(1, 1)")
    assert sig.active_parameter == 1 and sig.parameters[1] == "weight"
    assert all(p in sig.label for p in sig.parameters)
    text = "def @m(%x, %w) { nn.conv2d(%x, %w, padding=[1, "
    sig = signature_at(text, len(text))
    assert sig is not None and sig.parameters[sig.active_parameter] == "padding=(0, 0)"
    text = "def @m(%x, %w) { nn.conv2d(%x, %w, strides=[2, 2], "
    sig = signature_at(text, len(text))
    assert sig is not None and sig.parameters[sig.active_parameter] == "padding=(0, 0)"


def test_signature_help_inner_call_and_outside_calls():
    text = "def @m(%x) { add(nn.relu(%x"
    sig = signature_at(text, len(text))
    assert sig is not None and sig.label == "nn.relu(data)"
    sig = signature_at(text + "), ", len(text) + 3)
    assert sig is not None and sig.label == "add(lhs, rhs)" and sig.active_parameter == 1
    assert signature_at("def @m(%x) { %x", 15) is None
    assert signature_at("def @m(%x) { @g(%x, ", 20) is None


def test_deep_input_does_not_recurse():
    depth = 100_000
    body = "".join(f"  %{i} = add(%{i - 1 if i else 'x'}, 1f);\n" for i in range(20_000))
    text = "def @main(%x: float32) {\n" + body + "  %"
    assert len(complete(text, len(text))) == 20_001          # a long chain: linear
    nested = "def @main(%x) { " + "add(%x, " * depth        # deep nesting: no recursion
    sig = signature_at(nested, len(nested))
    assert sig is not None and sig.active_parameter == 1
    assert labels(nested + "%") == ["%x"]


def test_signature_help_names_every_input_and_counts_commas():
    text = "def @m(%x, %g, %b) { nn.batch_norm(%x, %g, (%b, %b), "
    sig = signature_at(text, len(text))          # the comma inside the tuple does not count
    assert sig is not None and sig.parameters[:5] == (
        "data", "gamma", "beta", "moving_mean", "moving_var")
    assert sig.active_parameter == 3 and sig.parameters[3] == "moving_mean"
    text = "def @m(%c, %x, %y) { where(%c, %x, "
    sig = signature_at(text, len(text))
    assert sig is not None and sig.label == "where(condition, x, y)" and sig.active_parameter == 2


def test_attribute_completion_shows_tvm_python_defaults():
    found = by_label("def @m(%x, %w) { nn.conv2d(%x, %w, st")
    assert found["strides"].kind == "attribute"
    assert found["strides"].doc == "nn.conv2d attribute strides=(1, 1)"
    found = by_label("def @m(%x) { reshape(%x, ")
    assert found["newshape"].doc == "reshape attribute newshape (required)"
