"""`astext`: Relay IR to the Relay text format (TVM's src/relay/printer/relay_text_printer.cc,
text_printer.cc and doc.cc).

The layout is TVM's (LANGUAGE.md §11). Graph normal form: a call, tuple, projection,
closure, `if`, ref or `match` gets its own line `%N = ...;` and is referred to as `%N`,
unless it is the final expression of its scope (function body, branch, match arm, let body)
and has a single user, in which case it is written in place. Variables, globals, operators,
constructors and constants are always written in place. `Let` chains print as `let` lines.

Where TVM printed text that cannot be read back, we differ, so that `parse(astext(x))` is
`x` again:
  * a bound node's line goes to the innermost scope that holds *all* its uses (TVM: the
    scope it is first reached in, possibly a branch its other users cannot see), unless
    that would put it above the `let %f` whose recursive value it uses: then TVM's place;
  * a `match` or `let` used as a binding value is parenthesised;
  * nesting deeper than MAX_INDENT levels is not indented further (TVM could not print
    programs that deep; a 10,000-deep `if` would be hundreds of megabytes of spaces).

Nothing recurses on the depth of the program. `_plan` walks the graph once with an
explicit stack: it counts users and decides, parents before children, which nodes are
inlined and which scope (`Block`) each binding goes to. `_drive` then prints in TVM's order:
one generator per node under construction, kept on a list; a generator asks for a child's
text with `yield child` and receives it back. Text is built as pieces (strings and
`Block`s) and laid out once, at the end, by `layout`.
"""
from __future__ import annotations

from typing import Any, Callable, Generator

from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.module import IRModule
from ..ir.text import set_printer
from ..ir.traverse import post_order
from ..ir.types import Type, TypeData
from .print_layout import Block, Pieces, common_scope, join, layout
from .print_values import ValuePrinter, attr_exprs

VERSION_LINE = '#[version = "0.0.5"]'
META_OMITTED = "/* meta data omitted. you can use show_meta_data=True to include meta data */"

_ALWAYS_INLINE = (Var, GlobalVar, Constant, Op, Constructor)

# Where a node's (single) use puts it: an operand, the final expression of a scope, a let value.
_ARG, _FINAL, _VALUE = "arg", "final", "value"
# How a node prints: on its own `%N = ...;` line, or in place (for a let value, in place but
# parenthesised if it is a `match` or `let`).
_BOUND, _INLINE, _INLINE_VALUE = "bound", "inline", "inline_value"
_MODE = {_ARG: _BOUND, _FINAL: _INLINE, _VALUE: _INLINE_VALUE}

Visit = Generator[Expr, Pieces, Pieces]
# `decorate(definition, lines, anchors)`: called by `module_text` on each definition's
# pieces before they are laid out (the formatter places comments with it).
Decorate = Callable[[Any, list, dict], None]


def astext(node: IRModule | Expr | Type, show_meta_data: bool = True,
           decorate: Decorate | None = None) -> str:
    """The Relay text of a module or expression (a type prints alone, without header).
    `decorate` (modules): see `TextPrinter.module_text`."""
    printer = TextPrinter()
    if isinstance(node, IRModule):
        body = printer.module_text(node, decorate)
    elif isinstance(node, Expr):
        body = printer.expr_text(node)
    elif isinstance(node, Type):
        return printer.type_text(node)
    else:
        raise TypeError(f"astext expects an IRModule, Expr or Type, got {type(node).__name__}")
    text = VERSION_LINE + "\n" + body
    if printer.meta:
        if show_meta_data:
            from .metadata import encode_metadata
            text += "\n#[metadata]\n" + encode_metadata(printer.meta)
        else:
            text += "\n" + META_OMITTED
    return text


# ------------------------------------------------------------------ the graph


def _operands(node: Expr) -> tuple[Expr, ...]:
    """What a node prints: its children, then the expressions inside its attributes."""
    kids = node.children()
    if isinstance(node, (Call, Function)) and node.attrs is not None:
        extra = attr_exprs(node.attrs)
        if extra:
            kids = (*kids, *extra)
    return kids


