"""The first vector search after opening maps the snapshot's flat index: no vector is read first.

Its codes are copied into memory and its CRC-32 checked on the backend's worker; a damaged file
is dropped (the next vector search reads the database) and not mapped again.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from tests.support.fresh import fresh_workspace
from tests.unit.core.store.test_storage_engine import _rankings, _text
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded import hnsw_build
from workspace_tools.core.backends.embedded.snapshot import read_pointer
from workspace_tools.core.store.database import IndexDatabase

pytest.importorskip("faiss")


def _saved(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "ws"
    root.mkdir()
    rng = random.Random(5)
    live = {f"d{n}.txt": _text(rng, n) for n in range(40)}
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.index_many(sorted(live.items()))
    ws.save()
    info = read_pointer(ws._db)
    assert info is not None and "dense.flat.faiss" in info.files
    return root, live


def test_the_first_vector_search_maps_the_saved_index_and_reads_no_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, live = _saved(tmp_path)

    def no_table(*_: object, **__: object) -> None:
        raise AssertionError("every vector was read from the database")

    monkeypatch.setattr(IndexDatabase, "vector_table", no_table)
    ws = Workspace(root, embedder=FakeEmbedder())
    assert _rankings(ws) == _rankings(fresh_workspace(tmp_path, live))
    dense = ws._state.dense
    assert dense is not None
    ws._state.wait_for_background()
    assert not dense._mapped  # copied into memory on the worker, not by a write
    ws.index("new.txt", "a new document after the copy")
    live["new.txt"] = "a new document after the copy"
    (tmp_path / "again").mkdir()
    assert _rankings(ws) == _rankings(fresh_workspace(tmp_path / "again", live))


def test_a_damaged_flat_index_file_is_dropped_and_the_database_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root, live = _saved(tmp_path)
    ws = Workspace(root, embedder=FakeEmbedder())
    info = read_pointer(ws._db)
    assert info is not None
    path = info.folder / "dense.flat.faiss"
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF  # a vector's code: the same size, mapped, found by the CRC-32
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        ws.search("alpha", mode="vector")
        ws._state.wait_for_background()
    assert "The vector index file of" in caplog.text and "is damaged" in caplog.text
    assert ws._state.dense is None  # dropped: the next vector search reads the database
    assert _rankings(ws) == _rankings(fresh_workspace(tmp_path, live))
    assert ws._state._flat_refused == info.folder  # and the file is not mapped again


def test_a_write_crossing_the_graph_threshold_leaves_the_copy_to_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handed: list[bool] = []
    real = hnsw_build.GraphBuild.__init__

    def recording(
        self: hnsw_build.GraphBuild,
        graph: object,
        covered: object,
        ids: object,
        codes: object,
        keep: list[object],
    ) -> None:
        handed.append(callable(codes))
        real(self, graph, covered, ids, codes, keep)  # type: ignore[arg-type]

    monkeypatch.setattr(hnsw_build.GraphBuild, "__init__", recording)
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), hnsw_threshold=10)
    rng = random.Random(6)
    for n in range(12):
        ws.index(f"d{n}.txt", _text(rng, n))
    ws._state.wait_for_background()
    assert handed and handed[0]  # the write passed a function: the worker copies the codes
    dense = ws._state.dense
    assert dense is not None
    dense.wait_for_graph()
    assert dense.kind == "hnsw" and len(dense) == 12
