"""DynamicToStatic: each dyn op with constant shape arguments becomes its static twin
(golden-style: the result equals the expected text after InferType), shapes computed
from static shapes fold first (shape_of -> take -> concatenate -> dyn.reshape), calls
it cannot rewrite stay, and the pass is registered by TVM's name.

Each result re-parses to itself, the pass is idempotent on it, and the interpreter
gives the same values before and after.
"""
from __future__ import annotations

import numpy as np
import pytest
from pass_helpers import main_args, same_value

import relaylang as rl
from relaylang.ir.expr import Call, Constant
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.transform import InferType, get_pass
from relaylang.transform.dynamic_to_static import DynamicToStatic

HEAD = '#[version = "0.0.5"]\n'
D2S = DynamicToStatic()


def parse(text: str, *consts: np.ndarray) -> IRModule:
    meta = {"relay.Constant": list(consts)} if consts else None
    return rl.parse(HEAD + text, metadata=meta)


def ops(mod: IRModule) -> list[str]:
    return [n.op.name for n in post_order(mod["main"]) if isinstance(n, Call)
            and hasattr(n.op, "name")]


def check(before: IRModule, expected: IRModule | None = None) -> IRModule:
    out = D2S(before)
    if expected is not None:
        assert rl.structural_equal(out, InferType()(expected)), rl.astext(out)
    again = InferType()(rl.parse(rl.astext(out)))
    assert rl.structural_equal(again, out)
    assert rl.structural_equal(D2S(out), out)                      # idempotent
    args = main_args(before)
    if args is not None:
        assert same_value(rl.evaluate(before, *args), rl.evaluate(out, *args))
    return out


def a(values, dtype="int64"):
    return np.array(values, dtype=dtype)


