"""Counts and sync progress within folders of the root (an MCP session's roots, issue 29)."""

from __future__ import annotations

from pathlib import Path

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.workspace._progress import SyncProgress


def _project(tmp_path: Path) -> Workspace:
    for rel in ("src/a.py", "src/app/b.py", "docs/c.md", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("\n\n".join(f"line {i} of {rel}" for i in range(3)), "utf-8")
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.sync(show_progress=False)
    return ws


def test_stats_within_count_the_sources_and_chunks_inside(tmp_path: Path) -> None:
    ws = _project(tmp_path)
    whole = ws.stats()
    src = ws.stats(within=["src"])
    assert (whole["sources"], src["sources"]) == (4, 2)
    chunks = sum(len(ws.chunks_of(s)) for s in ("src/a.py", "src/app/b.py"))
    assert src["chunks"] == chunks < whole["chunks"]
    assert src["vectors"] == chunks  # every chunk has a vector, so the ones inside do
    assert ws.stats(within=["src/app", "docs/"])["sources"] == 2
    assert ws.stats(within=[])["sources"] == 0
    assert ws.stats(within=["."]) == whole


def test_sync_progress_within_counts_the_files_inside_in_reading_order() -> None:
    files = ("docs/a.md", "src/a.py", "src/b.py", "x.txt", "src/c.py")
    progress = SyncProgress(
        running=True, files_total=5, files_done=4, files_committed=3, files=files
    )
    inside = progress.within(("src",))
    assert (inside.files_total, inside.files_done, inside.files_committed) == (3, 2, 2)
    assert inside.line() == "indexing: 2 of 3 files"
    assert progress.within(None) is progress
