"""ScopeTree: LCA and level ancestors by jump pointers agree with walking parent pointers."""
from __future__ import annotations

import random
import time

from relaylang.ir.block_forms import Scope, lca
from relaylang.ir.scope_tree import ScopeTree


def _naive_lca(tree: ScopeTree, a: int, b: int) -> int:
    while a != b:
        if tree.depth[a] >= tree.depth[b]:
            a = tree.parent[a]
        else:
            b = tree.parent[b]
    return a


def _random_tree(seed: int, chain: int, branches: int) -> ScopeTree:
    """A long chain, then scopes hung anywhere: deep and bushy parts both."""
    rng = random.Random(seed)
    tree = ScopeTree()
    for _ in range(chain):
        tree.add(len(tree) - 1)
    for _ in range(branches):
        tree.add(rng.randrange(len(tree)))
    return tree


def test_lca_matches_the_parent_walk():
    for seed in range(3):
        tree = _random_tree(seed, 1500, 1500)
        rng = random.Random(seed + 100)
        for _ in range(2000):
            a, b = rng.randrange(len(tree)), rng.randrange(len(tree))
            assert tree.lca(a, b) == _naive_lca(tree, a, b), (a, b)


def test_ancestor_at_and_encloses():
    tree = _random_tree(7, 300, 700)
    rng = random.Random(7)
    for _ in range(1000):
        s = rng.randrange(len(tree))
        level = rng.randrange(tree.depth[s] + 1)
        up = s
        while tree.depth[up] > level:
            up = tree.parent[up]
        assert tree.ancestor_at(s, level) == up
        assert tree.encloses(up, s)
        other = rng.randrange(len(tree))
        assert tree.encloses(other, s) == (_naive_lca(tree, other, s) == other)


def test_root_and_siblings():
    tree = ScopeTree("root")
    a, b = tree.add(0, "a"), tree.add(0, "b")
    c = tree.add(a, "c")
    assert tree.lca(a, b) == 0 and tree.lca(c, b) == 0 and tree.lca(c, a) == a
    assert tree.lca(c, c) == c and tree.label[tree.lca(c, a)] == "a"
    assert tree.parent[0] == -1 and tree.depth[c] == 2


def test_deep_chain_lca_takes_logarithmic_steps():
    # Two leaves hung off the bottom of a 200,000-deep chain, and a leaf at the
    # top: the walk would be 200,000 steps per query; jumps make 10,000 queries fast.
    tree = ScopeTree()
    for _ in range(200_000):
        tree.add(len(tree) - 1)
    bottom = len(tree) - 1
    left, right, top = tree.add(bottom), tree.add(bottom), tree.add(1)
    start = time.perf_counter()
    for _ in range(5_000):
        assert tree.lca(left, right) == bottom
        assert tree.lca(left, top) == 1
    assert time.perf_counter() - start < 2.0


def test_scope_objects_share_one_tree():
    root = Scope()
    a, b = root.child(), root.child()
    deep = a.child().child()
    assert lca(deep, b) is root and lca(deep, a) is a
    assert deep.parent is not None and deep.parent.parent is a and deep.level == 3
    assert root.parent is None and root.level == 0
