"""LLVM IR for the control part: one function per global, kernels in the same module
(see the package docstring for the ABI)."""
from __future__ import annotations

import re
from typing import Any

from ....ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
)
from ....ir.types import Type
from ..lower import NoLowering, flatten_tuples, lower_primitive
from ..schedule import ranges_per_thread
from .analysis import _Analysis, _FnInfo, _leaves, _nbytes, _rebuild, _structure, _type_of
from .runtime import POOL_GLOBAL, RUN_GLOBAL, STATUS_OOM, STATUS_STACK, NativeProgram, Signature

STACK_SLOT_LIMIT = 4096            # intermediates up to this many bytes live on the stack
SMALL_PARAM = 256                  # loop parameters up to this size are copied at entry
INLINE_KERNEL_BYTES = 256          # kernels whose parameters are all this small may inline


# ---------------------------------------------------------------- codegen

class _Leaf:
    """A tensor value during codegen: a pointer to its data. `fresh`: the memory is an
    intermediate's own slot, a destination or a constant (never a parameter buffer)."""
    __slots__ = ("dtype", "fresh", "ptr", "shape")

    def __init__(self, ptr: Any, shape: tuple[int, ...], dtype: str, fresh: bool):
        self.ptr, self.shape, self.dtype, self.fresh = ptr, shape, dtype, fresh


class _PrimRef:
    __slots__ = ("fn",)

    def __init__(self, fn: Function):
        self.fn = fn


class _Branch:
    __slots__ = ("block", "value")

    def __init__(self, value: Any, block: Any):
        self.value, self.block = value, block


class _Program:
    """Module-wide state: kernels, constants, the LLVM functions of the globals."""

    def __init__(self, module: Any, kernels: dict[int, Any], infos: dict[str, _FnInfo],
                 parallel: Any = None):
        self.module = module
        self.kernels = kernels          # id(Function / raw Call) -> (entry ir.Function, prim)
        self.infos = infos
        self.llfns: dict[str, Any] = {}
        self.nconst = 0
        self.parallel = parallel        # prim -> whether its calls may go to the pool
        self._pool_globals: tuple[Any, Any] | None = None

    def pool_globals(self) -> tuple[Any, Any]:
        """`@relay_parallel_pool` (i64*, the pool's memory, null: none) and
        `@relay_parallel_run` (its `pool_run_ranges(pool, entry, args, extent,
        ranges_per_thread) -> i32`), set by the caller before each call
        (`NativeProgram.set_parallel`)."""
        if self._pool_globals is None:
            from llvmlite import ir
            i8p, i64p = ir.IntType(8).as_pointer(), ir.IntType(64).as_pointer()
            run_t = ir.FunctionType(ir.IntType(32), [i64p, i8p, i8p.as_pointer(),
                                                     ir.IntType(64), ir.IntType(64)])
            pool = ir.GlobalVariable(self.module, i64p, POOL_GLOBAL)
            pool.initializer = ir.Constant(i64p, None)
            run = ir.GlobalVariable(self.module, run_t.as_pointer(), RUN_GLOBAL)
            run.initializer = ir.Constant(run_t.as_pointer(), None)
            self._pool_globals = (pool, run)
        return self._pool_globals

    def fn(self, name: str, ret: Any, args: list[Any]) -> Any:
        from llvmlite import ir
        g = self.module.globals.get(name)
        if g is None:
            g = ir.Function(self.module, ir.FunctionType(ret, args), name)
        return g


