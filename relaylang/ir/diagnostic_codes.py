"""The one table of diagnostic codes: a stable name per class of error.

Every stage that makes a `Diagnostic` names its class with a code from `CODES`
(the stage knows what went wrong; a message may be reworded freely without
changing what editors filter on). The language server publishes the code as
the LSP `code`; the CLI text does not show it. `Diagnostic` rejects a code that
is not listed here, so a typo fails where it is made, not in an editor.

Codes are kebab-case and never renamed once published; add a new one rather
than widening an existing one to a different kind of error.
"""
from __future__ import annotations

CODES: dict[str, str] = {
    # ---- reading text (relaylang/syntax)
    "syntax": "the text does not follow the grammar (unexpected token or character, "
              "unterminated comment, misplaced directive)",
    "version": "the `#[version = \"0.0.5\"]` header is missing or names another version",
    "metadata": "the `#[metadata]` section is malformed, or a `meta[...]` reference cannot "
                "be resolved or is misplaced",
    "literal": "a numeric literal or tuple index that is malformed or out of range for its type",
    "duplicate-definition": "a global function, type, constructor or graph binding "
                            "defined twice",
    "use-before-definition": "a graph binding `%N` used before the line that defines it",
    "undefined-name": "a local variable, global function, type, constructor or operator "
                      "that nothing defines",
    "reserved-word": "a reserved word used as a name or where an expression is expected",
    "unknown-dtype": "a data type name that is not a known dtype",
    "attribute": "a call or parameter attribute that is unknown, ill-typed, missing or "
                 "not allowed there",
    "type-dimension": "a tensor dimension that is not an integer, `?` or a shape variable",
    # ---- type checking (relaylang/typing)
    "type-mismatch": "two types that must be equal are not",
    "non-exhaustive-match": "a complete `match` whose clauses miss some value",
    "unreachable-clause": "a `match` clause that earlier clauses already cover",
    "arity": "a call or constructor pattern with the wrong number of arguments or fields",
    "not-callable": "a call of a value whose type is not a function",
    "tuple-projection": "a projection `.N` of a non-tuple or past the end of a tuple",
    "cannot-infer": "a type the checker cannot determine; an annotation is needed",
    "op-type-relation": "an operator's type relation rejects its arguments, or the "
                        "operator has none",
    # ---- passes (relaylang/transform)
    "pass-option": "a pass option that names a parameter or axis the module does not have",
    "no-gradient": "automatic differentiation met an operator that has no gradient rule",
    "not-differentiable": "a function automatic differentiation cannot differentiate in the "
                          "mode asked for (its parameter or result types, polymorphism, or "
                          "control flow in first-order mode)",
    # ---- running (relaylang/backend, relaylang/cli/run.py)
    "runtime": "the interpreter stopped at a run-time error (failed match, bad index, "
               "kernel error)",
    "codegen": "an external (BYOC) target's codegen failed on a partitioned function, or "
               "returned something that is not a callable",
}
