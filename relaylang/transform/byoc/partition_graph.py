"""PartitionGraph: lift each annotated region into a global function for its target
(TVM's src/relay/transforms/partition_graph.cc).

    def @main(...) { ... %1 = @tvmgen_default_example_main_0(%x, %w); ... }
    def @tvmgen_default_example_main_0(%example_0_i0: Tensor[...], %example_0_i1: ...,
        Compiler="example", Primitive=1, Inline=1,
        global_symbol="tvmgen_default_example_main_0") { ... }

In TVM's order: a `compiler_end` on a tuple is moved onto its fields; `default`
annotations are dropped; then, for each global function `@f`, each region of target `t`
and id `n` becomes `@tvmgen_<mod_name>_<t>_<f>_<n>` (`mod_name` defaults to `default`;
an empty one gives `tvmgen_<t>_<f>_<n>`), whose parameters `%<t>_<n>_i<k>` are the
region's inputs (one per distinct input) and whose body is the region, a tuple when it
has several outputs (its users then take `.0`, `.1`, ...). With `bind_constants` (the
default) constant inputs are put inside the function instead of being passed.
The functions carry `Compiler`, `Primitive=1`, `Inline=1` and `global_symbol`; a backend
hands them to the target's codegen.

A region whose inputs depend on its own outputs (a cycle, possible only in hand-written
annotations: MergeCompilerRegions never makes one) is a diagnostic.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from ...ir.attrs import DictAttrs
from ...ir.diagnostics import Diagnostic, DiagnosticError
from ...ir.expr import Call, Constant, Expr, Function, GlobalVar, Tuple, TupleGetItem, Var
from ...ir.module import IRModule
from ...ir.traverse import post_order
from ..pass_infra import ModulePass, PassContext, register_pass
from .annotations import DEFAULT, compiler_end, compiler_of, is_annotation, is_begin, is_end
from .regions import AnnotatedRegion, AnnotatedRegionSet


@register_pass
@dataclass(frozen=True)
class PartitionGraph(ModulePass):
    """Turn every annotated region into a global function marked `Compiler=<target>`."""

    name: ClassVar[str] = "PartitionGraph"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)
    mod_name: str = "default"
    bind_constants: bool = True

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        from ...typing import infer_types
        mod = _map_bodies(mod, _flatten_tuple_outputs)
        mod = _map_bodies(mod, _remove_default_annotations)
        if not any(is_annotation(n) for fn in mod.functions.values() for n in post_order(fn)):
            return mod
        mod = infer_types(mod)          # the parameters are typed as their compiler_begins
        prefix = _mangle_module_name(self.mod_name)
        out = mod.copy()
        taken_names: set[str] = set()
        globals_taken = {gv.name_hint for gv in mod.functions}
        for gv, fn in mod.functions.items():
            name = gv.name_hint
            while name in taken_names:
                name += "_a"
            taken_names.add(name)
            regions = AnnotatedRegionSet.create(fn, name)
            if not regions.regions:
                continue
            part = _Partitioner(regions, out, prefix, self.bind_constants, globals_taken)
            out.functions[gv] = part.run(fn)
        return out


def _mangle_module_name(mod_name: str | None) -> str:
    return "tvmgen" if not mod_name else "tvmgen_" + mod_name


def _sanitize(name: str) -> str:
    """TVM's `SanitizeName`: anything but letters, digits and `_` becomes `_`."""
    return re.sub(r"[^0-9A-Za-z_]", "_", name)


def _map_bodies(mod: IRModule, fn_rewrite) -> IRModule:  # type: ignore[no-untyped-def]
    out = mod.copy()
    changed = False
    for gv, fn in mod.functions.items():
        done: dict[int, Expr] = {}
        for node in post_order(fn.body):
            kids = node.children()
            post = node.with_children([done[id(c)] for c in kids]) if kids else node
            done[id(node)] = fn_rewrite(node, post)
        body = done[id(fn.body)]
        if body is not fn.body:
            out.functions[gv] = Function(fn.params, body, fn.ret_type, fn.type_params, fn.attrs,
                                         span=fn.span)
            changed = True
    return out if changed else mod


def _flatten_tuple_outputs(pre: Expr, post: Expr) -> Expr:
    if is_end(pre) and isinstance(post.args[0], Tuple):
        target = compiler_of(pre) or DEFAULT
        tup = post.args[0]
        return Tuple(tuple(compiler_end(f, target) for f in tup.fields), span=tup.span)
    return post


def _remove_default_annotations(pre: Expr, post: Expr) -> Expr:
    if is_annotation(pre) and compiler_of(pre) == DEFAULT:
        return post.args[0]
    return post


@dataclass
class _RegionFunc:
    call: Expr | None = None
    params: list[tuple[Var, Expr]] = field(default_factory=list)     # (param, input)
    outputs: dict[int, Expr] = field(default_factory=dict)           # id(end arg) -> value