class _FnGen:
    def __init__(self, prog: _Program, info: _FnInfo):
        from llvmlite import ir
        self.ir = ir
        self.prog = prog
        self.info = info
        self.f = prog.llfns[info.name]
        self.memo: list[dict[int, Any]] = [{}]
        self.heap: list[Any] = []
        self.null_flags: list[Any] = []
        self.I8, self.I32, self.I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)

    # ------------------------------------------------------------ helpers
    def lookup(self, key: int) -> Any:
        for layer in reversed(self.memo):
            v = layer.get(key)
            if v is not None:
                return v
        return None

    def bind(self, key: int, v: Any) -> None:
        self.memo[-1][key] = v

    def slot(self, shape: tuple[int, ...], dtype: str, name: str = "t") -> Any:
        from ..codegen import mem_type
        ir = self.ir
        n = max(_nbytes(shape, dtype), 1)
        ptype = mem_type(dtype).as_pointer()
        if n <= STACK_SLOT_LIMIT:
            p = self.ab.alloca(ir.ArrayType(self.I8, n), name=name)
            p.align = 64
            return self.ab.bitcast(p, ptype)
        alloc = self.prog.fn("aligned_alloc", self.I8.as_pointer(), [self.I64, self.I64])
        size = (n + 63) // 64 * 64
        raw = self.mb.call(alloc, [ir.Constant(self.I64, 64), ir.Constant(self.I64, size)],
                           name=name)
        self.heap.append(raw)
        self.null_flags.append(self.mb.icmp_unsigned("==", raw,
                                                     ir.Constant(self.I8.as_pointer(), None)))
        return self.mb.bitcast(raw, ptype)

    def memcpy(self, dst: Any, src: Any, nbytes: int) -> None:
        if nbytes == 0:
            return
        ir = self.ir
        i8p = self.I8.as_pointer()
        fn = self.prog.fn("memcpy", i8p, [i8p, i8p, self.I64])
        self.b.call(fn, [self.b.bitcast(dst, i8p), self.b.bitcast(src, i8p),
                         ir.Constant(self.I64, nbytes)])

    def check(self, rc: Any) -> None:
        """Branch to the exit with `rc` when it is not 0."""
        ir = self.ir
        bad = self.b.icmp_unsigned("!=", rc, ir.Constant(self.I32, 0))
        cont = self.f.append_basic_block("ok")
        self.status.add_incoming(rc, self.b.block)
        self.b.cbranch(bad, self.exit_bb, cont)
        self.b.position_at_end(cont)

    def leaves_of(self, t: Type, ptrs: list[Any], fresh: bool) -> Any:
        specs = _leaves(t, "value", None)
        leaves = [_Leaf(p, s, d, fresh) for p, (s, d) in zip(ptrs, specs)]
        return _rebuild(_structure(t, [0]), leaves)

    def constant(self, c: Constant) -> _Leaf:
        import numpy as np

        from ..codegen import mem_type
        ir = self.ir
        data = np.asarray(np.asarray(c.data), order="C")
        dtype = str(data.dtype)
        raw = bytearray((data.astype(np.uint8) if dtype == "bool" else data).tobytes())
        n = max(len(raw), 1)
        name = f"rl_const{self.prog.nconst}"
        self.prog.nconst += 1
        g = ir.GlobalVariable(self.prog.module, ir.ArrayType(self.I8, n), name)
        g.global_constant = True
        g.linkage = "internal"
        g.align = 64
        g.initializer = ir.Constant(ir.ArrayType(self.I8, n), raw or bytearray(1))
        ptr = self.ab.bitcast(g, mem_type(dtype).as_pointer())
        return _Leaf(ptr, tuple(int(d) for d in data.shape), dtype, True)

    # ------------------------------------------------------------ function
    def build(self) -> None:
        from ..codegen import mem_type
        ir = self.ir
        info, f = self.info, self.f
        self.limit = f.args[0]
        self.limit.name = "stack_limit"
        nout = len(info.ret_leaves)
        outs = list(f.args[1:1 + nout])
        ins = list(f.args[1 + nout:])
        for k, a in enumerate(outs):
            a.name = f"out{k}"
            a.add_attribute("noalias")
        entry = f.append_basic_block("entry")
        self.alloc_bb = f.append_basic_block("alloc")
        self.header = f.append_basic_block("header")
        self.exit_bb = f.append_basic_block("exit")
        self.ab = ir.IRBuilder(entry)
        self.mb = ir.IRBuilder(self.alloc_bb)
        xb = ir.IRBuilder(self.exit_bb)
        self.status = xb.phi(self.I32, name="status")
        self.b = ir.IRBuilder(self.header)

        # parameters
        params_leaves: list[_Leaf] = []
        self.pbufs: list[Any] = []
        self.phis: list[Any] = []
        k = 0
        for p, specs in zip(info.fn.params, info.param_leaves):
            ptrs = []
            for shape, dtype in specs:
                arg = ins[k]
                arg.name = f"{p.name_hint}_{k}"
                k += 1
                if not info.self_tail:
                    ptrs.append(arg)
                    self.pbufs.append(None)
                    self.phis.append(None)
                    continue
                buf = self.slot(shape, dtype, f"{p.name_hint}_buf")
                self.pbufs.append(buf)
                nbytes = _nbytes(shape, dtype)
                if nbytes <= SMALL_PARAM:
                    # copied once at entry: the parameter lives in its buffer (registers)
                    saved = self.b
                    self.b = self.mb
                    self.memcpy(buf, arg, nbytes)
                    self.b = saved
                    ptrs.append(buf)
                    self.phis.append(None)
                else:
                    phi = self.b.phi(mem_type(dtype).as_pointer(), name=f"{p.name_hint}_{k}")
                    phi.add_incoming(arg, self.alloc_bb)
                    ptrs.append(phi)
                    self.phis.append(phi)
            value = self.leaves_of(_type_of(p), ptrs, False)
            self.bind(id(p), value)
            params_leaves.extend(flatten_tuples(value))
        self.param_leaves = params_leaves
        self.out_tree = _rebuild(info.ret_structure,
                                 [_Leaf(o, s, d, True) for o, (s, d) in zip(outs, info.ret_leaves)])

        self.run(info.fn.body)

        # entry: stack check, then the allocation block
        probe = self.ab.alloca(self.I8, name="probe")
        sp = self.ab.ptrtoint(probe, self.I64)
        deep = f.append_basic_block("too_deep")
        self.ab.cbranch(self.ab.icmp_unsigned("<", sp, self.limit), deep, self.alloc_bb)
        ir.IRBuilder(deep).ret(ir.Constant(self.I32, STATUS_STACK))
        if self.null_flags:
            anynull = self.null_flags[0]
            for fl in self.null_flags[1:]:
                anynull = self.mb.or_(anynull, fl)
            self.status.add_incoming(ir.Constant(self.I32, STATUS_OOM), self.alloc_bb)
            self.mb.cbranch(anynull, self.exit_bb, self.header)
        else:
            self.mb.branch(self.header)
        free = self.prog.fn("free", ir.VoidType(), [self.I8.as_pointer()])
        for raw in self.heap:
            xb.call(free, [raw])
        xb.ret(self.status)

    # ------------------------------------------------------------ evaluation
    def run(self, body: Expr) -> None:
        tasks: list[tuple] = [("eval", body, self.out_tree, True)]
        vals: list[Any] = []
        while tasks:
            t = tasks.pop()
            kind = t[0]
            if kind == "eval":
                self.eval(t[1], t[2], t[3], tasks, vals)
            elif kind == "memo":
                self.bind(id(t[1]), vals[-1])
            elif kind == "let":
                _, e, dest, tail = t
                self.bind(id(e.var), vals.pop())
                if not tail:
                    tasks.append(("memo", e))
                tasks.append(("eval", e.body, dest, tail))
            elif kind == "if":
                self.branch(t[1], t[2], t[3], vals.pop(), tasks)
            elif kind == "enter":
                self.b.position_at_end(t[1])
                self.memo.append({})
            elif kind == "leave":
                self.memo.pop()
            elif kind == "branch_end":
                v = vals.pop()
                vals.append(_Branch(v, self.b.block))
                self.b.branch(t[1])
                self.memo.pop()
            elif kind == "merge":
                self.merge(t[1], t[2], vals)
            elif kind == "tuple":
                n = len(t[1].fields)
                fields = tuple(vals[len(vals) - n:]) if n else ()
                del vals[len(vals) - n:]
                vals.append(fields)
            elif kind == "proj":
                vals.append(vals.pop()[t[1].index])
            elif kind == "call":
                self.call(t[1], t[2], vals)
            elif kind == "tailcall":
                self.tail_call(t[1], vals)
            elif kind == "ret":
                self.ret(vals.pop())
            else:
                raise AssertionError(kind)

    def eval(self, e: Expr, dest: Any, tail: bool, tasks: list, vals: list) -> None:
        v = self.lookup(id(e))
        if v is not None:
            if tail:
                self.ret(v)
            else:
                vals.append(v)
            return
        if isinstance(e, Let):
            if isinstance(e.value, Function):
                self.bind(id(e.var), _PrimRef(e.value))
                if not tail:
                    tasks.append(("memo", e))
                tasks.append(("eval", e.body, dest, tail))
                return
            tasks.append(("let", e, dest, tail))
            tasks.append(("eval", e.value, None, False))
            return
        if isinstance(e, If):
            if not tail:
                tasks.append(("memo", e))
            tasks.append(("if", e, dest, tail))
            tasks.append(("eval", e.cond, None, False))
            return
        if tail:
            if (isinstance(e, Call) and isinstance(e.op, GlobalVar)
                    and e.op.name_hint == self.info.name):
                tasks.append(("tailcall", e))
                for a in reversed(e.args):
                    tasks.append(("eval", a, None, False))
                return
            tasks.append(("ret",))
            tasks.append(("eval", e, dest, False))
            return
        if isinstance(e, Var):
            raise NoLowering("variable", e.span, f"unbound variable %{e.name_hint}")
        if isinstance(e, Constant):
            leaf = self.constant(e)
            self.bind(id(e), leaf)
            vals.append(leaf)
            return
        tasks.append(("memo", e))
        if isinstance(e, Tuple):
            tasks.append(("tuple", e))
            sub = dest if isinstance(dest, tuple) and len(dest) == len(e.fields) else None
            for k in reversed(range(len(e.fields))):
                tasks.append(("eval", e.fields[k], sub[k] if sub is not None else None, False))
        elif isinstance(e, TupleGetItem):
            tasks.append(("proj", e))
            tasks.append(("eval", e.tuple_value, None, False))
        elif isinstance(e, Call):
            tasks.append(("call", e, dest))
            for a in reversed(e.args):
                tasks.append(("eval", a, None, False))
        else:
            raise NoLowering(type(e).__name__, e.span, "not compiled natively")

    def branch(self, e: If, dest: Any, tail: bool, cond: Any, tasks: list) -> None:
        ir = self.ir
        c = self.b.load(cond.ptr)
        flag = self.b.icmp_unsigned("!=", c, ir.Constant(c.type, 0))
        then_bb = self.f.append_basic_block("then")
        else_bb = self.f.append_basic_block("else")
        self.b.cbranch(flag, then_bb, else_bb)
        if tail:
            tasks.extend([("leave",), ("eval", e.false_branch, dest, True), ("enter", else_bb),
                          ("leave",), ("eval", e.true_branch, dest, True), ("enter", then_bb)])
            return
        merge_bb = self.f.append_basic_block("merge")
        tasks.extend([("merge", e, merge_bb), ("branch_end", merge_bb),
                      ("eval", e.false_branch, None, False), ("enter", else_bb),
                      ("branch_end", merge_bb), ("eval", e.true_branch, None, False),
                      ("enter", then_bb)])

    def merge(self, e: If, merge_bb: Any, vals: list) -> None:
        other = vals.pop()
        then = vals.pop()
        self.b.position_at_end(merge_bb)
        a, c = flatten_tuples(then.value), flatten_tuples(other.value)
        out = []
        for k, (x, y) in enumerate(zip(a, c)):
            if x.ptr is y.ptr:
                out.append(x)
                continue
            phi = self.b.phi(x.ptr.type, name=f"if{k}")
            phi.add_incoming(x.ptr, then.block)
            phi.add_incoming(y.ptr, other.block)
            out.append(_Leaf(phi, x.shape, x.dtype, x.fresh and y.fresh))
        vals.append(_rebuild(_structure(e.checked_type, [0]), out))

    def outputs(self, e: Call, dest: Any) -> list[_Leaf]:
        specs = _leaves(e.checked_type, "call", e.span)
        if dest is not None:
            d = flatten_tuples(dest)
            if len(d) == len(specs) and all(x.shape == s and x.dtype == dt
                                            for x, (s, dt) in zip(d, specs)):
                return d
        return [_Leaf(self.slot(s, dt), s, dt, True) for s, dt in specs]

    def call(self, e: Call, dest: Any, vals: list) -> None:
        ir = self.ir
        n = len(e.args)
        args = vals[len(vals) - n:] if n else []
        del vals[len(vals) - n:]
        ins: list[_Leaf] = []
        for a in args:
            ins.extend(flatten_tuples(a))
        op = e.op
        outs = self.outputs(e, dest)
        if isinstance(op, GlobalVar) and id(e) not in self.prog.kernels:
            callee = self.prog.llfns[op.name_hint]
            rc = self.b.call(callee, [self.limit] + [o.ptr for o in outs] + [x.ptr for x in ins])
            self.check(rc)
        else:
            if isinstance(op, Var):
                ref = self.lookup(id(op))
                assert isinstance(ref, _PrimRef)
                key = id(ref.fn)
            elif isinstance(op, Function):
                key = id(op)
            else:
                key = id(e)
            entry, prim = self.prog.kernels[key]
            if isinstance(prim, _ExternSlot):       # a Python function through a callback
                entry = self.b.load(entry, name="extern_entry")
            ptrs = [x.ptr for x in ins] + [o.ptr for o in outs]
            i8p = self.I8.as_pointer()
            arr = self.ab.alloca(ir.ArrayType(i8p, max(len(ptrs), 1)), name="kargs")
            for k, p in enumerate(ptrs):
                slot = self.b.gep(arr, [ir.Constant(self.I32, 0), ir.Constant(self.I32, k)],
                                  inbounds=True)
                self.b.store(self.b.bitcast(p, i8p), slot)
            first = self.b.gep(arr, [ir.Constant(self.I32, 0), ir.Constant(self.I32, 0)],
                               inbounds=True)
            extent = ir.Constant(self.I64, max(prim.parallel_extent, 1))
            if self.prog.parallel is not None and prim.parallel_extent >= 2 \
                    and not isinstance(prim, _ExternSlot) and self.prog.parallel(prim):
                rc = self.pooled_call(entry, first, extent, ranges_per_thread(prim))
            else:
                rc = self.b.call(entry, [first, ir.Constant(self.I64, 0), extent])
            self.check(rc)
        vals.append(_rebuild(_structure(e.checked_type, [0]), outs))

    def pooled_call(self, entry: Any, args: Any, extent: Any, per_thread: int) -> Any:
        """The kernel over [0, extent) through the pool the caller set (split into
        `per_thread` ranges per thread, 0: the pool's own count), or inline when it set
        none."""
        ir, b = self.ir, self.b
        pool_g, run_g = self.prog.pool_globals()
        pool = b.load(pool_g)
        par = self.f.append_basic_block("pooled")
        inline = self.f.append_basic_block("inline")
        join = self.f.append_basic_block("joined")
        b.cbranch(b.icmp_unsigned("==", b.ptrtoint(pool, self.I64), ir.Constant(self.I64, 0)),
                  inline, par)
        b.position_at_end(par)
        run = b.load(run_g)
        rc_par = b.call(run, [pool, b.bitcast(entry, self.I8.as_pointer()), args, extent,
                              ir.Constant(self.I64, per_thread)])
        b.branch(join)
        b.position_at_end(inline)
        rc_inline = b.call(entry, [args, ir.Constant(self.I64, 0), extent])
        b.branch(join)
        b.position_at_end(join)
        rc = b.phi(self.I32, name="kernel_status")
        rc.add_incoming(rc_par, par)
        rc.add_incoming(rc_inline, inline)
        return rc

    def ret(self, v: Any) -> None:
        ir = self.ir
        for o, x in zip(flatten_tuples(self.out_tree), flatten_tuples(v)):
            if o.ptr is not x.ptr:
                self.memcpy(o.ptr, x.ptr, _nbytes(o.shape, o.dtype))
        self.status.add_incoming(ir.Constant(self.I32, 0), self.b.block)
        self.b.branch(self.exit_bb)

    def tail_call(self, e: Call, vals: list) -> None:
        n = len(e.args)
        args = vals[len(vals) - n:] if n else []
        del vals[len(vals) - n:]
        new: list[_Leaf] = []
        for a in args:
            new.extend(flatten_tuples(a))
        moves = []
        for k, (x, p) in enumerate(zip(new, self.param_leaves)):
            if x.ptr is p.ptr:
                continue                     # the parameter passed on unchanged
            src = x
            if not x.fresh:                  # may be (or point into) a parameter buffer
                tmp = self.slot(x.shape, x.dtype, "tmp")
                self.memcpy(tmp, x.ptr, _nbytes(x.shape, x.dtype))
                src = _Leaf(tmp, x.shape, x.dtype, True)
            moves.append((k, src))
        copied = set()
        for k, src in moves:
            self.memcpy(self.pbufs[k], src.ptr, _nbytes(src.shape, src.dtype))
            copied.add(k)
        block = self.b.block
        for k, phi in enumerate(self.phis):
            if phi is not None:
                phi.add_incoming(self.pbufs[k] if k in copied else phi, block)
        self.b.branch(self.header)


