"""PrimFunc -> llvmlite.ir.

Each PrimFunc `name` becomes two functions:
- `name__impl(T0* noalias nocapture align 64 %p0, ..., i64 begin, i64 end)` (internal),
- the entry `i32 name(i8** args, i64 begin, i64 end)`, which loads the parameter
  pointers and calls the impl (O3 inlines it; noalias becomes scoped alias metadata).

Registers: bool is i1 (i8 in memory), float16 is float (half in memory: loads widen,
stores round). Float ops carry `contract`; a reduction's combine also `reassoc`
(so LLVM may vectorise it); never nnan/ninf, so NaNs behave as in NumPy. Vectorized
loops carry `llvm.loop.vectorize.enable`, unrolled ones `llvm.loop.unroll.full`.
Integer division and remainder never trap: a zero divisor gives 0 and INT_MIN / -1
wraps.
"""
from __future__ import annotations

import math
from typing import Any

from llvmlite import ir

from . import loop_ir as L

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
F16, F32, F64 = ir.HalfType(), ir.FloatType(), ir.DoubleType()
STACK_LIMIT = 1 << 16        # local buffers up to this many bytes live on the stack

FLOAT_FLAGS = ("contract",)
REDUCE_FLAGS = ("reassoc", "contract")

# intrinsics LLVM knows (and vectorises, where the target has an instruction)
_LLVM_INTRINSICS = {"sqrt": "llvm.sqrt", "fabs": "llvm.fabs", "floor": "llvm.floor",
                    "ceil": "llvm.ceil", "round": "llvm.round", "trunc": "llvm.trunc",
                    "exp": "llvm.exp", "log": "llvm.log", "log2": "llvm.log2",
                    "log10": "llvm.log10", "sin": "llvm.sin", "cos": "llvm.cos",
                    "pow": "llvm.pow", "tanh": "llvm.tanh"}
# libm functions (resolved from the process by the JIT)
_LIBM = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
         "erf", "atan2")


def reg_type(dtype: str) -> ir.Type:
    if dtype == "bool":
        return I1
    if L.is_int(dtype):
        return ir.IntType(L.bits(dtype))
    if dtype in ("float16", "float32"):
        return F32
    if dtype == "float64":
        return F64
    raise NotImplementedError(f"dtype {dtype}")


def mem_type(dtype: str) -> ir.Type:
    if dtype == "bool":
        return I8
    if dtype == "float16":
        return F16
    return reg_type(dtype)


