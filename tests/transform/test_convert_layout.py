"""ConvertLayout: conversions keep values, transforms only at region edges, options,
errors, and 100,000-deep inputs."""
from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import pytest
from pass_helpers import main_args
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.cli import main as relay_main
from relaylang.ir.expr import Call, Function, GlobalVar, Let, Op, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.op.nn import Conv2DAttrs
from relaylang.transform import InferType, get_pass
from relaylang.transform.layout.convert_layout import DEFAULT_DESIRED, ConvertLayout
from relaylang.transform.layout.rewrite import rewrite_layouts
from relaylang.transform.layout.rules import RULES
from relaylang.transform.pass_infra import pass_text

# Layout changes only move elements; sums over other orders may round differently.
same_value = partial(shared_same_value, rtol=1e-5, atol=1e-6)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
SPECS = ["ConvertLayout", "ConvertLayout{desired_layouts=nn.conv2d:NHWC:OHWI}",
         "ConvertLayout{desired_layouts=nn.conv2d:NCHW}",
         "ConvertLayout{desired_layouts=nn.conv2d:NHWC;nn.max_pool2d:NHWC}"]


def check(before: IRModule, after: IRModule, p) -> None:
    InferType()(rl.parse(rl.astext(after)))               # re-parses and type-checks
    assert rl.structural_equal(p(after), after)            # idempotent
    args = main_args(before)
    if args is not None:
        assert same_value(rl.evaluate(before, *args), rl.evaluate(after, *args))


def count(mod: IRModule, name: str) -> int:
    return sum(1 for fn in mod.functions.values() for n in post_order(fn)
               if isinstance(n, Call) and isinstance(n.op, Op) and n.op.name == name)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("path", sorted(p.name for p in EXAMPLES.glob("*.relay")))
def test_examples_keep_their_values(path, spec):
    mod = rl.parse((EXAMPLES / path).read_text())
    p = get_pass(spec)
    check(mod, p(mod), p)


RESIDUAL = HEADER + """def @main(%x: Tensor[(2, 3, 8, 8), float32], %w1: Tensor[(4, 3, 3, 3), float32],
    %w2: Tensor[(4, 4, 3, 3), float32], %w3: Tensor[(4, 3, 1, 1), float32], %b: Tensor[(4), float32],
    %s: Tensor[(4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, strides=[2, 2], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.relu(nn.bias_add(%0, %b));
  %2 = nn.conv2d(%1, %w2, padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %3 = nn.conv2d(%x, %w3, strides=[2, 2], channels=4, kernel_size=[1, 1]);
  %4 = add(multiply(%2, %s), %3);
  %5 = concatenate((%4, %1), axis=1);
  %6 = nn.avg_pool2d(%5, pool_size=[2, 2], count_include_pad=True);
  %7 = mean(%6, axis=[2, 3], keepdims=True);
  nn.softmax(nn.batch_flatten(%7))
}
"""


@pytest.mark.parametrize("spec", SPECS)
def test_residual_block_keeps_its_values(spec):
    mod = rl.parse(RESIDUAL)
    p = get_pass(spec)
    out = p(mod)
    check(mod, out, p)
    if spec == "ConvertLayout":       # x enters twice (two convs read it): one shared transform
        assert count(out, "layout_transform") == 1 + 3 + 1 + 1   # x, 3 weights, s, mean's result


CHAIN = HEADER + """def @main(%x: Tensor[(1, 3, 8, 8), float32]) {
  %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1, 1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);
  nn.conv2d(%2, meta[relay.Constant][1], channels=5, kernel_size=[1, 1])
}
"""


def test_chain_has_transforms_only_at_its_edges():
    import numpy as np
    rng = np.random.default_rng(0)
    meta = {"relay.Constant": [rng.standard_normal((4, 3, 3, 3)).astype("float32"),
                               rng.standard_normal((5, 4, 1, 1)).astype("float32")]}
    mod = rl.parse(CHAIN, metadata=meta)
    out = ConvertLayout()(mod)
    assert count(out, "layout_transform") == 4           # x in, two weights, result out
    folded = get_pass("FoldConstant")(out)
    assert count(folded, "layout_transform") == 2        # the weights' transforms folded
    body = folded["main"].body
    assert body.op.name == "layout_transform" and body.attrs.dst_layout == "NCHW"
    args = main_args(mod)
    assert same_value(rl.evaluate(mod, *args), rl.evaluate(folded, *args))


def test_python_dict_option_is_the_text_option():
    from_dict = ConvertLayout(desired_layouts={"nn.conv2d": ["NHWC", "default"],
                                               "nn.max_pool2d": "NHWC"})
    from_text = get_pass("ConvertLayout{desired_layouts=nn.conv2d:NHWC;nn.max_pool2d:NHWC}")
    assert from_dict == from_text
    assert get_pass(pass_text(from_dict)) == from_dict                  # prints as it reads
    assert pass_text(ConvertLayout()) == "ConvertLayout"                # the default: NHWC
    assert ConvertLayout.opt_level == 3


