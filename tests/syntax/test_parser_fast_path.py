"""The one-token path for printed graph bindings (FAST_CALL_STMT in grammar/relay.lark).

`%5 = op(%4, %w, 1f, axis=1, v=[1, 2]) /* ty=... */;` on one line is read as one token
whose callback runs the general rules' callbacks on its pieces. It must be invisible:
the same IR, spans, sharing and diagnostics as the general rules, which read the same
statement when a tab stands before its `;` (a tab is outside the one-token shape, and
no span covers the `;`). Also: the parser's callbacks table (`direct_callbacks`)."""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from lark.exceptions import UnexpectedToken

from relaylang.syntax import build_calls
from relaylang.syntax.parser import _get_parser, parse_with_diagnostics

HEADER = '#[version = "0.0.5"]\n'
PRELUDE = "type List[A] { Cons(A, List[A]), Nil }\ndef @g(%a) { %a }\n"


def _canon(top: Any) -> list[Any]:
    """The object graph from `top`: types, fields, spans, values and sharing (ids in
    first-visit order), without recursion."""
    ids: dict[int, int] = {}
    keep, out, stack = [], [], [top]

    def ref(x: Any) -> Any:
        if x is None or isinstance(x, (bool, int, float, str)):
            return repr(x)
        if id(x) not in ids:
            ids[id(x)] = len(ids)
            keep.append(x)
            stack.append(x)
        return ("#", ids[id(x)])

    ref(top)
    done: set[int] = set()
    while stack:
        x = stack.pop()
        if id(x) in done:
            continue
        done.add(id(x))
        if isinstance(x, np.ndarray):
            row: Any = (str(x.dtype), x.shape, x.tobytes())
        elif isinstance(x, (tuple, list)):
            row = [ref(e) for e in x]
        elif isinstance(x, dict):
            row = [(ref(k), ref(v)) for k, v in x.items()]
        elif dataclasses.is_dataclass(x):
            row = [(f.name, ref(getattr(x, f.name, None))) for f in dataclasses.fields(x)]
            row.append(("span", ref(getattr(x, "span", None))))
        elif hasattr(x, "__slots__"):
            row = [(s, ref(getattr(x, s, None))) for k in type(x).__mro__
                   for s in getattr(k, "__slots__", ()) if not s.startswith("__")]
        else:
            row = repr(x)
        out.append((ids[id(x)], type(x).__name__, row))
    return sorted(out, key=lambda r: r[0])


def _parse(text: str) -> tuple[list[Any], list[Any]]:
    mod, diags = parse_with_diagnostics(text, "fast.relay")
    ir = _canon((list(mod.functions.items()), list(mod.type_definitions.items())))
    return ir, [(d.message, tuple(d.span), d.code) for d in diags]


