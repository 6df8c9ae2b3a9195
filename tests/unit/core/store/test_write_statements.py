"""What one one-document write asks of SQLite: one transaction, no rewrite of unchanged meta.

Counted with SQLite's statement trace (``set_trace_callback``), not timed: each statement
outside a transaction is a read transaction of its own, and each rewritten row is a page more in
the commit's WAL frames (fsynced with ``autosave=True``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from tests.unit.core.store.test_vectors_wait import _saved
from workspace_tools import Workspace


@contextmanager
def _traced(ws: Workspace) -> Iterator[list[str]]:
    statements: list[str] = []
    conn = ws._db.connection()
    # "-- " lines trace the inside of a statement (a pragma function's), not one of their own
    conn.set_trace_callback(lambda s: None if s.startswith("-- ") else statements.append(s))
    try:
        yield statements
    finally:
        conn.set_trace_callback(None)


def _wal_frames(ws: Workspace) -> int:
    wal = ws._db.path.with_name(ws._db.path.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_a_one_document_write_is_one_transaction_that_rewrites_no_unchanged_meta(
    tmp_path: Path,
) -> None:
    root = _saved(tmp_path, random.Random(25), {})
    ws = Workspace(root, embedder=FakeEmbedder())  # as a process that opens an index and writes
    ws.index("first.txt", "the first write after opening\n")
    with _traced(ws) as statements:
        ids = ws.index("new.txt", "a new document about stones\n")
    assert ids == [c.id for c in ws.chunks_of("new.txt")]
    writes = [s for s in statements if not s.startswith(("SELECT", "PRAGMA"))]
    assert writes[0] == "BEGIN IMMEDIATE" and writes[-1] == "COMMIT"
    assert writes.count("BEGIN IMMEDIATE") == writes.count("COMMIT") == 1
    assert not [s for s in statements if "checkpoint" in s.lower()]
    meta_writes = [s for s in writes if re.search(r"\bmeta\b", s)]
    # The version moves; the settings, the root record and the writer's version are as stored.
    assert meta_writes == [f"UPDATE meta SET value='{ws._db.version()}' WHERE key='version'"]
    # The chunk ids come from the change: nothing is read back after the commit.
    assert statements[-1] == "COMMIT"
    # Before the transaction: the data_version check, the replaced source and the vector cache.
    before = statements[: statements.index("BEGIN IMMEDIATE")]
    assert len(before) == 3, before
    assert len(statements) <= 12, statements


@pytest.mark.slow  # seconds of writes
def test_meta_values_that_differ_are_still_written(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.index("a.txt", "alpha\n")
    with ws._db.write("test") as writer:
        writer.set_meta("written_by", "0.0.1")  # as an older release would leave it
    assert ws._db.meta("written_by") == "0.0.1"
    with _traced(ws) as statements:
        ws.index("b.txt", "beta\n")
    assert ws._db.meta("written_by") != "0.0.1"
    assert any("written_by" in s for s in statements)
    with _traced(ws) as statements:
        ws.index("c.txt", "gamma\n")
    assert not any("written_by" in s for s in statements)


def test_an_unchanged_document_returns_its_chunk_ids_without_a_write(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    first = ws.index("a.md", "# Title\n\nalpha beta\n")
    with _traced(ws) as statements:
        again = ws.index("a.md", "# Title\n\nalpha beta\n")
    assert again == first == [c.id for c in ws.chunks_of("a.md")]
    assert "BEGIN IMMEDIATE" not in statements
