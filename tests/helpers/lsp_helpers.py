"""Documents shared by the language-server unit tests (test_lsp_*.py)."""
from __future__ import annotations

HEADER = '#[version = "0.0.5"]\n'

# A polymorphic list and a recursive generic function over it: the start of the test
# documents, so constructors, type names and globals all have definitions and uses.
LIST_AND_LENGTH = """\
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @length[A](%l: List[A]) -> int32 {
  match (%l) {
    Cons(_, %rest) => add(1, @length(%rest)),
    Nil => 0,
  }
}
"""
