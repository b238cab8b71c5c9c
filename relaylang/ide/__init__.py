"""Editor features over Relay text, shared by the REPL (relaylang/repl) and the language
server (lsp/, which turns them into LSP messages). Nothing here needs pygls.

  completion.py, signature.py   completion and signature help on incomplete text
                                (tokens.py, scope.py, prefix_scan.py, module_info.py)
  analysis.py                   what is known about one document: diagnostics, IR and its
                                symbol index (symbols/), surviving errors, incremental
  navigation.py                 hover, definition, references, rename, call hierarchy,
                                outline and folding over an analysis
  editing.py                    missing type annotations; formatting a text or some lines
  preview.py                    a pass pipeline's output for an editor's text
  workspace.py                  the `.relay` files of the workspace, analysed on demand
"""
from __future__ import annotations

from .completion import KINDS, Completion, complete
from .signature import Signature, signature_at

__all__ = ["KINDS", "Completion", "Signature", "complete", "signature_at"]
