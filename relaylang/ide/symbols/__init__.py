"""The symbol index of a document and how the document analysis (ide/analysis.py) builds it.

  index.py        `Occurrence` (one name token) and `SymbolIndex` (lookups by position,
                  symbol, kind)
  parse.py        name records made while parsing (who binds and uses which name)
  ir.py           occurrences read from the typed IR: ops, attributes, numbers, constructors
  defs.py         the top-level definitions of a text and their line ranges
  check.py        type checking definitions with errors apart from the rest
  incremental.py  re-analysing one edited graph statement alone
  lines.py        moving an analysis past lines added or removed without tokens
  outline.py      document and workspace symbols, folding ranges
  docs.py         hover text: op signatures and attributes, ADT definitions
"""
from .index import Occurrence, SymbolIndex

__all__ = ["Occurrence", "SymbolIndex"]
