"""A tree of nested scopes (blocks) with fast lowest common ancestors.

Where a shared computation has to live is the lowest common ancestor (LCA) of
the scopes of its uses: TVM's `CalcScope` (apache/tvm:
src/relay/transforms/to_a_normal_form.cc) walks parent pointers for it. Here
one helper serves ToANormalForm, the basic-block scopes of `block_forms.py`
and the interpreter's compiler (`backend/interpreter/compiler.py`).

Scopes are numbered from 0 (the root). Besides its parent each scope keeps
one *jump* pointer (the skew-binary scheme of Myers' random-access lists, the
"jump pointers" of Rust's and LLVM's dominator trees): adding a scope is O(1)
like a plain parent list, and an LCA or a level-ancestor query is O(log depth),
so a node shared across 100,000 nested scopes costs a few dozen steps, not a
walk of the whole chain.
"""
from __future__ import annotations

from typing import Any


class ScopeTree:
    """Scopes numbered from 0 (the root); `label[i]` is what the caller attached to scope i."""

    __slots__ = ("depth", "jump", "label", "parent")

    def __init__(self, root_label: Any = None) -> None:
        self.parent: list[int] = [-1]
        self.depth: list[int] = [0]
        self.jump: list[int] = [0]
        self.label: list[Any] = [root_label]

    def __len__(self) -> int:
        return len(self.parent)

    def add(self, parent: int, label: Any = None) -> int:
        """A new scope nested in `parent`; returns its number."""
        jump = self.jump
        j = jump[parent]
        # Skew-binary jumps: when the parent's jump and the jump's jump span equal
        # distances, jump over both; else jump to the parent. Depth alone decides
        # the jump lengths, so two scopes at one depth always jump equally far.
        if self.depth[parent] - self.depth[j] == self.depth[j] - self.depth[jump[j]]:
            j = jump[j]
        else:
            j = parent
        self.parent.append(parent)
        self.depth.append(self.depth[parent] + 1)
        jump.append(j)
        self.label.append(label)
        return len(self.parent) - 1

    def ancestor_at(self, scope: int, level: int) -> int:
        """The ancestor of `scope` at depth `level` (not deeper than `scope`)."""
        depth, jump, parent = self.depth, self.jump, self.parent
        while depth[scope] > level:
            j = jump[scope]
            scope = j if depth[j] >= level else parent[scope]
        return scope

    def lca(self, a: int, b: int) -> int:
        """The deepest scope enclosing both `a` and `b`."""
        if a == b:
            return a
        depth = self.depth
        if depth[a] > depth[b]:
            a = self.ancestor_at(a, depth[b])
        elif depth[b] > depth[a]:
            b = self.ancestor_at(b, depth[a])
        jump, parent = self.jump, self.parent
        while a != b:                    # equal depths, so equal jump lengths
            ja, jb = jump[a], jump[b]
            if ja != jb:
                a, b = ja, jb
            else:
                a, b = parent[a], parent[b]
        return a

    def encloses(self, outer: int, inner: int) -> bool:
        """True when `inner` is `outer` or nested in it."""
        return self.depth[inner] >= self.depth[outer] and \
            self.ancestor_at(inner, self.depth[outer]) == outer
