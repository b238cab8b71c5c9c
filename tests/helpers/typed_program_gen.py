"""Random WELL-TYPED Relay modules for property tests (hypothesis).

Generation is type-directed: `Gen.expr(ty, depth)` returns an expression of
type `ty` over the variables in scope, so every module type-checks by
construction and `@main` (tensor parameters only) can be run on concrete
inputs. Types are small keys, turned into IR types only for annotations:

    ("f32", (2, 3))          a tensor: dtype short name, shape
    ("tuple", (t1, t2))      ("fn", (arg,), ret)      ("ref", t)      ("list", t)

What it draws: elementwise arithmetic over float32/float64/int32/bool with
broadcasting, casts, comparisons, reshapes and transposes; conv2d, dense,
bias_add, batch_norm (constant parameters), relu, softmax and pooling on
float32; scalar constants (inline literals) and tensor constants (printed as
`meta[relay.Constant][i]`); let, if, tuples and projections; closures, also
recursive local ones; references; a `List` ADT with match; global functions,
recursive ones bounded by a counter; and shared sub-expressions (one node
used twice, DAG form). Values stay small (tanh, sigmoid, small constants) so
that float results compare within tolerance after reassociation.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from relaylang import op
from relaylang.ir import (Call, Clause, Constant, Constructor, Function, FuncType, GlobalTypeVar,
                          GlobalVar, If, IRModule, Let, Match, PatternConstructor, PatternVar,
                          PatternWildcard, RefCreate, RefRead, RefType, RefWrite, TensorType, Tuple,
                          TupleGetItem, TupleType, TypeCall, TypeData, TypeVar, Var, make_attrs)

DTYPES = {"f32": "float32", "f64": "float64", "i32": "int32", "bool": "bool"}
SHAPES = [(), (3,), (2, 3), (1, 3), (2, 1), (3, 2), (6,)]
NCHW = (1, 2, 4, 4)                      # the shape nn ops work on (float32)
FLOAT_UNARY = ["tanh", "sigmoid", "negative", "abs", "nn.relu"]
ARITH = ["add", "subtract", "multiply", "maximum", "minimum"]
COMPARE = ["less", "greater", "equal", "not_equal", "less_equal"]


def tensor(dtype: str, shape: tuple[int, ...]) -> tuple:
    return (dtype, shape)


def has_list(ty: Any) -> bool:
    """Whether a `List` occurs in the type: `Nil` alone does not say its element type, so
    variables of such types are always annotated."""
    stack = [ty]
    while stack:
        ty = stack.pop()
        if ty[0] == "list":
            return True
        if ty[0] == "tuple":
            stack.extend(ty[1])
        elif ty[0] == "fn":
            stack.extend((*ty[1], ty[2]))
        elif ty[0] == "ref":
            stack.append(ty[1])
    return False


def ir_type(ty: Any, list_header: GlobalTypeVar) -> Any:
    """The IR type of a type key (iterative would be overkill: keys nest a few levels)."""
    kind = ty[0]
    if kind in DTYPES:
        return TensorType(ty[1], DTYPES[kind])
    if kind == "tuple":
        return TupleType(tuple(ir_type(t, list_header) for t in ty[1]))
    if kind == "fn":
        return FuncType(tuple(ir_type(t, list_header) for t in ty[1]), ir_type(ty[2], list_header))
    if kind == "ref":
        return RefType(ir_type(ty[1], list_header))
    return TypeCall(list_header, (ir_type(ty[1], list_header),))


def call(name: str, *args: Any, **attrs: Any) -> Call:
    opdef = op.get_op_def(name)
    assert opdef is not None, name
    attrs = {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()}
    made = make_attrs(opdef.attrs, attrs) if opdef.attrs is not None else None
    return Call(op.get(name), tuple(args), made)


def list_adt() -> tuple[TypeData, Constructor, Constructor]:
    header = GlobalTypeVar("List")
    a = TypeVar("A")
    cons = Constructor("Cons", (a, TypeCall(header, (a,))), header, 0)
    nil = Constructor("Nil", (), header, 1)
    return TypeData(header, (a,), (cons, nil)), cons, nil


class Gen:
    """Draws typed expressions; `scope` is a list of (var, type key)."""

    def __init__(self, data: st.DataObject, seed: int):
        self.data = data
        self.rng = np.random.default_rng(seed)
        self.adt, self.cons, self.nil = list_adt()
        self.made: list[tuple[Any, Any, frozenset[int]]] = []   # (node, type, scope ids)
        self.loops: dict[Any, GlobalVar] = {}                   # recursive globals by type
        self.functions: dict[GlobalVar, Function] = {}
        self.count = 0

    def draw(self, strategy: st.SearchStrategy[Any]) -> Any:
        return self.data.draw(strategy)

    def pick(self, options: list[Any]) -> Any:
        return self.draw(st.sampled_from(options))

    def var(self, hint: str, ty: Any, annotate: bool = True) -> Var:
        self.count += 1
        return Var(f"{hint}{self.count}", ir_type(ty, self.adt.header) if annotate else None)

    # ------------------------------------------------------------ entry point

    def expr(self, ty: Any, scope: list[tuple[Var, Any]], depth: int) -> Any:
        """An expression of type `ty`; shared with an earlier node one time in six."""
        ids = frozenset(id(v) for v, _ in scope)
        reusable = [n for n, t, s in self.made if t == ty and s <= ids]
        if reusable and self.draw(st.integers(0, 5)) == 0:
            return self.pick(reusable)
        node = self._fresh(ty, scope, depth)
        self.made.append((node, ty, ids))
        return node

    def _fresh(self, ty: Any, scope: list[tuple[Var, Any]], depth: int) -> Any:
        in_scope = [v for v, t in scope if t == ty]
        # Variables first: hypothesis starts from (and shrinks towards) the first option,
        # so the simplest programs still read their inputs instead of being constant.
        kinds = ["var"] * 4 + self._kinds(ty, depth) if in_scope else self._kinds(ty, depth)
        kind = self.pick(kinds)
        if kind == "var":
            return self.pick(in_scope)
        return getattr(self, "make_" + kind)(ty, scope, depth - 1)

    def _kinds(self, ty: Any, depth: int) -> list[str]:
        kind = ty[0]
        if kind in DTYPES:
            if depth <= 0:
                return ["const"]
            out = ["binary", "unary", "binary", "unary", "binary", "const", "cast", "let", "if",
                   "proj", "closure", "ref", "match", "global", "local_loop"]
            if ty[1]:
                out.append("reshape")
            if kind == "bool":
                out.append("compare")
            if len(ty[1]) >= 2:
                out.append("transpose")
            if ty == ("f32", NCHW):
                out += ["conv2d", "bias_add", "batch_norm", "pool", "softmax"] * 2
            if kind == "f32" and len(ty[1]) == 2:
                out += ["dense", "softmax"]
            return out
        leaf = {"tuple": "tuple", "fn": "function", "ref": "ref_create", "list": "list"}[kind]
        return [leaf] if depth <= 0 else [leaf, leaf, "let", "if"]

    # ------------------------------------------------------------ tensors

    def constant_value(self, ty: Any) -> np.ndarray:
        dtype, shape = DTYPES[ty[0]], ty[1]
        if dtype == "bool":
            return self.rng.integers(0, 2, shape).astype(bool)
        if dtype.startswith("int"):
            return self.rng.integers(-3, 4, shape).astype(dtype)
        return self.rng.uniform(-1.5, 1.5, shape).astype(dtype)

    def make_const(self, ty: Any, scope: Any, depth: int) -> Any:
        return Constant(np.asarray(self.constant_value(ty)))

    def make_unary(self, ty: Any, scope: Any, depth: int) -> Any:
        arg = self.expr(ty, scope, depth)
        if ty[0] == "bool":
            return call("logical_not", arg)
        if ty[0] == "i32":
            return call(self.pick(["negative", "abs"]), arg)
        return call(self.pick(FLOAT_UNARY), arg)

    def broadcast_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A shape that broadcasts to `shape`: some leading dims dropped, some dims 1."""
        cut = self.draw(st.integers(0, len(shape)))
        return tuple(1 if self.draw(st.booleans()) else d for d in shape[cut:])

    def make_binary(self, ty: Any, scope: Any, depth: int) -> Any:
        dtype, shape = ty
        name = self.pick(["logical_and", "logical_or"]) if dtype == "bool" else self.pick(ARITH)
        other = (dtype, self.broadcast_shape(shape))
        args = [self.expr(ty, scope, depth), self.expr(other, scope, depth)]
        if self.draw(st.booleans()):
            args.reverse()
        return call(name, *args)

    def make_compare(self, ty: Any, scope: Any, depth: int) -> Any:
        arg_ty = (self.pick(["f32", "i32"]), ty[1])
        return call(self.pick(COMPARE), self.expr(arg_ty, scope, depth),
                    self.expr(arg_ty, scope, depth))

    def make_cast(self, ty: Any, scope: Any, depth: int) -> Any:
        source = self.pick([d for d in DTYPES if d != ty[0]])
        arg = self.expr((source, ty[1]), scope, depth)
        if source in ("f32", "f64") and ty[0] == "i32":
            arg = call("tanh", arg)       # float -> int: keep the value in range
        return call("cast", arg, dtype=DTYPES[ty[0]])

    def make_reshape(self, ty: Any, scope: Any, depth: int) -> Any:
        size = int(np.prod(ty[1]))
        same = [s for s in SHAPES if int(np.prod(s)) == size and s != ty[1]] or [ty[1]]
        arg = self.expr((ty[0], self.pick(same)), scope, depth)
        return call("reshape", arg, newshape=list(ty[1]))

    def make_transpose(self, ty: Any, scope: Any, depth: int) -> Any:
        shape = ty[1]
        perm = self.draw(st.permutations(range(len(shape))))
        # transpose(x, axes=perm) has shape[i] = x.shape[perm[i]]: x is shape permuted back.
        source = [0] * len(shape)
        for i, p in enumerate(perm):
            source[p] = shape[i]
        return call("transpose", self.expr((ty[0], tuple(source)), scope, depth),
                    axes=list(perm))

    # ------------------------------------------------------------ nn ops (float32)

    def weight(self, shape: tuple[int, ...], positive: bool = False) -> Constant:
        data = self.rng.uniform(0.5, 1.5, shape) if positive else self.rng.uniform(-1, 1, shape)
        return Constant(data.astype("float32"))

    def make_conv2d(self, ty: Any, scope: Any, depth: int) -> Any:
        channels = ty[1][1]
        data = self.expr(ty, scope, depth)
        return call("nn.conv2d", data, self.weight((channels, channels, 3, 3)),
                    padding=[1, 1, 1, 1], channels=channels, kernel_size=[3, 3])

    def make_bias_add(self, ty: Any, scope: Any, depth: int) -> Any:
        return call("nn.bias_add", self.expr(ty, scope, depth), self.weight((ty[1][1],)))

    def make_batch_norm(self, ty: Any, scope: Any, depth: int) -> Any:
        c = ty[1][1]
        bn = call("nn.batch_norm", self.expr(ty, scope, depth), self.weight((c,), True),
                  self.weight((c,)), self.weight((c,)), self.weight((c,), True))
        return TupleGetItem(bn, 0)

    def make_pool(self, ty: Any, scope: Any, depth: int) -> Any:
        name = self.pick(["nn.max_pool2d", "nn.avg_pool2d"])
        return call(name, self.expr(ty, scope, depth), pool_size=[3, 3], strides=[1, 1],
                    padding=[1, 1, 1, 1])

    def make_softmax(self, ty: Any, scope: Any, depth: int) -> Any:
        return call("nn.softmax", self.expr(ty, scope, depth), axis=self.pick([-1, 1]))

    def make_dense(self, ty: Any, scope: Any, depth: int) -> Any:
        rows, units = ty[1]
        k = self.pick([2, 3])
        return call("nn.dense", self.expr(("f32", (rows, k)), scope, depth),
                    self.weight((units, k)), units=units)

    # ------------------------------------------------------------ control and binding

    def any_type(self, depth: int) -> Any:
        """A type for an intermediate value: mostly tensors, sometimes structured."""
        dtype, shape = self.pick(list(DTYPES)), self.pick(SHAPES)
        base = (dtype, shape)
        kind = self.pick(["t", "t", "t", "tuple", "fn", "ref", "list"] if depth > 0 else ["t"])
        if kind == "tuple":
            return ("tuple", (base, (self.pick(["f32", "i32"]), self.pick(SHAPES))))
        if kind == "fn":
            return ("fn", (base,), (self.pick(list(DTYPES)), self.pick(SHAPES)))
        return base if kind == "t" else (kind, base)

    def make_let(self, ty: Any, scope: Any, depth: int) -> Any:
        bound = self.any_type(depth)
        var = self.var("v", bound, annotate=has_list(bound) or self.draw(st.booleans()))
        value = self.expr(bound, scope, depth)
        return Let(var, value, self.expr(ty, scope + [(var, bound)], depth))

    def cond(self, scope: Any, depth: int) -> Any:
        return self.expr(("bool", ()), scope, depth)

    def make_if(self, ty: Any, scope: Any, depth: int) -> Any:
        return If(self.cond(scope, depth), self.expr(ty, scope, depth),
                  self.expr(ty, scope, depth))

    def make_tuple(self, ty: Any, scope: Any, depth: int) -> Any:
        return Tuple(tuple(self.expr(t, scope, depth) for t in ty[1]))

    def make_proj(self, ty: Any, scope: Any, depth: int) -> Any:
        others = [self.any_type(0) for _ in range(self.draw(st.integers(0, 2)))]
        index = self.draw(st.integers(0, len(others)))
        fields = others[:index] + [ty] + others[index:]
        return TupleGetItem(self.expr(("tuple", tuple(fields)), scope, depth), index)

    def make_function(self, ty: Any, scope: Any, depth: int) -> Any:
        params = [(self.var("p", t), t) for t in ty[1]]
        body = self.expr(ty[2], scope + params, depth)   # closes over the scope
        return Function(tuple(v for v, _ in params), body)

    def make_closure(self, ty: Any, scope: Any, depth: int) -> Any:
        arg = (self.pick(list(DTYPES)), self.pick(SHAPES))
        fn = self.expr(("fn", (arg,), ty), scope, depth)
        return Call(fn, (self.expr(arg, scope, depth),))

    def counter_loop(self, loop: Any, n: Var, acc: Var, ty: Any, scope: Any, depth: int) -> Any:
        """if (n < 1) { acc } else { loop(n - 1, step(acc)) }: recursion bounded by `n`."""
        done = call("less", n, Constant(np.array(1, "int32")))
        step = self.expr(ty, scope + [(acc, ty)], depth)
        again = Call(loop, (call("subtract", n, Constant(np.array(1, "int32"))), step))
        return If(done, acc, again)

    def make_local_loop(self, ty: Any, scope: Any, depth: int) -> Any:
        fn_ty = ("fn", (("i32", ()), ty), ty)
        f = self.var("loop", fn_ty)
        n, acc = self.var("n", ("i32", ())), self.var("acc", ty)
        body = self.counter_loop(f, n, acc, ty, scope, depth)
        count = Constant(np.array(self.draw(st.integers(0, 3)), "int32"))
        start = self.expr(ty, scope, depth)
        return Let(f, Function((n, acc), body, ir_type(ty, self.adt.header)),
                   Call(f, (count, start)))

    def make_global(self, ty: Any, scope: Any, depth: int) -> Any:
        gv = self.loops.get(ty)
        if gv is None:
            # Registered once its body is done: a body calls only finished globals (and
            # itself, counting down), so calls between globals form a DAG and end.
            self.count += 1
            gv = GlobalVar(f"loop{self.count}")
            n, acc = self.var("n", ("i32", ())), self.var("acc", ty)
            saved, self.made = self.made, []       # a global sees none of the caller's nodes
            body = self.counter_loop(gv, n, acc, ty, [], max(depth, 1))
            self.made = saved
            self.functions[gv] = Function((n, acc), body, ir_type(ty, self.adt.header))
            self.loops[ty] = gv
        count = Constant(np.array(self.draw(st.integers(0, 3)), "int32"))
        return Call(gv, (count, self.expr(ty, scope, depth)))

    def make_ref(self, ty: Any, scope: Any, depth: int) -> Any:
        """let %r = ref(a); let %w = (%r := b(%r)); !%r   -- or a plain read of a new ref."""
        if self.draw(st.booleans()):
            return RefRead(self.expr(("ref", ty), scope, depth))
        r, w = self.var("r", ("ref", ty)), self.var("w", ("tuple", ()), annotate=False)
        inner = scope + [(r, ("ref", ty))]
        write = RefWrite(r, self.expr(ty, inner, depth))
        return Let(r, RefCreate(self.expr(ty, scope, depth)), Let(w, write, RefRead(r)))

    def make_ref_create(self, ty: Any, scope: Any, depth: int) -> Any:
        return RefCreate(self.expr(ty[1], scope, depth))

    def make_list(self, ty: Any, scope: Any, depth: int) -> Any:
        if depth < 0 or self.draw(st.integers(0, 2)) == 0:
            return Call(self.nil, ())
        return Call(self.cons, (self.expr(ty[1], scope, depth), self.expr(ty, scope, depth)))

    def make_match(self, ty: Any, scope: Any, depth: int) -> Any:
        elem = (self.pick(list(DTYPES)), self.pick(SHAPES))
        data = self.expr(("list", elem), scope, depth)
        h, t = self.var("h", elem), self.var("t", ("list", elem))
        cons_rhs = self.expr(ty, scope + [(h, elem), (t, ("list", elem))], depth)
        nil_pattern = PatternConstructor(self.nil, ()) if self.draw(st.booleans()) \
            else PatternWildcard()
        return Match(data, (Clause(PatternConstructor(self.cons, (PatternVar(h), PatternVar(t))),
                                   cons_rhs),
                            Clause(nil_pattern, self.expr(ty, scope, depth))))


