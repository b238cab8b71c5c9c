"""Random well-typed Relay programs for differential tests of the LLVM backend.

`native_programs()` is a hypothesis strategy of `NativeProgram`s: Relay text (a graph of
`%k = op(...)` bindings, so a failure prints a readable reproducer), NumPy arguments for
`@main` and a tolerance per output. What it draws:

  * inputs: 1 to 4 tensors of rank 0 to 4 with static shapes, dims from 0, 1, 2, 3, 5, 7,
    16, 17 (size-1 and size-0 dims, odd sizes that are not multiples of the vector width),
    a main dtype from float32, float16, float64, int32, int8; values from a drawn seed
    (floats uniform in [-3, 3], int32 in [-50, 50], int8 in [-20, 20]; in a quarter of the
    programs the float inputs hold NaN, +-inf and -0.0 at a few places too);
  * elementwise and broadcast ops read from the registry (fusion pattern ELEMWISE or
    BROADCAST, no attributes, one or two inputs): `UNARY` and `BINARY` below say how each
    is applied (guards keeping it in its domain: log/sqrt of `abs(x) + 1`, asin/atanh of
    `0.5 * tanh(x)`, integer divisors `maximum(abs(y), ones_like(y))`, shift amounts
    `bitwise_and(y, 3)`, ...); the registry's other such ops are in `EXCLUDED` with a
    reason, and `unclassified()` lists any new one (a test keeps it empty). Binary
    operands broadcast both ways (lower rank, size-1 dims on either side);
  * comparisons (bool) feeding `where`, `clip`, `cast` between the five dtypes;
  * reductions sum / max / min / mean over random axes (negative too, or all) with
    random keepdims;
  * layout ops transpose, reshape (with -1), expand_dims, squeeze, concatenate and
    strided_slice (negative strides and out-of-range bounds).

`sweep_program(dtype)` is the deterministic complement: every op the strategy draws,
applied once, in one program per dtype. `KNOWN_MISMATCHES` lists (dtype, op) pairs left
out because native and interpreter are known to disagree (each with an xfail test).

Tolerances. Each node carries a bound on its magnitude and on |native - interpreter|: zero
for exact ops (negative, max, layout, ...) and for correctly rounded ones (+ - * / sqrt,
cast) over inputs that agree exactly; a few ulps of the result for transcendental ops and
order-dependent sums, propagated through later ops by their Lipschitz bounds on the
guarded domains. An output's atol is the larger of the base tolerance (float32 1e-6,
float16 1e-3, float64 1e-12) and twice that bound; rtol is float32 1e-5, float16 1e-2,
float64 1e-7; integers and bools compare exactly, NaN equals NaN. Ops that jump (floor,
round, sign, comparisons, float floor_divide/mod, float->int casts) are only applied to
values that agree exactly, so a last-ulp difference never flips their result.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

HEAD = '#[version = "0.0.5"]\n'
DTYPES = ["float32", "float16", "float64", "int32", "int8"]
FLOATS = ("float16", "float32", "float64")
DIMS = [3, 1, 2, 5, 7, 0, 16, 17]
MAX_ELEMENTS = 2048
EPS = {"float16": 2.0 ** -10, "float32": 2.0 ** -23, "float64": 2.0 ** -52}
LIMIT = {"float16": 2000.0, "float32": 1e6, "float64": 1e6}    # magnitude bound kept
RTOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-7}
ATOL = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-12}
INT_RANGE = {"int32": 50, "int8": 20}
ULPS = 4.0               # transcendental ops: native (<= 2 ulps) against NumPy (<= 1 ulp)


# ------------------------------------------------------------------ how each op is applied

@dataclass(frozen=True)
class Rule:
    """How a float unary op is applied: `guard` (None, "bound" (tanh first when the input
    may exceed `bound`), "pos1" (abs(x) + 1), "pos2" (abs(x) + 2), "half_tanh"
    (0.5 * tanh(x))); `kind` "exact" (value-exact), "rounded" (correctly rounded),
    "approx" (a few ulps), "jump" (discontinuous: input must agree exactly), "bool";
    `lip(m)` and `mag(m)` bound the derivative and |result| for inputs bounded by m (after
    the guard)."""
    kind: str
    lip: Any = lambda m: 1.0
    mag: Any = lambda m: m
    guard: str | None = None
    bound: float = math.inf


def _exact() -> Rule:
    return Rule("exact")


UNARY: dict[str, Rule] = {
    "negative": _exact(), "abs": _exact(), "nn.relu": _exact(), "copy": _exact(),
    "zeros_like": Rule("exact", mag=lambda m: 0.0), "ones_like": Rule("exact", mag=lambda m: 1.0),
    "sign": Rule("jump", mag=lambda m: 1.0),
    "floor": Rule("jump", mag=lambda m: m + 1), "ceil": Rule("jump", mag=lambda m: m + 1),
    "round": Rule("jump", mag=lambda m: m + 1), "trunc": Rule("jump", mag=lambda m: m + 1),
    "exp": Rule("approx", math.exp, math.exp, "bound", 3.0),
    "sigmoid": Rule("approx", lambda m: 0.25, lambda m: 1.0),
    "tanh": Rule("approx", mag=lambda m: 1.0),
    "erf": Rule("approx", lambda m: 1.13, lambda m: 1.0),
    "sin": Rule("approx", mag=lambda m: 1.0, guard="bound", bound=100.0),
    "cos": Rule("approx", mag=lambda m: 1.0, guard="bound", bound=100.0),
    "tan": Rule("approx", lambda m: 3.5, lambda m: 1.6, "bound", 1.0),
    "sinh": Rule("approx", math.cosh, math.cosh, "bound", 3.0),
    "cosh": Rule("approx", math.cosh, math.cosh, "bound", 3.0),
    "asin": Rule("approx", lambda m: 1.16, lambda m: 1.6, "half_tanh"),
    "acos": Rule("approx", lambda m: 1.16, lambda m: 3.2, "half_tanh"),
    "atanh": Rule("approx", lambda m: 1.34, lambda m: 0.6, "half_tanh"),
    "atan": Rule("approx", mag=lambda m: 1.6),
    "asinh": Rule("approx", mag=lambda m: math.log(2 * m + 1) + 1),
    "acosh": Rule("approx", lambda m: 0.58, lambda m: math.log(2 * m + 1) + 1, "pos2"),
    "log": Rule("approx", lambda m: 1.0, lambda m: math.log(m) + 1, "pos1"),
    "log2": Rule("approx", lambda m: 1.45, lambda m: math.log2(m) + 1, "pos1"),
    "log10": Rule("approx", lambda m: 0.44, lambda m: math.log10(m) + 1, "pos1"),
    "sqrt": Rule("rounded", lambda m: 0.5, math.sqrt, "pos1"),
    "rsqrt": Rule("approx", lambda m: 0.5, lambda m: 1.0, "pos1"),
    "isnan": Rule("bool"), "isinf": Rule("bool"), "isfinite": Rule("bool"),
}
# On integers only the ops whose integer result is exact (a float function of an integer
# truncated back, like tanh(-19), depends on the last ulp).
INT_UNARY = {"negative", "abs", "nn.relu", "copy", "zeros_like", "ones_like", "sign", "floor",
             "ceil", "round", "trunc", "bitwise_not", "isnan", "isinf", "isfinite"}
INT_ONLY_UNARY = {"bitwise_not"}
BOOL_UNARY = {"logical_not"}

ARITH = {"add", "subtract", "multiply", "maximum", "minimum"}
DIVISION = {"divide", "floor_divide", "trunc_divide", "mod", "floor_mod", "trunc_mod"}
COMPARE = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}
BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor"}
SHIFT = {"left_shift", "right_shift"}
LOGICAL = {"logical_and", "logical_or", "logical_xor"}
BINARY = ARITH | DIVISION | COMPARE | BITWISE | SHIFT | LOGICAL | {"power"}

EXCLUDED = {
    "cast_like": "changes dtype: covered by cast",
    "broadcast_to_like": "a shape op: result shape from its second operand",
    "full_like": "a shape op: result shape from its first operand",
}

# Known native/interpreter disagreements, left out of the strategy so that CI stays green;
# each has an xfail(strict=True) test in tests/backend/llvm/test_differential.py with its
# reproducer (an XPASS there says: remove the entry here).
KNOWN_MISMATCHES: dict[tuple[str, str], str] = {}


def _fast_math_ops() -> set[str]:
    from relaylang.op.registry import all_ops
    return {op.fast_math for op in all_ops() if op.fast_math}


def registry_ops() -> tuple[list[str], list[str]]:
    """The registry's elementwise/broadcast ops without attributes: (unary, binary)
    names this strategy draws from."""
    from relaylang.op.registry import OpPattern, all_ops
    skip = set(EXCLUDED) | _fast_math_ops()
    unary, binary = [], []
    for op in all_ops():
        if op.pattern not in (OpPattern.ELEMWISE, OpPattern.BROADCAST) or op.attrs is not None \
                or op.stateful or op.name in skip:
            continue
        if op.num_inputs == 1 and (op.name in UNARY or op.name in INT_UNARY
                                   or op.name in BOOL_UNARY):
            unary.append(op.name)
        elif op.num_inputs == 2 and op.name in BINARY:
            binary.append(op.name)
    return sorted(unary), sorted(binary)


def unclassified() -> list[str]:
    """Registry ops of the kind this strategy covers that it neither draws nor excludes."""
    from relaylang.op.registry import OpPattern, all_ops
    unary, binary = registry_ops()
    known = set(unary) | set(binary) | set(EXCLUDED) | _fast_math_ops()
    return sorted(op.name for op in all_ops()
                  if op.pattern in (OpPattern.ELEMWISE, OpPattern.BROADCAST)
                  and op.attrs is None and op.num_inputs in (1, 2) and not op.stateful
                  and op.name not in known)


# ------------------------------------------------------------------ programs

@dataclass
class Node:
    ref: str                  # "%x0" or "%3"
    dtype: str
    shape: tuple[int, ...]
    mag: float                # bound on |value|
    err: float = 0.0          # bound on |native - interpreter| (of finite values)
    special: bool = False     # may hold NaN, inf or -0.0

    @property
    def agrees(self) -> bool:
        return self.err == 0.0


@dataclass
class NativeProgram:
    text: str
    args: list[np.ndarray]
    tolerances: list[tuple[str, float, float]]      # per output: dtype, rtol, atol
    ops: list[str] = field(default_factory=list)

    def __repr__(self) -> str:       # what hypothesis prints for a failing example
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.args)
        return f"NativeProgram(args: {shapes}, seed in text)\n{self.text}"


def const(value: float, dtype: str) -> str:
    if dtype == "float32":
        return f"{float(value)!r}f"
    if dtype == "float16":
        return f"{float(value)!r}f16"
    if dtype == "float64":
        return f"{float(value)!r}f64"
    if dtype == "int32":
        return str(int(value))
    return f'cast({int(value)}, dtype="{dtype}")'


def _broadcast(a: tuple, b: tuple) -> tuple | None:
    try:
        return tuple(int(d) for d in np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _size(shape: tuple) -> int:
    return int(np.prod(shape, dtype=np.int64))


class _Builder:
    def __init__(self, draw: Any, dtype: str):
        self.draw = draw
        self.main_dtype = dtype
        self.params: list[Node] = []
        self.lines: list[str] = []
        self.nodes: list[Node] = []
        self.ops: list[str] = []
        self.specials = False     # float inputs get NaN, +-inf and -0.0 at a few places

    # ---- bookkeeping
    def choice(self, seq: Any) -> Any:
        """An element of `seq`, near uniformly (hypothesis biases small integers, so
        `sampled_from` would favour the first names); shrinks towards the first."""
        seq = list(seq)
        return seq[self.draw(st.integers(0, 2 ** 16 - 1)) % len(seq)]

    def param(self, dtype: str, shape: tuple) -> Node:
        mag = 3.0 if dtype in FLOATS else float(INT_RANGE.get(dtype, 1))
        n = Node(f"%x{len(self.params)}", dtype, shape, mag,
                 special=self.specials and dtype in FLOATS)
        self.params.append(n)
        self.nodes.append(n)
        return n

    def bind(self, expr: str, dtype: str, shape: tuple, mag: float, err: float,
             op: str) -> Node:
        ref = f"%{len(self.lines)}"
        self.lines.append(f"  {ref} = {expr};")
        if dtype in FLOATS:
            mag = min(mag, 65504.0) if dtype == "float16" else mag
        elif dtype == "bool":
            mag, err = 1.0, 0.0
        else:
            mag = min(mag, float(np.iinfo(dtype).max) + 1)
            err = 0.0
        special = dtype in FLOATS and any(
            m.special for m in self.nodes if re.search(re.escape(m.ref) + r"\b", expr))
        n = Node(ref, dtype, shape, mag, err, special)
        self.nodes.append(n)
        self.ops.append(op)
        return n

    def pick(self, pred: Any = lambda n: True) -> Node | None:
        cands = [n for n in self.nodes if pred(n)]
        if not cands:
            return None
        if pred(self.nodes[-1]) and self.draw(st.booleans()):
            return self.nodes[-1]                           # mostly chains
        return cands[self.draw(st.integers(0, len(cands) - 1))]

    def shape(self) -> tuple:
        rank = self.draw(st.integers(0, 4))
        dims = tuple(self.draw(st.sampled_from(DIMS)) for _ in range(rank))
        while _size(dims) > MAX_ELEMENTS:
            dims = dims[1:]
        return dims

    def compatible_shape(self, s: tuple) -> tuple:
        """A shape that broadcasts with `s`, both ways."""
        s = list(s)
        how = self.draw(st.sampled_from(["same", "drop", "prepend"]))
        if how == "drop" and s:
            s = s[self.draw(st.integers(1, len(s))):]
        elif how == "prepend" and len(s) < 4:
            s = [self.draw(st.sampled_from([2, 1, 3]))] + s
        out = []
        for d in s:
            c = self.draw(st.sampled_from(["keep", "keep", "one", "grow"]))
            if c == "one":
                out.append(1)
            elif c == "grow" and d == 1:
                out.append(self.draw(st.sampled_from([3, 2, 5])))
            else:
                out.append(d)
        out_t = tuple(out)
        if _broadcast(tuple(s), out_t) is None or _size(_broadcast(tuple(s), out_t) or ()) > \
                MAX_ELEMENTS:
            return tuple(s)
        return out_t

    def operand_for(self, a: Node, dtype: str | None = None) -> Node:
        """A second operand that broadcasts with `a`: an existing node or a new input."""
        dtype = dtype or a.dtype
        fits = lambda n: n.dtype == dtype and n is not a and (
            (b := _broadcast(a.shape, n.shape)) is not None and _size(b) <= MAX_ELEMENTS)
        if len(self.params) >= 4 or self.draw(st.booleans()):
            n = self.pick(fits)
            if n is not None:
                return n
        if len(self.params) >= 4:
            return a
        return self.param(dtype, self.compatible_shape(a.shape))

    # ---- guards
    def guard(self, x: Node, rule: Rule) -> Node:
        d = x.dtype
        if rule.guard == "bound" and x.mag > rule.bound:
            return self.unary_node("tanh", x)
        if rule.guard in ("pos1", "pos2"):
            a = self.bind(f"abs({x.ref})", d, x.shape, x.mag, x.err, "abs")
            k = 1 if rule.guard == "pos1" else 2
            return self.bind(f"add({a.ref}, {const(k, d)})", d, x.shape, x.mag + k,
                             x.err + (EPS[d] * (x.mag + k) if x.err else 0.0), "add")
        if rule.guard == "half_tanh":
            t = self.unary_node("tanh", x)
            return self.bind(f"multiply({t.ref}, {const(0.5, d)})", d, x.shape, 0.5,
                             t.err / 2, "multiply")
        return x

    # ---- ops
    def unary_node(self, name: str, x: Node) -> Node:
        d = x.dtype
        if d not in FLOATS or name not in UNARY:
            out_d = "bool" if name in ("isnan", "isinf", "isfinite") else d
            return self.bind(f"{name}({x.ref})", out_d, x.shape, x.mag + 1, 0.0, name)
        rule = UNARY[name]
        x = self.guard(x, rule)
        m = max(x.mag, 1e-6)
        if rule.kind == "bool":
            return self.bind(f"{name}({x.ref})", "bool", x.shape, 1.0, 0.0, name)
        mag = rule.mag(m)
        err = rule.lip(m) * x.err
        if rule.kind == "approx":
            err += ULPS * EPS[d] * mag
        elif rule.kind == "rounded" and x.err:
            err += EPS[d] * mag
        return self.bind(f"{name}({x.ref})", d, x.shape, mag, err, name)

    def unary(self, names: list[str]) -> bool:
        x = self.pick()
        assert x is not None
        if x.dtype == "bool":
            ok = [n for n in names if n in BOOL_UNARY]
            if not ok:
                return False
            name = self.choice(ok)
            self.bind(f"{name}({x.ref})", "bool", x.shape, 1.0, 0.0, name)
            return True
        if x.dtype in FLOATS:
            ok = [n for n in names if n in UNARY and (UNARY[n].kind != "jump" or x.agrees)]
        else:
            ok = [n for n in names if n in INT_UNARY]
        name = self.choice(sorted(ok))
        self.unary_node(name, x)
        return True

    def int_divisor(self, y: Node) -> Node:
        a = self.bind(f"abs({y.ref})", y.dtype, y.shape, y.mag, 0.0, "abs")
        o = self.bind(f"ones_like({a.ref})", y.dtype, y.shape, 1.0, 0.0, "ones_like")
        return self.bind(f"maximum({a.ref}, {o.ref})", y.dtype, y.shape, y.mag, 0.0, "maximum")

    def binary(self, names: list[str]) -> bool:
        x = self.pick()
        assert x is not None
        if x.dtype == "bool":
            y = self.operand_for(x) if any(n.dtype == "bool" and n is not x
                                           for n in self.nodes) else x
        else:
            y = self.operand_for(x)
        ok = binary_ops_for(x, y, names)
        if not ok:
            return False
        self.apply_binary(self.choice(ok), x, y)
        return True

    def apply_binary(self, name: str, x: Node, y: Node) -> Node:
        """`name(x, y)` with its guards (`name` from `binary_ops_for(x, y, ...)`)."""
        d = x.dtype
        shape = _broadcast(x.shape, y.shape)
        assert shape is not None
        if d == "bool" or name in COMPARE:
            return self.bind(f"{name}({x.ref}, {y.ref})", "bool", shape, 1.0, 0.0, name)
        if d not in FLOATS:
            if name in DIVISION:
                y = self.int_divisor(y)
            elif name in SHIFT or name == "power":
                y = self.bind(f"bitwise_and({y.ref}, {const(3, d)})", d, y.shape, 3.0, 0.0,
                              "bitwise_and")
            mag = {"multiply": x.mag * y.mag, "add": x.mag + y.mag,
                   "subtract": x.mag + y.mag, "left_shift": x.mag * 8,
                   "power": x.mag ** 3}.get(name, max(x.mag, y.mag))
            return self.bind(f"{name}({x.ref}, {y.ref})", d, shape, mag, 0.0, name)
        eps = EPS[d]
        if name in ("maximum", "minimum"):
            mag, err = max(x.mag, y.mag), max(x.err, y.err)
        elif name in ("add", "subtract"):
            mag = x.mag + y.mag
            err = x.err + y.err + (eps * mag if x.err or y.err else 0.0)
        elif name == "multiply":
            mag = x.mag * y.mag
            err = x.err * y.mag + y.err * x.mag + (eps * mag if x.err or y.err else 0.0)
        elif name == "power":
            x = self.guard(x, Rule("approx", guard="pos1"))
            y = self.unary_node("tanh", y)
            mag = x.mag
            err = x.err + x.mag * math.log(x.mag) * y.err + ULPS * eps * mag
        else:                                                       # divisions
            y = self.guard(y, Rule("rounded", guard="pos1"))
            if name == "divide":
                mag = x.mag
                err = x.err + x.mag * y.err + (eps * mag if x.err or y.err else 0.0)
            else:                  # floor_divide, mod, ...: operands agree exactly
                mag, err = x.mag + 1, 0.0
        return self.bind(f"{name}({x.ref}, {y.ref})", d, shape, mag, err, name)

    def where(self) -> bool:
        c = self.pick(lambda n: n.dtype == "bool")
        if c is None:
            return False
        x = self.pick(lambda n: n.dtype != "bool" and _broadcast(n.shape, c.shape) is not None)
        if x is None:
            return False
        y = self.operand_for(x)
        shape = _broadcast(_broadcast(x.shape, y.shape) or (), c.shape)
        if shape is None or _size(shape) > MAX_ELEMENTS:
            return False
        self.bind(f"where({c.ref}, {x.ref}, {y.ref})", x.dtype, shape, max(x.mag, y.mag),
                  max(x.err, y.err), "where")
        return True

    def clip(self) -> bool:
        x = self.pick(lambda n: n.dtype != "bool")
        if x is None:
            return False
        lo = self.draw(st.sampled_from([-2.5, -1.0, 0.0, -40.0]))
        hi = self.draw(st.sampled_from([2.0, 0.5, 40.7, 1.0]))
        self.bind(f"clip({x.ref}, a_min={lo!r}f, a_max={hi!r}f)", x.dtype, x.shape,
                  min(x.mag, 40.7), x.err, "clip")
        return True

    def cast(self) -> bool:
        x = self.pick()
        assert x is not None
        to = self.choice(DTYPES)
        if x.dtype in FLOATS and to not in FLOATS:
            if not x.agrees or x.special:
                return False           # a jump; NaN and inf have no integer value
            x = self.bind(f"clip({x.ref}, a_min=-100f, a_max=100f)", x.dtype, x.shape,
                          min(x.mag, 100.0), 0.0, "clip")
            mag = min(x.mag, 100.0)
        else:
            mag = x.mag
        if to == "float16" and mag > LIMIT["float16"]:
            return False
        err = x.err
        if to in FLOATS and err:
            err += EPS[to] * mag
        self.bind(f'cast({x.ref}, dtype="{to}")', to, x.shape, mag, err, "cast")
        return True

    def reduce(self) -> bool:
        x = self.pick(lambda n: n.dtype != "bool")
        if x is None:
            return False
        r = len(x.shape)
        if r == 0 or self.draw(st.integers(0, 4)) == 0:
            axes = list(range(r))
            axis_text = "None"
        else:
            axes = sorted(set(self.draw(st.lists(st.integers(0, r - 1), min_size=1,
                                                 max_size=r))))
            shown = [a - r if self.draw(st.booleans()) else a for a in axes]
            axis_text = "[" + ", ".join(map(str, shown)) + "]"
        keep = self.draw(st.booleans())
        n = _size(tuple(x.shape[a] for a in axes))
        names = ["sum", "mean", "max", "min"]
        if n == 0:
            names = ["sum", "mean"]       # max/min of nothing is an error
        d = x.dtype
        if d in FLOATS and n * x.mag > LIMIT[d]:
            names = [m for m in names if m != "sum"]
        name = self.choice(names)
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape) if keep or
                      i not in axes)
        if name in ("max", "min"):
            mag, err = x.mag, x.err
        elif d not in FLOATS:
            mag, err = (n * x.mag if name == "sum" else x.mag), 0.0
        else:
            acc = EPS["float32"] if d == "float16" else EPS[d]
            rounding = acc * n * n * x.mag if n > 1 else 0.0
            if name == "sum":
                mag = n * x.mag
                err = n * x.err + rounding + (EPS[d] * mag if n > 1 or x.err else 0.0)
            else:
                mag = x.mag
                err = x.err + rounding / max(n, 1) + EPS[d] * mag * 2
        out = self.bind(f"{name}({x.ref}, axis={axis_text}, keepdims={keep})", d, shape, mag,
                        err, name)
        out.special = out.special or (name == "mean" and n == 0 and d in FLOATS)   # 0 / 0
        return True

    def layout(self) -> bool:
        x = self.pick()
        assert x is not None
        s, r = x.shape, len(x.shape)
        kind = self.choice(["transpose", "reshape", "expand_dims", "squeeze", "concatenate",
                            "strided_slice"])
        same = lambda expr, shape, op: self.bind(expr, x.dtype, shape, x.mag, x.err, op)
        if kind == "transpose":
            if r < 2:
                return False
            perm = self.draw(st.permutations(range(r)))
            if self.draw(st.integers(0, 3)) == 0:
                same(f"transpose({x.ref})", s[::-1], kind)
            else:
                shown = [p - r if self.draw(st.booleans()) else p for p in perm]
                same(f"transpose({x.ref}, axes={shown})", tuple(s[p] for p in perm), kind)
        elif kind == "reshape":
            new = list(s)
            how = self.draw(st.sampled_from(["flatten", "merge", "split", "one"]))
            if how == "flatten":
                new = [_size(s)]
            elif how == "merge" and r >= 2:
                i = self.draw(st.integers(0, r - 2))
                new = new[:i] + [new[i] * new[i + 1]] + new[i + 2:]
            elif how == "split" and r >= 1:
                i = self.draw(st.integers(0, r - 1))
                f = [k for k in range(1, new[i] + 1) if new[i] % k == 0] or [1]
                k = self.draw(st.sampled_from(f))
                new = new[:i] + [k, new[i] // k] + new[i + 1:]
            elif len(new) < 5:
                new.insert(self.draw(st.integers(0, len(new))), 1)
            if len(new) > 5 or 0 in new:
                return False           # a 0 in newshape means "copy this dimension"
            shown = list(new)
            if _size(s) > 0 and shown and self.draw(st.booleans()):
                shown[self.draw(st.integers(0, len(shown) - 1))] = -1
            same(f"reshape({x.ref}, newshape={shown})", tuple(new), kind)
        elif kind == "expand_dims":
            k = self.draw(st.integers(1, 2))
            if r + k > 5:
                return False
            axis = self.draw(st.integers(-r - 1, r))
            pos = axis if axis >= 0 else axis + r + 1
            same(f"expand_dims({x.ref}, axis={axis}, num_newaxis={k})",
                 s[:pos] + (1,) * k + s[pos:], kind)
        elif kind == "squeeze":
            ones = [i for i, d in enumerate(s) if d == 1]
            if not ones:
                return False
            if self.draw(st.booleans()):
                same(f"squeeze({x.ref})", tuple(d for d in s if d != 1), kind)
            else:
                chosen = sorted(set(self.draw(st.lists(st.sampled_from(ones), min_size=1))))
                shown = [a - r if self.draw(st.booleans()) else a for a in chosen]
                same(f"squeeze({x.ref}, axis={shown})",
                     tuple(d for i, d in enumerate(s) if i not in chosen), kind)
        elif kind == "concatenate":
            if r == 0:
                return False
            axis = self.draw(st.integers(-r, r - 1))
            a = axis % r
            others = [n for n in self.nodes if n.dtype == x.dtype and len(n.shape) == r and
                      all(n.shape[i] == s[i] for i in range(r) if i != a)]
            parts = [x]
            for _ in range(self.draw(st.integers(1, 2))):
                if len(self.params) < 4 and self.draw(st.booleans()):
                    parts.append(self.param(x.dtype, s[:a] + (self.draw(st.sampled_from(
                        [1, 3, 0, 5])),) + s[a + 1:]))
                else:
                    parts.append(others[self.draw(st.integers(0, len(others) - 1))])
            shape = s[:a] + (sum(p.shape[a] for p in parts),) + s[a + 1:]
            if _size(shape) > MAX_ELEMENTS:
                return False
            refs = ", ".join(p.ref for p in parts)
            self.bind(f"concatenate(({refs}), axis={axis})", x.dtype, shape,
                      max(p.mag for p in parts), max(p.err for p in parts), kind)
        else:
            if r == 0:
                return False
            axes = sorted(set(self.draw(st.lists(st.integers(0, r - 1), min_size=1,
                                                 max_size=r))))
            begin, end, strides = [], [], []
            for a in axes:
                dim = s[a]
                stride = self.draw(st.sampled_from([1, 2, -1, 3, -2]))
                b = self.draw(st.integers(-dim - 2, dim + 2))
                e = self.draw(st.integers(-dim - 2, dim + 2))
                begin.append(b)
                end.append(e)
                strides.append(stride)
            prefix = axes == list(range(len(axes)))
            axes_text = "" if prefix and self.draw(st.booleans()) else f", axes={axes}"
            call = f"strided_slice(%x, begin={begin}, end={end}, strides={strides}{axes_text})"
            shape = _result_shape(call, s, x.dtype)
            if shape is None:
                return False           # a slice that selects nothing is a type error
            same(call.replace("%x", x.ref, 1), shape, kind)
        return True


@functools.lru_cache(maxsize=4096)
def _result_shape(call: str, shape: tuple, dtype: str) -> tuple | None:
    """The shape the type checker gives `call` of a `%x` of this type (None: an error)."""
    import relaylang as rl
    dims = ", ".join(map(str, shape))
    try:
        mod = rl.transform.InferType()(rl.parse(
            HEAD + f"def @main(%x: Tensor[({dims}), {dtype}]) {{ {call} }}"))
    except rl.DiagnosticError:
        return None
    return tuple(int(d) for d in mod["main"].body.checked_type.shape)


def binary_ops_for(x: Node, y: Node, names: list[str]) -> list[str]:
    """The binary ops of `names` that apply to `x` and `y` (same dtype): logical ones on
    bools; on floats, ops that jump only when both agree exactly; no float
    multiply/add whose result could outgrow the dtype's magnitude limit."""
    d = x.dtype
    if d == "bool":
        return sorted(set(names) & LOGICAL)
    if d in FLOATS:
        agree = x.agrees and y.agrees
        ok = set(names) & (ARITH | {"divide", "power"} |
                           ((DIVISION | COMPARE) if agree else set()))
    else:
        ok = set(names) & (ARITH | DIVISION | COMPARE | BITWISE | SHIFT | {"power"})
    ok = {n for n in ok if (d, n) not in KNOWN_MISMATCHES}
    if d in FLOATS:
        ok = {n for n in ok if n != "multiply" or x.mag * y.mag <= LIMIT[d]}
        ok = {n for n in ok if n not in ("add", "subtract") or x.mag + y.mag <= LIMIT[d]}
    return sorted(ok)


