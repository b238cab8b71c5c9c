"""The LLVM lowering of einsum against the interpreter: contractions, diagonals,
transposes, broadcast `...` axes (size 1 against larger), sums to a scalar, size-1,
size-0 and odd sizes, per dtype (integers exact, floats to rounding of the sum order;
float16 in float32)."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'
CALLS = ['einsum((%a, %b), equation="bij,jk->bik")', 'einsum((%a, %b), equation="bij,jk")',
         'einsum((%a,), equation="...ij->...ji")', 'einsum((%s,), equation="ii")',
         'einsum((%s,), equation="ii->i")', 'einsum((%b, %b), equation="ij,ij->")',
         'einsum((%a, %v), equation="...j,...j->...")', 'einsum((%s, %a), equation="ij,...jk->...ik")',
         'einsum((%a,), equation="ijk")', 'einsum((%a,), equation="ijk->")',
         'einsum((%a, %a, %s), equation="bij,bik,ii->bjk")', 'einsum((%o, %o), equation="i,j->ij")',
         'einsum((%z, %y), equation="ij,jk")', 'einsum((%y,), equation="ij->ji")']


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "int64", "int8"])
def test_einsum(dtype: str) -> None:
    shapes = {"a": (2, 3, 5), "b": (5, 7), "s": (3, 3), "v": (1, 5), "o": (1,),
              "z": (2, 0), "y": (0, 3)}
    params = ", ".join(f"%{n}: Tensor[{s if len(s) > 1 else f'({s[0]})'}, {dtype}]"
                       for n, s in shapes.items())
    rng = np.random.default_rng(5)
    if dtype.startswith("int"):
        args = [rng.integers(-3, 3, s).astype(dtype) for s in shapes.values()]
    else:
        args = [rng.standard_normal(s).astype(dtype) for s in shapes.values()]
    text = HEAD + f"def @main({params}) {{ ({', '.join(CALLS)}) }}\n"
    exact = dtype.startswith("int")
    assert_matches_interpreter(text, *args, rtol=0 if exact else None,
                               atol=0 if exact else 1e-2 if dtype == "float16" else 1e-5)
