"""Operator fusion: FuseOps (`fuse_ops.py`, with the post-dominator analysis of
`dominators.py`) and its inverse DefuseOps (`defuse_ops.py`)."""