def _values(node: Node, rng: np.random.Generator) -> np.ndarray:
    if node.dtype in FLOATS:
        v = rng.uniform(-3, 3, node.shape).astype(node.dtype)
        if node.special and v.size:
            flat = v.reshape(-1)
            k = min(4, v.size)
            flat[rng.choice(v.size, k, replace=False)] = np.array(
                [np.nan, np.inf, -np.inf, -0.0][:k], node.dtype)
        return v
    if node.dtype == "bool":
        return rng.random(node.shape) > 0.5
    k = INT_RANGE[node.dtype]
    return rng.integers(-k, k + 1, node.shape).astype(node.dtype)


@st.composite
def native_programs(draw: Any, max_ops: int = 10) -> NativeProgram:
    unary, binary = registry_ops()
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    b = _Builder(draw, dtype)
    b.specials = draw(st.integers(0, 3), label="special values") == 0
    b.param(dtype, b.shape())
    steps = draw(st.integers(1, max_ops), label="ops")
    kinds = ["unary", "unary", "binary", "binary", "reduce", "layout", "layout", "where", "clip",
             "cast"]
    done = 0
    tries = 0
    while done < steps and tries < 4 * steps:
        tries += 1
        kind = b.choice(kinds)
        ok = {"unary": lambda: b.unary(unary), "binary": lambda: b.binary(binary),
              "reduce": b.reduce, "layout": b.layout, "where": b.where, "clip": b.clip,
              "cast": b.cast}[kind]()
        done += bool(ok)
    computed = [n for n in b.nodes if n not in b.params] or [b.params[0]]
    outs = [computed[-1]]
    for _ in range(draw(st.integers(0, 2))):
        n = computed[draw(st.integers(0, len(computed) - 1))]
        if n not in outs:
            outs.append(n)
    seed = draw(st.integers(0, 2 ** 32 - 1), label="input seed")
    return _finish(b, outs, seed)


