"""Progress bars on the terminal: the renderer `relay` installs into `relaylang.ir.progress`.

A subcommand with a `--quiet` flag (`relay build`, `relay import`, `relay test`, `relay
opt`) runs with this renderer installed when standard error is a terminal and `--quiet`
was not given; the library's long work (kernels lowered by `rl.build`, golden files run,
the phases of an import) then shows a tqdm bar on stderr, cleared when the work ends. Work
done within `DELAY` seconds shows nothing, so quick commands print exactly what they did
before. When stderr is a file or a pipe, nothing is drawn at all.
"""
from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

DELAY = 0.5     # seconds a task runs before its bar appears (tests set 0)


TICK = 0.5      # seconds between redraws of a bar whose work is in one long step


class TqdmHandle:
    """One tqdm bar (`relaylang.ir.progress.Handle`). A thread redraws it every `TICK`
    seconds once `DELAY` has passed, so a step that takes long (converting a model, a
    slow pass) still shows its bar and a running clock."""

    def __init__(self, label: str, total: int | None, unit: str, stream: TextIO):
        import threading

        from tqdm import tqdm
        self._bar = tqdm(total=total, desc=label, unit=unit, file=stream, leave=False,
                         delay=DELAY, dynamic_ncols=True, mininterval=0.1)
        self._closed = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="relay-progress",
                                        daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        if self._closed.wait(DELAY):
            return
        while True:
            try:
                self._bar.refresh()
            except Exception:  # noqa: BLE001 -- a stream gone away: stop drawing, not work
                return
            if self._closed.wait(TICK):
                return

    def update(self, n: int = 1, note: str | None = None) -> None:
        if note is not None:
            self._bar.set_postfix_str(note, refresh=False)
        self._bar.update(n)

    def write(self, text: str, file: TextIO) -> None:
        from tqdm import tqdm
        tqdm.write(text, file=file)

    def close(self) -> None:
        self._closed.set()
        self._ticker.join()
        self._bar.close()


def terminal_renderer(stream: TextIO) -> Any:
    """A renderer drawing tqdm bars on `stream`."""
    def render(label: str, total: int | None, unit: str) -> TqdmHandle:
        return TqdmHandle(label, total, unit, stream)
    return render


def wants_bars(quiet: bool, stream: TextIO | None = None) -> bool:
    """Whether to draw: not `quiet`, and `stream` (default stderr) is a terminal."""
    stream = stream if stream is not None else sys.stderr
    if quiet:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):    # closed or not a real stream
        return False


@contextmanager
def terminal_progress(quiet: bool) -> Iterator[None]:
    """The block with tqdm bars on stderr when `wants_bars(quiet)`, else with none (and
    without importing tqdm)."""
    from ..ir.progress import installed
    stream = sys.stderr
    if not wants_bars(quiet, stream):
        yield
        return
    try:
        import tqdm  # noqa: F401
    except ImportError:          # a broken install: work on without bars
        yield
        return
    with installed(terminal_renderer(stream)):
        yield