def _post_order(root: Expr) -> list[Expr]:
    """Every node once, operands (attribute expressions included) before users."""
    return post_order(root, _operands)


class TextPrinter(ValuePrinter):
    """One printing of one module or expression: names, graph ids and meta table are shared
    by the whole text; the plan (users, scopes, inlining) is made per definition.

    `anchors`, while `module_text` runs with a `decorate`, maps each statement line the
    printer makes (the id of a Block item: a bound `%N = ...;`, a `let`, a sequenced `e;`,
    the final expression of a scope written in place, a match clause, a constructor) to the
    IR node it prints (a Pattern for a clause), so that the formatter can find, by the
    node's span, where a line came from."""

    def __init__(self) -> None:
        super().__init__()
        self._temp = 0          # graph ids count on across the whole text (§11.3)
        self.anchors: dict[int, Any] | None = None   # recorded only for a `decorate`
        self._reset()

    def _reset(self) -> None:
        self._users: dict[int, int] = {}
        self._place: dict[int, Block] = {}
        self._mode: dict[int, str] = {}
        self._blocks: dict[int, list[Block]] = {}
        self._chains: dict[int, tuple[list[Let], Block]] = {}
        self._chained: set[int] = set()
        self._memo: dict[int, str] = {}
        self._free: list[str] = []
        self._scopes: list[Block] = []           # scopes being printed, innermost last
        self._pending: dict[int, Block] = {}     # let vars whose value is being printed
        self._deps: dict[int, tuple[int, ...]] = {}   # node -> pending let vars it uses

    # -------------------------------------------------------------- entry points
    def module_text(self, mod: IRModule, decorate: Decorate | None = None) -> str:
        """The definitions, types first, each by name. `decorate`, if given, sees each
        definition's lines (a list holding its one line) before they are laid out."""
        defs: list[tuple[Any, Callable[[], Pieces]]] = [
            (mod.type_definitions[gtv], lambda d=mod.type_definitions[gtv]: self._type_data(d))
            for gtv in sorted(mod.type_definitions, key=lambda g: g.name_hint)]
        defs += [(mod.functions[gv],
                  lambda gv=gv: self._definition(gv.name_hint, mod.functions[gv]))
                 for gv in sorted(mod.functions, key=lambda g: g.name_hint)]
        items = []
        for node, make in defs:
            self.anchors = {} if decorate is not None else None
            lines = [make()]
            if decorate is not None:
                decorate(node, lines, self.anchors)
            items.append(layout(lines))
        self.anchors = None
        return "\n".join(item + "\n" for item in items)

    def expr_text(self, expr: Expr) -> str:
        self.begin_definition()
        self._reset()
        top = Block("", "")
        final = self._known(expr)
        if final is None:
            self._scopes.append(top)
            self._plan(expr, top)
            final = self._finish(expr, self._drive(expr, self._visit(expr)))
        return layout([[line] for line in self._free] + top.items + [final])

    def _definition(self, name: str, fn: Function) -> Pieces:
        self.begin_definition()
        self._reset()
        top = Block("", "")
        self._scopes.append(top)
        self._plan(fn, top)
        pieces = self._drive(fn, self._function(fn, "def @" + name))
        body = self._blocks[id(fn)][0]
        body.items[:0] = [[line] for line in self._free] + top.items
        return pieces

    def _type_data(self, data: TypeData) -> Pieces:
        self.begin_definition()
        head = "type " + data.header.name_hint
        if data.type_params:
            head += "[" + ", ".join(self.type_var_name(tv) for tv in data.type_params) + "]"
        if not data.constructors:
            # A type without constructors is opaque: TVM's `extern type` (its parser's spelling
            # of a declaration with no body). `type T {}` reads as the same TypeData.
            return ["extern " + head]
        body = Block("{", "}")
        for ctor in data.constructors:
            fields = ""
            if ctor.inputs:
                fields = "(" + ", ".join(self.type_text(t) for t in ctor.inputs) + ")"
            item = [ctor.name + fields + ","]
            body.items.append(item)
            if self.anchors is not None:
                self.anchors[id(item)] = ctor
        return [head + " ", body]

    # -------------------------------------------------------------- planning
    def _plan(self, root: Expr, top: Block) -> None:
        """Count users; then, parents first, fix each node's mode and scope (`_place`)."""
        order = _post_order(root)
        users = self._users
        for node in order:
            for child in _operands(node):
                users[id(child)] = users.get(id(child), 0) + 1
        scope: dict[int, Block] = {id(root): top}
        use: dict[int, str] = {id(root): _FINAL}
        for node in reversed(order):
            nid = id(node)
            if isinstance(node, _ALWAYS_INLINE) or nid in self._chained:
                continue
            place = self._place[nid] = scope[nid]
            mode = self._mode[nid] = _MODE[use[nid]] if users.get(nid, 0) <= 1 else _BOUND
            for child, kind, block in self._slots(node, place, mode):
                if isinstance(child, _ALWAYS_INLINE):
                    continue
                seen = scope.get(id(child))
                scope[id(child)] = block if seen is None else common_scope(seen, block)
                use[id(child)] = kind

    def _slots(self, node: Expr, place: Block, mode: str) -> list[tuple[Expr, str, Block]]:
        """(operand, kind of use, scope it is printed in) for each operand of `node`."""
        if isinstance(node, If):
            then, other = self._blocks[id(node)] = [Block("{", "}", place), Block("{", "}", place)]
            return [(node.cond, _ARG, place), (node.true_branch, _FINAL, then),
                    (node.false_branch, _FINAL, other)]
        if isinstance(node, Function):
            body = Block("{", "}", place)
            self._blocks[id(node)] = [body]
            return [(node.body, _FINAL, body)] + [(e, _ARG, place) for e in attr_exprs(node.attrs)]
        if isinstance(node, Match):
            arms = self._blocks[id(node)] = [Block("{", "}", place) for _ in node.clauses]
            return [(node.data, _ARG, place)] + [(c.rhs, _FINAL, arm)
                                                 for c, arm in zip(node.clauses, arms)]
        if isinstance(node, Let):
            return self._plan_let(node, place, mode)
        return [(child, _ARG, place) for child in _operands(node)]

    def _plan_let(self, let: Let, place: Block, mode: str) -> list[tuple[Expr, str, Block]]:
        # The chain goes on through bodies that are Lets used only there (TVM's loop over
        # `.body`). Written in place, its lines join the enclosing scope; otherwise (a bound
        # node, a let value) they go inside parentheses.
        chain = [let]
        while isinstance(chain[-1].body, Let) and self._users[id(chain[-1].body)] == 1:
            chain.append(chain[-1].body)  # type: ignore[arg-type]
        block = place if mode == _INLINE else Block("(", ")", place)
        self._chains[id(let)] = (chain, block)
        self._chained.update(id(link) for link in chain[1:])
        return [(link.value, _VALUE, block) for link in chain] + [(chain[-1].body, _FINAL, block)]

    # -------------------------------------------------------------- driving
    def _drive(self, root: Expr, visit: Visit) -> Pieces:
        """Run `visit` and the visits of every child it asks for, on an explicit stack."""
        stack: list[tuple[Expr, Visit]] = [(root, visit)]
        value: Pieces | None = None
        while True:
            node, current = stack[-1]
            try:
                child = current.send(value)  # type: ignore[arg-type]
            except StopIteration as stop:
                stack.pop()
                if not stack:
                    return stop.value
                value = self._finish(node, stop.value)
                continue
            value = self._known(child)
            if value is None:
                stack.append((child, self._visit(child)))

    def _known(self, node: Expr) -> Pieces | None:
        """The text of an already bound or always-inlined node; None if it must be visited."""
        bound = self._memo.get(id(node))
        if bound is not None:
            return [bound]
        if isinstance(node, Var):
            name = self.var_names.get(id(node))
            if name is None:                     # first seen at a use: a free variable
                self._free.append(f"free_var {self.var_def(node)};")
                name = self.var_names[id(node)]
            return [name]
        if isinstance(node, GlobalVar):
            return ["@" + node.name_hint]
        if isinstance(node, (Op, Constructor)):
            return [node.name]
        if isinstance(node, Constant):
            return [self.constant_text(node) + self.type_note(node)]
        return None

    def _finish(self, node: Expr, pieces: Pieces) -> Pieces:
        """Annotate a printed node, then write it in place or on its own `%N = ...;` line."""
        note = self.type_note(node)
        if note:
            pieces.append(note)
        deps = self._track_deps(node) if self._pending else ()
        if self._mode[id(node)] != _BOUND:
            return pieces
        place = self._place[id(node)]
        if any(self._pending[v].depth >= place.depth for v in deps):
            if self._users.get(id(node), 0) <= 1:
                # Used once, inside `let %f = <value using %f>`: a `%N = ...;` line above
                # the let would use `%f` before it is bound, so it stays in place.
                return pieces
            # It uses `%f` of `let %f = <value using %f>` and is used after that let too:
            # its common scope is above the let line, where `%f` is unbound. Bind it where
            # it is first reached instead, as TVM did (graph ids are visible to the end
            # of the definition).
            place = self._scopes[-1]
        name = f"%{self._temp}"
        self._temp += 1
        item = [name, " = ", *pieces, ";"]
        place.items.append(item)
        if self.anchors is not None:
            self.anchors[id(item)] = node  # type: ignore[index]
        self._memo[id(node)] = name
        return [name]

    def _track_deps(self, node: Expr) -> tuple[int, ...]:
        """The let variables whose value is being printed that `node` refers to."""
        sources: Any = _operands(node)
        if isinstance(node, Let):
            chain = self._chains[id(node)][0]
            sources = [link.value for link in chain] + [chain[-1].body]
        pending, deps = self._pending, self._deps
        found = {d for c in sources for d in ((id(c),) if id(c) in pending else deps.get(id(c), ()))
                 if d in pending}
        if not found:
            return ()
        deps[id(node)] = tuple(found)
        return deps[id(node)]

    def _visit(self, node: Expr) -> Visit:
        for cls in type(node).__mro__:
            method = _VISITORS.get(cls)
            if method is not None:
                return method(self, node)
        raise TypeError(f"cannot print a {type(node).__name__}")

    # -------------------------------------------------------------- one node each
    def _in_scope(self, block: Block, child: Expr) -> Visit:
        """The text of `child`, the final expression of `block`, printed inside it."""
        self._scopes.append(block)
        text = yield child
        self._scopes.pop()
        if self.anchors is not None:
            self._anchor_final(text, child)
        return text

    def _anchor_final(self, item: Pieces, node: Expr) -> None:
        """Record `item`, the last line of a scope, as printing `node` if it is written
        there in place (not a name bound elsewhere, not an atom)."""
        while isinstance(node, Let) and self._mode.get(id(node)) == _INLINE:
            node = self._chains[id(node)][0][-1].body    # an in-place chain: its body
        if isinstance(node, _ALWAYS_INLINE) or self._mode.get(id(node)) != _INLINE \
                or isinstance(node, Let):
            return
        self.anchors[id(item)] = node  # type: ignore[index]

    def _attr_items(self, attrs: object) -> Generator[Expr, Pieces, list[Pieces]]:
        texts: dict[int, str] = {}
        for expr in attr_exprs(attrs):
            if id(expr) not in texts:
                texts[id(expr)] = "".join((yield expr))
        items = self.attr_items(attrs, lambda e: texts[id(e)])
        return [[item] for item in items]

    def _call(self, call: Call) -> Visit:
        args: list[Pieces] = []
        for arg in call.args:                     # arguments first, as TVM: they are
            args.append((yield arg))              # bound before the callee
        args += yield from self._attr_items(call.attrs)
        if isinstance(call.op, Constructor):
            if not call.op.inputs:                # `Nil`, not `Nil()`
                return [call.op.name]
            op: Pieces = [call.op.name]
        else:
            op = yield call.op
        return [*op, "(", *join(args), ")"]

    def _tuple(self, node: Tuple) -> Visit:
        fields: list[Pieces] = []
        for field in node.fields:
            fields.append((yield field))
        if len(fields) == 1:
            return ["(", *fields[0], ",)"]
        return ["(", *join(fields), ")"]

    def _get_item(self, node: TupleGetItem) -> Visit:
        base = yield node.tuple_value
        return [*base, f".{node.index}"]

    def _ref_create(self, node: RefCreate) -> Visit:
        return ["ref(", *(yield node.value), ")"]

    def _ref_read(self, node: RefRead) -> Visit:
        return ["ref_read(", *(yield node.ref), ")"]

    def _ref_write(self, node: RefWrite) -> Visit:
        ref = yield node.ref
        return ["ref_write(", *ref, ", ", *(yield node.value), ")"]

    def _if(self, node: If) -> Visit:
        cond = yield node.cond
        then, other = self._blocks[id(node)]
        then.items.append((yield from self._in_scope(then, node.true_branch)))
        other.items.append((yield from self._in_scope(other, node.false_branch)))
        return ["if (", *cond, ") ", then, " else ", other]

    def _function(self, fn: Function, prefix: str = "fn ") -> Visit:
        head = prefix
        if fn.type_params:
            head += "[" + ", ".join(self.type_var_name(tv) for tv in fn.type_params) + "]"
        params = [[self.var_def(p)] for p in fn.params]
        params += yield from self._attr_items(fn.attrs)
        pieces: Pieces = [head + "(", *join(params), ") "]
        if fn.ret_type is not None:
            pieces.append(f"-> {self.type_text(fn.ret_type)} ")
        body = self._blocks[id(fn)][0]
        body.items.append((yield from self._in_scope(body, fn.body)))
        return [*pieces, body]

    def _let(self, let: Let) -> Visit:
        chain, block = self._chains[id(let)]
        inline = self._mode[id(let)] == _INLINE  # lines go to the enclosing scope
        if not inline:
            self._scopes.append(block)
        for link in chain:
            if (link.var.name_hint == "" and link.var.type_annotation is None
                    and id(link.var) not in self._users):
                # An anonymous, unused variable: the sequencing `e1; e2` it was read from.
                value = yield link.value
                item = [*value, ";"]
                block.items.append(item)
                if self.anchors is not None:
                    self.anchors[id(item)] = link if link.span is not None else link.value
                continue
            var = self.var_def(link.var)          # named first: in scope in its own value
            self._pending[id(link.var)] = block
            value = yield link.value
            del self._pending[id(link.var)]
            item = ["let ", var, " = ", *value, ";"]
            block.items.append(item)
            if self.anchors is not None:
                self.anchors[id(item)] = link
        final = yield chain[-1].body
        if inline:
            return final
        self._scopes.pop()
        block.items.append(final)
        if self.anchors is not None:
            self._anchor_final(final, chain[-1].body)
        return [block]

    def _match(self, node: Match) -> Visit:
        data = yield node.data
        clauses = Block("{", "}")
        for clause, arm in zip(node.clauses, self._blocks[id(node)]):
            pattern = self.pattern_text(clause.lhs)
            arm.items.append((yield from self._in_scope(arm, clause.rhs)))
            item = [pattern + " => ", arm, ","]
            clauses.items.append(item)
            if self.anchors is not None:
                self.anchors[id(item)] = clause.lhs
        pieces: Pieces = ["match" if node.complete else "match?", " (", *data, ") ", clauses]
        if self._mode[id(node)] != _INLINE:      # `match` is not an atom: `(match ...)`
            pieces = ["(", *pieces, ")"]
        return pieces


_VISITORS: dict[type, Callable[[TextPrinter, Any], Visit]] = {
    Call: TextPrinter._call, Tuple: TextPrinter._tuple, TupleGetItem: TextPrinter._get_item,
    RefCreate: TextPrinter._ref_create, RefRead: TextPrinter._ref_read,
    RefWrite: TextPrinter._ref_write, If: TextPrinter._if, Function: TextPrinter._function,
    Let: TextPrinter._let, Match: TextPrinter._match,
}


# `mod.astext()` and the messages of the layers below reach the printer through ir/text.py.
set_printer(astext)
