from __future__ import annotations

from pathlib import Path

import pytest

from workspace_tools import Workspace
from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store.generations import IndexStore


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


def test_damaged_pointer_and_files_give_clear_errors(tree: Path) -> None:
    ws = Workspace(tree, embedder=None)
    ws.sync()
    (ws.index_dir / "CURRENT").write_text("gen-999999")
    with pytest.raises(IndexCorruptError, match="not a saved generation.*rebuild=True"):
        Workspace(tree, embedder=None)
    rebuilt = Workspace(tree, embedder=None, rebuild=True)
    rebuilt.sync()
    folder = IndexStore(rebuilt.index_dir).current()
    assert folder is not None
    (folder / "manifest.json").write_text("{truncated")
    with pytest.raises(IndexCorruptError, match="missing or damaged"):
        Workspace(tree, embedder=None)


def test_no_pickle_files_in_the_index(tree: Path) -> None:
    from tests.support.fakes import FakeEmbedder

    ws = Workspace(tree, embedder=FakeEmbedder())
    ws.sync()
    names = {p.suffix for p in ws.index_dir.rglob("*") if p.is_file()}
    assert ".pkl" not in names and ".pickle" not in names
    folder = IndexStore(ws.index_dir).current()
    assert folder is not None and (folder / "dense.faiss").exists()
