"""A write's rows are freed when it ends, not at the next garbage collection."""

from __future__ import annotations

import gc
from pathlib import Path

from workspace_tools import Workspace
from workspace_tools.core.backends.embedded.segments import SparseSegments
from workspace_tools.core.store._writer import Writer


def _writers() -> list[Writer]:
    return [o for o in gc.get_objects() if isinstance(o, Writer)]


def test_no_writer_outlives_its_write(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, config=False)
    ws.index("warm.txt", "the first write opens the database")
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()  # only reference counts free what the writes leave
    try:
        ws.index("one.txt", "cells counted on day one")  # a small change (its ids made ahead)
        ws.index_many([(f"d{n}.txt", f"samples of day {n} and their cells") for n in range(300)])
        ws.remove("one.txt")
        assert _writers() == []  # each Writer (and every row it held) went with its write
    finally:
        if enabled:
            gc.enable()
    assert ws.search("cells day 7", mode="bm25", top_k=1)[0].source_id == "d7.txt"


def test_a_merged_away_bm25_state_is_freed_by_reference_counts(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, config=False)
    ws.index_many([(f"d{n}.txt", f"samples of day {n} and their cells") for n in range(300)])
    ws.save()
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for n in range(3):  # each save merges into a new base: the old state must go at once
            ws.index(f"new{n}.txt", f"cells of the new day {n}")
            ws.save()
        states = [o for o in gc.get_objects() if isinstance(o, SparseSegments)]

        assert states == [ws._state.sparse]
    finally:
        if enabled:
            gc.enable()
    assert ws.search("cells new day 2", mode="bm25", top_k=1)[0].source_id == "new2.txt"
