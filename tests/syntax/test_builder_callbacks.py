"""Every rule and alias of grammar/relay.lark has its callback on `Builder`.

Lark looks callbacks up with getattr on the transformer; a rule without one does
not fail, it silently builds a `lark.Tree` where IR was expected. `Builder` is
assembled from mixins (build_types.py, build_patterns.py, build_calls.py), so
these tests also check that the mixins together cover the grammar, that no
callback is defined twice (one silently shadowing the other), and that none
comes from Lark's own `Transformer`.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from lark import Lark, Transformer, Tree

from relaylang.ir.node import MetaObject
from relaylang.syntax.builder import RESERVED, Builder, MetaAttrsArg
from relaylang.syntax.parser import grammar_path, parse, parse_expr

_STARTS = ["start_module", "start_expr", "start_definitions"]
# Left-recursive list rules share one callback (builder.py `_append`).
_LIST_RULES = ("params", "args", "attrs", "attr_values", "dims", "stmts")


@functools.cache
def _grammar_rules() -> tuple[Any, ...]:
    lark = Lark(grammar_path().read_text(), parser="lalr", lexer="contextual", start=_STARTS,
                maybe_placeholders=True)
    return tuple(lark.rules)


def _kept_children(rule: Any) -> int:
    """How many children Lark may pass for one expansion; 2 stands for "more than one"."""
    kept = sum(bool(e) for e in rule.options.empty_indices)   # `[x]` placeholders (None)
    for sym in rule.expansion:
        if sym.is_term and sym.filter_out:
            continue
        if not sym.is_term and sym.name.startswith("_"):
            return 2          # an inlined rule (`x*`): splices any number of children
        kept += 1
    return kept


def _callback_names() -> set[str]:
    """The callback name of each expansion that reaches a callback: its alias, or the rule's
    name unless the rule is `?`-inlined and this expansion always has a single child."""
    names = set()
    for rule in _grammar_rules():
        name = str(rule.alias or rule.origin.name)
        if name.startswith(("__", "$")):   # Lark's own helper rules
            continue
        if rule.options.expand1 and not rule.alias and _kept_children(rule) == 1:
            continue          # `?rule: "(" x ")"`: the child is passed through
        names.add(name)
    return names


def _missing(cls: type) -> list[str]:
    """Callback names that would fall back to Lark's default (a Tree) on `cls`."""
    out = []
    for name in sorted(_callback_names()):
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner is None or owner.__module__.startswith("lark") or not callable(
                getattr(cls, name)):
            out.append(name)
    return out


def test_callback_names_cover_the_grammar() -> None:
    names = _callback_names()
    # Plain rules, aliases, list rules and `?` rules that can have several children.
    for expected in ("function_def", "type_def", "param", "attr", "av_list", "let_stmt",
                     "let_value", "call", "callee_meta", "tuple", "pattern_ctor", "func_type",
                     "dim_meta", "binary", "expr", *_LIST_RULES, *_STARTS):
        assert expected in names
    # `?` rules whose every expansion is one child (or an alias) have no callback of their own.
    for inlined in ("definition", "item", "atom_head", "compound_atom", "callee", "pattern",
                    "type", "dim", "attr_value", "bind_value", "stmt", "arg"):
        assert inlined not in names
    assert len(names) > 60


def test_every_rule_has_a_builder_method() -> None:
    assert _missing(Builder) == []


def test_a_missing_method_is_reported() -> None:
    # The check itself must catch a callback that is absent or not callable.
    stripped = type("Stripped", (Builder,), {"binary": None, "dim_meta": None})
    assert _missing(stripped) == ["binary", "dim_meta"]
    assert _missing(type("Bare", (Transformer,), {})) == sorted(_callback_names())


def test_no_callback_is_defined_twice() -> None:
    for name in _callback_names():
        owners = [k.__name__ for k in Builder.__mro__ if name in vars(k)]
        assert len(owners) == 1, f"{name} is defined in {owners}"