# ---------------------------------------------------------------- every op
# (before, its constants, after, its constants)
GOLDEN = [
    ("dyn.reshape",
     "def @main(%x: Tensor[(2, 3, 4), float32]) { dyn.reshape(%x, meta[relay.Constant][0]) }",
     [a([2, -1])], "def @main(%x: Tensor[(2, 3, 4), float32]) { reshape(%x, newshape=[2, -1]) }",
     []),
    ("dyn.reshape-allowzero",
     ("def @main(%x: Tensor[(2, 0, 4), float32]) {\n"
     "  dyn.reshape(%x, meta[relay.Constant][0], allowzero=True)\n}"),
     [a([0, 8], "int32")],
     "def @main(%x: Tensor[(2, 0, 4), float32]) { reshape(%x, newshape=[0, 8], allowzero=True) }",
     []),
    ("dyn.broadcast_to",
     "def @main(%x: Tensor[(3, 1), int32]) { dyn.broadcast_to(%x, meta[relay.Constant][0]) }",
     [a([2, 3, 4])],
     "def @main(%x: Tensor[(3, 1), int32]) { broadcast_to(%x, shape=[2, 3, 4]) }", []),
    ("dyn.tile",
     "def @main(%x: Tensor[(2, 3), float32]) { dyn.tile(%x, meta[relay.Constant][0]) }",
     [a([2, 1, 2])], "def @main(%x: Tensor[(2, 3), float32]) { tile(%x, reps=[2, 1, 2]) }", []),
    ("dyn.zeros",      # the static zeros of a constant shape folds, as in TVM
     ("def @main(%x: Tensor[(2, 3), float32]) {\n"
     "  add(%x, dyn.zeros(meta[relay.Constant][0], dtype=\"float32\"))\n}"),
     [a([2, 3])], "def @main(%x: Tensor[(2, 3), float32]) { add(%x, meta[relay.Constant][0]) }",
     [np.zeros((2, 3), "float32")]),
    ("dyn.ones",
     ("def @main(%x: Tensor[(1, 3), int32]) {\n"
     "  multiply(%x, dyn.ones(meta[relay.Constant][0], dtype=\"int32\"))\n}"),
     [a([2, 1, 3])],
     "def @main(%x: Tensor[(1, 3), int32]) { multiply(%x, meta[relay.Constant][0]) }",
     [np.ones((2, 1, 3), "int32")]),
    ("dyn.full",
     "def @main(%v: float32) { dyn.full(%v, meta[relay.Constant][0]) }",
     [a([2, 0])], "def @main(%v: float32) { full(%v, shape=[2, 0]) }", []),
    ("dyn.full-dtype",
     "def @main(%v: float32) { dyn.full(%v, meta[relay.Constant][0], dtype=\"float16\") }",
     [a([3])], "def @main(%v: float32) { full(%v, shape=[3], dtype=\"float16\") }", []),
    ("dyn.strided_slice",
     ("def @main(%x: Tensor[(4, 5, 6), float32]) {\n  dyn.strided_slice(%x, "
     "meta[relay.Constant][0], meta[relay.Constant][1], meta[relay.Constant][2])\n}"),
     [a([3, 1]), a([0, 5]), a([-2, 2])],
     ("def @main(%x: Tensor[(4, 5, 6), float32]) {\n"
     "  strided_slice(%x, begin=[3, 1], end=[0, 5], strides=[-2, 2], axes=None)\n}"), []),
    ("dyn.strided_slice-size",
     ("def @main(%x: Tensor[(4, 5), float32]) {\n  dyn.strided_slice(%x, "
     "meta[relay.Constant][0], meta[relay.Constant][1], meta[relay.Constant][2], "
     "slice_mode=\"size\")\n}"),
     [a([1]), a([2]), a([1])],
     ("def @main(%x: Tensor[(4, 5), float32]) {\n  strided_slice(%x, begin=[1], end=[2], "
     "strides=[1], slice_mode=\"size\", axes=None)\n}"), []),
    ("dyn.expand_dims",
     ("def @main(%x: Tensor[(2, 3), float32]) {\n"
     "  dyn.expand_dims(%x, -1i64, num_newaxis=2)\n}"), [],
     "def @main(%x: Tensor[(2, 3), float32]) { expand_dims(%x, axis=-1, num_newaxis=2) }", []),
    ("dyn.squeeze",
     "def @main(%x: Tensor[(1, 3, 1), float32]) { dyn.squeeze(%x, meta[relay.Constant][0]) }",
     [a([0, -1])], "def @main(%x: Tensor[(1, 3, 1), float32]) { squeeze(%x, axis=[0, -1]) }",
     []),
    ("dyn.one_hot",
     ("def @main(%i: Tensor[(2, 3), int32]) {\n"
     "  dyn.one_hot(%i, 1f, 0f, 4, axis=0, dtype=\"float32\")\n}"), [],
     ("def @main(%i: Tensor[(2, 3), int32]) {\n"
     "  one_hot(%i, 1f, 0f, depth=4, axis=0, dtype=\"float32\")\n}"), []),
    ("dyn.nn.pad",
     ("def @main(%x: Tensor[(2, 3), float32], %v: float32) {\n"
     "  dyn.nn.pad(%x, meta[relay.Constant][0], %v, pad_mode=\"edge\")\n}"),
     [a([[1, 0], [2, 1]])],
     ("def @main(%x: Tensor[(2, 3), float32], %v: float32) {\n"
     "  nn.pad(%x, %v, pad_width=[[1, 0], [2, 1]], pad_mode=\"edge\")\n}"), []),
    ("dyn.topk",
     "def @main(%x: Tensor[(4, 5), float32]) { dyn.topk(%x, 2, axis=0, is_ascend=True) }", [],
     "def @main(%x: Tensor[(4, 5), float32]) { topk(%x, k=2, axis=0, is_ascend=True) }", []),
    ("dyn.topk-indices",
     ("def @main(%x: Tensor[(4, 5), float32]) {\n"
     "  dyn.topk(%x, meta[relay.Constant][0], ret_type=\"indices\", dtype=\"int64\")\n}"),
     [a([0], "int32")],
     ("def @main(%x: Tensor[(4, 5), float32]) {\n"
     "  topk(%x, k=0, ret_type=\"indices\", dtype=\"int64\")\n}"), []),
    ("dyn.image.resize2d",
     ("def @main(%x: Tensor[(1, 2, 3, 3), float32]) {\n  dyn.image.resize2d(%x, "
     "meta[relay.Constant][0], meta[relay.Constant][1], method=\"nearest_neighbor\")\n}"),
     [a([5.0, 2.0], "float32"), np.zeros(4, "float32")],
     ("def @main(%x: Tensor[(1, 2, 3, 3), float32]) {\n  image.resize2d(%x, size=[5, 2], "
     "roi=[0f, 0f, 0f, 0f], method=\"nearest_neighbor\")\n}"), []),
    ("dyn.nn.upsampling",
     ("def @main(%x: Tensor[(1, 2, 3, 3), int8]) {\n"
     "  dyn.nn.upsampling(%x, 2f, 1.5f64, layout=\"NCHW\")\n}"), [],
     "def @main(%x: Tensor[(1, 2, 3, 3), int8]) { nn.upsampling(%x, scale_h=2f, scale_w=1.5f) }",
     []),
    ("dyn.nn.upsampling3d",
     ("def @main(%x: Tensor[(1, 2, 2, 3, 1), float32]) {\n"
     "  dyn.nn.upsampling3d(%x, 2f, 1f, 3f, method=\"trilinear\")\n}"), [],
     ("def @main(%x: Tensor[(1, 2, 2, 3, 1), float32]) {\n  nn.upsampling3d(%x, scale_d=2f, "
     "scale_h=1f, scale_w=3f, method=\"trilinear\")\n}"), []),
    ("dyn.sparse_to_dense",
     ("def @main(%i: Tensor[(2, 2), int32], %v: Tensor[(2), float32]) {\n"
     "  dyn.sparse_to_dense(%i, %v, 0f, meta[relay.Constant][0])\n}"),
     [a([3, 4])],
     ("def @main(%i: Tensor[(2, 2), int32], %v: Tensor[(2), float32]) {\n"
     "  sparse_to_dense(%i, %v, 0f, output_shape=[3, 4])\n}"), []),
]


