"""PrimFunc -> llvmlite.ir.

Each PrimFunc `name` becomes two functions:
- `name__impl(T0* noalias nocapture align <element size> %p0, ..., i64 begin, i64 end)` (internal),
- the entry `i32 name(i8** args, i64 begin, i64 end)`, which loads the parameter
  pointers and calls the impl (O3 inlines it; noalias becomes scoped alias metadata).

Registers: bool is i1 (i8 in memory), float16 is float (half in memory: loads widen,
stores round). Float ops carry `contract`; a reduction's combine also `reassoc`
(so LLVM may vectorise it); never nnan/ninf, so NaNs behave as in NumPy. Vectorized
loops carry `llvm.loop.vectorize.enable`, unrolled ones `llvm.loop.unroll.full`.
Integer division and remainder never trap: a zero divisor gives 0 and sets the
kernel's status (`STATUS_INT_DIV_BY_ZERO`, `STATUS_INT_MOD_BY_ZERO`: the impl and the
entry return it; `jit.status_error` maps it to the interpreter's exception); INT_MIN / -1
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
# the LLVM intrinsics the host has vector instructions for
_VECTOR_INTRINSICS = ("sqrt", "fabs", "floor", "ceil", "round", "trunc")
# libm functions (resolved from the process by the JIT)
_LIBM = ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
         "erf", "atan2")


# the entry's return value: 0, or the bitwise or of these (every error the run hit)
STATUS_OK = 0
STATUS_INT_DIV_BY_ZERO = 1        # integer division (div, floordiv) by zero
STATUS_INT_MOD_BY_ZERO = 2        # integer remainder (mod, floormod) by zero


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
        impl = ir.Function(self.module, ir.FunctionType(I32, ptypes + [I64, I64]),
                           f"{prim.name}__impl")
        impl.linkage = "internal"
        impl.attributes.add("nounwind")
        for arg, p in zip(impl.args, prim.params):
            arg.add_attribute("noalias")
            # Only the element's natural alignment: NumPy arrays of users start 16 bytes
            # past a 64-byte boundary, and copying them to honour a stronger promise
            # cost more than unaligned vector loads do on AVX-512 (none when the data
            # is in fact aligned, as the executor's own buffers are).
            arg.attributes.align = elem_size(p.dtype)
            arg.name = p.name
            self.ptrs[id(p)] = arg
        self.begin, self.end = impl.args[-2], impl.args[-1]
        self.begin.name, self.end.name = "begin", "end"
        self.fn = impl
        self.entry_block = impl.append_basic_block("entry")
        self.alloca_builder = ir.IRBuilder(self.entry_block)
        self.status = self.alloca_builder.alloca(I32, name="status")
        self.alloca_builder.store(ir.Constant(I32, 0), self.status)
        body = impl.append_basic_block("body")
        self.b = ir.IRBuilder(body)
        for buf, data in prim.constants:
            self.ptrs[id(buf)] = self._constant_global(buf, data)
        self.stmt(prim.body)
        for p in self.heap:
            self.b.call(self._fn("free", ir.VoidType(), [I8.as_pointer()]), [p])
        self.b.ret(self.b.load(self.status))
        self.alloca_builder.branch(body)

        entry = ir.Function(self.module, ir.FunctionType(I32, [I8.as_pointer().as_pointer(),
                                                              I64, I64]), prim.name)
        bb = ir.IRBuilder(entry.append_basic_block("entry"))
        args = []
        for k, (p, t) in enumerate(zip(prim.params, ptypes)):
            slot = bb.gep(entry.args[0], [ir.Constant(I64, k)], inbounds=True)
            args.append(bb.bitcast(bb.load(slot), t))
        bb.ret(bb.call(impl, args + [entry.args[1], entry.args[2]]))
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
        elif isinstance(root, L.Prefetch):
            ptr = self.address(root.buffer, root.indices, {})
            fn = self._fn("llvm.prefetch.p0", ir.VoidType(), [I8.as_pointer(), I32, I32, I32])
            self.b.call(fn, [self.b.bitcast(ptr, I8.as_pointer()), ir.Constant(I32, 0),
                             ir.Constant(I32, max(0, min(3, int(root.locality)))),
                             ir.Constant(I32, 1)])
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
            # once per call (per thread: a parallel loop's iterations reuse it), freed
            # before the return
            ab = self.alloca_builder
            malloc = self._fn("malloc", I8.as_pointer(), [I64])
            raw = ab.call(malloc, [ir.Constant(I64, nbytes + 64)])
            # align to 64 bytes
            addr = ab.ptrtoint(raw, I64)
            aligned = ab.and_(ab.add(addr, ir.Constant(I64, 63)), ir.Constant(I64, ~63))
            self.ptrs[id(buf)] = ab.inttoptr(aligned, t.as_pointer(), name=buf.name)
            self.heap.append(raw)
            self.stmt(a.body)

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
            # llvmlite returns the same node for equal operands: a unique placeholder
            # makes each loop's id its own node before it is made self-referential
            # (shared ids would give every loop the hints of the last one).
            count = self.md_cache["#loops"] = self.md_cache.get("#loops", 0) + 1
            loop_id = self.module.add_metadata(
                [ir.MetaDataString(self.module, f"relay.loop.{count}")])
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
        if isinstance(n, L.BitCast):
            return self.bitcast(memo[id(n.value)], n.value.dtype, n.dtype)
        if isinstance(n, L.Call):
            return self.call(n, [memo[id(a)] for a in n.args])
        if isinstance(n, L.Reduce):
            raise TypeError("a Reduce reached codegen (the scheduler should expand it)")
        raise TypeError(f"unknown expression {n!r}")

    def bitcast(self, v: ir.Value, src: str, dst: str) -> ir.Value:
        """The bits of register `v` (of `src`) as `dst`: through the memory types, so a
        float16 register (a float) is rounded to half (exact) and a float16 result
        widened to float."""
        raw = self.b.bitcast(self.to_mem(v, src), mem_type(dst))
        return self.from_mem(raw, dst)

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
        if isinstance(c, ir.Constant) and isinstance(c.constant, int):
            if c.constant == 0:
                # a divisor that is 0 at compile time: 0 and the status, as at run time
                # (the interpreter raises); lowerings guard divisors that may be 0
                code = (STATUS_INT_DIV_BY_ZERO if op in ("div", "floordiv")
                        else STATUS_INT_MOD_BY_ZERO)
                b.store(b.or_(b.load(self.status), ir.Constant(I32, code)), self.status)
                return zero
            return self._int_division_by(op, a, c, unsigned)
        is_zero = b.icmp_unsigned("==", c, zero)
        code = STATUS_INT_DIV_BY_ZERO if op in ("div", "floordiv") else STATUS_INT_MOD_BY_ZERO
        flag = b.select(is_zero, ir.Constant(I32, code), ir.Constant(I32, 0))
        b.store(b.or_(b.load(self.status), flag), self.status)
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

    def _int_division_by(self, op: str, a: ir.Value, c: ir.Constant, unsigned: bool
                         ) -> ir.Value:
        """Division by a nonzero constant (index arithmetic): no checks."""
        b = self.b
        t = a.type
        zero, one = ir.Constant(t, 0), ir.Constant(t, 1)
        value = c.constant & ((1 << t.width) - 1)
        if unsigned:
            return b.udiv(a, c) if op in ("div", "floordiv") else b.urem(a, c)
        if value == (1 << t.width) - 1:        # -1: INT_MIN / -1 wraps, remainder 0
            return b.sub(zero, a) if op in ("div", "floordiv") else zero
        q, r = b.sdiv(a, c), b.srem(a, c)
        if op in ("div", "mod"):
            return q if op == "div" else r
        negative = value >> (t.width - 1)
        adj = b.and_(b.icmp_signed("!=", r, zero),
                     b.icmp_signed("!=", b.icmp_signed("<", r, zero),
                                   ir.Constant(I1, int(bool(negative)))))
        if op == "floordiv":
            return b.select(adj, b.sub(q, one), q)
        return b.select(adj, b.add(r, c), r)

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
                hi = b.xor(self.fptosi_x86(b.fsub(v, two63), I64), ir.Constant(I64, 1 << 63))
                return b.select(big, hi, self.fptosi_x86(v, I64))
            via = I64 if dst in ("int64", "uint32") else I32
            w = self.fptosi_x86(v, via)
            return w if via == dt else b.trunc(w, dt)
        sw, dw = st.width, dt.width
        if sw == dw:
            return v
        if sw > dw:
            return b.trunc(v, dt)
        if src == "bool" or L.is_unsigned(src):
            return b.zext(v, dt)
        return b.sext(v, dt)

    def fptosi_x86(self, v: ir.Value, it: ir.IntType) -> ir.Value:
        """fptosi with x86's result for NaN and out-of-range values (the "integer
        indefinite" INT_MIN, what NumPy gives) instead of LLVM's poison, which the
        optimiser may fold to anything once it sees the NaN (e.g. log(x < 0) = NaN)."""
        b = self.b
        lo = ir.Constant(v.type, -(2.0 ** (it.width - 1)))
        hi = ir.Constant(v.type, 2.0 ** (it.width - 1))
        ok = b.and_(b.fcmp_ordered(">=", v, lo), b.fcmp_ordered("<", v, hi))
        w = b.fptosi(b.select(ok, v, ir.Constant(v.type, 0.0)), it)
        return b.select(ok, w, ir.Constant(it, 1 << (it.width - 1)))

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
        if t == F32 and name == "pow":
            return self.pow_f32(args[0], args[1])
        if t == F32 and name in _VECTOR_MATH_F32:
            return getattr(self, _VECTOR_MATH_F32[name])(args[0])
        if t == F64 and name in _VECTOR_MATH_F64:
            return getattr(self, _VECTOR_MATH_F64[name])(args[0])
        if name in _LLVM_INTRINSICS:
            if name not in _VECTOR_INTRINSICS:     # a libm call per element
                self.scalar_call = True
            fn = self.intrinsic(_LLVM_INTRINSICS[name], t, len(args))
            return b.call(fn, args)
        if name in _LIBM:
            self.scalar_call = True
            return b.call(self.libm(name, t, len(args)), args)
        raise NotImplementedError(f"intrinsic {name}")


def _times_pow2(b: ir.IRBuilder, y: ir.Value, n: ir.Value, ity: ir.Type, fty: ir.Type,
                bias: int, mantissa_bits: int) -> ir.Value:
    """y * 2**n for an integral float `n`, as two exponent-field multiplications (2**(n/2)
    twice), so n up to twice the largest exponent neither overflows the field nor flushes."""
    ni = b.fptosi(n, ity)
    half = b.ashr(ni, ir.Constant(ity, 1))
    rest = b.sub(ni, half)

    def pow2(e: ir.Value) -> ir.Value:
        bits = b.shl(b.add(e, ir.Constant(ity, bias)), ir.Constant(ity, mantissa_bits))
        return b.bitcast(bits, fty)
    return b.fmul(b.fmul(y, pow2(half)), pow2(rest))


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
    out = _times_pow2(b, y, n, I32, F32, 127, 23)
    return b.select(b.fcmp_unordered("uno", x, x), x, out)


FunctionBuilder.exp_f32 = _exp_f32      # type: ignore[attr-defined]


# Vectorisable math (straight-line arithmetic, bit operations and selects; no libm
# calls): float32 (float16 computes in float32) and float64 paths by name.
_VECTOR_MATH_F32 = {"exp": "exp_f32", "tanh": "tanh_f32", "erf": "erf_f32",
                    "log": "log_f32", "log2": "log2_f32", "log10": "log10_f32"}
_VECTOR_MATH_F64 = {"exp": "exp_f64", "log": "log_f64", "tanh": "tanh_f64"}


def _horner(self: FunctionBuilder, x: ir.Value, coeffs: tuple[float, ...]) -> ir.Value:
    """coeffs[0] * x^n + ... + coeffs[n] (multiply-adds that contract into FMAs)."""
    b = self.b
    p: ir.Value = ir.Constant(x.type, coeffs[0])
    for c in coeffs[1:]:
        p = b.fadd(b.fmul(p, x, flags=FLOAT_FLAGS), ir.Constant(x.type, c), flags=FLOAT_FLAGS)
    return p


def _fmin_max(self: FunctionBuilder, x: ir.Value, lo: float, hi: float) -> ir.Value:
    t = x.type
    b = self.b
    x = b.call(self.intrinsic("llvm.maximum", t, 2), [x, ir.Constant(t, lo)])
    return b.call(self.intrinsic("llvm.minimum", t, 2), [x, ir.Constant(t, hi)])


def _tanh_f32(self: FunctionBuilder, x: ir.Value) -> ir.Value:
    """tanh (Cephes tanhf): |x| < 0.625: x + x^3 P(x^2); else sign(x) (1 - 2 / (exp(2|x|)
    + 1)) with the vectorised exp (overflow gives +-1). Within 3 ulp of libm's tanhf;
    NaN -> NaN, -0 -> -0."""
    b = self.b
    c = lambda v: ir.Constant(F32, v)
    z = b.call(self.intrinsic("llvm.fabs", F32), [x])
    zz = b.fmul(x, x, flags=FLOAT_FLAGS)
    poly = _horner(self, zz, (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2,
                              1.33314422036e-1, -3.33332819422e-1))
    small = b.fadd(b.fmul(b.fmul(poly, zz, flags=FLOAT_FLAGS), x, flags=FLOAT_FLAGS), x,
                   flags=FLOAT_FLAGS)
    e = self.exp_f32(b.fmul(z, c(2.0)))
    big = b.fsub(c(1.0), b.fdiv(c(2.0), b.fadd(e, c(1.0))))
    big = b.select(b.fcmp_ordered("<", x, c(0.0)), b.fneg(big), big)
    out = b.select(b.fcmp_ordered("<", z, c(0.625)), small, big)
    return b.select(b.fcmp_ordered("==", z, c(0.0)), x, out)


# erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (Eigen's / TVM's fast_erf rational), evaluated
# in float64: within 2 ulp of float32 erf; |x| > 4 rounds to +-1
_ERF_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
          -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
          -1.60960333262415e-02)
_ERF_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
          -7.37332916720468e-03, -1.42647390514189e-02)


def _erf_f32(self: FunctionBuilder, x: ir.Value) -> ir.Value:
    b = self.b
    xd = _fmin_max(self, b.fpext(x, F64), -4.0, 4.0)       # NaN stays NaN
    x2 = b.fmul(xd, xd)
    p = _horner(self, x2, _ERF_P)
    q = _horner(self, x2, _ERF_Q)
    return b.fptrunc(b.fdiv(b.fmul(xd, p), q), F32)


_LOG_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
          3.3333331174e-1)


def _log_f32(self: FunctionBuilder, x: ir.Value) -> ir.Value:
    """log (Cephes logf): x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) by a
    polynomial in m - 1, plus e ln2 in two parts; denormals scaled by 2^23 first.
    Within 2 ulp of libm's logf; log(0) = -inf, log(x < 0) = NaN, log(inf) = inf."""
    b = self.b
    c = lambda v: ir.Constant(F32, v)
    i32 = lambda v: ir.Constant(I32, v)
    tiny = b.fcmp_ordered("<", x, c(1.1754943508222875e-38))
    xs = b.select(tiny, b.fmul(x, c(8388608.0)), x)
    bits = b.bitcast(xs, I32)
    e = b.sub(b.and_(b.lshr(bits, i32(23)), i32(0xFF)), i32(126))
    e = b.select(tiny, b.sub(e, i32(23)), e)
    m = b.bitcast(b.or_(b.and_(bits, i32(0x007FFFFF)), i32(0x3F000000)), F32)   # [0.5, 1)
    lower = b.fcmp_ordered("<", m, c(0.707106781186547524))
    e = b.select(lower, b.sub(e, i32(1)), e)
    m = b.select(lower, b.fsub(b.fadd(m, m), c(1.0)), b.fsub(m, c(1.0)))
    ef = b.sitofp(e, F32)
    z = b.fmul(m, m, flags=FLOAT_FLAGS)
    y = b.fmul(b.fmul(m, z, flags=FLOAT_FLAGS), _horner(self, m, _LOG_P), flags=FLOAT_FLAGS)
    y = b.fadd(y, b.fmul(ef, c(-2.12194440e-4), flags=FLOAT_FLAGS), flags=FLOAT_FLAGS)
    y = b.fsub(y, b.fmul(z, c(0.5), flags=FLOAT_FLAGS), flags=FLOAT_FLAGS)
    out = b.fadd(b.fadd(m, y), b.fmul(ef, c(0.693359375)))
    out = b.select(b.fcmp_ordered("==", x, c(0.0)), c(-math.inf), out)
    out = b.select(b.fcmp_ordered("==", x, c(math.inf)), x, out)
    # NaN for x < 0 and for NaN
    return b.select(b.fcmp_unordered("<", x, c(0.0)), c(math.nan), out)