@pytest.fixture
def fast_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many statements took the one-token path (the parser's callbacks are bound once,
    so the count is taken where the callback reads the token)."""
    calls: list[int] = []
    original = build_calls.fast_pieces

    def counting(tok: Any) -> Any:
        calls.append(tok.line)
        return original(tok)

    monkeypatch.setattr(build_calls, "fast_pieces", counting)
    return calls


STATEMENTS = [
    "%0 = add(%x, %y)",
    "%0 = nn.dense(%x, %y, units=None) /* ty=Tensor[(1, 2), float32] */",
    "%0 = multiply(%x, 0.5f /* ty=float32 */) /* ty=Tensor[(1, 2), float32] */",
    "%0 = reshape(%x, newshape=[-1, 2]) /* ty=Tensor[(1, 2), float32] */",
    "%0 = strided_slice(%x, begin=[0, 0], end=[1, 2], strides=[1], axes=None)",
    "%0 = cast(%x, dtype=\"float16\")",
    "%0 = zeros(shape=[1, 2], dtype=\"float32\")",
    "%0 = nn.softmax(%x, axis=-1) /* a */ /* b */",
    "%0  =  transpose( %x ,axes=[ 1,0 ] )",
    "%0 = sum(%x, axis=[1], keepdims=True, exclude=False)",
    "%0 = Cons(%x, %y)",
    "%0 = Nil()",
    # diagnostics: unknown names, bad literals and attributes, reserved words, reuse
    "%0 = add(%x, %1)",
    "%0 = add(%nope, %def)",
    "%0 = nope(%x)",
    "%0 = add(%x, 1.5)",
    "%0 = add(%x, 2147483648i32)",
    "%0 = nn.softmax(%x, axis=1.5f)",
    "%0 = nn.softmax(%x, bogus=1)",
    "%0 = add(%x, %y, axis=1)",
    "%0 = Cons(%x, Nil, v=1)",
    "%0 = reshape(%x, newshape=[1, 65505f16])",
    "%0 = add(%x, %y);\n  %0 = add(%x, %y)",
    # attributes written the same way twice (read once, then by their text)
    "%1 = nn.softmax(%x, axis=1);\n  %0 = nn.softmax(%1, axis=1)",
    "%1 = nn.softmax(%x, axis=1.5f);\n  %0 = nn.softmax(%1, axis=1.5f)",
    "%1 = reshape(%x, newshape=[1, 2i8]);\n  %0 = reshape(%1, newshape=[1, 2i8])",
    "%1 = nn.dense(%x, %y, units=\"a\");\n  %0 = nn.dense(%1, %y, units=\"a\")",
    "%1 = nn.softmax(%x, axis=1, bad=1);\n  %0 = nn.softmax(%1, axis=1, bad=1)",
    "%1 = nn.softmax(%x, axis=1) /* ty=(int32, int32) */;\n  %0 = nn.softmax(%1, axis=1)",
    # shapes the one-token path leaves to the general rules
    "%0 = inff16x(%x)",
    "%0 = Cons(%x, Nil)",
    "%0 = ref(%x)",
    "%0 = add(%x, %y,)",
    "%0 = add(%x, -%y)",
    "%0 = add(%x/* c */, %y)",
    "%0 = @g(%x)",
]


@pytest.mark.parametrize("stmt", STATEMENTS)
def test_one_token_statements_build_what_the_general_rules_build(stmt: str,
                                                                 fast_calls: list[int]) -> None:
    body = f"def @main(%x: Tensor[(1, 2), float32], %y) {{\n  {stmt};\n  %0\n}}\n"
    fast = _parse(HEADER + PRELUDE + body)
    taken = len(fast_calls)
    general = _parse(HEADER + PRELUDE + body.replace(";\n", "\t;\n"))
    assert len(fast_calls) == taken          # the tab keeps the general rules
    assert fast == general


def test_the_printed_shapes_take_the_one_token_path(fast_calls: list[int]) -> None:
    for stmt in STATEMENTS[:12]:
        fast_calls.clear()
        body = f"def @main(%x: Tensor[(1, 2), float32], %y) {{\n  {stmt};\n  %0\n}}\n"
        _, diags = _parse(HEADER + PRELUDE + body)
        assert fast_calls == [5], stmt
        assert diags == [], stmt
    for stmt in STATEMENTS[-7:]:
        fast_calls.clear()
        _parse(HEADER + PRELUDE + f"def @main(%x, %y) {{\n  {stmt};\n  %0\n}}\n")
        assert fast_calls == [], stmt


def test_nested_and_expression_positions(fast_calls: list[int]) -> None:
    text = (HEADER + "def @main(%x) {\n  let %f = fn (%q) {\n    %0 = add(%q, %x);\n"
            "    %1 = multiply(%0, 2f);\n    %1\n  };\n  %f(%x)\n}\n")
    fast = _parse(text)
    assert len(fast_calls) == 2
    assert fast == _parse(text.replace(";\n", "\t;\n"))
    assert fast[1] == []


def test_repeated_attributes_are_one_object(fast_calls: list[int]) -> None:
    text = (HEADER + "def @main(%x) {\n  %0 = nn.softmax(%x, axis=1);\n"
            "  %1 = nn.softmax(%0, axis=1);\n  %2 = nn.softmax(%1, axis=2);\n  %2\n}\n")
    mod, diags = parse_with_diagnostics(text)
    third = mod["main"].body
    second = third.args[0]
    assert second.args[0].attrs is second.attrs and second.attrs is not third.attrs
    assert diags == [] and len(fast_calls) == 3


def test_an_attributes_object_bound_to_a_graph_id_stays_an_argument() -> None:
    from relaylang.ir.node import MetaObject
    obj = MetaObject("relay.attrs.SoftmaxAttrs", '{"type_key":"relay.attrs.SoftmaxAttrs"}')
    for tail in (";\n", "\t;\n"):
        text = (HEADER + "def @main(%x) {\n  %0 = meta[relay.attrs.SoftmaxAttrs][0];\n"
                "  %1 = nn.softmax(%x, axis=1);\n  %2 = nn.softmax(%x, %0, axis=1)"
                + tail + "  %2\n}\n")
        _, diags = parse_with_diagnostics(text, metadata={"relay.attrs.SoftmaxAttrs": [obj]})
        assert [d.message for d in diags] == [
            "a call cannot have both keyword attributes and an attributes object"]


def test_a_misplaced_binding_is_reported_as_its_graph_id() -> None:
    # The contextual lexer falls back to all terminals after an unexpected character and
    # then reads the one-token statement; the message names `%0`, as without it.
    text = HEADER + "def @main(%x) {\n  add(%x, %x) %0 = add(%x, %x);\n  %0\n}\n"
    lark, _ = _get_parser()
    with pytest.raises(UnexpectedToken) as info:
        lark.parse(text, start="start_module")
    assert info.value.token.type == "FAST_CALL_STMT"
    _, diags = _parse(text)
    assert diags == [("unexpected graph binding `%0`; expected `)`, `}`, `,`, `;`, `(`",
                      ("fast.relay", 3, 15, 3, 17), "syntax")]


def test_callbacks_are_direct() -> None:
    # Pass-through rules are C-level itemgetters, and rules hash by identity.
    from operator import itemgetter

    from lark.grammar import Rule
    lark, _ = _get_parser()
    callbacks = lark.parser.parser_conf.callbacks
    by_name = {str(rule): f for rule, f in callbacks.items()}
    assert type(by_name["<binary : call>"]) is itemgetter
    assert type(by_name["<compound_atom : LPAR expr RPAR>"]) is itemgetter
    rule = next(r for r in callbacks if isinstance(r, Rule))
    assert hash(rule) == object.__hash__(rule) and rule != 0
