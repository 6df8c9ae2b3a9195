"""A merge after a bulk write waits for the writes to stop: a bulk build merges once, at the end."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from tests.support.fresh import fresh_workspace
from tests.unit.core.store.test_storage_engine import _rankings, _text
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded import merge as _merge
from workspace_tools.core.backends.embedded import segments
from workspace_tools.core.backends.embedded.snapshot import read_pointer


@pytest.fixture
def small_bulk(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Bulk writes from 20 rows, merges past 25 changes; returns the row counts of each build."""
    monkeypatch.setattr(segments, "MERGE_MINIMUM", 25)
    monkeypatch.setattr(segments, "MERGE_FRACTION", 0.0)
    monkeypatch.setattr(_merge, "BULK_ROWS", 20)
    builds: list[int] = []
    build = _merge.build

    def counted(job: _merge.MergeJob, db: object) -> None:
        builds.append(len(job.rows))
        build(job, db)  # type: ignore[arg-type]

    monkeypatch.setattr(_merge, "build", counted)
    return builds


def _idle(ws: Workspace, timeout: float = 60.0) -> bool:
    """Wait (without hurrying it) until the backend's worker has nothing left; a hang guard."""
    deadline = time.monotonic() + timeout
    while ws._state.worker.busy() and time.monotonic() < deadline:
        time.sleep(0.01)
    return not ws._state.worker.busy()


def _batches(rng: random.Random, count: int, size: int) -> list[list[tuple[str, str]]]:
    return [
        [(f"b{b}d{n}.txt", _text(rng, 1000 * b + n)) for n in range(size)] for b in range(count)
    ]


def test_bulk_batches_one_after_another_merge_once_at_save(
    tmp_path: Path, small_bulk: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_merge, "QUIET_SECONDS", 600.0)  # only save() lets the merge start
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder())
    batches = _batches(random.Random(1), 4, 30)
    for batch in batches:  # each crosses the merge threshold
        ws.index_many(batch)
    assert small_bulk == []  # the merge waits while the batches keep coming
    ws.save()
    assert small_bulk == [120]  # one merge of everything (each batch merged: 30, 60, ...)
    info = read_pointer(ws._db)
    assert info is not None and info.version == ws._state.version
    fresh = fresh_workspace(tmp_path, [doc for batch in batches for doc in batch])
    assert _rankings(ws) == _rankings(fresh)
    assert _rankings(Workspace(root, embedder=FakeEmbedder(), read_only=True)) == _rankings(fresh)


def test_a_deferred_merge_starts_by_itself_once_the_writes_stop(
    tmp_path: Path, small_bulk: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_merge, "QUIET_SECONDS", 0.05)
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    ws.index_many(_batches(random.Random(2), 1, 30)[0])
    assert ws._state._merge_queued
    assert _idle(ws)  # nobody calls save() or hurries it
    assert small_bulk == [30]
    assert ws._state.snapshot_version == ws._state.version


def test_a_deferred_merge_does_not_wait_forever_for_writes_that_never_stop(
    tmp_path: Path, small_bulk: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_merge, "QUIET_SECONDS", 600.0)
    monkeypatch.setattr(_merge, "DEFER_LIMIT", 0.2)
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    rng = random.Random(3)
    ws.index_many(_batches(rng, 1, 30)[0])
    assert ws._state._merge_queued
    for number in range(100_000):  # small writes that keep coming
        ws.index(f"w{number}.txt", _text(rng, number))
        if small_bulk:
            break
        time.sleep(0.01)
    assert small_bulk and small_bulk[0] >= 30


def test_a_small_write_merges_at_once(tmp_path: Path, small_bulk: list[int]) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    rng = random.Random(4)
    for number in range(26):  # one document a write: never a bulk write
        ws.index(f"d{number}.txt", _text(rng, number))
    assert _idle(ws)  # at once: no wait for writes to stop
    assert small_bulk == [26]


def test_a_process_that_exits_after_a_bulk_write_merges_before_it_ends(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from workspace_tools import Workspace
        from workspace_tools.core.backends.embedded import merge as _merge
        from workspace_tools.core.backends.embedded import segments
        segments.MERGE_MINIMUM, segments.MERGE_FRACTION = 25, 0.0
        _merge.BULK_ROWS, _merge.QUIET_SECONDS, _merge.DEFER_LIMIT = 20, 3600.0, 3600.0
        ws = Workspace({str(tmp_path)!r}, embedder=None)
        ws.index_many([(f"d{{n}}.txt", f"document number {{n}} words") for n in range(40)])
        print(ws._state._merge_queued, ws._state.snapshot_version)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["True", "-1"]  # deferred, nothing merged when the script ended
    ws = Workspace(tmp_path, embedder=None, read_only=True)
    info = read_pointer(ws._db)
    assert info is not None and info.version == ws._db.version()  # merged as the process ended
