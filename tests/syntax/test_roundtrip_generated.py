"""Round trip on a generated corpus: parse(astext(m)) is structurally equal to m.

Hypothesis builds random well-scoped modules directly as IR (every construct:
constants of each literal dtype and meta constants, calls with attributes,
tuples, projections, let, if, closures, references, ADTs and match, shared
nodes), prints them, reads them back and compares; printing the result again
must give the same text.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typed_program_gen import list_adt

import relaylang as rl
from relaylang import op
from relaylang.ir import (
    Call,
    Clause,
    Constant,
    Constructor,
    Function,
    GlobalVar,
    If,
    IRModule,
    Let,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    TensorType,
    Tuple,
    TupleGetItem,
    Var,
    make_attrs,
)
from relaylang.ir.equal import structural_equal

SCALARS = [("int32", st.integers(-2**31, 2**31 - 1)), ("int64", st.integers(-2**63, 2**63 - 1)),
           ("int16", st.integers(-2**15, 2**15 - 1)), ("bool", st.booleans()),
           ("float32", st.floats(width=32, allow_nan=False) | st.just(float("nan"))),
           ("float64", st.floats(allow_nan=False)), ("float16", st.floats(width=16, allow_nan=False))]


class Gen:
    """Draws one random expression tree over the variables in scope."""

    def __init__(self, data: st.DataObject, cons: Constructor, nil: Constructor,
                 globals_: list[GlobalVar]):
        self.data, self.cons, self.nil, self.globals = data, cons, nil, globals_
        self.made: list[Any] = []          # earlier nodes, to share
        self.counter = 0

    def draw(self, strategy: st.SearchStrategy[Any]) -> Any:
        return self.data.draw(strategy)

    def fresh(self, hint: str) -> Var:
        self.counter += 1
        name = self.draw(st.sampled_from([hint, "x", "v", "bn.gamma", "conv1/w", ""]))
        ty = self.draw(st.sampled_from([None, TensorType((2, 3), "float32"),
                                        TensorType((), "int32")]))
        return Var(name, ty)

    def constant(self) -> Constant:
        if self.draw(st.booleans()):
            dtype, values = self.draw(st.sampled_from(SCALARS))
            return Constant(np.array(self.draw(values), dtype=dtype))
        shape = self.draw(st.sampled_from([(2,), (2, 3), (0,), ()]))
        dtype = self.draw(st.sampled_from(["float32", "uint8", "int8", "bool"]))
        return Constant(np.arange(int(np.prod(shape))).reshape(shape).astype(dtype))

    def expr(self, scope: list[Var], depth: int) -> Any:
        if self.made and self.draw(st.integers(0, 5)) == 0:
            node = self.draw(st.sampled_from(self.made))
            if node[1] <= set(map(id, scope)):
                return node[0]
        kinds = ["const", "var", "global"] if depth <= 0 else [
            "const", "var", "call", "attrs", "tuple", "proj", "let", "if", "fn", "ref", "match",
            "ctor", "global"]
        kind = self.draw(st.sampled_from(kinds))
        node = getattr(self, "make_" + kind)(scope, depth - 1)
        self.made.append((node, set(map(id, scope))))
        return node

    def make_const(self, scope: list[Var], depth: int) -> Any:
        return self.constant()

    def make_var(self, scope: list[Var], depth: int) -> Any:
        return self.draw(st.sampled_from(scope)) if scope else self.constant()

    def make_global(self, scope: list[Var], depth: int) -> Any:
        return self.draw(st.sampled_from(self.globals))

    def make_call(self, scope: list[Var], depth: int) -> Any:
        name = self.draw(st.sampled_from(["add", "multiply", "less", "equal", "maximum"]))
        return Call(op.get(name), (self.expr(scope, depth), self.expr(scope, depth)))

    def make_attrs(self, scope: list[Var], depth: int) -> Any:
        axes = self.draw(st.sampled_from([None, (1, 0), (0, -1)]))
        conv = self.draw(st.booleans())
        if conv:
            opdef = op.get_op_def("nn.conv2d")
            attrs = make_attrs(opdef.attrs, {"padding": (1, 1, 1, 1), "channels": 16,
                                             "kernel_size": (3, 3), "data_layout": "NCHW"})
            return Call(op.get("nn.conv2d"), (self.expr(scope, depth), self.expr(scope, depth)),
                        attrs)
        attrs = make_attrs(op.get_op_def("transpose").attrs, {"axes": axes})
        return Call(op.get("transpose"), (self.expr(scope, depth),), attrs)

    def make_tuple(self, scope: list[Var], depth: int) -> Any:
        n = self.draw(st.integers(0, 3))
        return Tuple(tuple(self.expr(scope, depth) for _ in range(n)))

    def make_proj(self, scope: list[Var], depth: int) -> Any:
        return TupleGetItem(self.make_tuple(scope, depth), self.draw(st.integers(0, 2)))

    def make_let(self, scope: list[Var], depth: int) -> Any:
        var = self.fresh("l")
        if self.draw(st.booleans()):
            # A let's variable is in scope in its own value: a recursive closure.
            value = Function((), self.expr(scope + [var], depth))
        else:
            value = self.expr(scope, depth)
        return Let(var, value, self.expr(scope + [var], depth))

    def make_if(self, scope: list[Var], depth: int) -> Any:
        return If(self.expr(scope, depth), self.expr(scope, depth), self.expr(scope, depth))

    def make_fn(self, scope: list[Var], depth: int) -> Any:
        params = tuple(self.fresh("p") for _ in range(self.draw(st.integers(0, 2))))
        body = self.expr(scope + list(params), depth)
        fn = Function(params, body)
        if self.draw(st.booleans()):
            return Call(fn, tuple(self.expr(scope, depth) for _ in params))
        return fn

    def make_ref(self, scope: list[Var], depth: int) -> Any:
        r = RefCreate(self.expr(scope, depth))
        return self.draw(st.sampled_from([r, RefRead(r), RefWrite(r, self.expr(scope, depth))]))

    def make_ctor(self, scope: list[Var], depth: int) -> Any:
        if self.draw(st.booleans()):
            return Call(self.nil, ())
        return Call(self.cons, (self.expr(scope, depth), Call(self.nil, ())))

    def make_match(self, scope: list[Var], depth: int) -> Any:
        h, t = self.fresh("h"), self.fresh("t")
        clauses = [Clause(PatternConstructor(self.cons, (PatternVar(h), PatternVar(t))),
                          self.expr(scope + [h, t], depth)),
                   Clause(PatternConstructor(self.nil, ()), self.expr(scope, depth))]
        if self.draw(st.booleans()):
            x = self.fresh("w")
            clauses.append(Clause(PatternTuple((PatternVar(x), PatternWildcard())),
                                  self.expr(scope + [x], depth)))
        return Match(self.expr(scope, depth), tuple(clauses), self.draw(st.booleans()))


@st.composite
def modules(draw: st.DrawFn) -> IRModule:
    data = draw(st.data())
    adt, cons, nil = list_adt()
    names = ["main", "helper", "f"][:draw(st.integers(1, 3))]
    gvs = [GlobalVar(n) for n in names]
    gen = Gen(data, cons, nil, gvs)
    functions = {}
    for gv in gvs:
        gen.made.clear()
        params = tuple(gen.fresh("a") for _ in range(draw(st.integers(0, 3))))
        functions[gv] = Function(params, gen.expr(list(params), draw(st.integers(0, 4))))
    return IRModule(functions, {adt.header: adt})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules())
def test_generated_modules_round_trip(mod: IRModule) -> None:
    text = rl.astext(mod)
    back = rl.parse(text)
    assert structural_equal(back, mod), text
    assert rl.astext(back) == text
