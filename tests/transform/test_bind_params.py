"""BindParams: named parameters of the entry become constants; errors name both types."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir import Call, Constant, Function, IRModule, Op, Var, post_order
from relaylang.ir.expr import GlobalVar
from relaylang.ir.types import FuncType, TensorType
from relaylang.transform import BindParams, BindParamsError, InferType

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")


def _example(name: str) -> IRModule:
    path = ROOT / "examples" / name
    return rl.parse(path.read_text(), source_name=str(path))


def _mlp_arrays(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    fn = _example("mlp.relay")["main"]
    assert isinstance(fn, Function)
    out = {}
    for p in fn.params:
        assert isinstance(p.type_annotation, TensorType)
        shape = tuple(int(d) for d in p.type_annotation.shape)
        out[p.name_hint] = rng.standard_normal(shape).astype("float32")
    return out


def _constants(fn: Function) -> list[Constant]:
    return [n for n in post_order(fn) if isinstance(n, Constant)]


def test_binds_weights_removes_them_and_evaluates_the_same() -> None:
    mod = _example("mlp.relay")
    arrays = _mlp_arrays()
    bound = BindParams({k: arrays[k] for k in WEIGHTS})(mod)
    fn = bound["main"]
    assert isinstance(fn, Function)
    assert [p.name_hint for p in fn.params] == ["data"]
    assert fn.params[0] is mod["main"].params[0]          # the kept parameter is the same Var
    assert {id(c.data) for c in _constants(fn)} == {id(arrays[k]) for k in WEIGHTS}
    assert not any(isinstance(n, Var) and n.name_hint in WEIGHTS for n in post_order(fn))
    expected = rl.evaluate(mod, *arrays.values())
    np.testing.assert_array_equal(rl.evaluate(bound, arrays["data"]), expected)
    # The input module is untouched: passes build new modules.
    assert len(mod["main"].params) == 5


def test_bound_module_type_checks_with_the_new_signature() -> None:
    mod = InferType()(_example("mlp.relay"))        # bind after type checking, as a pipeline does
    arrays = _mlp_arrays()
    bound = InferType()(BindParams({k: arrays[k] for k in WEIGHTS})(mod))
    ft = bound.get_global_var("main").checked_type
    assert isinstance(ft, FuncType) and len(ft.arg_types) == 1
    assert rl.astext(ft) == "fn (Tensor[(1, 1, 28, 28), float32]) -> Tensor[(1, 10), float32]"
    assert "meta[relay.Constant][3]" in rl.astext(bound)


def test_every_use_and_nested_functions_see_one_shared_constant() -> None:
    mod = rl.parse('#[version = "0.0.5"]\n'
                   'def @main(%x: float32, %w: float32) -> float32 {\n'
                   '  %0 = fn (%y: float32) -> float32 { multiply(%y, %w) };\n'
                   '  %1 = add(%w, %w);\n'
                   '  %0(add(%x, %1))\n'
                   '}\n')
    bound = BindParams({"%w": np.array(3, dtype="float32")})(mod)
    fn = bound["main"]
    assert [p.name_hint for p in fn.params] == ["x"]
    assert len(_constants(fn)) == 1                       # shared: one node for every use
    assert float(rl.evaluate(bound, 1.0)) == pytest.approx((1 + 6) * 3)


def test_entry_option_and_python_scalars_take_the_parameter_dtype() -> None:
    mod = rl.parse('#[version = "0.0.5"]\n'
                   'def @main(%a: float32) -> float32 { %a }\n'
                   'def @f(%x: float32, %w: float32) -> float32 { multiply(%x, %w) }\n')
    bound = BindParams({"w": 4}, entry="f")(mod)
    assert bound["main"] is mod["main"]                   # other functions are kept as they are
    fn = bound["f"]
    assert [p.name_hint for p in fn.params] == ["x"]
    (const,) = _constants(fn)
    assert const.data.dtype == np.float32 and float(const.data) == 4.0
    assert float(rl.evaluate(bound, 2.0, entry="f")) == 8.0


def test_recursive_entry_calls_with_the_bound_argument_are_type_errors() -> None:
    # @sum_to calls itself with both arguments; binding %acc leaves that call one too many.
    bound = BindParams({"acc": 0}, entry="sum_to")(_example("recursion.relay"))
    with pytest.raises(rl.DiagnosticError):
        InferType()(bound)


def test_printer_suffixed_names_match_their_base_name() -> None:
    # `@main(%n1)`: the printer renamed `%n` because @factorial used it first (LANGUAGE.md §11.3).
    bound = BindParams({"n": np.array(5, dtype="int32")})(_example("recursion.relay"))
    assert bound["main"].params == ()
    result = rl.evaluate(bound)
    assert [int(v) for v in result] == [120, 15]


def test_entry_gets_a_fresh_global_var_and_callers_follow_it() -> None:
    mod = rl.parse('#[version = "0.0.5"]\n'
                   'def @main(%x: float32, %w: float32) -> float32 { add(%x, %w) }\n'
                   'def @g() -> float32 { @main(1f, 2f) }\n')
    old = mod.get_global_var("main")
    bound = BindParams({"w": np.array(2, dtype="float32")})(mod)
    new = bound.get_global_var("main")
    assert new is not old and [gv.name_hint for gv in bound.functions] == ["main", "g"]
    callee = [n for n in post_order(bound["g"]) if isinstance(n, GlobalVar)]
    assert callee == [new]
    # @g still passes two arguments: now a type error, as in TVM.
    with pytest.raises(rl.DiagnosticError):
        InferType()(bound)


def test_unknown_dims_accept_any_extent() -> None:
    mod = rl.parse('#[version = "0.0.5"]\n'
                   'def @main(%w: Tensor[(?, 2), float32]) { sum(%w) }\n')
    bound = BindParams({"w": np.ones((3, 2), dtype="float32")})(mod)
    assert float(rl.evaluate(bound)) == 6.0


def test_empty_params_return_the_module_itself() -> None:
    mod = _example("mlp.relay")
    assert BindParams({})(mod) is mod
    assert BindParams.name == "BindParams"


def test_deep_body_is_rewritten_without_recursion() -> None:
    x, w = Var("x", TensorType((), "float32")), Var("w", TensorType((), "float32"))
    body = x
    for _ in range(100_000):
        body = Call(Op("add"), (body, w))
    gv = GlobalVar("main")
    mod = IRModule({gv: Function((x, w), body)})
    bound = BindParams({"w": np.array(1, dtype="float32")})(mod)
    fn = bound["main"]
    assert fn.params == (x,)
    nodes = post_order(fn)
    assert sum(isinstance(n, Constant) for n in nodes) == 1
    assert not any(n is w for n in nodes)


# ---------------------------------------------------------------- errors


def test_unknown_name_lists_the_parameters() -> None:
    with pytest.raises(BindParamsError) as info:
        BindParams({"fc3_weight": np.zeros(3, dtype="float32")})(_example("mlp.relay"))
    assert str(info.value) == ("BindParams(@main): no parameter %fc3_weight (parameters: "
                               "%data, %fc1_weight, %fc1_bias, %fc2_weight, %fc2_bias)")


def test_wrong_shape_names_the_parameter_and_both_types() -> None:
    arrays = _mlp_arrays()
    with pytest.raises(BindParamsError) as info:
        BindParams({"fc1_weight": arrays["fc1_weight"].T})(_example("mlp.relay"))
    assert str(info.value) == (
        "BindParams(@main): parameter %fc1_weight has type Tensor[(128, 784), float32], "
        "but the array bound to it is Tensor[(784, 128), float32]")


def test_wrong_dtype_names_both_types() -> None:
    with pytest.raises(BindParamsError, match=r"%fc1_bias has type Tensor\[\(128\), float32\], "
                                              r"but the array bound to it is "
                                              r"Tensor\[\(128\), float64\]"):
        BindParams({"fc1_bias": np.zeros(128)})(_example("mlp.relay"))


def test_non_tensor_parameters_and_missing_entry_are_errors() -> None:
    mod = rl.parse('#[version = "0.0.5"]\n'
                   'def @main(%t: (float32, float32)) { %t.0 }\n')
    with pytest.raises(BindParamsError, match=r"%t has type \(float32, float32\); only tensor"):
        BindParams({"t": np.zeros(2, dtype="float32")})(mod)
    with pytest.raises(BindParamsError, match="the module has no function @nope"):
        BindParams({"t": 1}, entry="nope")(mod)


def test_ambiguous_suffixed_name_is_not_guessed() -> None:
    mod = rl.parse('#[version = "0.0.5"]\n'
                   'def @main(%x1: float32, %x2: float32) { add(%x1, %x2) }\n')
    with pytest.raises(BindParamsError, match=r"no parameter %x \(parameters: %x1, %x2\)"):
        BindParams({"x": 1.0})(mod)


def test_value_that_cannot_be_an_array_of_the_dtype() -> None:
    mod = rl.parse('#[version = "0.0.5"]\ndef @main(%x: int32) { %x }\n')
    with pytest.raises(BindParamsError, match="cannot make an array for parameter %x"):
        BindParams({"x": "seven"})(mod)