@pytest.mark.parametrize("value, message", [
    ("nn.dense:NC", "cannot convert the layout of `nn.dense`"),
    ("nn.conv2d:NCW", "expected the axes NCHW"),
    ("nn.conv2d:NCHW16c", "cannot be default"),
    ("nn.conv2d:NCHW16c:OIHW16i8o", "expected OIHW16i16o"),
    ("nn.conv2d:NCHW16d:OIHW16i16o", "expected the axes NCHW"),
    ("nn.conv2d:NHWC:OIW", "kernel layout `OIW`"),
    ("nn.conv2d:NHCW", "no default kernel layout"),
    ("nn.conv2d", "names no layout"),
    ("nn.max_pool2d:NHWC:HWIO", "takes 1 desired layout"),
    ("nn.conv2d:default", "cannot be default"),
])
def test_bad_desired_layouts_are_errors(value, message):
    with pytest.raises(ValueError, match=message):
        ConvertLayout(desired_layouts=value)


def test_bad_option_on_the_command_line_is_a_usage_error(tmp_path, capsys):
    src = tmp_path / "m.relay"
    src.write_text(CHAIN.replace("meta[relay.Constant][0]", "%w").replace(
        "meta[relay.Constant][1]", "%w").replace("%x: Tensor[(1, 3, 8, 8), float32]",
                                                 "%x: Tensor[(1, 3, 8, 8), float32], %w"))
    code = relay_main(["opt", str(src), "-p", "ConvertLayout{desired_layouts=nn.conv2d:NCW}"])
    err = capsys.readouterr().err
    assert code != 0 and "expected the axes NCHW" in err and "Traceback" not in err


ARGMAX = HEADER + """def @main(%x: Tensor[(1, 3, 5, 6), float32], %w: Tensor[(4, 3, 1, 1), float32]) {
  argmax(nn.conv2d(%x, %w, channels=4, kernel_size=[1, 1]), axis=[2, 3])
}
"""


@pytest.mark.parametrize("spec, converted", [
    ("ConvertLayout{desired_layouts=nn.conv2d:NHWC}", True),          # H, W keep their order
    ("ConvertLayout{desired_layouts=nn.conv2d:NWHC:OIHW}", False)])    # W before H: an edge
def test_argmax_over_several_axes_follows_only_when_their_order_stays(spec, converted):
    mod = rl.parse(ARGMAX)
    p = get_pass(spec)
    out = p(mod)
    check(mod, out, p)
    (argmax,) = [n for n in post_order(out["main"]) if isinstance(n, Call)
                 and isinstance(n.op, Op) and n.op.name == "argmax"]
    assert tuple(argmax.attrs.axis) == ((1, 2) if converted else (2, 3))


def test_skip_layers_option():
    p = get_pass("ConvertLayout{skip_layers=1;0}")
    assert p.skip_layers == (0, 1) and get_pass(pass_text(p)) == p
    assert ConvertLayout(skip_layers=[2]).skip_layers == (2,)
    with pytest.raises(ValueError, match="skip_layers must be layer positions"):
        ConvertLayout(skip_layers="a")
    out = p(rl.parse(RESIDUAL))                       # the first two of three convolutions
    assert sorted(c.attrs.data_layout for fn in out.functions.values()
                  for c in post_order(fn) if isinstance(c, Call) and isinstance(c.op, Op)
                  and c.op.name == "nn.conv2d") == ["NCHW", "NCHW", "NHWC"]


# ---------------------------------------------------------------- deep inputs

def _conv(data, weight):
    return Call(get_op("nn.conv2d"), (data, weight), Conv2DAttrs(kernel_size=(1, 1)))


def deep_graph(n: int) -> IRModule:
    """conv -> n relus -> conv, as IR (the parser is not what is measured)."""
    x = Var("x", TensorType((1, 2, 3, 3), "float32"))
    w = Var("w", TensorType((2, 2, 1, 1), "float32"))
    node = _conv(x, w)
    relu = get_op("nn.relu")
    for _ in range(n):
        node = Call(relu, (node,))
    return IRModule({GlobalVar("main"): Function((x, w), _conv(node, w))})


def deep_lets(n: int) -> IRModule:
    x = Var("x", TensorType((1, 2, 3, 3), "float32"))
    w = Var("w", TensorType((2, 2, 1, 1), "float32"))
    vars_ = [Var(f"v{i}") for i in range(n + 1)]
    body = _conv(vars_[-1], w)
    relu = get_op("nn.relu")
    for i in range(n, 0, -1):
        body = Let(vars_[i], Call(relu, (vars_[i - 1],)), body)
    return IRModule({GlobalVar("main"): Function((x, w), Let(vars_[0], _conv(x, w), body))})


@pytest.mark.parametrize("build", [deep_graph, deep_lets], ids=["graph", "let"])
def test_100k_deep_rewrite_without_recursion(build):
    """The machinery itself on 100,000 nodes (untyped: these rules need no types; type
    inference of such inputs is timed by its own tests)."""
    fn = build(100_000)["main"]
    start = time.perf_counter()
    out = rewrite_layouts(fn, RULES, DEFAULT_DESIRED.prefer)
    seconds = time.perf_counter() - start
    transforms = [n for n in post_order(out)
                  if isinstance(n, Call) and getattr(n.op, "name", "") == "layout_transform"]
    assert len(transforms) == 3 and seconds < 20, seconds       # x in, w (shared), out


def test_let_chain_binds_new_layout_variables():
    mod = InferType()(deep_lets(2_000))
    out = ConvertLayout()(mod)
    assert count(out, "layout_transform") == 3
    lets = [n for n in post_order(out["main"]) if isinstance(n, Let)]
    assert len(lets) == 2_001
    assert all(let.var.checked_type.shape == (1, 3, 3, 2) for let in lets)
    args = main_args(mod)
    assert same_value(rl.evaluate(mod, *args), rl.evaluate(out, *args))
