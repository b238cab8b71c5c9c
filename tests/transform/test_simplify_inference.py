"""SimplifyInference: batch_norm/layer_norm/dropout rewritten into arithmetic, same results."""
from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from pass_helpers import main_args
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.expr import Call, Function, Op, TupleGetItem, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.op.nn import DropoutAttrs
from relaylang.transform import InferType, get_pass
from relaylang.transform.simplify_inference import ATOL, RTOL

inputs = partial(main_args, bools="random")
same_value = partial(shared_same_value, rtol=RTOL, atol=ATOL)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
SI = get_pass("SimplifyInference")
NAMES = sorted(p.name for p in EXAMPLES.glob("*.relay") if p.name != "digits_mlp.relay")


def check(before: IRModule, after: IRModule) -> None:
    again = rl.parse(rl.astext(after))
    InferType()(again)
    assert rl.structural_equal(SI(after), after)        # idempotent
    args = inputs(before)
    assert same_value(rl.evaluate(before, *args), rl.evaluate(after, *args))


def ops(mod: IRModule) -> set[str]:
    return {n.name for fn in mod.functions.values() for n in post_order(fn)
            if isinstance(n, Op)}


@pytest.mark.parametrize("path", NAMES)
def test_examples(path):
    mod = rl.parse((EXAMPLES / path).read_text())
    check(mod, SI(mod))


def test_conv_bn_relu_loses_batch_norm():
    mod = rl.parse((EXAMPLES / "conv_bn_relu.relay").read_text())
    out = SI(mod)
    assert "nn.batch_norm" not in ops(out) and {"sqrt", "expand_dims"} <= ops(out)


BN = """def @main(%x: Tensor[(2, 3, 4), float32], %g: Tensor[(3), float32],
               %b: Tensor[(3), float32], %m: Tensor[(3), float32], %v: Tensor[(3), float32]) {
  %0 = nn.batch_norm(%x, %g, %b, %m, %v, epsilon=0.01f, {opts});
  {use}
}"""


@pytest.mark.parametrize("opts", ["axis=1", "axis=-1", "axis=2, center=False",
                                  "axis=0, scale=False"])
def test_batch_norm_matches_kernel(opts):
    shape = {"axis=1": "3", "axis=-1": "4", "axis=2, center=False": "4",
             "axis=0, scale=False": "2"}[opts]
    text = BN.replace("(3)", f"({shape})").replace("{opts}", opts).replace("{use}", "%0.0")
    mod = rl.parse(HEADER + text)
    out = SI(mod)
    assert "nn.batch_norm" not in ops(out)
    check(mod, out)


def test_batch_norm_other_fields_keep_the_call():
    mod = rl.parse(HEADER + BN.replace("{opts}", "axis=1").replace("{use}", "(%0.0, %0.2)"))
    out = SI(mod)
    body = out["main"].body
    assert isinstance(body.fields[1], TupleGetItem)
    assert body.fields[1].tuple_value.op.name == "nn.batch_norm"
    assert not isinstance(body.fields[0], TupleGetItem)
    check(mod, out)


def test_layer_norm_and_dropout():
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(2, 3, 4), float32],
        %g: Tensor[(3), float32], %b: Tensor[(3), float32]) {
      %0 = nn.dropout(%x);
      (nn.layer_norm(%0.0, %g, %b, axis=1, scale=False), nn.layer_norm(%x, %g, %b, axis=-2))
    }""")
    out = SI(mod)
    assert not {"nn.layer_norm", "nn.dropout"} & ops(out)
    check(mod, out)


def test_untyped_module_built_directly_is_typed_first():
    x = Var("x", TensorType((5,), "float32"))
    fn = Function((x,), TupleGetItem(Call(get_op("nn.dropout"), (x,), DropoutAttrs()), 0))
    mod = IRModule({rl.ir.expr.GlobalVar("main"): fn})
    assert SI(mod)["main"].body is SI(mod)["main"].params[0]


def test_deep_chain():
    x = Var("x", TensorType((2,), "float32"))
    body = x
    for _ in range(100_000):
        body = TupleGetItem(Call(get_op("nn.dropout"), (body,), DropoutAttrs()), 0)
    mod = IRModule({rl.ir.expr.GlobalVar("main"): Function((x,), body)})
    out = SI(mod)
    assert out["main"].body is out["main"].params[0]