@pytest.mark.parametrize("case", GOLDEN, ids=[c[0] for c in GOLDEN])
def test_each_dyn_op_becomes_its_static_op(case):
    _, before, consts, after, after_consts = case
    out = check(parse(before, *consts), parse(after, *after_consts))
    assert not any(name.startswith("dyn.") for name in ops(out))


def test_every_dyn_op_has_a_golden_case():
    from relaylang.op import all_ops
    family = {d.name for d in all_ops() if d.package == "relaylang.op.dyn"}
    assert family == {c[0].partition("-")[0] for c in GOLDEN}


# ---------------------------------------------------------------- shapes that fold first

def test_shape_of_take_concatenate_reshape_chain_ends_static():
    before = parse("""def @main(%x: Tensor[(2, 3, 4), float32]) {
      %0 = shape_of(%x);
      %1 = take(%0, meta[relay.Constant][0]);
      %2 = take(%0, meta[relay.Constant][1]);
      %3 = prod(%2, keepdims=True);
      %4 = (%1, %3);
      %5 = concatenate(%4);
      dyn.reshape(%x, %5)
    }""", a([0]), a([1, 2]))
    out = check(before, parse(
        "def @main(%x: Tensor[(2, 3, 4), float32]) { reshape(%x, newshape=[2, 12]) }"))
    assert rl.astext(out["main"].body.checked_type) == "Tensor[(2, 12), float32]"


def test_rewrites_repeat_until_nothing_changes():
    # The second shape is known only once the first reshape is static (TVM: the types
    # are inferred again before each argument is looked at).
    before = parse("""def @main(%x: Tensor[(2, 3, 4), float32]) {
      %0 = dyn.reshape(%x, meta[relay.Constant][0]);
      %1 = shape_of(%0, dtype="int32");
      %2 = dyn.zeros(%1, dtype="float32");
      %3 = add(%0, %2);
      %4 = shape_of(%3);
      %5 = take(%4, 0);
      %6 = expand_dims(%5, axis=0);
      dyn.tile(%3, %6)
    }""", a([-1, 4]))
    out = check(before, parse("""def @main(%x: Tensor[(2, 3, 4), float32]) {
      %0 = reshape(%x, newshape=[-1, 4]);
      %1 = add(%0, meta[relay.Constant][0]);
      tile(%1, reps=[6])
    }""", np.zeros((6, 4), "float32")))
    assert rl.astext(out["main"].body.checked_type) == "Tensor[(6, 24), float32]"


def test_let_bound_shapes_and_inner_functions():
    before = parse("""def @main(%x: Tensor[(2, 3), float32]) {
      let %s = shape_of(%x);
      let %f = fn (%y: Tensor[(3, 2), float32]) {
        dyn.reshape(%y, %s)
      };
      %f(dyn.reshape(%x, meta[relay.Constant][0]))
    }""", a([3, 2]))
    out = check(before, parse("""def @main(%x: Tensor[(2, 3), float32]) {
      let %f = fn (%y: Tensor[(3, 2), float32]) {
        reshape(%y, newshape=[2, 3])
      };
      %f(reshape(%x, newshape=[3, 2]))
    }"""))
    assert rl.astext(out["main"].body.checked_type) == "Tensor[(2, 3), float32]"