def elem_size(dtype: str) -> int:
    return 1 if dtype == "bool" else max(1, L.bits(dtype) // 8)


class _Loop:
    __slots__ = ("md",)


class FunctionBuilder:
    def __init__(self, module: ir.Module, prim: L.PrimFunc, md_cache: dict[str, Any]):
        self.module = module
        self.prim = prim
        self.md_cache = md_cache
        self.ptrs: dict[int, ir.Value] = {}
        self.vars: dict[int, ir.Value] = {}
        self.heap: list[ir.Value] = []
        # set when a loop body calls a function LLVM cannot vectorise (libm): that loop
        # gets no vectorize.enable hint (which would only make LLVM warn on stderr)
        self.scalar_call = False

    # ---------------------------------------------------------------- declarations
    def _fn(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        g = self.module.globals.get(name)
        if g is None:
            g = ir.Function(self.module, ir.FunctionType(ret, args), name)
        return g

    def intrinsic(self, name: str, t: ir.Type, n: int = 1) -> ir.Function:
        suffix = "f32" if t == F32 else "f64"
        return self._fn(f"{name}.{suffix}", t, [t] * n)

    def libm(self, name: str, t: ir.Type, n: int = 1) -> ir.Function:
        return self._fn(name + ("f" if t == F32 else ""), t, [t] * n)

    # ---------------------------------------------------------------- build
    def build(self) -> ir.Function:
        prim = self.prim
        ptypes = [mem_type(p.dtype).as_pointer() for p in prim.params]
        impl = ir.Function(self.module, ir.FunctionType(ir.VoidType(), ptypes + [I64, I64]),
                           f"{prim.name}__impl")
        impl.linkage = "internal"
        impl.attributes.add("nounwind")
        for arg, p in zip(impl.args, prim.params):
            arg.add_attribute("noalias")
            arg.attributes.align = 64
            arg.name = p.name
            self.ptrs[id(p)] = arg
        self.begin, self.end = impl.args[-2], impl.args[-1]
        self.begin.name, self.end.name = "begin", "end"
        self.fn = impl
        self.entry_block = impl.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(self.entry_block)
        body = impl.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        for buf, data in prim.constants:
            self.ptrs[id(buf)] = self._constant_global(buf, data)
        self.stmt(prim.body)
        for p in self.heap:
            self.b.call(self._fn("free", ir.VoidType(), [I8.as_pointer()]), [p])
        self.b.ret_void()
        self.alloca_builder.branch(body)

        entry = ir.Function(self.module, ir.FunctionType(I32, [I8.as_pointer().as_pointer(),
                                                              I64, I64]), prim.name)
        bb = ir.IRBuilder(entry.append_basic_block("entry"))
        args = []
        for k, (p, t) in enumerate(zip(prim.params, ptypes)):
            slot = bb.gep(entry.args[0], [ir.Constant(I64, k)], inbounds=True)
            args.append(bb.bitcast(bb.load(slot), t))
        bb.call(impl, args + [entry.args[1], entry.args[2]])
        bb.ret(ir.Constant(I32, 0))
        return entry

    def _constant_global(self, buf: L.Buffer, data: Any) -> ir.Value:
        import numpy as np
        arr = np.array(data, order="C")
        if buf.dtype == "bool":
            arr = arr.astype(np.uint8)
        raw = bytearray(arr.tobytes())
        n = len(raw)
        gname = f"{self.prim.name}__{buf.name}"
        g = ir.GlobalVariable(self.module, ir.ArrayType(I8, max(n, 1)), gname)
        g.global_constant = True
        g.linkage = "internal"
        g.align = 64
        g.initializer = ir.Constant(ir.ArrayType(I8, max(n, 1)), raw or bytearray(1))
        return self.alloca_builder.bitcast(g, mem_type(buf.dtype).as_pointer())

    # ---------------------------------------------------------------- statements
    def stmt(self, root: L.Stmt) -> None:
        # Statements nest as deep as the loop nest (shallow); Seq is iterated.
        if isinstance(root, L.Seq):
            for s in root.stmts:
                self.stmt(s)
        elif isinstance(root, L.For):
            self.loop(root)
        elif isinstance(root, L.Store):
            memo: dict[int, ir.Value] = {}
            v = self.expr(root.value, memo)
            ptr = self.address(root.buffer, root.indices, memo)
            self.b.store(self.to_mem(v, root.buffer.dtype), ptr,
                         align=elem_size(root.buffer.dtype))
        elif isinstance(root, L.Allocate):
            self.allocate(root)
        elif isinstance(root, L.IfThenElse):
            cond = self.expr(root.cond, {})
            if root.otherwise is None:
                with self.b.if_then(cond):
                    self.stmt(root.then)
            else:
                with self.b.if_else(cond) as (then, other):
                    with then:
                        self.stmt(root.then)
                    with other:
                        self.stmt(root.otherwise)
        else:
            raise TypeError(f"unknown statement {root!r}")

    def allocate(self, a: L.Allocate) -> None:
        buf = a.buffer
        t = mem_type(buf.dtype)
        nbytes = buf.size * elem_size(buf.dtype)
        if nbytes <= STACK_LIMIT:
            p = self.alloca_builder.alloca(t, size=max(buf.size, 1), name=buf.name)
            p.align = 64 if buf.size > 1 else elem_size(buf.dtype)
            self.ptrs[id(buf)] = p
            self.stmt(a.body)
        else:
            malloc = self._fn("malloc", I8.as_pointer(), [I64])
            raw = self.b.call(malloc, [ir.Constant(I64, nbytes + 64)])
            # align to 64 bytes
            addr = self.b.ptrtoint(raw, I64)
            aligned = self.b.and_(self.b.add(addr, ir.Constant(I64, 63)), ir.Constant(I64, ~63))
            self.ptrs[id(buf)] = self.b.inttoptr(aligned, t.as_pointer(), name=buf.name)
            self.stmt(a.body)
            self.b.call(self._fn("free", ir.VoidType(), [I8.as_pointer()]), [raw])

    def _loop_md(self, kind: str) -> Any:
        key = kind
        inner = self.md_cache.get(key)
        if inner is None:
            if kind == "unrolled":
                inner = self.module.add_metadata(["llvm.loop.unroll.full"])
            else:
                inner = self.module.add_metadata(["llvm.loop.vectorize.enable",
                                                  ir.Constant(I1, 1)])
            self.md_cache[key] = inner
        return inner

    def loop(self, f: L.For) -> None:
        b = self.b
        if f.kind == "parallel":
            start, stop = self.begin, self.end
        else:
            start, stop = ir.Constant(I64, f.begin), ir.Constant(I64, f.begin + f.extent)
        pre = b.block
        header = self.fn.append_basic_block(f"{f.var.name}.head")
        body = self.fn.append_basic_block(f"{f.var.name}.body")
        exit_ = self.fn.append_basic_block(f"{f.var.name}.exit")
        b.branch(header)
        b.position_at_end(header)
        phi = b.phi(I64, name=f.var.name)
        phi.add_incoming(start, pre)
        b.cbranch(b.icmp_signed("<", phi, stop), body, exit_)
        b.position_at_end(body)
        self.vars[id(f.var)] = phi
        outer_scalar, self.scalar_call = self.scalar_call, False
        self.stmt(f.body)
        body_scalar = self.scalar_call
        self.scalar_call = outer_scalar or body_scalar
        nxt = b.add(phi, ir.Constant(I64, 1), flags=("nsw",))
        back = b.branch(header)
        phi.add_incoming(nxt, b.block)
        innermost = not isinstance(f.body, (L.For, L.Seq, L.Allocate, L.IfThenElse))
        kind = f.kind
        if kind == "parallel" and innermost:
            kind = "vectorized"
        if kind == "vectorized" and body_scalar:
            kind = "serial"
        if kind in ("vectorized", "unrolled"):
            inner = self._loop_md(kind)
            loop_id = self.module.add_metadata([])
            loop_id.operands = (loop_id, inner)     # self-referential loop id
            back.set_metadata("llvm.loop", loop_id)
        b.position_at_end(exit_)

    # ---------------------------------------------------------------- memory
    def address(self, buf: L.Buffer, indices: tuple[L.Expr, ...],
                memo: dict[int, ir.Value]) -> ir.Value:
        ptr = self.ptrs[id(buf)]
        if not indices:
            return ptr
        flat: ir.Value | None = None
        stride = 1
        for d, i in zip(reversed(buf.shape), reversed(indices)):
            iv = self.expr(i, memo)
            term = iv if stride == 1 else self.b.mul(iv, ir.Constant(I64, stride), flags=("nsw",))
            flat = term if flat is None else self.b.add(flat, term, flags=("nsw",))
            stride *= d
        return self.b.gep(ptr, [flat], inbounds=True)

    def to_mem(self, v: ir.Value, dtype: str) -> ir.Value:
        if dtype == "bool":
            return self.b.zext(v, I8)
        if dtype == "float16":
            return self.b.fptrunc(v, F16)
        return v

    def from_mem(self, v: ir.Value, dtype: str) -> ir.Value:
        if dtype == "bool":
            return self.b.trunc(v, I1)
        if dtype == "float16":
            return self.b.fpext(v, F32)
        return v

    # ---------------------------------------------------------------- expressions
    def expr(self, root: L.Expr, memo: dict[int, ir.Value]) -> ir.Value:
        for n in L.walk(root):
            if id(n) not in memo:
                memo[id(n)] = self.node(n, memo)
        return memo[id(root)]

    def node(self, n: L.Expr, memo: dict[int, ir.Value]) -> ir.Value:
        b = self.b
        if isinstance(n, L.Const):
            t = reg_type(n.dtype)
            if n.dtype == "bool":
                return ir.Constant(I1, int(bool(n.value)))
            if L.is_int(n.dtype):
                v = int(n.value) & ((1 << L.bits(n.dtype)) - 1)
                return ir.Constant(t, v)
            v = float(n.value)
            if n.dtype == "float16":
                import numpy as np
                v = float(np.float16(v))
            return ir.Constant(t, v)
        if isinstance(n, L.Var):
            v = self.vars.get(id(n))
            if v is None:
                raise KeyError(f"index variable {n.name} used outside its loop")
            return v if n.dtype == "int64" else b.trunc(v, reg_type(n.dtype))
        if isinstance(n, L.Load):
            ptr = self.address(n.buffer, n.indices, memo)
            return self.from_mem(b.load(ptr, align=elem_size(n.buffer.dtype)), n.buffer.dtype)
        if isinstance(n, L.Binary):
            return self.binary(n, memo[id(n.a)], memo[id(n.b)])
        if isinstance(n, L.Unary):
            a = memo[id(n.a)]
            if n.op == "neg":
                if L.is_float(n.dtype):
                    return b.fneg(a, flags=FLOAT_FLAGS)
                return b.sub(ir.Constant(a.type, 0), a)
            return b.not_(a)
        if isinstance(n, L.Cmp):
            return self.compare(n.op, memo[id(n.a)], memo[id(n.b)], n.a.dtype)
        if isinstance(n, L.Select):
            return b.select(memo[id(n.cond)], memo[id(n.a)], memo[id(n.b)])
        if isinstance(n, L.Cast):
            return self.cast(memo[id(n.value)], n.value.dtype, n.dtype)
        if isinstance(n, L.Call):
            return self.call(n, [memo[id(a)] for a in n.args])
        if isinstance(n, L.Reduce):
            raise TypeError("a Reduce reached codegen (the scheduler should expand it)")
        raise TypeError(f"unknown expression {n!r}")

    def compare(self, op: str, a: ir.Value, c: ir.Value, dtype: str) -> ir.Value:
        sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[op]
        if L.is_float(dtype):
            if op == "ne":
                return self.b.fcmp_unordered("!=", a, c)
            return self.b.fcmp_ordered(sym, a, c)
        if L.is_unsigned(dtype):
            return self.b.icmp_unsigned(sym, a, c)
        return self.b.icmp_signed(sym, a, c)

    def binary(self, n: L.Binary, a: ir.Value, c: ir.Value) -> ir.Value:
        b, op, dt = self.b, n.op, n.dtype
        if L.is_float(dt):
            fl = REDUCE_FLAGS if n.reduction else FLOAT_FLAGS
            if op == "add":
                return b.fadd(a, c, flags=fl)
            if op == "sub":
                return b.fsub(a, c, flags=fl)
            if op == "mul":
                return b.fmul(a, c, flags=fl)
            if op == "div":
                return b.fdiv(a, c, flags=FLOAT_FLAGS)
            if op == "mod":
                return b.frem(a, c)
            if op in ("max", "min"):
                # NaN propagates from either side (numpy maximum/minimum); LLVM
                # vectorises these, reductions included
                fn = self.intrinsic("llvm.maximum" if op == "max" else "llvm.minimum",
                                    a.type, 2)
                return b.call(fn, [a, c])
            if op == "floordiv":
                return b.call(self.intrinsic("llvm.floor", a.type), [b.fdiv(a, c)])
            if op == "floormod":
                q = b.call(self.intrinsic("llvm.floor", a.type), [b.fdiv(a, c)])
                return b.fsub(a, b.fmul(q, c))
            raise NotImplementedError(f"float {op}")
        unsigned = L.is_unsigned(dt)
        if op == "add":
            return b.add(a, c)
        if op == "sub":
            return b.sub(a, c)
        if op == "mul":
            return b.mul(a, c)
        if op == "and":
            return b.and_(a, c)
        if op == "or":
            return b.or_(a, c)
        if op == "xor":
            return b.xor(a, c)
        if op in ("max", "min"):
            sym = ">" if op == "max" else "<"
            cond = b.icmp_unsigned(sym, a, c) if unsigned else b.icmp_signed(sym, a, c)
            return b.select(cond, a, c)
        if op in ("shl", "shr"):
            width = ir.Constant(a.type, a.type.width)
            in_range = b.icmp_unsigned("<", c, width)
            safe = b.select(in_range, c, ir.Constant(a.type, 0))
            if op == "shl":
                return b.select(in_range, b.shl(a, safe), ir.Constant(a.type, 0))
            if unsigned:
                return b.select(in_range, b.lshr(a, safe), ir.Constant(a.type, 0))
            sign = b.ashr(a, ir.Constant(a.type, a.type.width - 1))
            return b.select(in_range, b.ashr(a, safe), sign)
        if op in ("div", "mod", "floordiv", "floormod"):
            return self.int_division(op, a, c, unsigned)
        raise NotImplementedError(f"integer {op}")

    def int_division(self, op: str, a: ir.Value, c: ir.Value, unsigned: bool) -> ir.Value:
        b = self.b
        t = a.type
        zero, one = ir.Constant(t, 0), ir.Constant(t, 1)
        if t == I1:        # bool: divisor is 1 or the result is 0
            return a if op in ("div", "floordiv") else zero
        is_zero = b.icmp_unsigned("==", c, zero)
        if unsigned:
            safe = b.select(is_zero, one, c)
            r = b.udiv(a, safe) if op in ("div", "floordiv") else b.urem(a, safe)
            return b.select(is_zero, zero, r)
        minus1 = b.icmp_signed("==", c, ir.Constant(t, -1))
        safe = b.select(b.or_(is_zero, minus1), one, c)
        q = b.sdiv(a, safe)
        r = b.srem(a, safe)
        if op in ("floordiv", "floormod"):
            # adjust when the remainder is nonzero and its sign differs from the divisor's
            adj = b.and_(b.icmp_signed("!=", r, zero),
                         b.icmp_signed("!=", b.icmp_signed("<", r, zero),
                                       b.icmp_signed("<", safe, zero)))
            if op == "floordiv":
                q = b.select(adj, b.sub(q, one), q)
            else:
                r = b.select(adj, b.add(r, safe), r)
        if op in ("div", "floordiv"):
            res = b.select(minus1, b.sub(zero, a), q)
        else:
            res = b.select(minus1, zero, r)
        return b.select(is_zero, zero, res)

    def cast(self, v: ir.Value, src: str, dst: str) -> ir.Value:
        b = self.b
        if src == dst:
            return v
        st, dt = reg_type(src), reg_type(dst)
        if dst == "bool":
            if L.is_float(src):
                return b.fcmp_unordered("!=", v, ir.Constant(st, 0.0))
            return b.icmp_unsigned("!=", v, ir.Constant(st, 0))
        if L.is_float(dst):
            if L.is_float(src):
                if st != dt:
                    out = b.fpext(v, dt) if dt == F64 else b.fptrunc(v, dt)
                else:
                    out = v
                if dst == "float16":
                    return b.fpext(b.fptrunc(v, F16), F32)
                return out
            if src == "bool" or L.is_unsigned(src):
                out = b.uitofp(v, dt if dst != "float16" else F64)
            else:
                out = b.sitofp(v, dt if dst != "float16" else F64)
            if dst == "float16":
                return b.fpext(b.fptrunc(out, F16), F32)
            return out
        # integer destination
        if L.is_float(src):
            # as NumPy on x86 (C casts): narrow types through a 32-bit conversion, uint32
            # and int64 through 64 bits (out of range: INT_MIN), uint64 by halves
            if dst == "uint64":
                two63 = ir.Constant(st, 2.0 ** 63)
                big = b.fcmp_ordered(">=", v, two63)
                hi = b.xor(b.fptosi(b.fsub(v, two63), I64), ir.Constant(I64, 1 << 63))
                return b.select(big, hi, b.fptosi(v, I64))
            via = I64 if dst in ("int64", "uint32") else I32
            w = b.fptosi(v, via)
            return w if via == dt else b.trunc(w, dt)
        sw, dw = st.width, dt.width
        if sw == dw:
            return v
        if sw > dw:
            return b.trunc(v, dt)
        if src == "bool" or L.is_unsigned(src):
            return b.zext(v, dt)
        return b.sext(v, dt)

    def call(self, n: L.Call, args: list[ir.Value]) -> ir.Value:
        b = self.b
        name = n.name
        if name == "fp16_round":
            return b.fpext(b.fptrunc(args[0], F16), F32)
        t = args[0].type
        if name == "isnan":
            return b.fcmp_unordered("uno", args[0], args[0])
        if name in ("isinf", "isfinite"):
            absx = b.call(self.intrinsic("llvm.fabs", t), [args[0]])
            inf = ir.Constant(t, math.inf)
            if name == "isinf":
                return b.fcmp_ordered("==", absx, inf)
            return b.fcmp_ordered("<", absx, inf)
        if name == "rsqrt":
            s = b.call(self.intrinsic("llvm.sqrt", t), [args[0]])
            return b.fdiv(ir.Constant(t, 1.0), s, flags=FLOAT_FLAGS)
        if name == "exp" and t == F32:
            return self.exp_f32(args[0])
        if name in _LLVM_INTRINSICS:
            if name == "tanh":
                self.scalar_call = True
            fn = self.intrinsic(_LLVM_INTRINSICS[name], t, len(args))
            return b.call(fn, args)
        if name in _LIBM:
            self.scalar_call = True
            return b.call(self.libm(name, t, len(args)), args)
        raise NotImplementedError(f"intrinsic {name}")


def _exp_f32(self: FunctionBuilder, x: ir.Value) -> ir.Value:
    """exp(x) in float32 from arithmetic LLVM vectorises (libm's expf is scalar):
    n = round(x / ln2), f = x - n * ln2 (two-constant Cody-Waite), exp(f) by a degree-7
    polynomial, times 2^n built from exponent bits in two halves (so denormal results
    and overflow to inf come out right). Within 2 ulp of expf; NaN gives NaN."""
    b = self.b
    c = lambda v: ir.Constant(F32, v)
    fl = ("contract",)
    xc = b.call(self.intrinsic("llvm.minimum", F32, 2),
                [b.call(self.intrinsic("llvm.maximum", F32, 2), [x, c(-104.0)]), c(89.0)])
    n = b.call(self.intrinsic("llvm.floor", F32),
               [b.fadd(b.fmul(xc, c(1.4426950408889634), flags=fl), c(0.5), flags=fl)])
    f = b.fsub(xc, b.fmul(n, c(0.693359375)))
    f = b.fsub(f, b.fmul(n, c(-2.12194440e-4)))
    # exp(f) on [-ln2/2, ln2/2]: Taylor-like minimax (Cephes expf)
    p = c(1.9875691500e-4)
    for k in (1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
              5.0000001201e-1):
        p = b.fadd(b.fmul(p, f), c(k))
    y = b.fadd(b.fadd(b.fmul(b.fmul(p, f), f), f), c(1.0))
    ni = b.fptosi(n, I32)
    half = b.ashr(ni, ir.Constant(I32, 1))
    rest = b.sub(ni, half)

    def pow2(e: ir.Value) -> ir.Value:
        bits = b.shl(b.add(e, ir.Constant(I32, 127)), ir.Constant(I32, 23))
        return b.bitcast(bits, F32)
    out = b.fmul(b.fmul(y, pow2(half)), pow2(rest))
    return b.select(b.fcmp_unordered("uno", x, x), x, out)


FunctionBuilder.exp_f32 = _exp_f32      # type: ignore[attr-defined]


def build_module(prims: list[L.PrimFunc], name: str = "relay_kernels") -> ir.Module:
    """One llvmlite module with the entry (and impl) function of every PrimFunc."""
    module = ir.Module(name=name)
    md: dict[str, Any] = {}
    names = [p.name for p in prims]
    if len(set(names)) != len(names):
        raise ValueError(f"two kernels share a name in one module: {names}")
    for prim in prims:
        FunctionBuilder(module, prim, md).build()
    return module
