"""einsum: the kernel against its relation and NumPy (explicit and implicit outputs,
diagonals, broadcast `...` axes, sums to a scalar, float16 in float32), the plan of an
equation, relation errors."""
from __future__ import annotations

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.types import TensorType, TupleType
from relaylang.op.einsum.relations import einsum_plan

HEAD = '#[version = "0.0.5"]\n'
rng = np.random.default_rng(0)
A = rng.standard_normal((2, 3, 4)).astype("float32")
B = rng.standard_normal((4, 5)).astype("float32")
S = rng.standard_normal((3, 3)).astype("float32")
V = rng.standard_normal((1, 4)).astype("float32")
N = rng.integers(-4, 4, (3, 4)).astype("int32")
H = rng.standard_normal((2, 3)).astype("float16")


def es(eq, *xs):
    return np.asarray(np.einsum(eq, *xs))


# (op, [operands], attributes, expected): the operands form the tuple argument
AGREEMENT = [
    ("einsum", [A, B], {"equation": "bij,jk->bik"}, es("bij,jk->bik", A, B)),
    ("einsum", [A, B], {"equation": "bij,jk"}, es("bij,jk", A, B)),
    ("einsum", [A], {"equation": "...ij->...ji"}, es("...ij->...ji", A)),
    ("einsum", [S], {"equation": "ii"}, es("ii", S)),
    ("einsum", [S], {"equation": "ii->i"}, es("ii->i", S)),
    ("einsum", [B, B], {"equation": "ij, ij ->"}, es("ij,ij->", B, B)),
    ("einsum", [A, V], {"equation": "...j,...j->..."}, es("...j,...j->...", A, V)),
    ("einsum", [S, A], {"equation": "ij,...jk->...ik"}, es("ij,...jk->...ik", S, A)),
    ("einsum", [N, N], {"equation": "ij,kj->ik"}, es("ij,kj->ik", N, N)),
    ("einsum", [A], {"equation": "ijk"}, A),
    ("einsum", [H, H], {"equation": "ij,ij->j"},
     es("ij,ij->j", H.astype("float32"), H.astype("float32")).astype("float16")),
    ("einsum", [np.zeros((2, 0), "float32"), np.zeros((0, 3), "float32")],
     {"equation": "ij,jk"}, np.zeros((2, 3), "float32")),
]


@pytest.mark.parametrize("op, operands, kw, expected", AGREEMENT,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation_and_numpy(op, operands, kw, expected):
    types = TupleType(tuple(TensorType(tuple(x.shape), x.dtype.name) for x in operands))
    promised = rel(op, types, **kw)
    out = run(op, tuple(operands), **kw)
    assert isinstance(promised, TensorType)
    assert tuple(promised.shape) == out.shape and promised.dtype == out.dtype.name
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out.astype("float64"), expected.astype("float64"), rtol=1e-5,
                               atol=1e-6)


def test_every_einsum_op_is_in_the_agreement_table():
    from relaylang.op import all_ops
    assert {d.name for d in all_ops() if d.package == "relaylang.op.einsum"} == {"einsum"}


def test_plan():
    plan = einsum_plan("bij,jk", [(2, 3, 4), (4, 5)])
    assert plan.inputs == (("b", "i", "j"), ("j", "k")) and plan.output == ("b", "i", "k")
    assert plan.summed == ("j",)
    plan = einsum_plan("...j,j...->...", [(2, 3, 4), (4, 1, 3)])
    assert plan.inputs == ((".0", ".1", "j"), ("j", ".0", ".1"))
    assert plan.output == (".0", ".1") and plan.sizes[".0"] == 2 and plan.sizes[".1"] == 3


def _tup(*shapes):
    return TupleType(tuple(T(s) for s in shapes))


def test_relation_errors():
    rel_error("einsum", [_tup((2, 3), (4, 5))], "j axis has size 3", arg=0,
              equation="ij,jk")
    rel_error("einsum", [_tup((2, 3))], "2 operand(s) but 1", arg=0, equation="ij,jk")
    rel_error("einsum", [_tup((2, 3))], "does not fit an operand of rank 2", arg=0,
              equation="ijk")
    rel_error("einsum", [_tup((2, 3))], "names 'k', which no operand has", arg=0,
              equation="ij->k")
    rel_error("einsum", [_tup((2, 3))], "names 'i' twice", arg=0, equation="ij->ii")
    rel_error("einsum", [_tup((2, 3))], "not a letter", equation="i1")
    rel_error("einsum", [_tup((2, 3))], "output does not", arg=0, equation="...j->j")
    rel_error("einsum", [TupleType((T((2,)), T((2,), "int32")))], "dtype", arg=0,
              equation="i,i")


def test_interpreter_and_text():
    mod = rl.parse(HEAD + "def @main(%a: Tensor[(2, 3, 4), float32], "
                   "%b: Tensor[(4, 5), float32]) {\n"
                   "  einsum((%a, %b), equation=\"bij,jk->bki\")\n}\n")
    out = rl.evaluate(mod, A, B)
    np.testing.assert_allclose(out, es("bij,jk->bki", A, B), rtol=1e-5)
    assert "equation=\"bij,jk->bki\"" in rl.astext(rl.transform.InferType()(mod))
