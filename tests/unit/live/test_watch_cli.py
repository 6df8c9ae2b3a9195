"""``workspace-tools watch``: follows the files in the foreground; Ctrl-C ends it with 130."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from workspace_tools.cli import main

REPO = Path(__file__).resolve().parents[3]
GUARD = 60.0  # hang guard
WATCH = ["--embedder", "none", "watch", "--debounce", "300"]


def test_watch_prints_each_sync_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("alpha words\n", encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, "-m", "workspace_tools.cli", "--root", str(tmp_path), *WATCH],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    lines: queue.Queue[str] = queue.Queue()
    assert child.stdout is not None
    out = child.stdout
    threading.Thread(target=lambda: [lines.put(line) for line in out], daemon=True).start()
    try:
        assert lines.get(timeout=GUARD).startswith(f"Watching {tmp_path}")
        assert "1 added" in lines.get(timeout=GUARD)  # the first sync
        (tmp_path / "b.md").write_text("bravo words\n", encoding="utf-8")
        assert "1 added" in lines.get(timeout=GUARD)  # the event
        (tmp_path / "a.md").unlink()
        assert "1 removed" in lines.get(timeout=GUARD)  # a sync that reads no file
        child.send_signal(signal.SIGINT)
        child.wait(timeout=GUARD)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130
    assert child.stderr is not None
    # the whole session and what the index holds (it said "indexed: 0 files checked")
    assert child.stderr.read().startswith(
        "Stopped: 3 syncs, 3 commits; index: 1 source, 1 chunk.\n"
    )


def test_watch_refuses_bad_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "--embedder", "none", "watch", "--poll", "0"]) == 2
    assert "--debounce and --poll take positive numbers" in capsys.readouterr().err
    assert not (tmp_path / ".workspace_tools").exists()
