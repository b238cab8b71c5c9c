"""The analysis worker's IdleCollector (lsp/worker.py): no automatic full garbage collection
while the server runs; the worker collects when idle or after COLLECT_EVERY analyses, and
stopping it restores Python's thresholds."""
from __future__ import annotations

import asyncio
import gc
import time
from dataclasses import dataclass
from typing import Any, Self

import pytest

from lsp import worker as worker_module
from lsp.worker import AnalysisWorker, IdleCollector


@dataclass
class Fake:
    uri: str
    version: int | None
    text: str


def _analyze(text: str, uri: str, version: int | None, previous: Any) -> Fake:
    return Fake(uri, version, text)


class FullCollections:
    """Counts generation-2 collections while in use."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            self.count += 1

    def __enter__(self) -> Self:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


async def _until(condition: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.01)


def test_full_collection_waits_for_idle_and_thresholds_come_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_module, "IDLE_COLLECT", 0.2)
    before = gc.get_threshold()

    async def main() -> None:
        collector = IdleCollector()
        assert gc.get_threshold()[2] > 10**6            # no automatic full collection
        worker = AnalysisWorker(_analyze, lambda a: None, asyncio.get_running_loop(), collector)
        with FullCollections() as full:
            worker.submit("u", 1, "text")
            assert (await worker.current("u")).version == 1
            await _until(lambda: collector.owed == 1)    # counted after the hand-over
            assert full.count == 0
            await _until(lambda: collector.owed == 0)    # quiet for IDLE_COLLECT: collected
            assert full.count == 1
            await asyncio.sleep(0.4)                     # nothing owed: no more collections
            assert full.count == 1
        worker.stop()

    asyncio.run(main())
    assert gc.get_threshold() == before


def test_full_collection_after_collect_every_analyses_without_a_pause(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_module, "IDLE_COLLECT", 60.0)
    monkeypatch.setattr(worker_module, "COLLECT_EVERY", 3)

    async def main() -> None:
        collector = IdleCollector()
        worker = AnalysisWorker(_analyze, lambda a: None, asyncio.get_running_loop(), collector)
        with FullCollections() as full:
            for version in (1, 2):
                worker.submit("u", version, f"text {version}")
                await worker.current("u")
            await _until(lambda: collector.owed == 2)
            assert full.count == 0
            worker.submit("u", 3, "text 3")
            await worker.current("u")
            await _until(lambda: collector.owed == 0)
            assert full.count == 1
        worker.stop()

    asyncio.run(main())
