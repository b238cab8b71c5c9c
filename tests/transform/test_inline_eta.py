"""EtaExpand: constructors and globals used as values become functions calling them."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.expr import Call, Constructor, Function, GlobalVar, Tuple, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.transform import InferType, get_pass

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
BOTH = get_pass("EtaExpand{expand_constructor=True,expand_global_var=True}")
NAMES = sorted(p.name for p in EXAMPLES.glob("*.relay") if p.name != "digits_mlp.relay")


def value_uses(mod: IRModule) -> list:
    """Constructors and globals not in a callee position."""
    out = []
    for fn in mod.functions.values():
        for n in post_order(fn):
            kids = n.children()[1:] if isinstance(n, Call) else n.children()
            out += [k for k in kids if isinstance(k, (Constructor, GlobalVar))]
    return out


@pytest.mark.parametrize("path", NAMES)
def test_examples(path):
    mod = rl.parse((EXAMPLES / path).read_text())
    out = BOTH(mod)
    InferType()(rl.parse(rl.astext(out)))
    assert rl.structural_equal(BOTH(out), out)
    assert not value_uses(out)


def test_list_example_same_results():
    mod = rl.parse((EXAMPLES / "list_adt.relay").read_text())
    out = BOTH(mod)
    for n in (0, 3):
        arg = np.array(n, dtype="int32")
        a, b = rl.evaluate(mod, arg), rl.evaluate(out, arg)
        assert [int(v) for v in a] == [int(v) for v in b]


PROGRAM = HEADER + """type List[A] { Cons(A, List[A]), Nil, }
def @twice(%y: int32) -> int32 { multiply(%y, 2) }
def @id[A](%v: A) -> A { %v }
def @main(%x: int32) {
  let %f = @twice;
  let %g = @id;
  let %c = Cons;
  (%f(%x), %g(%x), @twice(%x), %c(%x, Nil))
}"""


@pytest.mark.parametrize("opts,left", [("", 3), ("expand_constructor=True", 2),
                                       ("expand_global_var=True", 1)])
def test_options_choose_what_expands(opts, left):
    mod = rl.parse(PROGRAM)
    out = get_pass(f"EtaExpand{{{opts}}}" if opts else "EtaExpand")(mod)
    assert len(value_uses(out)) == left
    InferType()(rl.parse(rl.astext(out)))
    arg = np.array(5, dtype="int32")
    a, b = rl.evaluate(mod, arg), rl.evaluate(out, arg)
    assert [int(v) for v in a[:3]] == [int(v) for v in b[:3]] == [10, 5, 10]
    assert a[3].name == b[3].name == "Cons"


def test_expansion_shape():
    out = BOTH(rl.parse(PROGRAM))
    let_f = out["main"].body
    fn = let_f.value
    assert isinstance(fn, Function) and isinstance(fn.body, Call)
    assert fn.body.op.name_hint == "twice" and fn.body.args == fn.params
    assert fn.params[0].type_annotation.dtype == "int32"


def test_deep_chain():
    x = Var("x", TensorType((), "int32"))
    g = GlobalVar("main")
    body = x
    for _ in range(100_000):
        body = Tuple((body, g))
    mod = IRModule({g: Function((x,), body)})
    out = get_pass("EtaExpand{expand_global_var=True}")(mod)
    assert not value_uses(out)