# ---------------------------------------------------------------- compile

def _reachable(mod: Any, analysis: _Analysis, entries: list[str]) -> None:
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in analysis.infos:
            continue
        if name not in mod:
            raise NoLowering("@" + name, None, "no such global function")
        todo.extend(analysis.function(mod.get_global_var(name)))


class _ExternSlot:
    """A primitive function run by Python code (`compile_program(externs=...)`): its call
    sites load the entry from the module global `symbol` (the kernels' ABI; null until
    `NativeProgram` writes the callback's address) and call it with extent 1."""

    def __init__(self, symbol: str, fn: Function):
        self.name = symbol
        self.function = fn
        self.parallel_extent = 1


def _lower_kernels(prims: dict[int, Function], externs: Any = None
                   ) -> tuple[list[Any], dict[int, Any], list[_ExternSlot]]:
    """Lower each distinct primitive function once (structural equality); those
    `externs(fn)` accepts become extern slots instead."""
    from ....ir.equal import structural_equal
    from ....ir.hash import structural_hash
    buckets: dict[int, list[tuple[Function, Any]]] = {}
    lowered: list[Any] = []
    slots: list[_ExternSlot] = []
    by_id: dict[int, Any] = {}
    for key, fn in prims.items():
        h = structural_hash(fn)
        prim = None
        for other, p in buckets.get(h, []):
            if structural_equal(fn, other):
                prim = p
                break
        if prim is None:
            if externs is not None and externs(fn):
                prim = _ExternSlot(f"rl_extern{len(slots)}", fn)
                slots.append(prim)
            else:
                prim = lower_primitive(fn, f"rl_k{len(lowered)}")
                lowered.append(prim)
            buckets.setdefault(h, []).append((fn, prim))
        by_id[key] = prim
    return lowered, by_id, slots


