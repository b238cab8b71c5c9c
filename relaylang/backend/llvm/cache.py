"""The on-disk kernel cache: object code by hash of (module IR text, target id).

Folder: `$RELAY_CACHE_DIR`, else `~/.cache/relaylang/kernels` (XDG_CACHE_HOME honoured).
Entries are written atomically (temporary file + rename); an entry that does not
load (corrupt, foreign) is ignored by the caller and rewritten.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

MAGIC = b"RLKC1\n"


def cache_dir() -> Path:
    env = os.environ.get("RELAY_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "relaylang" / "kernels"


def key(raw_ir: str) -> str:
    from .jit import target_id
    h = hashlib.sha256()
    h.update(target_id().encode())
    h.update(b"\0")
    h.update(raw_ir.encode())
    return h.hexdigest()


def load(raw_ir: str) -> bytes | None:
    path = cache_dir() / (key(raw_ir) + ".o")
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(MAGIC):
        return None
    body = data[len(MAGIC):]
    digest, obj = body[:32], body[32:]
    if hashlib.sha256(obj).digest() != digest:
        return None
    return obj


def store(raw_ir: str, obj: bytes) -> None:
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(obj).digest() + obj)
        os.replace(tmp, folder / (key(raw_ir) + ".o"))
    except OSError:
        pass          # a cache that cannot be written is no cache, not an error