def test_return_annotation_of_a_changed_function_is_dropped():
    before = parse("""def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(?, ?), float32] {
      dyn.reshape(%x, meta[relay.Constant][0])
    }""", a([3, 2]))
    out = check(before, parse(
        "def @main(%x: Tensor[(2, 3), float32]) { reshape(%x, newshape=[3, 2]) }"))
    assert rl.astext(out["main"].checked_type.ret_type) == "Tensor[(3, 2), float32]"


# ---------------------------------------------------------------- what stays

def test_shapes_known_only_at_run_time_stay_dynamic():
    text = """def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(2), int64],
                        %y: Tensor[(?, 3), float32]) {
      %0 = dyn.reshape(%x, %s);
      %1 = shape_of(%y);
      %2 = dyn.reshape(%x, %1);
      (%0, %2)
    }"""
    before = parse(text)
    out = D2S(before)
    assert rl.structural_equal(out, InferType()(parse(text)))
    assert ops(out).count("dyn.reshape") == 2


@pytest.mark.parametrize("call, const", [
    ("dyn.reshape(%x, meta[relay.Constant][0])", a([-2])),          # would change the rank
    ("dyn.reshape(%x, meta[relay.Constant][0])", a([5, 5])),        # 6 elements, not 25
    ("dyn.squeeze(%x, meta[relay.Constant][0])", a([1])),           # dimension 3, not 1
    ("dyn.tile(%x, meta[relay.Constant][0])", a([-1, 1])),
    ("dyn.broadcast_to(%x, meta[relay.Constant][0])", a([4, 4])),
])
def test_values_the_static_op_rejects_stay_dynamic(call, const):
    text = f"def @main(%x: Tensor[(2, 3), float32]) {{ {call} }}"
    out = D2S(parse(text, const))
    assert rl.structural_equal(out, InferType()(parse(text, const)))
    with pytest.raises(rl.InterpreterError if hasattr(rl, "InterpreterError") else Exception):
        rl.evaluate(out, np.zeros((2, 3), "float32"))


def test_fused_functions_are_left_alone():
    text = """def @main(%x: Tensor[(2, 3), float32]) {
      %0 = fn (%p: Tensor[(2, 3), float32], Primitive=1) {
        dyn.reshape(%p, meta[relay.Constant][0])
      };
      %0(%x)
    }"""
    out = D2S(parse(text, a([6])))
    assert "dyn.reshape" in rl.astext(out)


def test_a_deep_chain_needs_no_recursion():
    x = rl.var("x", shape=(2, 3, 4), dtype="float32")
    y = x
    for k in range(3000):
        y = rl.dyn.reshape(y, rl.const(a([6, 4] if k % 2 else [24])))
    out = D2S(IRModule.from_expr(rl.Function([x], y)))
    names = ops(out)
    assert len(names) == 3000 and set(names) == {"reshape"}
    assert rl.astext(out["main"].body.checked_type) == "Tensor[(6, 4), float32]"


# ---------------------------------------------------------------- registration

def test_registered_by_tvms_name(tmp_path, capsys):
    assert type(get_pass("DynamicToStatic")) is DynamicToStatic
    assert rl.transform.DynamicToStatic is DynamicToStatic
    assert DynamicToStatic.required == ("InferType",) and DynamicToStatic.opt_level == 2
    before = parse("def @main(%x: Tensor[(2, 3), float32]) { "
                   "dyn.reshape(%x, meta[relay.Constant][0]) }", a([3, -1]))
    assert rl.structural_equal(rl.transform.DynamicToStatic()(before), D2S(before))
    path = tmp_path / "m.relay"
    path.write_text(rl.astext(before))
    from relaylang.cli import main
    assert main(["opt", str(path), "-p", "DynamicToStatic"]) == 0
    printed = capsys.readouterr().out
    assert "reshape(%x, newshape=[3, -1])" in printed and "dyn." not in printed


def test_result_is_constant_folded_like_tvms():
    out = D2S(parse("""def @main(%x: Tensor[(2, 3), float32]) {
      %0 = dyn.full(2f, meta[relay.Constant][0]);
      add(%x, %0)
    }""", a([2, 3])))
    const = out["main"].body.args[1]
    assert isinstance(const, Constant) and const.data.shape == (2, 3)
    assert (const.data == 2).all()
