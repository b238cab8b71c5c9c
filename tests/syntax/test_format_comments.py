"""`relay fmt` keeps comments inside definitions (syntax/format.py): before the statement
that follows them, after the statement they end the line of, at the end of their block;
formatting is idempotent and never loses a comment."""
from __future__ import annotations

import re

import relaylang as rl
from relaylang.ir.diagnostics import DiagnosticError
from relaylang.syntax.comments import scan_comments
from relaylang.syntax.format import format_text

HEADER = '#[version = "0.0.5"]\n'


def fmt(text: str) -> str:
    """The formatted text, checked: idempotent, every comment kept, parses again."""
    done = format_text(text)
    assert done.unplaced == [] and done.dropped_comments == 0
    again = format_text(done.text)
    assert again.text == done.text, "not idempotent"
    for c in scan_comments(text):
        first = c.text.split("\n")[0]
        assert first in done.text, f"lost {first!r}"
    rl.parse(done.text)
    return done.text


def body(text: str) -> str:
    """The formatted text after the version header."""
    return fmt(text).split("\n", 1)[1]


def test_let_chain_comments_before_and_after_statements():
    assert body(HEADER + """def @f(%a: int32) -> int32 {
      // first
  let %b = add(%a, 1);   // b
  /* second */
  let %c = multiply(%b, 2);
  %c // result
}
""") == """def @f(%a: int32) -> int32 {
  // first
  let %b = add(%a, 1);  // b
  /* second */
  let %c = multiply(%b, 2);
  %c  // result
}
"""


def test_graph_bindings_keep_their_comments():
    assert body(HEADER + """def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  // scale
  %0 = multiply(%x, 2f); // twice
  %1 = add(%0, 1f);
  // the result
  nn.relu(%1)
}
""") == """def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  // scale
  %0 = multiply(%x, 2f);  // twice
  %1 = add(%0, 1f);
  // the result
  nn.relu(%1)
}
"""


def test_if_else_branches():
    assert body(HEADER + """def @f(%c: bool, %a: int32, %b: int32) -> int32 {
  if (%c) { // then
    // yes
    %a
  } else {
    %b // no
    // after b
  }
}
""") == """def @f(%c: bool, %a: int32, %b: int32) -> int32 {
  if (%c) {
    // then
    // yes
    %a
  } else {
    %b  // no
    // after b
  }
}
"""


def test_match_arms():
    assert body(HEADER + """type L { C(int32, L), N }
def @f(%l: L) -> int32 {
  match (%l) {
    // the cons arm
    C(%h, %t) => {
      // in it
      %h
    },
    N => 0 // empty
  }
}
""") == """type L {
  C(int32, L),
  N,
}

def @f(%l: L) -> int32 {
  match (%l) {
    // the cons arm
    C(%h, %t) => {
      // in it
      %h
    },
    N => {
      0
    },  // empty
  }
}
"""


def test_nested_functions_and_block_ends():
    assert body(HEADER + """def @f(%a: int32) -> int32 {
  %0 = fn (%x: int32) -> int32 {
        // inner
    %1 = fn (%y: int32) -> int32 {
      add(%y, 1) // plus
    };
    %1(%x)
    // inner end
  };
  %0(%a)
  // outer end
}
""") == """def @f(%a: int32) -> int32 {
  %1 = fn (%x: int32) -> int32 {
    // inner
    %0 = fn (%y: int32) -> int32 {
      add(%y, 1)  // plus
    };
    %0(%x)
    // inner end
  };
  %1(%a)
  // outer end
}
"""


def test_adt_definitions_and_extern_types():
    assert body(HEADER + """// a list
type T {
  // the first
  A, // a
  /* b
   * multi-line */
  B(int32),
  // last
}

extern type S // opaque
""") == """extern type S  // opaque

// a list
type T {
  // the first
  A,  // a
  /* b
   * multi-line */
  B(int32),
  // last
}
"""


