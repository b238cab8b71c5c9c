"""`tuple_leaves` / `from_tuple_leaves` (ir/types.py): a tuple-typed value's tensors in
order and back, shared by the executors, the BYOC runner and the tuner; iterative, so a
tuple type nested 100,000 deep is fine."""
from __future__ import annotations

from relaylang.ir.types import TensorType, TupleType, from_tuple_leaves, tuple_leaves

A, B, C = (TensorType((k,), "float32") for k in (1, 2, 3))


def test_leaves_in_order_and_back() -> None:
    ty = TupleType((A, TupleType((B, TupleType(()), C)), TupleType((A,))))
    assert tuple_leaves(ty) == [A, B, C, A]
    assert from_tuple_leaves(ty, ["a", "b", "c", "d"]) == ("a", ("b", (), "c"), ("d",))
    assert tuple_leaves(A) == [A] and from_tuple_leaves(A, ["x"]) == "x"
    assert tuple_leaves(TupleType(())) == [] and from_tuple_leaves(TupleType(()), []) == ()


def test_deep_nesting_needs_no_recursion() -> None:
    depth = 100_000
    ty = A
    for _ in range(depth):
        ty = TupleType((ty, B))
    leaves = tuple_leaves(ty)
    assert len(leaves) == depth + 1 and leaves[0] is A and leaves[-1] is B
    value = from_tuple_leaves(ty, list(range(depth + 1)))
    for k in range(depth):
        assert value[1] == depth - k
        value = value[0]
    assert value == 0