def test_callbacks_live_in_the_mixins_by_grammar_area() -> None:
    def owner(name: str) -> str:
        return next(k for k in Builder.__mro__ if name in vars(k)).__module__

    assert owner("tensor_type") == owner("dim_number") == "relaylang.syntax.build_types"
    assert owner("match") == owner("pattern_var") == "relaylang.syntax.build_patterns"
    assert owner("binary") == owner("av_ident") == "relaylang.syntax.build_calls"
    assert owner("expr") == owner("ident_ref") == "relaylang.syntax.builder"


def test_list_rules_share_the_append_callback() -> None:
    first = vars(Builder)[_LIST_RULES[0]]
    assert all(vars(Builder)[name] is first for name in _LIST_RULES)
    builder = Builder()
    items = builder.params([1])
    assert builder.args([items, 2]) is items and items == [1, 2]


def test_public_names_stay_importable_from_builder() -> None:
    assert "match" in RESERVED and "Tensor" not in RESERVED
    # A meta reference as the last argument becomes the call's attributes (MetaAttrsArg).
    attrs = MetaObject("relay.attrs.SoftmaxAttrs", '{"type_key":"relay.attrs.SoftmaxAttrs"}')
    call = parse_expr("nn.softmax(1f, meta[relay.attrs.SoftmaxAttrs][0])",
                      metadata={"relay.attrs.SoftmaxAttrs": [attrs]})
    assert call.attrs is attrs and len(call.args) == 1
    assert not any(isinstance(a, MetaAttrsArg) for a in call.args)


def _trees(node: Any) -> list[Any]:
    # Walks the built IR (shallow here) without recursion, looking for lark Trees.
    found, stack, seen = [], [node], set()
    while stack:
        x = stack.pop()
        if id(x) in seen or isinstance(x, (str, int, float, type(None))):
            continue
        seen.add(id(x))
        if isinstance(x, Tree):
            found.append(x)
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif hasattr(x, "__slots__") or hasattr(x, "__dict__"):
            for cls in type(x).__mro__:
                for slot in getattr(cls, "__slots__", ()):
                    stack.append(getattr(x, slot, None))
            stack.extend(getattr(x, "__dict__", {}).values())
    return found


PROGRAM = """#[version = "0.0.5"]
type List[A] { Cons(A, List[A]), Nil }
extern type Handle
def @f[T](%x: Tensor[(2, ?), float32], %l: List[T], %t: (int32, fn (int8) -> bool),
          %r: ref(float32), %y {virtual_device=None}: T, %g,
          %m: Tensor[(meta[tir.Var][0], 3), int8]) -> Tensor[(2, ?), float32] {
  free_var %z: int32;
  let %a: float32 = 1f;
  %0 = nn.softmax(%x, axis=-1);
  %g(%0, attrs_type_key="DictAttrs", v=[1, (2), "s", True, %a, @f, ?, meta[relay.Constant][0]]);
  %1 = (%0, %a).0;
  %2 = match? (%l) { Cons(%h, _) => %h, (Nil) => %y, };
  ref_write(%r, ref_read(%r));
  if (%a < 2f) { add(%1, %1) * 2f } else { fn (%q) { %q }(%1) }
}
"""


def test_a_program_touching_every_area_builds_ir_only() -> None:
    meta = {"relay.Constant": [np.array(1.5, "float32")],
            "tir.Var": [MetaObject("tir.Var", '{"type_key":"tir.Var"}')]}
    mod = parse(PROGRAM, "callbacks.relay", metadata=meta)
    assert _trees(list(mod.functions.values()) + list(mod.type_definitions.values())) == []


@pytest.mark.parametrize("text", ["(1, 2).1", "let %x = 1; %x + 2 * 3", "match (1) { _ => () }"])
def test_expressions_build_ir_only(text: str) -> None:
    assert _trees(parse_expr(text)) == []
