"""The tensor loop IR: scalar expressions, statements, buffers and `PrimFunc`.

Nodes are frozen dataclasses with slots and identity equality (`eq=False`): `==` on
two expressions is Python identity, and the Python operators `+ - * / % -x` build
arithmetic nodes (Python numbers are promoted to the other operand's dtype). Use
`cmp(...)` (or the lowering context's `b.lt`, `b.eq`, ...) for comparisons.

Index arithmetic is int64. A `Load`/`Store` carries one index expression per
dimension of its buffer (row-major; codegen linearises). Expressions are shallow
(one fused group's worth of ops), so their printer and walkers may recurse over
expression depth; statement lists are flat (`Seq`).

float16 values live in float32 registers: a float16 `Load` widens, a float16
`Store` rounds, and `Call("fp16_round", x)` rounds a float16 value to float16
precision at a compute boundary (te inserts it).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

INDEX = "int64"

FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
DTYPES = ("bool",) + INT_DTYPES + FLOAT_DTYPES


def is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def is_int(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint") or dtype == "bool"


def bits(dtype: str) -> int:
    if dtype == "bool":
        return 1
    return int("".join(c for c in dtype if c.isdigit()))


NODE = {"frozen": True, "slots": True, "eq": False}
_ids = itertools.count()


# ---------------------------------------------------------------- expressions

@dataclass(**NODE)
class Expr:
    """A scalar expression (every subclass has a `dtype`)."""

    def _bin(self, op: str, other: Any, reverse: bool = False) -> Expr:
        other = as_expr(other, self.dtype)  # type: ignore[attr-defined]
        a, b = (other, self) if reverse else (self, other)
        return binary(op, a, b)

    def __add__(self, o: Any) -> Expr: return self._bin("add", o)
    def __radd__(self, o: Any) -> Expr: return self._bin("add", o, True)
    def __sub__(self, o: Any) -> Expr: return self._bin("sub", o)
    def __rsub__(self, o: Any) -> Expr: return self._bin("sub", o, True)
    def __mul__(self, o: Any) -> Expr: return self._bin("mul", o)
    def __rmul__(self, o: Any) -> Expr: return self._bin("mul", o, True)
    def __truediv__(self, o: Any) -> Expr: return self._bin("div", o)
    def __rtruediv__(self, o: Any) -> Expr: return self._bin("div", o, True)
    def __mod__(self, o: Any) -> Expr: return self._bin("mod", o)
    def __rmod__(self, o: Any) -> Expr: return self._bin("mod", o, True)
    def __neg__(self) -> Expr: return Unary("neg", self, self.dtype)  # type: ignore[attr-defined]

    def __bool__(self) -> bool:
        raise TypeError("a loop IR expression has no truth value; use b.select / b.logical_*")

    def __str__(self) -> str:
        return expr_str(self)


@dataclass(**NODE)
class Const(Expr):
    value: Any          # int, float or bool
    dtype: str


@dataclass(**NODE)
class Var(Expr):
    """An index variable (loop variable, compute axis or reduction axis)."""
    name: str
    dtype: str = INDEX
    extent: int | None = None      # reduction axes and compute axes know their range
    uid: int = field(default_factory=lambda: next(_ids))


@dataclass(**NODE)
class Load(Expr):
    buffer: Buffer
    indices: tuple[Expr, ...]

    @property
    def dtype(self) -> str:
        return self.buffer.dtype


# op: add sub mul div (C semantics on ints, IEEE on floats) mod (C % / fmod)
#     floordiv floormod max min and or xor (logical on bool, bitwise on ints) shl shr
@dataclass(**NODE)
class Binary(Expr):
    op: str
    a: Expr
    b: Expr
    dtype: str
    reduction: bool = False     # a reduction's combine: codegen may reassociate it


# op: neg not (logical on bool, bitwise on ints)
@dataclass(**NODE)
class Unary(Expr):
    op: str
    a: Expr
    dtype: str


# op: lt le gt ge eq ne; dtype is always bool
@dataclass(**NODE)
class Cmp(Expr):
    op: str
    a: Expr
    b: Expr
    dtype: str = "bool"


@dataclass(**NODE)
class Select(Expr):
    cond: Expr
    a: Expr
    b: Expr
    dtype: str


@dataclass(**NODE)
class Cast(Expr):
    value: Expr
    dtype: str


@dataclass(**NODE)
class BitCast(Expr):
    """`value`'s bits read as `dtype`, a dtype of the same width (not bool): LLVM's
    `bitcast` (a float16 value, kept in a float32 register, is rounded to half first,
    exact for any float16 value; a float16 result is widened)."""
    value: Expr
    dtype: str

    def __post_init__(self) -> None:
        src = self.value.dtype
        if "bool" in (src, self.dtype) or bits(src) != bits(self.dtype):
            raise TypeError(f"bit cast of {src} to {self.dtype}: the widths differ")


@dataclass(**NODE)
class Call(Expr):
    """An intrinsic: exp log ... (see te.INTRINSICS), or fp16_round."""
    name: str
    args: tuple[Expr, ...]
    dtype: str


@dataclass(**NODE)
class Reduce(Expr):
    """A reduction over `axes` (reduction Vars): op in sum prod max min argmax argmin.
    Only the root of a compute; the scheduler turns it into loops. argmax/argmin have
    dtype int64 (or the compute's) and give the flat (row-major over `axes`) index of
    the first extremum."""
    op: str
    source: Expr
    axes: tuple[Var, ...]
    dtype: str


# ---------------------------------------------------------------- buffers, statements

@dataclass(**NODE)
class Buffer:
    name: str
    shape: tuple[int, ...]
    dtype: str
    scope: str = "global"      # "global" (a parameter) or "local" (an Allocate)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __str__(self) -> str:
        return f"{self.name}: {self.dtype}{list(self.shape)}"


class Stmt:
    __slots__ = ()

    def __str__(self) -> str:
        return "\n".join(stmt_lines(self, 0))


FOR_KINDS = ("serial", "vectorized", "parallel", "unrolled")


@dataclass(**NODE)
class For(Stmt):
    """for var in [begin, begin + extent). A `parallel` loop's range is the entry's
    [begin, end) (its extent is the full range, its begin 0)."""
    var: Var
    extent: int
    body: Stmt
    kind: str = "serial"
    begin: int = 0


@dataclass(**NODE)
class Store(Stmt):
    buffer: Buffer
    indices: tuple[Expr, ...]
    value: Expr


@dataclass(**NODE)
class Seq(Stmt):
    stmts: tuple[Stmt, ...]


@dataclass(**NODE)
class Allocate(Stmt):
    """A local buffer live for `body` (stack when small, heap otherwise)."""
    buffer: Buffer
    body: Stmt


@dataclass(**NODE)
class IfThenElse(Stmt):
    cond: Expr
    then: Stmt
    otherwise: Stmt | None = None


@dataclass(**NODE)
class Prefetch(Stmt):
    """A hint, no effect on any value: start bringing the cache line of
    `buffer[indices]` toward the core (LLVM's `llvm.prefetch`, a data read).
    `locality` 0-3 as LLVM's (3: into L1, prefetcht0; 2: into L2, prefetcht1; 1: L3;
    0: non-temporal). The index must lie inside the buffer (the scheduler clamps it)."""
    buffer: Buffer
    indices: tuple[Expr, ...]
    locality: int = 2


def iterations(stmt: Stmt) -> int:
    """How many `Store`s running `stmt` executes (both branches of an `if` counted)."""
    total, stack = 0, [(stmt, 1)]
    while stack:
        s, times = stack.pop()
        if isinstance(s, Store):
            total += times
        elif isinstance(s, For):
            stack.append((s.body, times * max(int(s.extent), 0)))
        elif isinstance(s, Seq):
            stack.extend((child, times) for child in s.stmts)
        elif isinstance(s, Allocate):
            stack.append((s.body, times))
        elif isinstance(s, IfThenElse):
            stack.append((s.then, times))
            if s.otherwise is not None:
                stack.append((s.otherwise, times))
    return total


@dataclass(**NODE)
class PrimFunc:
    """One kernel: `params` are the inputs then the outputs (`num_inputs` of them are
    inputs). `parallel_extent`: the range of the outermost parallel loop (1: none)."""
    name: str
    params: tuple[Buffer, ...]
    body: Stmt
    num_inputs: int
    parallel_extent: int = 1
    # baked constant data: (Buffer of scope "constant", C-contiguous ndarray)
    constants: tuple[tuple[Buffer, Any], ...] = ()
    # the scheduling knobs the lowering asked for, and the values it may take
    # (backend/llvm/knobs.py): (name, value) and (name, choices), sorted by name
    knobs: tuple[tuple[str, int], ...] = ()
    knob_space: tuple[tuple[str, tuple[int, ...]], ...] = ()
    knob_key: str = ""          # knobs.kernel_key: where settings for this kernel live

    @property
    def inputs(self) -> tuple[Buffer, ...]:
        return self.params[:self.num_inputs]

    @property
    def work(self) -> int:
        """Stores the kernel executes over its whole range: a cost estimate (the
        executor splits a kernel over threads when it is large)."""
        return iterations(self.body)

    @property
    def outputs(self) -> tuple[Buffer, ...]:
        return self.params[self.num_inputs:]

    def __str__(self) -> str:
        head = ", ".join(str(p) for p in self.params)
        lines = [(f"primfn {self.name}({head}) -> outputs {self.num_inputs}..:"
                 f" parallel_extent={self.parallel_extent}")]
        lines += stmt_lines(self.body, 1)
        return "\n".join(lines)


# ---------------------------------------------------------------- construction helpers

def const(value: Any, dtype: str) -> Const:
    if dtype == "bool":
        value = bool(value)
    elif is_int(dtype):
        value = int(value)
    else:
        value = float(value)
    return Const(value, dtype)


def as_expr(value: Any, dtype: str) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, (bool, int, float)):
        return const(value, dtype)
    try:                                   # numpy scalars
        import numbers
        if isinstance(value, numbers.Number):
            return const(value.item() if hasattr(value, "item") else value, dtype)
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not a loop IR expression: {value!r}")


def index(value: Any) -> Expr:
    e = as_expr(value, INDEX)
    return e if e.dtype == INDEX else Cast(e, INDEX)


def binary(op: str, a: Expr, b: Expr) -> Expr:
    if a.dtype != b.dtype:
        raise TypeError(f"{op}: operand dtypes differ ({a.dtype} vs {b.dtype}); cast first")
    if op in ("add", "mul") and isinstance(a, Const) and isinstance(b, Const) and is_int(a.dtype):
        return const(a.value + b.value if op == "add" else a.value * b.value, a.dtype)
    if is_int(a.dtype) and a.dtype == INDEX:          # fold index arithmetic a bit
        if op == "add" and isinstance(b, Const) and b.value == 0:
            return a
        if op == "add" and isinstance(a, Const) and a.value == 0:
            return b
        if op == "mul" and isinstance(b, Const) and b.value == 1:
            return a
        if op == "mul" and isinstance(a, Const) and a.value == 1:
            return b
        if op == "mul" and ((isinstance(b, Const) and b.value == 0)
                            or (isinstance(a, Const) and a.value == 0)):
            return const(0, INDEX)
        if op == "sub" and isinstance(b, Const) and b.value == 0:
            return a
    return Binary(op, a, b, a.dtype)


def cmp(op: str, a: Expr, b: Any) -> Cmp:
    b = as_expr(b, a.dtype)
    if isinstance(a, (int, float)):
        a = as_expr(a, b.dtype)
    if a.dtype != b.dtype:
        raise TypeError(f"{op}: operand dtypes differ ({a.dtype} vs {b.dtype})")
    return Cmp(op, a, b)


def seq(*stmts: Stmt | None) -> Stmt:
    """A flat Seq (nested Seqs spliced, Nones dropped); one statement stays itself."""
    out: list[Stmt] = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, Seq):
            out.extend(s.stmts)
        else:
            out.append(s)
    return out[0] if len(out) == 1 else Seq(tuple(out))


def children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Load):
        return e.indices
    if isinstance(e, (Binary, Cmp)):
        return (e.a, e.b)
    if isinstance(e, Unary):
        return (e.a,)
    if isinstance(e, Select):
        return (e.cond, e.a, e.b)
    if isinstance(e, (Cast, BitCast)):
        return (e.value,)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, Reduce):
        return (e.source,)
    return ()


def walk(e: Expr) -> list[Expr]:
    """Every node of `e` once (identity), children before parents, iteratively."""
    out: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(e, False)]
    while stack:
        node, done = stack.pop()
        if done:
            out.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for c in children(node):
            if id(c) not in seen:
                stack.append((c, False))
    return out


def rebuild(e: Expr, kids: list[Expr]) -> Expr:
    if isinstance(e, Load):
        return Load(e.buffer, tuple(kids))
    if isinstance(e, Binary):
        return binary(e.op, kids[0], kids[1])
    if isinstance(e, Cmp):
        return Cmp(e.op, kids[0], kids[1])
    if isinstance(e, Unary):
        return Unary(e.op, kids[0], e.dtype)
    if isinstance(e, Select):
        return Select(kids[0], kids[1], kids[2], e.dtype)
    if isinstance(e, Cast):
        return Cast(kids[0], e.dtype)
    if isinstance(e, BitCast):
        return BitCast(kids[0], e.dtype)
    if isinstance(e, Call):
        return Call(e.name, tuple(kids), e.dtype)
    if isinstance(e, Reduce):
        return Reduce(e.op, kids[0], e.axes, e.dtype)
    return e


def substitute(e: Expr, vmap: dict[int, Expr], bmap: dict[int, Buffer] | None = None) -> Expr:
    """`e` with Vars replaced (`vmap`: id(Var) -> Expr) and buffers of Loads replaced
    (`bmap`: id(Buffer) -> Buffer); shared subexpressions stay shared."""
    memo: dict[int, Expr] = {}
    for node in walk(e):
        if isinstance(node, Var):
            memo[id(node)] = vmap.get(id(node), node)
            continue
        kids = children(node)
        new_kids = [memo[id(c)] for c in kids]
        changed = any(n is not c for n, c in zip(new_kids, kids))
        if isinstance(node, Load) and bmap and id(node.buffer) in bmap:
            memo[id(node)] = Load(bmap[id(node.buffer)], tuple(new_kids))
        elif changed:
            memo[id(node)] = rebuild(node, new_kids)
        else:
            memo[id(node)] = node
    return memo[id(e)]


# ---------------------------------------------------------------- printer

_BIN_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%",
               "and": "&&", "or": "||", "xor": "^", "shl": "<<", "shr": ">>"}
_CMP_SYMBOL = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _const_str(c: Const) -> str:
    if c.dtype == "bool":
        return "True" if c.value else "False"
    if is_float(c.dtype):
        text = repr(float(c.value))
        return text + ("f" if c.dtype == "float32" else "h" if c.dtype == "float16" else "")
    if c.dtype in ("int64", "int32"):
        return str(c.value) if c.dtype == INDEX else f"{c.value}i32"
    return f"{c.value}{c.dtype}"


def expr_str(e: Expr) -> str:
    memo: dict[int, str] = {}
    for n in walk(e):
        k = [memo[id(c)] for c in children(n)]
        if isinstance(n, Const):
            s = _const_str(n)
        elif isinstance(n, Var):
            s = n.name
        elif isinstance(n, Load):
            s = f"{n.buffer.name}[{', '.join(k)}]"
        elif isinstance(n, Binary):
            sym = _BIN_SYMBOL.get(n.op)
            s = f"({k[0]} {sym} {k[1]})" if sym else f"{n.op}({k[0]}, {k[1]})"
        elif isinstance(n, Cmp):
            s = f"({k[0]} {_CMP_SYMBOL[n.op]} {k[1]})"
        elif isinstance(n, Unary):
            s = f"-{k[0]}" if n.op == "neg" else f"!{k[0]}"
        elif isinstance(n, Select):
            s = f"select({k[0]}, {k[1]}, {k[2]})"
        elif isinstance(n, Cast):
            s = f"{n.dtype}({k[0]})"
        elif isinstance(n, BitCast):
            s = f"bitcast<{n.dtype}>({k[0]})"
        elif isinstance(n, Call):
            s = f"{n.name}({', '.join(k)})"
        elif isinstance(n, Reduce):
            s = f"{n.op}({k[0]}, axes=[{', '.join(a.name for a in n.axes)}])"
        else:
            s = repr(n)
        memo[id(n)] = s
    return memo[id(e)]


def stmt_lines(s: Stmt, depth: int) -> list[str]:
    """The printed lines of `s` (iterative over statements)."""
    out: list[str] = []
    stack: list[tuple[Any, int]] = [(s, depth)]
    while stack:
        node, d = stack.pop()
        pad = "  " * d
        if isinstance(node, str):
            out.append(pad + node)
        elif isinstance(node, For):
            rng = (f"{node.begin}, {node.begin + node.extent}" if node.kind != "parallel"
                   else f"begin, end  # of {node.extent}")
            out.append(f"{pad}for {node.var.name} in range({rng}) {node.kind}:")
            stack.append((node.body, d + 1))
        elif isinstance(node, Store):
            out.append(f"{pad}{node.buffer.name}[{', '.join(expr_str(i) for i in node.indices)}]"
                       f" = {expr_str(node.value)}")
        elif isinstance(node, Seq):
            for child in reversed(node.stmts):
                stack.append((child, d))
        elif isinstance(node, Prefetch):
            out.append(f"{pad}prefetch {node.buffer.name}"
                       f"[{', '.join(expr_str(i) for i in node.indices)}]"
                       f" locality={node.locality}")
        elif isinstance(node, Allocate):
            out.append(f"{pad}allocate {node.buffer}")
            stack.append((node.body, d))
        elif isinstance(node, IfThenElse):
            out.append(f"{pad}if {expr_str(node.cond)}:")
            if node.otherwise is not None:
                stack.append((node.otherwise, d + 1))
                stack.append(("else:", d))
            stack.append((node.then, d + 1))
        else:
            out.append(pad + repr(node))
    return out