def _log2_f32(self: FunctionBuilder, x: ir.Value) -> ir.Value:
    return self.b.fmul(self.log_f32(x), ir.Constant(F32, 1.4426950408889634))


def _log10_f32(self: FunctionBuilder, x: ir.Value) -> ir.Value:
    return self.b.fmul(self.log_f32(x), ir.Constant(F32, 0.4342944819032518))


def _exp_f64(self: FunctionBuilder, x: ir.Value) -> ir.Value:
    """exp in float64 (Cephes exp): n = round(x / ln2), r = x - n ln2 (two parts),
    exp(r) = 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2)), times 2^n in two halves (denormal
    results and overflow come out right). Within 1 ulp of libm's exp; NaN gives NaN."""
    b = self.b
    c = lambda v: ir.Constant(F64, v)
    xc = _fmin_max(self, x, -746.0, 710.0)
    n = b.call(self.intrinsic("llvm.floor", F64),
               [b.fadd(b.fmul(xc, c(1.4426950408889634073599)), c(0.5))])
    r = b.fsub(xc, b.fmul(n, c(6.93145751953125e-1)))
    r = b.fsub(r, b.fmul(n, c(1.42860682030941723212e-6)))
    rr = b.fmul(r, r)
    px = b.fmul(r, _horner(self, rr, (1.26177193074810590878e-4, 3.02994407707441961300e-2,
                                      9.99999999999999999910e-1)))
    q = _horner(self, rr, (3.00198505138664455042e-6, 2.52448340349684104192e-3,
                           2.27265548208155028766e-1, 2.00000000000000000009e0))
    y = b.fadd(c(1.0), b.fmul(c(2.0), b.fdiv(px, b.fsub(q, px))))
    out = _times_pow2(b, y, n, I64, F64, 1023, 52)
    return b.select(b.fcmp_unordered("uno", x, x), x, out)