def test_comments_inside_an_expression_or_a_head_move_before_it():
    assert body(HEADER + """def @f(%a: int32, // the input
       %b: int32) -> int32 {
  %0 = add(%a, /* inline */ %b);
  %1 = add(%0, // a line comment mid-call
     2);
  %1
}
""") == """// the input
def @f(%a: int32, %b: int32) -> int32 {
  /* inline */
  %0 = add(%a, %b);
  add(%0, 2)  // a line comment mid-call
}
"""


def test_multi_line_block_comment_is_reindented_keeping_its_shape():
    out = body(HEADER + """def @f(%a: int32) -> int32 {
        /* one
         * two
         */
        add(%a, 1)
}
""")
    assert out == """def @f(%a: int32) -> int32 {
  /* one
   * two
   */
  add(%a, 1)
}
"""


def test_comments_between_and_after_definitions():
    out = fmt("// file\n" + HEADER + """def @g() -> int32 { 1 }
// about f
def @f() -> int32 { @g() }  // f ends
// the end
""")
    assert out == "// file\n" + HEADER + """// about f
def @f() -> int32 {
  @g()
}  // f ends

def @g() -> int32 {
  1
}

// the end
"""


def test_comment_before_the_final_expression_stays_before_it():
    out = body(HEADER + """def @f(%a: int32) -> int32 {
  %0 = add(%a, 1);
  // the sum
  %0
}
""")
    assert out.index("// the sum") < out.index("add(%a, 1)")


def test_strings_are_not_comments():
    text = HEADER + 'def @f(%x: int32, Compiler="a//b /* c") -> int32 {\n  // real\n  %x\n}\n'
    assert fmt(text) == text
    assert [c.text for c in scan_comments('x "// no" // yes\n /* b /* nested */ */')] == \
        ["// yes", "/* b /* nested */ */"]


def test_comments_in_an_existing_example_survive(tmp_path):
    src = HEADER + """def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = nn.relu(%x); // relu
  /* sum with itself */ %1 = add(%0, %0);
  %2 = if (True) { %1 } else { /* never */ %0 };
  %2
}
"""
    out = fmt(src)
    for text in ("// relu", "/* sum with itself */", "/* never */"):
        assert out.count(text) == 1


def test_random_comments_are_never_lost_and_formatting_is_idempotent():
    import random
    rng = random.Random(3)
    base = (HEADER + """type L { C(int32, L), N }
def @f(%l: L, %c: bool) -> int32 {
  %0 = match (%l) {
    C(%h, %t) => %h,
    N => 0,
  };
  let %y = add(%0, 1);
  %1 = if (%c) {
    multiply(%y, 2)
  } else {
    %2 = fn (%z: int32) -> int32 { subtract(%z, 1) };
    %2(%y)
  };
  %1
}
""").split("\n")
    for trial in range(40):
        lines = list(base)
        for k in range(3):
            i = rng.randrange(2, len(lines) - 1)
            tag = f"t{trial}x{k}"
            kind = rng.choice(["own", "trail", "block", "pre"])
            if kind == "own":
                lines.insert(i, f"// {tag}")
            elif kind == "trail" and "//" not in lines[i]:
                lines[i] += f" // {tag}"
            elif kind == "block":
                lines[i] += f" /* {tag} */"
            else:
                lines[i] = f"/* {tag} */ " + lines[i]
        text = "\n".join(lines)
        try:
            rl.parse(text)
        except DiagnosticError:
            continue
        out = fmt(text)
        for tag in re.findall(r"t\d+x\d", text):
            assert tag in out


def test_refusal_names_the_line_of_a_comment_without_a_place(monkeypatch):
    from relaylang.syntax import format as module

    def no_block(self, blk, group, items, top):
        return None
    monkeypatch.setattr(module._Placer, "_printed_block", no_block)
    done = format_text(HEADER + "def @f(%c: bool) -> int32 {\n  if (%c) {\n    1 // one\n"
                       "  } else {\n    2\n  }\n}\n")
    assert done.unplaced == [4] and done.dropped_comments == 1 and "// one" not in done.text
