"""A snapshot's files are fsynced on a small pool while the next is written (issue 25).

The guarantees stay: every file of the folder is fsynced before the folder is renamed into
place and recorded, a vocabulary term with a line break is refused, and a merge that runs as
the interpreter exits (the pool takes no work then) still writes its snapshot.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded import snapshot
from workspace_tools.core.backends.embedded import snapshot_io as _snapshot_io
from workspace_tools.core.backends.embedded.snapshot import read_pointer, write_snapshot


def _workspace(root: Path) -> Workspace:
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.index_many([(f"d{n}.txt", f"document {n} about topic {n % 7} and more") for n in range(40)])
    ws.save()
    return ws


def test_every_file_is_fsynced_before_the_folder_is_renamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path / "tree")
    synced: list[str] = []
    renamed: list[tuple[str, list[str]]] = []
    fsync_file, replace = _snapshot_io.fsync_file, os.replace

    def record_fsync(path: Path) -> None:
        fsync_file(path)
        synced.append(path.name)

    def record_replace(source: Any, target: Any) -> None:
        renamed.append((str(target), sorted(synced)))
        replace(source, target)

    monkeypatch.setattr(snapshot, "fsync_file", record_fsync)
    monkeypatch.setattr(snapshot.os, "replace", record_replace)
    ws.index("extra.txt", "one more document about topic 3")
    ws.save()
    info = read_pointer(ws._db)
    assert info is not None and renamed and renamed[-1][0] == str(info.folder)
    written = sorted(p.name for p in info.folder.iterdir())
    assert renamed[-1][1] == written  # each file fsynced once, all before the rename
    assert {"docs.npy", "scores.npy", "tf.npy", "vocab.txt"} <= set(written)
    ws.close()


def test_a_term_with_a_line_break_is_refused(tmp_path: Path) -> None:
    ws = _workspace(tmp_path / "tree")
    base = ws._state.sparse.base
    before = read_pointer(ws._db)
    with pytest.raises(ValueError, match="a vocabulary term holds a line break"):
        write_snapshot(
            ws._db,
            version=ws._db.version() + 1,
            base=base,
            vocab=["alpha", "be\nta"],
            dense=None,
            config={"bm25": {}, "embedder": None},
        )
    after = read_pointer(ws._db)
    assert after is not None and before is not None and after.folder == before.folder
    assert not list(ws.index_dir.glob(".tmp-*"))  # the staging folder went
    ws.close()
