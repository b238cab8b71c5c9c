"""Progress of long work, reported to whoever listens (a leaf: the standard library only).

The library says how far it has come; it never draws. A tool that wants a progress bar
installs a renderer (`relay build`, `opt`, `import` and `test` install the terminal one of
`relaylang/cli/progress.py`, which draws with tqdm on a terminal); with none installed
every call here does nothing but return, so library users and tests see no output and pay
one global read per call. Reporting now: the kernels `rl.build` lowers (backend/build.py,
native/mixed.py), pass pipelines (`transform.instruments.PassProgress`, added by
`Pipeline.run` and `relay build` when a renderer is installed), golden files (`relay
test`) and the phases of `relay import`.

    from relaylang.ir import progress

    for fn in progress.track(functions, "lowering kernels", unit="kernel"):
        ...                                        # a bar advancing once per item

    with progress.begin("tuning conv2d", total=trials, unit="trial") as bar:
        for trial in range(trials):                # a tuner, one update per measurement
            ...
            bar.update(note=f"best {gflops:.1f} GFLOPS")

    progress.write("FAIL case 3", file=sys.stdout)  # a line printed above any open bar

A renderer is a callable `renderer(label, total, unit) -> handle` whose handle has
`update(n, note)`, `close()` and, optionally, `write(text, file)`; `installed(renderer)`
makes it current for a `with` block (renderers nest: the innermost wins). Handles close
when their `with` block or `track` loop ends, and at the latest when the renderer that made
them is uninstalled, so an exception never leaves a bar on the screen.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, Self, TextIO, TypeVar

T = TypeVar("T")


class Handle(Protocol):
    """What a renderer returns for one task: advanced by `update`, ended by `close`."""

    def update(self, n: int = 1, note: str | None = None) -> None: ...

    def close(self) -> None: ...


Renderer = Callable[[str, "int | None", str], Handle]


class Progress:
    """One task's progress: `update(n=1, note=None)` advances it by `n` units (`note`, a
    short text shown beside the bar, replaces the previous one); `close()` ends it. Also a
    context manager closing it. Without a renderer every method does nothing."""

    __slots__ = ("_closed", "_handle", "done", "label", "total", "unit")

    def __init__(self, label: str, total: int | None, unit: str, handle: Handle | None):
        self.label, self.total, self.unit = label, total, unit
        self.done = 0
        self._handle = handle
        self._closed = handle is None

    def update(self, n: int = 1, note: str | None = None) -> None:
        self.done += n
        if self._handle is not None and not self._closed:
            self._handle.update(n, note)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            assert self._handle is not None
            try:
                self._handle.close()
            finally:
                _forget(self)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_lock = threading.Lock()
_renderers: list[tuple[Renderer, list[Progress]]] = []   # installed, innermost last


def active() -> bool:
    """Whether a renderer is installed (work may skip computing notes when not)."""
    return bool(_renderers)


def begin(label: str, total: int | None = None, unit: str = "it") -> Progress:
    """Start a task of `total` units (None: unknown, a counter without a bar)."""
    with _lock:
        if not _renderers:
            return Progress(label, total, unit, None)
        renderer, open_tasks = _renderers[-1]
        task = Progress(label, total, unit, renderer(label, total, unit))
        open_tasks.append(task)
        return task


def track(items: Iterable[T], label: str, total: int | None = None,
          unit: str = "it") -> Iterator[T]:
    """`items`, advancing a task by one per item (`total`: `len(items)` when it has one);
    the task closes when the loop ends, however it ends."""
    if not _renderers:          # nothing listens: the items themselves, no generator
        yield from items
        return
    if total is None and hasattr(items, "__len__"):
        total = len(items)      # type: ignore[arg-type]
    task = begin(label, total, unit)
    try:
        for item in items:
            yield item
            task.update()
    finally:
        task.close()


def write(text: str, file: TextIO | None = None) -> None:
    """Print the line `text` to `file` (default stdout) without breaking an open bar: the
    renderer clears its bars, prints and draws them again."""
    out = file if file is not None else sys.stdout
    with _lock:
        handles = [t._handle for _, tasks in _renderers for t in tasks]
    for handle in handles:
        writer = getattr(handle, "write", None)
        if writer is not None:
            writer(text, out)
            return
    print(text, file=out)


def _forget(task: Progress) -> None:
    with _lock:
        for _, tasks in _renderers:
            if task in tasks:
                tasks.remove(task)
                return


@contextmanager
def installed(renderer: Renderer | None) -> Iterator[None]:
    """Make `renderer` draw the tasks begun inside the block (None: nothing changes); the
    tasks still open at its end are closed."""
    if renderer is None:
        yield
        return
    entry: tuple[Renderer, list[Progress]] = (renderer, [])
    with _lock:
        _renderers.append(entry)
    try:
        yield
    finally:
        for task in list(reversed(entry[1])):
            try:
                task.close()
            except Exception:  # noqa: BLE001, S110 -- a broken bar must not hide the error
                pass
        with _lock:
            _renderers.remove(entry)


def recorder() -> tuple[Renderer, list[tuple[Any, ...]]]:
    """A renderer that draws nothing and records the calls it gets, for tests:
    ("begin", label, total, unit), ("update", label, n, note), ("close", label)."""
    events: list[tuple[Any, ...]] = []

    class _Recorded:
        def __init__(self, label: str) -> None:
            self.label = label

        def update(self, n: int = 1, note: str | None = None) -> None:
            events.append(("update", self.label, n, note))

        def close(self) -> None:
            events.append(("close", self.label))

    def render(label: str, total: int | None, unit: str) -> Handle:
        events.append(("begin", label, total, unit))
        return _Recorded(label)

    return render, events
