"""Kill tests: a first index stopped part-way keeps its committed batches; the next sync
embeds only the rest (SIGKILL through the API, SIGINT through ``workspace-tools index``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.workspace import Workspace

FILES = 300
BATCH = 25
REPO = Path(__file__).resolve().parents[3]


def make_tree(root: Path) -> None:
    for number in range(FILES):
        (root / f"note{number:03}.md").write_text(
            f"# Note {number}\n\nUnique marker word{number} about topic {number % 7}.\n",
            encoding="utf-8",
        )


def run_until_embedded(root: Path, how: str, *, calls: int, signum: int) -> subprocess.Popen[str]:
    """Start the child, wait for ``calls`` embedder calls, send ``signum``, wait for the end."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.unit.live.resume_child", str(root), how],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert child.stdout is not None
        seen = 0
        for line in child.stdout:
            if line.startswith("embedded"):
                seen += 1
                if seen == calls:
                    child.send_signal(signum)
                    break
        child.wait(timeout=60)  # hang guard
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child


def resume(root: Path) -> tuple[int, int, int]:
    """(sources committed before, files added by the next sync, texts it embedded)."""
    embedder = FakeEmbedder(max_batch_size=BATCH)
    ws = Workspace(root, embedder=embedder)
    committed = len(ws.source_ids())
    report = ws.sync()
    assert len(ws.source_ids()) == FILES
    assert report.chunks_embedded == embedder.texts_embedded
    return committed, len(report.added), embedder.texts_embedded


def test_sigkill_part_way_keeps_committed_batches(tmp_path: Path) -> None:
    make_tree(tmp_path)
    child = run_until_embedded(tmp_path, "api", calls=4, signum=signal.SIGKILL)
    assert child.returncode == -signal.SIGKILL
    committed, added, embedded = resume(tmp_path)
    # Four batches were embedded when the kill came: at least three are committed, not all.
    assert BATCH * 3 <= committed < FILES
    assert committed % BATCH == 0
    assert added == FILES - committed  # only what was not committed is read as new...
    assert embedded == FILES - committed  # ...and embedded (one chunk per file)


def test_sigint_of_the_cli_reports_progress_and_keeps_batches(tmp_path: Path) -> None:
    make_tree(tmp_path)
    child = run_until_embedded(tmp_path, "cli", calls=3, signum=signal.SIGINT)
    assert child.returncode == 130
    assert child.stderr is not None
    err = child.stderr.read()
    committed, added, embedded = resume(tmp_path)
    assert f"committed {committed} of {FILES} files" in err
    assert "workspace-tools index` again continues" in err
    assert BATCH * 2 <= committed < FILES
    assert added == embedded == FILES - committed


@pytest.mark.parametrize("batch_files", [BATCH])
def test_a_sync_commits_bounded_batches(tmp_path: Path, batch_files: int) -> None:
    make_tree(tmp_path)
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    ws.batch_files = batch_files
    report = ws.sync()
    assert report.commits == FILES // batch_files
    assert ws.sync_progress.files_committed == FILES
    assert ws.sync_progress.commits == report.commits
    assert not ws.sync_progress.running
    assert ws.sync().commits == 0  # nothing changed: nothing written
