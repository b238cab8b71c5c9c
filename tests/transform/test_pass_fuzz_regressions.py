"""Pass defects found by the mutation fuzzer (issue 14), one test each."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.expr import Call
from relaylang.ir.traverse import post_order

HEADER = '#[version = "0.0.5"]\n'
LIST = "type List[A] { Cons(A, List[A]), Nil, }\n"


def _run(names: str, mod: rl.IRModule) -> rl.IRModule:
    return rl.transform.Sequential([rl.transform.get_pass(n) for n in names.split(",")])(mod)


def _round_trips(mod: rl.IRModule) -> bool:
    return rl.structural_equal(rl.parse(rl.astext(mod)), mod)


CONSTRUCTOR_VALUES = HEADER + LIST + """
def @apply[A, B, C](%f: fn (A, B) -> C, %a: A, %b: B) -> C { %f(%a, %b) }
def @main(%x: int32) -> (List[int32], List[int32], List[int32], List[int32]) {
  let %c = Cons;
  let %pair = (Cons, 1);
  (%c(%x, Nil), @apply(Cons, %x, Nil), Cons(%x, Nil), %pair.0(%x, Cons(%x, Nil)))
}
"""


@pytest.mark.parametrize("passes", ["ToCPS", "ToCPS,UnCPS"])
def test_cps_of_a_constructor_used_as_a_function_value_type_checks(passes: str) -> None:
    mod = rl.parse(CONSTRUCTOR_VALUES)
    out = rl.transform.InferType()(_run(passes, mod))
    assert _round_trips(out)
    if passes.endswith("UnCPS"):
        x = np.int32(3)
        assert str(rl.evaluate(out, x)) == str(rl.evaluate(mod, x))


def test_cps_gives_each_polymorphic_function_type_its_own_type_variables() -> None:
    mod = rl.parse(HEADER + """
def @id[A](%x: A) -> A { %x }
def @main(%x: int32) -> int32 { let %f = @id; %f(%x) }
""")
    out = _run("ToCPS", mod)
    assert _round_trips(out)
    assert _round_trips(rl.transform.InferType()(out))


def test_defunctionalization_output_re_parses_structurally_equal() -> None:
    mod = rl.parse(HEADER + LIST + """
def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B] {
  match (%xs) { Cons(%y, %ys) => Cons(%f(%y), @map(%f, %ys)), Nil => Nil }
}
def @main(%l: List[float32], %k: float32) -> List[float32] {
  @map(fn (%x: float32) -> float32 { add(%x, %k) }, %l)
}
""")
    out = _run("Defunctionalization", mod)
    assert not [n for f in out.functions.values() for n in post_order(f)
                if isinstance(n, Call) and n.type_args]
    assert _round_trips(out)


@pytest.mark.parametrize("dtype", ["bfloat16", "float8", "int4", "uint1", "int1", "float32x4"])
def test_simplify_inference_on_dtypes_numpy_lacks(dtype: str) -> None:
    t = f"Tensor[(2, 3, 4), {dtype}]"
    c, n = f"Tensor[(3), {dtype}]", f"Tensor[(4), {dtype}]"
    mod = rl.parse(HEADER + f"""
def @main(%x: {t}, %g: {c}, %b: {c}, %m: {c}, %v: {c}, %g2: {n}, %b2: {n}) {{
  %0 = nn.batch_norm(%x, %g, %b, %m, %v);
  (%0.0, nn.layer_norm(%x, %g2, %b2))
}}
""")
    out = _run("SimplifyInference", mod)
    text = rl.astext(out)
    assert "batch_norm" not in text and "layer_norm" not in text
    assert f'cast(1e-05f, dtype="{dtype}")' in rl.astext(out, show_meta_data=False) \
        or f'cast(1e-05f /* ty=float32 */, dtype="{dtype}")' in text
    assert _round_trips(rl.transform.InferType()(out))


def test_simplify_inference_keeps_numpy_dtypes_as_constants() -> None:
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(2, 4), float16], %g: Tensor[(4), float16], %b: Tensor[(4), float16]) {
  nn.layer_norm(%x, %g, %b)
}
""")
    text = rl.astext(_run("SimplifyInference", mod))
    assert "cast(" not in text and "1e-05f16" in text


def test_cps_of_a_fused_function_is_a_located_diagnostic() -> None:
    text = HEADER + """def @main(%x: float32) -> float32 {
  %0 = fn (%p: float32, Primitive=1) -> float32 { add(%p, %p) };
  %0(%x)
}
"""
    with pytest.raises(rl.DiagnosticError) as info:
        rl.transform.get_pass("ToCPS")(rl.parse(text))
    [d] = info.value.diagnostics
    assert "FuseOps" in d.message and (d.span.line, d.span.column) == (3, 8)


def test_uncps_gives_the_direct_style_global_its_own_type_variables() -> None:
    mod = rl.parse(HEADER + LIST + """
def @length[A](%xs: List[A]) -> int32 {
  match (%xs) { Cons(_, %t) => add(@length(%t), 1), Nil => 0 }
}
def @main(%x: int32) -> int32 { @length(Cons(%x, Nil)) }
""")
    out = rl.transform.InferType()(_run("ToCPS,UnCPS", mod))
    length, length_cps = out["length"], out["length_cps"]
    assert not {id(tv) for tv in length.type_params} & {id(tv) for tv in length_cps.type_params}
    assert _round_trips(out)
    assert int(rl.evaluate(out, np.int32(7))) == 1
