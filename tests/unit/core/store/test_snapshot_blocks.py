"""The per-block CRC-32s of a snapshot's postings: 16 KiB blocks, 64 KiB ones still read.

A query's first read checks the blocks its terms' postings lie in; smaller blocks check fewer
bytes that no query asked for (issue 25: first-pass queries/s). Snapshots written with 64 KiB
blocks before keep opening without a rebuild.
"""

from __future__ import annotations

import gc
import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded.snapshot import read_pointer
from workspace_tools.core.backends.embedded.snapshot_checks import (
    BLOCK_BYTES,
    BlockChecks,
    block_crcs,
)
from workspace_tools.core.errors import IndexCorruptError

_QUERY = "marker7 searching delta epsilon alpha beta gamma part doc"


def _build(root: Path, documents: int = 60) -> Path:
    root.mkdir()
    for number in range(documents):
        (root / f"doc{number}.md").write_text(
            f"# Doc {number}\n\nAlpha beta gamma {number}.\n\n## Part\n\n"
            + f"Searching delta epsilon marker{number} word{number % 7}.\n" * 40,
            encoding="utf-8",
        )
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.sync()
    ws.save()
    del ws
    gc.collect()
    return root / ".workspace_tools" / "index" / "index.sqlite3"


def _record(database: Path) -> dict[str, object]:
    conn = sqlite3.connect(database)
    try:
        (raw,) = conn.execute("SELECT value FROM meta WHERE key='snapshot'").fetchone()
    finally:
        conn.close()
    return dict(json.loads(raw))


def test_a_new_snapshot_records_16_kib_blocks(tmp_path: Path) -> None:
    database = _build(tmp_path / "ws")
    record = _record(database)
    assert record["block_bytes"] == BLOCK_BYTES == 1 << 14
    folder = database.parent / str(record["folder"])
    blocks = record["blocks"]
    assert isinstance(blocks, dict)
    for name, crcs in blocks.items():
        size = np.load(folder / name, mmap_mode="r").nbytes
        assert len(crcs) == -(-size // (1 << 14)), name


def _as_64_kib(database: Path) -> None:
    """Rewrite the record as a snapshot written before 16 KiB blocks (64 KiB ones)."""
    record = _record(database)
    folder = database.parent / str(record["folder"])
    blocks = record["blocks"]
    assert isinstance(blocks, dict)
    record["blocks"] = {
        name: block_crcs(np.load(folder / name, allow_pickle=False), 1 << 16) for name in blocks
    }
    record["block_bytes"] = 1 << 16
    conn = sqlite3.connect(database)
    with conn:
        conn.execute("UPDATE meta SET value=? WHERE key='snapshot'", (json.dumps(record),))
    conn.close()


def test_a_snapshot_of_another_layout_is_rebuilt_from_the_database(tmp_path: Path) -> None:
    database = _build(tmp_path / "ws")
    ws = Workspace(tmp_path / "ws", embedder=FakeEmbedder(), read_only=True)
    before = [(r.id, r.score) for r in ws.search(_QUERY, mode="bm25", top_k=20)]
    del ws
    _as_64_kib(database)  # the block size of snapshots written before
    ws = Workspace(tmp_path / "ws", embedder=FakeEmbedder(), read_only=True)
    assert ws._state.sparse.base.verify is None  # not read: built from the stored texts
    assert [(r.id, r.score) for r in ws.search(_QUERY, mode="bm25", top_k=20)] == before


def _checks(array: np.ndarray, *, damaged: int | None = None) -> BlockChecks:
    crcs = block_crcs(array)
    if damaged is not None:
        crcs[damaged] ^= 1
    base = SimpleNamespace(keys=np.arange(1 << 20), docs=array)
    return BlockChecks(base, {"docs.npy": crcs}, folder=Path("snap"), vocabulary=10)  # type: ignore[arg-type]


def test_a_read_checks_only_the_blocks_it_lies_in_once() -> None:
    per_block = BLOCK_BYTES // 4
    checks = _checks(np.arange(10 * per_block, dtype=np.int32))
    assert checks.left == 10
    checks("docs", 3 * per_block + 5, 3 * per_block + 9)  # inside block 3
    assert checks.left == 9
    checks("docs", 3 * per_block, 5 * per_block + 1)  # blocks 3 (done), 4 and 5
    assert checks.left == 7
    checks("docs", 0, 10 * per_block)
    assert checks.left == 0


def test_a_damaged_block_inside_a_run_is_refused_and_left_unchecked() -> None:
    per_block = BLOCK_BYTES // 4
    checks = _checks(np.arange(10 * per_block, dtype=np.int32), damaged=6)
    with pytest.raises(IndexCorruptError) as caught:
        checks("docs", 2 * per_block, 9 * per_block)
    message = str(caught.value)
    assert "block 6 of docs.npy fails its CRC-32" in message and "rebuild=True" in message
    with pytest.raises(IndexCorruptError, match="block 6 of docs.npy"):
        checks("docs", 6 * per_block, 6 * per_block + 1)  # still refused on the next read
    checks("docs", 0, 6 * per_block)  # the blocks before it are fine
    assert checks.left == 4  # blocks 6..9


def test_values_out_of_range_in_a_run_are_refused() -> None:
    per_block = BLOCK_BYTES // 4
    array = np.zeros(4 * per_block, dtype=np.int32)
    array[2 * per_block + 7] = 1 << 21  # a row past the base's rows
    checks = _checks(array)
    with pytest.raises(IndexCorruptError, match=r"docs\.npy does not fit the other arrays"):
        checks("docs", 0, 4 * per_block)
    assert checks.left == 4


def test_the_record_is_parsed_once_while_it_stays_the_same(tmp_path: Path) -> None:
    """Each write asks whether FAISS may wait, which reads the record (its CRC lists: 0.7 ms)."""
    _build(tmp_path / "ws")
    ws = Workspace(tmp_path / "ws", embedder=FakeEmbedder())
    first = read_pointer(ws._db)
    assert first is not None and read_pointer(ws._db) is first
    ws.index("new.md", "alpha beta")
    assert read_pointer(ws._db) is first  # a write leaves the record as it was
    ws.save()
    saved = read_pointer(ws._db)
    assert saved is not None and saved is not first and saved.version > first.version
    other = Workspace(tmp_path / "ws", embedder=FakeEmbedder(), read_only=True)
    assert read_pointer(other._db) == saved