_LOG_P64 = (1.01875663804580931796e-4, 4.97494994976747001425e-1, 4.70579119878881725854e0,
            1.44989225341610930846e1, 1.79368678507819816313e1, 7.70838733755885391666e0)
_LOG_Q64 = (1.0, 1.12873587189167450590e1, 4.52279145837532221105e1,
            8.29875266912776603211e1, 7.11544750618563894466e1, 2.31251620126765340583e1)


def _log_f64(self: FunctionBuilder, x: ir.Value) -> ir.Value:
    """log in float64 (Cephes log): x = m 2^e, m in [sqrt(1/2), sqrt(2)), log(m) by a
    rational function of m - 1, plus e ln2 in two parts; denormals scaled by 2^54 first.
    log(0) = -inf, log(x < 0) = NaN, log(inf) = inf."""
    b = self.b
    c = lambda v: ir.Constant(F64, v)
    i64 = lambda v: ir.Constant(I64, v)
    tiny = b.fcmp_ordered("<", x, c(2.2250738585072014e-308))
    xs = b.select(tiny, b.fmul(x, c(18014398509481984.0)), x)
    bits = b.bitcast(xs, I64)
    e = b.sub(b.and_(b.lshr(bits, i64(52)), i64(0x7FF)), i64(1022))
    e = b.select(tiny, b.sub(e, i64(54)), e)
    m = b.bitcast(b.or_(b.and_(bits, i64(0x000FFFFFFFFFFFFF)), i64(0x3FE0000000000000)), F64)
    lower = b.fcmp_ordered("<", m, c(0.70710678118654752440))
    e = b.select(lower, b.sub(e, i64(1)), e)
    m = b.select(lower, b.fsub(b.fadd(m, m), c(1.0)), b.fsub(m, c(1.0)))
    ef = b.sitofp(e, F64)
    z = b.fmul(m, m, flags=FLOAT_FLAGS)
    y = b.fmul(m, b.fdiv(b.fmul(z, _horner(self, m, _LOG_P64), flags=FLOAT_FLAGS),
                         _horner(self, m, _LOG_Q64)), flags=FLOAT_FLAGS)
    y = b.fsub(y, b.fmul(ef, c(2.121944400546905827679e-4), flags=FLOAT_FLAGS),
               flags=FLOAT_FLAGS)
    y = b.fsub(y, b.fmul(z, c(0.5), flags=FLOAT_FLAGS), flags=FLOAT_FLAGS)
    out = b.fadd(b.fadd(m, y), b.fmul(ef, c(0.693359375)))
    out = b.select(b.fcmp_ordered("==", x, c(0.0)), c(-math.inf), out)
    out = b.select(b.fcmp_ordered("==", x, c(math.inf)), x, out)
    return b.select(b.fcmp_unordered("<", x, c(0.0)), c(math.nan), out)