def _finish(b: _Builder, outs: list[Node], seed: int) -> NativeProgram:
    body = outs[0].ref if len(outs) == 1 else "(" + ", ".join(n.ref for n in outs) + ")"
    decl = ", ".join(f"{p.ref}: Tensor[({', '.join(map(str, p.shape))}), {p.dtype}]"
                     for p in b.params)
    text = (HEAD + f"// input seed {seed}\ndef @main({decl}) {{\n" + "\n".join(b.lines)
            + f"\n  {body}\n}}\n")
    rng = np.random.default_rng(seed)
    args = [_values(p, rng) for p in b.params]
    tolerances = []
    for n in outs:
        if n.dtype in FLOATS:
            tolerances.append((n.dtype, RTOL[n.dtype], max(ATOL[n.dtype], 2 * n.err)))
        else:
            tolerances.append((n.dtype, 0.0, 0.0))
    return NativeProgram(text, args, tolerances, b.ops)


def sweep_program(dtype: str, seed: int = 0) -> NativeProgram:
    """One program applying every op the strategy draws for `dtype` once (a deterministic
    complement of the random programs): each unary op (with its guard) to x: (3, 1, 17),
    each binary op to (x, y: (5, 1)) - broadcasting both ways -, comparisons, logical ops
    and where on their results, clip, casts to every dtype, reductions and layout ops."""
    unary, binary = registry_ops()
    b = _Builder(None, dtype)
    x = b.param(dtype, (3, 1, 17))
    y = b.param(dtype, (5, 1))
    outs: list[Node] = []
    for name in unary:
        if name in BOOL_UNARY or name in INT_ONLY_UNARY and dtype in FLOATS:
            continue
        if dtype in FLOATS and name in UNARY or dtype not in FLOATS and name in INT_UNARY:
            outs.append(b.unary_node(name, x))
    for name in binary_ops_for(x, y, binary):
        outs.append(b.apply_binary(name, x, y))
    c1 = b.apply_binary("greater", x, y)
    c2 = b.apply_binary("less_equal", y, x)
    for name in binary_ops_for(c1, c2, binary):
        outs.append(b.apply_binary(name, c1, c2))
    for name in sorted(BOOL_UNARY & set(unary)):
        outs.append(b.bind(f"{name}({c1.ref})", "bool", c1.shape, 1.0, 0.0, name))
    shape = _broadcast(x.shape, y.shape)
    assert shape is not None
    outs.append(b.bind(f"where({c1.ref}, {x.ref}, {y.ref})", dtype, shape,
                       max(x.mag, y.mag), 0.0, "where"))
    outs.append(b.bind(f"clip({x.ref}, a_min=-2.5f, a_max=1.0f)", dtype, x.shape,
                       min(x.mag, 2.5), 0.0, "clip"))
    if dtype in FLOATS:
        cx = b.bind(f"clip({x.ref}, a_min=-100f, a_max=100f)", dtype, x.shape,
                    min(x.mag, 100.0), 0.0, "clip")
    else:
        cx = x
    for to in DTYPES + ["bool"]:
        outs.append(b.bind(f'cast({cx.ref}, dtype="{to}")', to, x.shape, cx.mag, 0.0, "cast"))
    t = b.unary_node("tanh", x) if dtype in FLOATS else x
    for name in ("sum", "mean", "max", "min"):
        for axis, keep in (("[-1]", False), ("[0, 2]", True), ("None", False)):
            n = {"[-1]": 17, "[0, 2]": 51, "None": 51}[axis]
            shape3 = {"[-1]": (3, 1), "[0, 2]": (1, 1, 1), "None": ()}[axis]
            if dtype in FLOATS:
                acc = EPS["float32"] if dtype == "float16" else EPS[dtype]
                mag = n * t.mag if name == "sum" else t.mag
                err = 0.0 if name in ("max", "min") else (
                    t.err * n + acc * n * n * t.mag + 2 * EPS[dtype] * mag)
            else:
                mag, err = n * t.mag, 0.0
            outs.append(b.bind(f"{name}({t.ref}, axis={axis}, keepdims={keep})", dtype, shape3,
                               mag, err, name))
    lay = [("transpose({}, axes=[2, 0, -2])", (17, 3, 1)),
           ("reshape({}, newshape=[-1, 17, 3])", (1, 17, 3)),
           ("expand_dims({}, axis=-2, num_newaxis=2)", (3, 1, 1, 1, 17)),
           ("squeeze({}, axis=[-2])", (3, 17)),
           ("concatenate(({0}, {0}), axis=-2)", (3, 2, 17)),
           ("strided_slice({}, begin=[2, 0, 16], end=[-5, 1, 0], strides=[-1, 1, -3])",
            (3, 1, 6))]
    for fmt, shape2 in lay:
        outs.append(b.bind(fmt.format(x.ref), dtype, shape2, x.mag, 0.0, fmt.split("(")[0]))
    return _finish(b, outs, seed)


def assert_close(program: NativeProgram, native: Any, expected: Any) -> None:
    """Native results agree with the interpreter's within the program's tolerances."""
    if len(program.tolerances) == 1:
        native, expected = (native,), (expected,)
    assert isinstance(native, tuple) and len(native) == len(expected), (native, expected)
    for k, ((dtype, rtol, atol), n, x) in enumerate(zip(program.tolerances, native, expected)):
        n, x = np.asarray(n), np.asarray(x)
        where = f"output {k} ({dtype}, rtol {rtol:g}, atol {atol:g})"
        assert n.shape == x.shape and n.dtype == x.dtype, \
            f"{where}: native {n.dtype}{n.shape} != interpreter {x.dtype}{x.shape}"
        if dtype in FLOATS:
            np.testing.assert_allclose(n.astype("float64"), x.astype("float64"), rtol=rtol,
                                       atol=atol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(n, x, err_msg=where)
