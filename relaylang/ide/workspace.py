"""The `.relay` files of the workspace folders, analysed on demand for workspace symbols.

Nothing is read until a workspace-symbol request comes; then each file is
analysed once and kept until its modification time or size changes. Open
documents are not read from disk: the editor's text (and its analysis) wins.
"""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

MAX_FILES = 2000          # a bigger tree is not a Relay project; do not stall on it
_SKIPPED_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"}


def relay_files(roots: Iterable[Path]) -> list[Path]:
    """The `.relay` files under `roots` (hidden and tool directories skipped), sorted."""
    found: list[Path] = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames
                                 if d not in _SKIPPED_DIRS and not d.startswith("."))
            found.extend(Path(dirpath) / f for f in sorted(filenames) if f.endswith(".relay"))
            if len(found) >= MAX_FILES:
                logger.warning("more than %d .relay files in the workspace; the rest are "
                               "not indexed", MAX_FILES)
                return found[:MAX_FILES]
    return found


class WorkspaceFiles:
    def __init__(self, analyze: Callable[..., Any]):
        self._analyze = analyze
        self._cache: dict[Path, tuple[tuple[int, int], Any]] = {}
        self._lock = threading.Lock()

    def analyses(self, roots: Iterable[Path], skip_uris: set[str]) -> list[Any]:
        """One analysis per `.relay` file under `roots` whose URI is not in `skip_uris`."""
        out: list[Any] = []
        with self._lock:
            for path in relay_files(roots):
                uri = path.as_uri()
                if uri in skip_uris:
                    continue
                analysis = self._file_analysis(path, uri)
                if analysis is not None:
                    out.append(analysis)
        return out

    def _file_analysis(self, path: Path, uri: str) -> Any:
        try:
            st = path.stat()
            stamp = (st.st_mtime_ns, st.st_size)
            cached = self._cache.get(path)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            logger.info("workspace symbols: skipping %s: %s", path, e)
            return None
        analysis = self._analyze(text, uri)
        self._cache[path] = (stamp, analysis)
        return analysis
