"""The tokens and scope of the text before the cursor, kept from one request to the next.

Completion and signature help need the tokens before the cursor and the locals in scope
there. Scanning them afresh costs time proportional to everything above the cursor: about
35 ms for a 2,000-line model, on every keystroke. A `PrefixScanner` (one per document)
keeps the last scan and, for the next text, reuses what the edit cannot have changed:

    text v1:  def @main(%x) {  %0 = add(%x, %x);  %1 = ...|
    text v2:  def @main(%x) {  %0 = add(%x, %x);  %1 = ... .|     (a character typed)
              '---- tokens kept (end before the edited line) ---'-- rescanned --'

Why a kept token is still right: a token's scan reads its own characters and the one that
ends it, and never looks past the end of its line (only comments, strings and directives
span lines, and they end where their closing mark is). So a token ending before the start
of the first edited line was scanned from unchanged characters, and the scan resumes at the
end of the last kept token, exactly where a scan of the whole new text passes. The scope
scanner (scope.py) is resumed from a snapshot taken no later than the first token it may
have read that is not kept. Results equal `tokenize(text[:end])` and
`scope_at_end(tokens)`; tests/ide/test_ide_prefix_scan.py checks that on random edits.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass

from .scope import ScopeAtEnd, ScopeScanner, ScopeState
from .tokens import Token, tokenize_into

SNAPSHOT_EVERY = 64            # tokens between scope snapshots (more when deeply nested)


@dataclass(frozen=True, slots=True)
class PrefixScan:
    """What `PrefixScanner.scan` found; `tokens` is the scanner's own list, valid until its
    next scan."""

    tokens: list[Token]
    ends_in_comment_or_string: bool
    scope: ScopeAtEnd
    # How far back ide/completion.enclosing_call need look: to the innermost open `(`
    # (past any open `[`); len(tokens) when the innermost open bracket is a `{` or none is
    # open, where it finds no call.
    call_floor: int


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix, by halving with slice compares (done in C:
    a character loop in Python over 80,000 characters is slower than the whole rescan)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while high - low > 1:                 # a[:low] == b[:low], a[:high] != b[:high]
        mid = (low + high) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid
    return low


class PrefixScanner:
    def __init__(self) -> None:
        self._text = ""
        self._end = 0                     # self._tokens are those of self._text[:self._end]
        self._tokens: list[Token] = []
        self._in_comment = False
        self._scope = ScopeScanner(self._tokens)
        # (horizon, done, state) in scan order; both horizon and done only grow.
        self._snapshots: list[tuple[int, int, ScopeState]] = [(-1, 0, self._scope.snapshot())]

    def scan(self, text: str, end: int) -> PrefixScan:
        """Tokens and scope of `text[:end]`."""
        end = max(0, min(end, len(text)))
        same = _common_prefix(self._text[:self._end], text[:end]) \
            if self._end and end else 0
        kept = self._keep_tokens(text, same)
        resume = self._tokens[-1].end if self._tokens else 0
        self._in_comment = tokenize_into(self._tokens, text, resume, end)
        self._text, self._end = text, end
        self._resume_scope(kept)
        return PrefixScan(self._tokens, self._in_comment, self._scope.result(),
                          self._call_floor())

    def _keep_tokens(self, text: str, same: int) -> int:
        """Drop the tokens that end at or after the start of the line where the texts first
        differ (`same`); returns how many are kept."""
        line_start = text.rfind("\n", 0, same) + 1
        kept = bisect.bisect_left(self._tokens, line_start, key=lambda t: t.end)
        del self._tokens[kept:]
        return kept

    def _resume_scope(self, kept: int) -> None:
        """Continue the scope scan from the last snapshot that read only kept tokens."""
        at = bisect.bisect_left(self._snapshots, kept, key=lambda s: s[0]) - 1
        horizon, done, state = self._snapshots[at]
        del self._snapshots[at + 1:]
        scope = self._scope
        scope.restore(state, done, horizon)
        total = len(self._tokens)
        while scope.done < total:
            # A snapshot costs the bracket depth: spacing them at least that far apart keeps
            # a 100,000-deep nesting linear.
            step = max(SNAPSHOT_EVERY, len(scope.stack))
            scope.advance(min(total, scope.done + step))
            if scope.done < total:        # the last chunk read past the end: not reusable
                self._snapshots.append((scope.horizon, scope.done, scope.snapshot()))

    def _call_floor(self) -> int:
        # enclosing_call walks back to the innermost open bracket that is not a `[` (it
        # looks through attribute lists): a call if that is a `(`, nothing if it is a `{`
        # or there is none. So the walk need not start further back than that `(`.
        for frame in reversed(self._scope.open_brackets()):
            if frame.bracket != "[":
                return frame.opener if frame.bracket == "(" else len(self._tokens)
        return len(self._tokens)
