"""Merges run beside writes: a write never waits for one, and nothing a write did is lost."""

from __future__ import annotations

import random
import threading
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
def merge_often(monkeypatch: pytest.MonkeyPatch) -> None:
    """Merge after every 25 changes, so a few hundred writes cross the threshold many times."""
    monkeypatch.setattr(segments, "MERGE_MINIMUM", 25)
    monkeypatch.setattr(segments, "MERGE_FRACTION", 0.0)


def _held_builds(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, list[bool]]:
    """Make each merge's build wait until the test lets it go; record whether it was let go."""
    release = threading.Event()
    released: list[bool] = []
    build = _merge.build

    def held(job: _merge.MergeJob, db: object) -> None:
        released.append(release.wait(timeout=60))  # False: writes waited for the merge
        build(job, db)  # type: ignore[arg-type]

    monkeypatch.setattr(_merge, "build", held)
    return release, released


def test_writes_during_a_merge_do_not_wait_and_are_replayed_on_the_new_base(
    tmp_path: Path, merge_often: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    release, released = _held_builds(monkeypatch)
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder())
    rng = random.Random(3)
    live: dict[str, str] = {}
    for step in range(30):  # crosses the threshold: a merge starts and holds in build()
        live[f"d{step}.txt"] = _text(rng, step)
        ws.index(f"d{step}.txt", live[f"d{step}.txt"])
    assert ws._state.worker.busy()  # the merge holds in build()
    for step in range(30, 60):  # while it holds: adds, edits and removals (this thread)
        doc_id = f"d{rng.randrange(45)}.txt"
        if doc_id in live and rng.random() < 0.3:
            ws.remove(doc_id)
            del live[doc_id]
        else:
            live[doc_id] = _text(rng, step)
            ws.index(doc_id, live[doc_id])
    assert released == []  # still held: one merge at a time, on the backend's worker
    release.set()
    ws._state.wait_for_background()
    assert released and all(released)  # the writes above did not wait for the held merge
    assert 0 < ws._state.snapshot_version <= ws._state.version  # adopted, later writes replayed
    fresh = fresh_workspace(tmp_path, live)
    assert _rankings(ws) == _rankings(fresh)
    assert _rankings(Workspace(root, embedder=FakeEmbedder(), read_only=True)) == _rankings(fresh)


def test_many_writes_with_merges_in_the_background_rank_like_a_fresh_build(
    tmp_path: Path, merge_often: None
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder())
    rng = random.Random(11)
    live: dict[str, str] = {}
    versions = set()
    for step in range(250):
        doc_id = f"d{rng.randrange(90)}.txt"
        if doc_id in live and rng.random() < 0.3:
            ws.remove(doc_id)
            del live[doc_id]
        else:
            live[doc_id] = _text(rng, step)
            ws.index(doc_id, live[doc_id])
        versions.add(ws._state.snapshot_version)
    ws._state.wait_for_background()
    assert len(versions) >= 3  # several merges were adopted along the way
    fresh = fresh_workspace(tmp_path, live)
    assert _rankings(ws) == _rankings(fresh)
    ws.save()
    assert _rankings(Workspace(root, embedder=FakeEmbedder(), read_only=True)) == _rankings(fresh)


