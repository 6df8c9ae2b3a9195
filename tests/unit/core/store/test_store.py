from __future__ import annotations

from pathlib import Path

import pytest

from workspace_tools import Workspace
from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store._format1.generations import IndexStore


def test_generations_and_pointer(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "idx")
    assert store.current() is None
    first = store.save(lambda folder: (folder / "a.txt").write_text("1"))
    second = store.save(lambda folder: (folder / "a.txt").write_text("2"))
    assert store.current() == second and not first.exists()
    assert (second / "a.txt").read_text() == "2"


def test_failed_write_keeps_previous_generation(tmp_path: Path) -> None:
    store = IndexStore(tmp_path / "idx")
    good = store.save(lambda folder: (folder / "a.txt").write_text("good"))

    def broken(folder: Path) -> None:
        (folder / "a.txt").write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        store.save(broken)
    assert store.current() == good
    assert not any(p.name.startswith(".tmp-") for p in (tmp_path / "idx").iterdir())


def test_damaged_database_gives_a_clear_error_and_rebuild_recovers(tree: Path) -> None:
    ws = Workspace(tree, embedder=None)
    ws.sync()
    expected = [h.id for h in ws.search("install")]
    ws._db.close()
    (ws.index_dir / "index.sqlite3-wal").unlink(missing_ok=True)
    (ws.index_dir / "index.sqlite3").write_bytes(b"not a database at all" * 100)
    with pytest.raises(IndexCorruptError, match="damaged.*rebuild=True"):
        Workspace(tree, embedder=None).search("install")
    rebuilt = Workspace(tree, embedder=None, rebuild=True)
    rebuilt.sync()
    assert [h.id for h in rebuilt.search("install")] == expected


def test_damaged_snapshot_is_rebuilt_from_the_database(tree: Path) -> None:
    ws = Workspace(tree, embedder=None)
    ws.sync()
    ws.save()
    expected = [(h.id, h.score) for h in ws.search("install package")]
    snapshot = next(ws.index_dir.glob("snapshot-*"))
    (snapshot / "scores.npy").write_bytes(b"garbage")
    reopened = Workspace(tree, embedder=None)
    assert [(h.id, h.score) for h in reopened.search("install package")] == expected


def test_no_pickle_files_in_the_index(tree: Path) -> None:
    from tests.support.fakes import FakeEmbedder

    ws = Workspace(tree, embedder=FakeEmbedder())
    ws.sync()
    ws.save()
    names = {p.suffix for p in ws.index_dir.rglob("*") if p.is_file()}
    assert ".pkl" not in names and ".pickle" not in names
    snapshot = next(ws.index_dir.glob("snapshot-*"))
    assert not list(snapshot.glob("dense.*"))  # flat: its vectors are the database's
    graph = Workspace(tree, embedder=FakeEmbedder(), hnsw_threshold=1)
    graph.index("more.txt", "one more text")
    graph.save()
    snapshot = next(graph.index_dir.glob("snapshot-*"))
    assert (snapshot / "dense.graph").exists() and not (snapshot / "dense.faiss").exists()
