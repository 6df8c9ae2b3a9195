"""A bulk commit's WAL frames folded into the database by a background checkpoint (``_checkpoint.py``).

Nothing here is timed: the tests check which statements the writer runs around a bulk ``COMMIT``,
that the frames reach the main file once the checkpoint ran, that a small write is as before, that
``save()``, ``compact()`` and ``close()`` wait for a running checkpoint (held until the caller
either waits for it or goes on), that ``save()`` empties the WAL, and that a failing or
overlapping checkpoint loses nothing.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from tests.support.failing_commit import CommitFails
from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.background import BackgroundWorker
from workspace_tools.core.errors import StorageError
from workspace_tools.core.store import _checkpoint
from workspace_tools.core.store._checkpoint import BULK_ROWS, BackgroundCheckpoint


def _docs(count: int, *, prefix: str = "d") -> list[tuple[str, str]]:
    return [
        (f"{prefix}{n}.txt", f"pebbles {n} and rivers {n % 7} in the mountains")
        for n in range(count)
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    yield ws
    ws.close()


def _statements(ws: Workspace) -> tuple[list[str], Any]:
    seen: list[str] = []
    conn = ws._db.connection()
    conn.set_trace_callback(seen.append)
    return seen, conn


def _frames(path: Path) -> tuple[int, int]:
    """``(frames in the WAL, frames checkpointed)`` as a passive checkpoint reports them."""
    conn = sqlite3.connect(path)
    try:
        _, log, done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        conn.close()
    return int(log), int(done)


def test_a_bulk_commit_leaves_its_frames_to_a_background_checkpoint(workspace: Workspace) -> None:
    workspace.index_many(_docs(3))  # the file and its schema exist
    runs = workspace._db.checkpoints.runs
    seen, conn = _statements(workspace)
    try:
        workspace.index_many(_docs(BULK_ROWS, prefix="bulk"))
    finally:
        conn.set_trace_callback(None)
    off = seen.index("PRAGMA wal_autocheckpoint=0")
    assert "BEGIN IMMEDIATE" in seen[:off]  # inside the write transaction, right before its end
    assert seen[off + 1 : off + 3] == ["COMMIT", "PRAGMA wal_autocheckpoint=1000"]
    assert seen.count("PRAGMA wal_autocheckpoint=0") == 1  # no other commit of the call
    workspace._db.checkpoints.wait()
    assert workspace._db.checkpoints.runs == runs + 1
    log, done = _frames(workspace._db.path)
    assert log == done  # every frame of the bulk commit is in the main file now
    hits = workspace.search("pebbles 7", mode="bm25")
    assert hits and hits[0].source_id == "bulk7.txt"


def test_a_small_write_keeps_sqlites_own_checkpoint(workspace: Workspace) -> None:
    workspace.index_many(_docs(3))
    runs = workspace._db.checkpoints.runs
    seen, conn = _statements(workspace)
    try:
        workspace.index("one.txt", "a single small document")
    finally:
        conn.set_trace_callback(None)
    assert "COMMIT" in seen
    assert not [s for s in seen if "wal_autocheckpoint" in s]
    assert workspace._db.checkpoints.runs == runs


def test_a_failed_bulk_commit_turns_the_automatic_checkpoint_back_on(workspace: Workspace) -> None:
    workspace.index_many(_docs(3))
    runs = workspace._db.checkpoints.runs
    real = workspace._db.connection()
    failing = CommitFails(real)
    workspace._db._conn = failing  # type: ignore[assignment]
    try:
        with pytest.raises(StorageError, match=r"Could not save the change in .*The disk is full"):
            workspace.index_many(_docs(BULK_ROWS, prefix="lost"))
    finally:
        workspace._db._conn = real
    assert failing.failed
    off = failing.statements.index("PRAGMA wal_autocheckpoint=0")
    tail = failing.statements[off : off + 3]
    assert tail == ["PRAGMA wal_autocheckpoint=0", "COMMIT", "PRAGMA wal_autocheckpoint=1000"]
    assert int(real.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 1000
    workspace._db.checkpoints.wait()
    assert workspace._db.checkpoints.runs == runs  # nothing committed: nothing to fold in
    assert workspace.source("lost0.txt") is None


GUARD = 30.0  # hang guard, not a timing claim


def _waits(ident: int, worker: BackgroundWorker) -> bool:
    """The thread ``ident`` waits in ``worker.wait()``."""
    frame: FrameType | None = sys._current_frames().get(ident)
    while frame is not None:
        if frame.f_code is BackgroundWorker.wait.__code__ and frame.f_locals["self"] is worker:
            return True
        frame = frame.f_back
    return False


@pytest.mark.parametrize("action", ["save", "compact", "checkpoint", "close"])
def test_save_compact_and_close_wait_for_the_checkpoint(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    """The background checkpoint is held until the caller either waits for it or goes on."""
    db = workspace._db
    workspace.index_many(_docs(3))  # the file, its schema and the writer's connection exist
    # No background merge (it too waits for the checkpoint): only the caller's wait counts.
    monkeypatch.setattr(workspace._state, "_merge_soon", lambda **_: None)
    caller = threading.get_ident()
    own: list[str] = []  # the caller's own checkpoint (or vacuum) statements
    db.connection().set_trace_callback(
        lambda sql: own.append(sql) if "checkpoint(" in sql or "vacuum" in sql else None
    )
    outcome: list[str] = []
    decided = threading.Event()
    real = BackgroundCheckpoint._checkpoint

    def held(self: BackgroundCheckpoint) -> None:
        deadline = time.monotonic() + GUARD
        while not outcome:
            if own or (action == "close" and db._conn is None):
                outcome.append(f"{action} went on while the checkpoint ran")
            elif _waits(caller, db.checkpoints._worker):
                outcome.append(f"{action} waited")
            elif time.monotonic() > deadline:
                outcome.append("timed out")
            else:
                time.sleep(0.005)
        decided.set()
        real(self)

    monkeypatch.setattr(BackgroundCheckpoint, "_checkpoint", held)
    workspace.index_many(_docs(BULK_ROWS))  # a bulk commit: its checkpoint starts, held
    if action == "save":
        workspace.save()
    elif action == "compact":
        db.compact()
    elif action == "checkpoint":
        db.checkpoint()
    else:
        db.close()
    assert decided.wait(GUARD)
    assert outcome == [f"{action} waited"]
    if action != "close":
        assert own  # and ran its own checkpoint afterwards
        db.connection().set_trace_callback(None)


def test_save_empties_the_wal(workspace: Workspace) -> None:
    workspace.index_many(_docs(BULK_ROWS))
    workspace.save()
    wal = workspace._db.path.with_name(workspace._db.path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_a_checkpoint_asked_for_while_one_runs_runs_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    started = threading.Event()
    calls: list[int] = []

    def slow(self: BackgroundCheckpoint) -> None:
        calls.append(1)
        started.set()
        assert release.wait(10)

    monkeypatch.setattr(BackgroundCheckpoint, "_checkpoint", slow)
    checkpoints = BackgroundCheckpoint(tmp_path / "index.sqlite3")
    checkpoints.start()
    assert started.wait(10)
    checkpoints.start()  # the frames of a commit the running one may have missed
    checkpoints.start()  # asked twice: one more run covers both
    release.set()
    checkpoints.wait()
    assert calls == [1, 1]


def test_a_failing_checkpoint_is_logged_and_creates_no_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "gone" / "index.sqlite3"
    checkpoints = BackgroundCheckpoint(missing)
    with caplog.at_level("DEBUG", logger=_checkpoint.__name__):
        checkpoints.start()
        checkpoints.wait()
    assert checkpoints.runs == 1
    assert "background checkpoint of" in caplog.text and "failed" in caplog.text
    assert not missing.parent.exists()