def compile_program(mod: Any, entry: str | list[str] | None = None,
                    cache: bool = True, parallel: Any = None,
                    externs: Any = None) -> NativeProgram:
    """Compile the global functions of `mod` (typed, through FuseOps) natively: those
    reachable from `entry` (a name or names), or every global when `entry` is None.
    `parallel(prim) -> bool` says which kernels' calls go through the worker pool the
    caller sets (`NativeProgram.set_parallel`); None: every kernel runs inline.
    `externs(fn)`: for a primitive function run by Python code (an external function, a
    BYOC partitioned `Compiler=` global), an object whose `.kernel.address` is a
    callback with the kernels' ABI (inputs' then outputs' leaves; the executor's
    `native/extern.program_extern`), else None; the program calls it through a module
    global and keeps the object (`NativeProgram.externs`).
    Raises NoLowering (op name / construct, span, reason) when that is not possible."""
    from llvmlite import ir

    from .. import jit
    from ..codegen import build_module, mem_type

    analysis = _Analysis(mod)
    if entry is None:
        names = [gv.name_hint for gv, _ in mod]
    else:
        names = [entry] if isinstance(entry, str) else list(entry)
    _reachable(mod, analysis, names)
    made: dict[int, Any] = {}

    def extern_of(fn: Function) -> Any:
        if externs is None:
            return None
        if id(fn) not in made:
            made[id(fn)] = externs(fn)
        return made[id(fn)]
    prims, by_id, slots = _lower_kernels(analysis.prim_fns, extern_of)
    module = build_module(prims, name="relay_program") if prims else ir.Module("relay_program")
    i8pp = ir.IntType(8).as_pointer().as_pointer()
    entry_t = ir.FunctionType(ir.IntType(32), [i8pp, ir.IntType(64), ir.IntType(64)])
    for slot in slots:
        g = ir.GlobalVariable(module, entry_t.as_pointer(), slot.name)
        g.initializer = ir.Constant(entry_t.as_pointer(), None)
    kernels = {key: (module.globals[p.name], p) for key, p in by_id.items()}
    for p in prims:
        if any(_nbytes(tuple(b.shape), b.dtype) > INLINE_KERNEL_BYTES for b in p.params):
            # a large kernel stays a call; scalar and small ones inline into the
            # control code (a 1x16 loop body: 34 -> 2 ns per iteration)
            module.globals[p.name].attributes.add("noinline")
    prog = _Program(module, kernels, analysis.infos, parallel)
    I32, I64 = ir.IntType(32), ir.IntType(64)
    order = sorted(analysis.infos)
    for k, name in enumerate(order):
        info = analysis.infos[name]
        info.symbol, info.entry_symbol = f"rl_f{k}", f"rl_e{k}"
        ptys = [mem_type(d).as_pointer() for _, d in info.ret_leaves]
        for specs in info.param_leaves:
            ptys.extend(mem_type(d).as_pointer() for _, d in specs)
        llfn = ir.Function(module, ir.FunctionType(I32, [I64] + ptys), info.symbol)
        llfn.linkage = "internal"
        llfn.attributes.add("nounwind")
        prog.llfns[name] = llfn
    for name in order:
        _FnGen(prog, analysis.infos[name]).build()
        _entry_wrapper(prog, analysis.infos[name])

    tm = jit.target_machine()
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    raw = str(module)
    width = jit.vector_width()
    if width:
        # on every function, whatever attributes it already has (a large kernel is
        # `noinline`): without it LLVM keeps to 256-bit vectors
        raw = re.sub(r"^(define [^\n]*\))((?: [a-z_]+)*)\n\{",
                     lambda m: f'{m.group(1)}{m.group(2) or " nounwind"} '
                               f'"prefer-vector-width"="{width}"\n{{',
                     raw, flags=re.MULTILINE)
    obj = None
    if cache:
        from .. import cache as kcache
        obj = kcache.load(raw)
    compiled = None
    if obj is not None:
        try:
            compiled = jit.load_object(obj, [], raw)
        except (RuntimeError, ValueError, OSError):
            compiled = None
    if compiled is None:
        obj, _, _ = jit.compile_ir(raw)
        if cache:
            from .. import cache as kcache
            kcache.store(raw, obj)
        compiled = jit.load_object(obj, [], raw)
    return NativeProgram(compiled, [Signature.of(analysis.infos[n]) for n in order],
                         [(slot.name, slot.function, made[id(slot.function)])
                          for slot in slots])


def _entry_wrapper(prog: _Program, info: _FnInfo) -> None:
    """`i32 rl_e<k>(i8** ptrs, i64 stack_budget)`: outputs then inputs."""
    from llvmlite import ir

    from ..codegen import mem_type
    I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    fn = ir.Function(prog.module, ir.FunctionType(I32, [I8.as_pointer().as_pointer(), I64]),
                     info.entry_symbol)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    probe = b.alloca(I8, name="probe")
    limit = b.sub(b.ptrtoint(probe, I64), fn.args[1])
    specs = list(info.ret_leaves)
    for s in info.param_leaves:
        specs.extend(s)
    args = [limit]
    for k, (_, d) in enumerate(specs):
        slot = b.gep(fn.args[0], [ir.Constant(I64, k)], inbounds=True)
        args.append(b.bitcast(b.load(slot), mem_type(d).as_pointer()))
    b.ret(b.call(prog.llfns[info.name], args))