class _Partitioner:
    def __init__(self, regions: AnnotatedRegionSet, mod: IRModule, prefix: str,
                 bind_constants: bool, taken: set[str]):
        self.regions = regions
        self.taken = taken                   # global names in use (shared by all functions)
        self.mod = mod
        self.prefix = prefix
        self.bind_constants = bind_constants
        self.meta: dict[int, _RegionFunc] = {}

    def run(self, fn: Function) -> Function:
        """Rewrite `fn`'s body users-last; an end of a region is reached after every input
        of its region (the region is one node of the walk), then replaced by its output."""
        regions = self.regions

        def children(n: Expr) -> tuple[Expr, ...]:
            if is_end(n):
                region = regions.get_region(n)
                if region is not None:
                    return tuple(_direct_input(b) for b in region.ins)
            return n.children()
        done: dict[int, Expr] = {}
        for node in post_order(fn.body, children):
            if is_end(node) and regions.get_region(node) is not None:
                done[id(node)] = self._end(node, done)
                continue
            kids = node.children()
            done[id(node)] = node.with_children([done[id(c)] for c in kids]) if kids else node
        return Function(fn.params, done[id(fn.body)], fn.ret_type, fn.type_params, fn.attrs,
                        span=fn.span)

    def _end(self, end: Call, done: dict[int, Expr]) -> Expr:
        region = self.regions.get_region(end)
        assert region is not None
        meta = self.meta.get(region.id)
        if meta is None:
            meta = self.meta[region.id] = self._create_function(region, end, done)
        return meta.outputs[id(end.args[0])]

    def _create_function(self, region: AnnotatedRegion, end: Call,
                         done: dict[int, Expr]) -> _RegionFunc:
        meta = _RegionFunc()
        var_of: dict[int, Var] = {}          # id(outside input) -> parameter
        ins_index = {id(b): i for i, b in enumerate(region.ins)}
        body_done: dict[int, Expr] = {}
        outputs: list[Expr] = []              # distinct region outputs (end arguments)
        for out_end in region.outs:
            ret = out_end.args[0]
            if any(r is ret for r in outputs):
                continue
            outputs.append(ret)
            order = post_order(ret, lambda n: () if is_begin(n) else n.children())
            for node in order:
                if id(node) in body_done:
                    continue
                if is_begin(node):
                    parent = _outside_input(node)
                    var = var_of.get(id(parent))
                    if var is None:
                        if id(_direct_input(node)) not in done:
                            raise DiagnosticError([Diagnostic.error(
                                f"PartitionGraph: the region of target `{region.target}` "
                                "uses a value computed from its own outputs (a cycle "
                                "through another region)", node.span)])
                        index = ins_index.get(id(node), 0)
                        var = Var(f"{region.target}_{region.id}_i{index}", node.checked_type)
                        var_of[id(parent)] = var
                        meta.params.append((var, _direct_input(node)))
                    body_done[id(node)] = var
                    continue
                kids = node.children()
                body_done[id(node)] = node.with_children([body_done[id(c)] for c in kids]) \
                    if kids else node
        fields = [body_done[id(r)] for r in outputs]
        params: list[Var] = []
        call_args: list[Expr] = []
        bind: dict[int, Expr] = {}
        for var, parent in meta.params:
            value = done[id(parent)]
            if self.bind_constants and _is_constant(value):
                bind[id(var)] = value
            else:
                params.append(var)
                call_args.append(value)
        if len(fields) == 1:
            body: Expr = fields[0]
            ret_type = outputs[0].checked_type
        else:
            body, ret_type = Tuple(tuple(fields)), None
        if bind:
            body = _substitute(body, bind)
        name = _sanitize(f"{self.prefix}_{region.target}_{region.func_name}_{region.id}")
        unique, n = name, 0
        while unique in self.taken:
            n += 1
            unique = f"{name}_{n}"
        self.taken.add(unique)
        attrs = DictAttrs((("Compiler", region.target), ("Primitive", 1), ("Inline", 1),
                           ("global_symbol", unique)))
        gv = GlobalVar(unique)
        self.mod.functions[gv] = Function(tuple(params), body, ret_type, (), attrs,
                                          span=end.span)
        call = Call(gv, tuple(call_args), span=end.span)
        meta.call = call
        if len(outputs) == 1:
            meta.outputs[id(outputs[0])] = call
        else:
            for i, r in enumerate(outputs):
                meta.outputs[id(r)] = TupleGetItem(call, i, span=end.span)
        return meta


def _direct_input(begin: Call) -> Expr:
    """What a compiler_begin takes: an expression outside the region, or the end of
    another region (past any chain of begins)."""
    arg = begin.args[0]
    while is_begin(arg):
        arg = arg.args[0]
    return arg


def _outside_input(begin: Call) -> Expr:
    """The expression a compiler_begin takes, past any chain of annotations."""
    parent = begin.args[0]
    while is_annotation(parent):
        parent = parent.args[0]
    return parent


def _is_constant(e: Expr) -> bool:
    if isinstance(e, Constant):
        return True
    return isinstance(e, Tuple) and all(isinstance(f, Constant) for f in e.fields)


def _substitute(body: Expr, bind: dict[int, Expr]) -> Expr:
    done: dict[int, Expr] = {}
    for node in post_order(body):
        if id(node) in bind:
            done[id(node)] = bind[id(node)]
            continue
        kids = node.children()
        done[id(node)] = node.with_children([done[id(c)] for c in kids]) if kids else node
    return done[id(body)]