def test_a_merge_dropped_by_a_reload_loses_nothing(
    tmp_path: Path, merge_often: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    release, released = _held_builds(monkeypatch)
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    rng = random.Random(4)
    live = {f"d{n}.txt": _text(rng, n) for n in range(30)}
    for doc_id, text in live.items():
        ws.index(doc_id, text)
    with ws._lock:
        ws._state.reset()  # what falling behind another process's pruned log does
    release.set()
    ws._state.wait_for_background()
    assert released == [True]
    assert _rankings(ws) == _rankings(fresh_workspace(tmp_path, live))


def test_a_failed_background_merge_is_logged_and_the_index_still_answers(
    tmp_path: Path,
    merge_often: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(job: _merge.MergeJob, db: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_merge, "build", broken)
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    rng = random.Random(6)
    live = {f"d{n}.txt": _text(rng, n) for n in range(30)}
    for doc_id, text in live.items():
        ws.index(doc_id, text)
    ws._state.wait_for_background()
    assert "Background merge of the index" in caplog.text
    assert "No space left on device" in caplog.text
    assert _rankings(ws) == _rankings(fresh_workspace(tmp_path, live))


def test_a_background_merge_reuses_the_saved_vectors_and_a_new_process_catches_up(
    tmp_path: Path, merge_often: None
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder(), hnsw_threshold=10)  # a graph is saved
    ws.search("warm", mode="vector")  # this process holds FAISS: its merges save the graph
    rng = random.Random(8)
    live: dict[str, str] = {}
    for round_ in range(2):
        for number in range(30):
            doc_id = f"r{round_}d{number}.txt"
            live[doc_id] = _text(rng, 100 * round_ + number)
            ws.index(doc_id, live[doc_id])
        ws.remove(f"r{round_}d3.txt")
        del live[f"r{round_}d3.txt"]
        ws._state.wait_for_background()
    info = read_pointer(ws._db)
    assert info is not None and info.has_dense
    assert info.dense_version < info.version  # the second merge linked the first one's file
    fresh = fresh_workspace(tmp_path, live)
    reopened = Workspace(root, embedder=FakeEmbedder(), read_only=True)
    assert _rankings(reopened) == _rankings(fresh)  # vectors caught up from the database
    ws.save()  # save() writes the index itself
    info = read_pointer(ws._db)
    assert info is not None and info.dense_version == info.version
    assert _rankings(Workspace(root, embedder=FakeEmbedder(), read_only=True)) == _rankings(fresh)


def test_save_writes_the_vectors_of_a_snapshot_whose_faiss_file_lags(
    tmp_path: Path, merge_often: None
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder(), hnsw_threshold=10)  # a graph is saved
    ws.search("warm", mode="vector")  # this process holds FAISS: its merges save the graph
    rng = random.Random(9)
    live: dict[str, str] = {}
    for number in range(52):  # a merge after 26 changes, another after 26 more
        live[f"d{number}.txt"] = _text(rng, number)
        ws.index(f"d{number}.txt", live[f"d{number}.txt"])
        if number in (25, 51):
            ws._state.wait_for_background()
    ws._state.wait_for_background()
    lagging = read_pointer(ws._db)
    assert lagging is not None and lagging.dense_version < lagging.version
    ws.save()  # nothing new for BM25, but the FAISS file is behind: saved again, same version
    saved = read_pointer(ws._db)
    assert saved is not None and saved.version == ws._state.version
    assert saved.dense_version == saved.version and saved.folder != lagging.folder
    assert [p.name for p in ws.index_dir.glob("snapshot-*")] == [saved.folder.name]
    fresh = fresh_workspace(tmp_path, live)
    assert _rankings(Workspace(root, embedder=FakeEmbedder(), read_only=True)) == _rankings(fresh)


def test_a_background_merge_gives_freed_pages_back(tmp_path: Path, merge_often: None) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=None)
    big = " ".join(f"word{n}" for n in range(3000))  # rows of several pages each
    ws.index_many([(f"d{n}.txt", f"{big} doc{n}") for n in range(60)])
    ws.save()
    database = root / ".workspace_tools" / "index" / "index.sqlite3"
    freelist = "PRAGMA freelist_count"
    size = database.stat().st_size
    for n in range(40):
        ws.remove(f"d{n}.txt")
        if ws._state.worker.busy():  # past the merge threshold of 25: a merge started
            break
    assert n < 39  # 7 chunks a document: the 4th removal crosses it
    ws._state.wait_for_background()
    assert ws._state.snapshot_version == ws._db.version()  # the background merge saved
    left = int(ws._db.connection().execute(freelist).fetchone()[0])
    assert left == 0, left  # the deleted rows' pages went back to the file system
    assert database.stat().st_size < size