def result_type(gen: Gen) -> Any:
    """What `@main` returns: a tensor (often float32) or a tuple of two."""
    base = ("f32", gen.pick(SHAPES + [NCHW, NCHW]))
    if gen.draw(st.integers(0, 3)) == 0:
        return ("tuple", (base, (gen.pick(list(DTYPES)), gen.pick(SHAPES))))
    return base if gen.draw(st.booleans()) else (gen.pick(list(DTYPES)), gen.pick(SHAPES))


@st.composite
def typed_modules(draw: st.DrawFn, max_depth: int = 5) -> IRModule:
    """A module whose `@main` takes tensors and type-checks, with its helper globals."""
    gen = Gen(draw(st.data()), draw(st.integers(0, 2**32 - 1)))
    n_params = draw(st.integers(1, 3))
    param_types = [("f32", NCHW) if draw(st.integers(0, 3)) == 0
                   else (gen.pick(list(DTYPES)), gen.pick(SHAPES)) for _ in range(n_params)]
    params = [(gen.var("x", t), t) for t in param_types]
    ret = result_type(gen)
    body = gen.expr(ret, params, draw(st.integers(min(3, max_depth), max_depth)))
    main = GlobalVar("main")
    functions = {main: Function(tuple(v for v, _ in params), body,
                                ir_type(ret, gen.adt.header))}
    functions.update(gen.functions)
    return IRModule(functions, {gen.adt.header: gen.adt})