def _pow_f32(self: FunctionBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """pow for float32 (and float16) exponents that are not constants: exp(y log|x|) in
    float64 (the vectorised log and exp; within 1 ulp of powf after rounding), with C's
    special cases: pow(x, 0) = pow(1, y) = 1, pow(-1, +-inf) = 1, a negative finite base
    with a non-integer exponent is NaN, an odd integer exponent keeps the base's sign
    (-0 and -inf included)."""
    b = self.b
    c = lambda v: ir.Constant(F64, v)
    xd, yd = b.fpext(x, F64), b.fpext(y, F64)
    ax = b.call(self.intrinsic("llvm.fabs", F64), [xd])
    r = self.exp_f64(b.fmul(yd, self.log_f64(ax)))
    floor = self.intrinsic("llvm.floor", F64)
    y_int = b.fcmp_ordered("==", b.call(floor, [yd]), yd)            # +-inf count as even
    half = b.fmul(yd, c(0.5))
    y_odd = b.and_(y_int, b.fcmp_ordered("!=", b.call(floor, [half]), half))
    sign = b.icmp_signed("<", b.bitcast(x, I32), ir.Constant(I32, 0))
    r = b.select(b.and_(sign, y_odd), b.fneg(r), r)
    finite_neg = b.and_(b.fcmp_ordered("<", xd, c(0.0)),
                        b.fcmp_ordered("!=", xd, c(-math.inf)))
    r = b.select(b.and_(finite_neg, b.not_(y_int)), c(math.nan), r)
    one = b.or_(b.fcmp_ordered("==", yd, c(0.0)), b.fcmp_ordered("==", xd, c(1.0)))
    one = b.or_(one, b.and_(b.fcmp_ordered("==", xd, c(-1.0)),
                            b.fcmp_ordered("==", b.call(self.intrinsic("llvm.fabs", F64),
                                                        [yd]), c(math.inf))))
    r = b.select(one, c(1.0), r)
    return b.fptrunc(r, F32)


def _tanh_f64(self: FunctionBuilder, x: ir.Value) -> ir.Value:
    """tanh in float64 (Cephes tanh): |x| < 0.625: x + x z P(z) / Q(z), z = x^2; else
    sign(x) (1 - 2 / (exp(2|x|) + 1)). NaN -> NaN, -0 -> -0."""
    b = self.b
    c = lambda v: ir.Constant(F64, v)
    z = b.call(self.intrinsic("llvm.fabs", F64), [x])
    zz = b.fmul(x, x, flags=FLOAT_FLAGS)
    pq = b.fdiv(_horner(self, zz, (-9.64399179425052238628e-1, -9.92877231001918586564e1,
                                   -1.61468768441708447952e3)),
                _horner(self, zz, (1.0, 1.12811678491632931402e2, 2.23548839060100448583e3,
                                   4.84406305325125486048e3)))
    small = b.fadd(x, b.fmul(b.fmul(x, zz, flags=FLOAT_FLAGS), pq, flags=FLOAT_FLAGS),
                   flags=FLOAT_FLAGS)
    e = self.exp_f64(b.fmul(z, c(2.0)))
    big = b.fsub(c(1.0), b.fdiv(c(2.0), b.fadd(e, c(1.0))))
    big = b.select(b.fcmp_ordered("<", x, c(0.0)), b.fneg(big), big)
    out = b.select(b.fcmp_ordered("<", z, c(0.625)), small, big)
    return b.select(b.fcmp_ordered("==", z, c(0.0)), x, out)


FunctionBuilder.tanh_f64 = _tanh_f64    # type: ignore[attr-defined]
FunctionBuilder.log_f64 = _log_f64      # type: ignore[attr-defined]
FunctionBuilder.pow_f32 = _pow_f32      # type: ignore[attr-defined]
FunctionBuilder.tanh_f32 = _tanh_f32    # type: ignore[attr-defined]
FunctionBuilder.erf_f32 = _erf_f32      # type: ignore[attr-defined]
FunctionBuilder.log_f32 = _log_f32      # type: ignore[attr-defined]
FunctionBuilder.log2_f32 = _log2_f32    # type: ignore[attr-defined]
FunctionBuilder.log10_f32 = _log10_f32  # type: ignore[attr-defined]
FunctionBuilder.exp_f64 = _exp_f64      # type: ignore[attr-defined]


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
