"""The storage engine: incremental changes equal a full build, processes share one index,
older indexes convert, deleted text leaves the disk, racy timestamps, storage faults."""

from __future__ import annotations

import errno
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.errors import StorageError

REPO = Path(__file__).resolve().parents[4]
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "omicron",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
    "river",
    "stone",
    "cloud",
    "forest",
    "ember",
    "harbor",
    "lantern",
    "meadow",
]


def _text(rng: random.Random, number: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 40))]
    return f"Document {number} " + " ".join(words) + f" marker{number}"


def _signature(ws: Workspace, query: str, mode: str) -> list[tuple[str, float]]:
    """Hits best first; equal scores by id (their order follows row order, which may differ)."""
    hits = [(h.id, round(h.score, 6)) for h in ws.search(query, top_k=200, mode=mode)]
    return sorted(hits, key=lambda h: (-h[1], h[0]))


def _rankings(ws: Workspace) -> dict[tuple[str, str], Any]:
    out = {}
    for query in ("alpha river", "stone omega cloud", "marker7 harbor", "lantern", "zeta psi tau"):
        for mode in ("bm25", "vector", "hybrid"):
            out[(query, mode)] = _signature(ws, query, mode)
    return out


def test_incremental_writes_rank_exactly_like_a_fresh_build(tmp_path: Path) -> None:
    rng = random.Random(5)
    live: dict[str, str] = {}
    root = tmp_path / "inc"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder())
    for step in range(300):
        doc_id = f"d{rng.randrange(80)}.txt"
        if doc_id in live and rng.random() < 0.3:
            ws.remove(doc_id)
            del live[doc_id]
        else:
            live[doc_id] = _text(rng, step)
            ws.index(doc_id, live[doc_id])
        if step == 150:
            ws.save()  # a merge and a snapshot halfway, more changes after it
    fresh_root = tmp_path / "fresh"
    fresh_root.mkdir()
    fresh = Workspace(fresh_root, embedder=FakeEmbedder())
    fresh.index_many(sorted(live.items()))
    assert _rankings(ws) == _rankings(fresh)
    reopened = Workspace(root, embedder=FakeEmbedder(), read_only=True)
    assert _rankings(reopened) == _rankings(fresh)


def test_another_workspace_sees_commits_without_reopening(tmp_path: Path) -> None:
    first = Workspace(tmp_path, embedder=FakeEmbedder())
    second = Workspace(tmp_path, embedder=FakeEmbedder())
    first.index("a.md", "Alpha document about rivers.")
    assert [h.source_id for h in second.search("rivers")] == ["a.md"]
    second.index("b.md", "Beta document about rivers and stones.")
    assert {h.source_id for h in first.search("rivers", mode="bm25")} == {"a.md", "b.md"}
    assert {h.source_id for h in first.search("stones", mode="vector", top_k=1)} == {"b.md"}
    first.remove("a.md")
    assert second.source_ids() == ["b.md"] and len(second) == 1


def test_interrupted_rebuild_keeps_the_previous_index(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    ws.index("a.md", "Alpha text.")
    rebuilding = Workspace(tmp_path, embedder=None, rebuild=True)
    assert rebuilding.source_ids() == []
    del rebuilding  # "Ctrl-C" before the rebuild committed anything
    assert Workspace(tmp_path, embedder=None).source_ids() == ["a.md"]
    rebuilt = Workspace(tmp_path, embedder=None, rebuild=True)
    rebuilt.index("b.md", "Beta text.")
    assert Workspace(tmp_path, embedder=None).source_ids() == ["b.md"]


# -- format 1 -------------------------------------------------------------------------------------


# -- deleted text leaves the disk -------------------------------------------------------------------


def _disk_bytes(index: Path) -> int:
    return sum(p.stat().st_size for p in index.rglob("*") if p.is_file())


def test_adding_and_deleting_400_files_three_times_leaves_no_trace(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "keep.md").write_text("The one file that stays: keepsake.\n", encoding="utf-8")
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.sync()
    ws.save()
    index = ws.index_dir
    baseline = _disk_bytes(index)
    for round_ in range(3):
        for number in range(400):
            (root / f"f{number}.md").write_text(
                f"# File {number}\n\nuniqueterm{round_}x{number} "
                + " ".join(f"filler{round_}w{number}w{k}" for k in range(30))
                + "\n",
                encoding="utf-8",
            )
        ws.sync()
        assert len(ws.source_ids()) == 401
        for number in range(400):
            (root / f"f{number}.md").unlink()
        ws.sync()
    ws.save()
    assert ws.source_ids() == ["keep.md"]
    size = _disk_bytes(index)
    assert size <= 2 * baseline, (size, baseline)
    blobs = b"".join(p.read_bytes() for p in index.rglob("*") if p.is_file())
    assert b"keepsake" in blobs  # the live text is there (the search below reads it)
    for round_ in range(3):
        assert f"uniqueterm{round_}x7".encode() not in blobs
        assert f"filler{round_}w399w29".encode() not in blobs
    assert [h.source_id for h in ws.search("keepsake")] == ["keep.md"]
    print(f"\nsize after 3 x 400 added and deleted: {size:,} bytes (one source: {baseline:,})")


# -- racy timestamps --------------------------------------------------------------------------------


def test_same_size_edit_with_the_same_mtime_is_found(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "note.md"
    path.write_text("version AAAA\n", encoding="utf-8")
    ws = Workspace(root, embedder=None)
    ws.sync()  # written just now: within the racy window
    stamp = path.stat().st_mtime_ns
    path.write_text("version BBBB\n", encoding="utf-8")  # same size
    os.utime(path, ns=(stamp, stamp))  # and the same mtime, as on a 1-second file system
    report = ws.sync()
    assert report.updated == ["note.md"]
    assert [h.source_id for h in ws.search("BBBB")] == ["note.md"]
    assert ws.search("AAAA") == []


def test_old_unchanged_files_are_not_read_again(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    path = root / "old.md"
    path.write_text("old text\n", encoding="utf-8")
    os.utime(path, ns=(10**18, 10**18))  # 2001: far outside the racy window
    ws = Workspace(root, embedder=None)
    ws.sync()
    assert ws.source("old.md").mtime_ns == 10**18  # type: ignore[union-attr]
    report = ws.sync()
    assert report.unchanged == 1 and not report.changed


# -- storage faults -----------------------------------------------------------------------------------


def test_a_full_disk_is_a_clear_error_and_memory_equals_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    ws.index("a.md", "Alpha text about rivers.")
    from workspace_tools.core.store import database as index_db

    real = index_db.Writer.put_sources

    def full(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(index_db.Writer, "put_sources", full)
    with pytest.raises(StorageError, match="disk is full: free some space and retry"):
        ws.index("b.md", "Beta text about rivers.")
    monkeypatch.setattr(index_db.Writer, "put_sources", real)
    assert ws.source_ids() == ["a.md"]
    assert [h.source_id for h in ws.search("rivers", mode="bm25")] == ["a.md"]
    assert Workspace(tmp_path, embedder=FakeEmbedder()).source_ids() == ["a.md"]


def test_enospc_while_saving_a_snapshot_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path, embedder=None)
    ws.index("a.md", "Alpha text about rivers.")
    from workspace_tools.core.backends.embedded import snapshot

    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(snapshot.np, "save", full)
    with pytest.raises(StorageError, match="No space left on device. The disk is full"):
        ws.save()
    assert not list(ws.index_dir.glob(".tmp-*"))
    assert [h.source_id for h in ws.search("rivers")] == ["a.md"]
    assert [h.source_id for h in Workspace(tmp_path, embedder=None).search("rivers")] == ["a.md"]


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root ignores permissions")
def test_a_read_only_index_folder_is_a_clear_error(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    ws.index("a.md", "Alpha text.")
    ws._db.close()
    index = ws.index_dir
    modes = {p: p.stat().st_mode for p in [index, *index.iterdir()]}
    try:
        for path in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
        with pytest.raises(StorageError, match="not writable"):
            Workspace(tmp_path, embedder=None).index("b.md", "Beta text.")
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert Workspace(tmp_path, embedder=None).source_ids() == ["a.md"]


def test_a_read_only_workspace_writes_nothing(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    ws.index("a.md", "Alpha text about rivers.")
    before = {p: p.stat().st_mtime_ns for p in ws.index_dir.rglob("*") if p.is_file()}
    reader = Workspace(tmp_path, embedder=FakeEmbedder(), read_only=True)
    assert [h.source_id for h in reader.search("rivers")] == ["a.md"]
    after = {p: p.stat().st_mtime_ns for p in ws.index_dir.rglob("*") if p.is_file()}
    assert after == before  # with a writer open, SQLite's -wal/-shm already exist
    ws._db.close()  # the writer goes: SQLite removes its -wal and -shm files
    before = {p: p.read_bytes() for p in ws.index_dir.rglob("*") if p.is_file()}
    reader = Workspace(tmp_path, embedder=FakeEmbedder(), read_only=True)
    assert [h.source_id for h in reader.search("rivers")] == ["a.md"]
    assert {p: p.read_bytes() for p in ws.index_dir.rglob("*") if p.is_file()} == before
    writer = Workspace(tmp_path, embedder=FakeEmbedder())
    writer.index("b.md", "Beta text about rivers.")
    assert {h.source_id for h in reader.search("rivers")} == {"a.md", "b.md"}
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert Workspace(fresh, embedder=None, read_only=True).search("x") == []
    assert not (fresh / ".workspace_tools").exists()


# -- several processes ------------------------------------------------------------------------------

_WRITER = """
import sys, random
sys.path.insert(0, {repo!r})
from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
root, me, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ws = Workspace(root, embedder=FakeEmbedder())
rng = random.Random(me)
for step in range(rounds):
    doc = f"w{{me}}/d{{step}}.md"
    ws.index(doc, f"writer{{me}} step{{step}} shared words river stone")
    if step % 3 == 2:
        ws.remove(f"w{{me}}/d{{step - 1}}.md")
    print(f"done {{step}}", flush=True)
"""

_SEARCHER = """
import sys, time
sys.path.insert(0, {repo!r})
from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
root, stop = sys.argv[1], sys.argv[2]
import os
ws = Workspace(root, embedder=FakeEmbedder(), read_only=True)
searches = errors = 0
while not os.path.exists(stop):
    for mode in ("bm25", "vector", "hybrid"):
        try:
            ws.search("shared river", mode=mode, top_k=5)
            searches += 1
        except Exception as exc:
            errors += 1
            print("ERROR", type(exc).__name__, exc, flush=True)
print(f"searches {{searches}} errors {{errors}}", flush=True)
"""


def _script(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text.format(repo=str(REPO)), encoding="utf-8")
    return path


def test_four_writer_processes_and_a_searcher_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    Workspace(root, embedder=FakeEmbedder()).index("seed.md", "shared river seed")
    writer = _script(tmp_path, "writer.py", _WRITER)
    searcher = _script(tmp_path, "searcher.py", _SEARCHER)
    stop = tmp_path / "stop"
    rounds = 24
    search = subprocess.Popen(
        [sys.executable, str(searcher), str(root), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    writers = [
        subprocess.Popen(
            [sys.executable, str(writer), str(root), str(me), str(rounds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for me in range(4)
    ]
    try:
        outputs = [w.communicate(timeout=300) for w in writers]
    finally:
        stop.write_text("stop")
        searched, _ = search.communicate(timeout=120)
    for (out, err), proc in zip(outputs, writers, strict=True):
        assert proc.returncode == 0, err[-2000:]
        assert out.count("done") == rounds
    assert "ERROR" not in searched, searched[-2000:]
    searches = int(searched.split("searches ")[1].split()[0])
    assert searches > 0
    expected = {"seed.md"}
    for me in range(4):
        for step in range(rounds):
            removed = step % 3 == 1 and step + 1 < rounds
            if not removed:
                expected.add(f"w{me}/d{step}.md")
    ws = Workspace(root, embedder=FakeEmbedder())
    assert set(ws.source_ids()) == expected
    for me in range(4):
        hits = {h.source_id for h in ws.search(f"writer{me}", mode="bm25", top_k=100)}
        assert hits == {s for s in expected if s.startswith(f"w{me}/")}
    assert len(ws.search("shared river", mode="vector", top_k=500)) == len(expected)
    print(f"\nmulti-process: 4 writers x {rounds} changes, {searches} searches, 0 errors")


def test_works_where_fcntl_does_not_exist(tmp_path: Path) -> None:
    code = f"""
import sys
sys.modules["fcntl"] = None  # import fcntl now raises ImportError, as on Windows
sys.path.insert(0, {str(REPO)!r})
from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
ws = Workspace({str(tmp_path)!r}, embedder=FakeEmbedder())
for i in range(3):
    ws.index(f"d{{i}}.md", f"text number {{i}} about rivers")
ws.remove("d1.md")
ws.save()
again = Workspace({str(tmp_path)!r}, embedder=FakeEmbedder())
print(sorted(h.source_id for h in again.search("rivers")))
import importlib.util
assert "fcntl" not in {{m for m, v in sys.modules.items() if v is not None}}
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "['d0.md', 'd2.md']"


_SAVER = """
import sys
sys.path.insert(0, {repo!r})
from workspace_tools import Workspace
root, saves = sys.argv[1], int(sys.argv[2])
ws = Workspace(root, embedder=None)
for step in range(saves):
    ws.index(f"doc{{step % 7}}.md", f"saved text {{step}} river")
    if step % 100 == 99:
        ws.save()
print("saved", flush=True)
"""

_OPENER = """
import sys, os
sys.path.insert(0, {repo!r})
from workspace_tools import Workspace
root, stop = sys.argv[1], sys.argv[2]
opens = errors = 0
while not os.path.exists(stop):
    try:
        ws = Workspace(root, embedder=None, read_only=True)
        ws.search("river")
        opens += 1
    except Exception as exc:
        errors += 1
        print("ERROR", type(exc).__name__, exc, flush=True)
print(f"opens {{opens}} errors {{errors}}", flush=True)
"""


@pytest.mark.slow
def test_readers_opening_during_1000_saves_see_no_error(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    Workspace(root, embedder=None).index("doc0.md", "saved text river")
    saver = _script(tmp_path, "saver.py", _SAVER)
    opener = _script(tmp_path, "opener.py", _OPENER)
    stop = tmp_path / "stop"
    readers = [
        subprocess.Popen(
            [sys.executable, str(opener), str(root), str(stop)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for _ in range(2)
    ]
    try:
        done = subprocess.run(
            [sys.executable, str(saver), str(root), "1000"],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=600,
            check=False,
        )
    finally:
        stop.write_text("stop")
        outputs = [r.communicate(timeout=120)[0] for r in readers]
    assert done.returncode == 0, done.stderr[-2000:]
    opens = 0
    for out in outputs:
        assert "ERROR" not in out, out[-2000:]
        opens += int(out.split("opens ")[1].split()[0])
    assert opens > 0
    print(f"\nreaders: {opens} opens during 1,000 saves, 0 errors")


def test_vectors_follow_changes_made_before_they_were_loaded(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    for number in range(5):
        ws.index(f"d{number}.md", f"river stone {number} " + " ".join(WORDS[number : number + 4]))
    ws.save()
    other = Workspace(tmp_path, embedder=FakeEmbedder())
    other.index("late.md", "river stone lantern meadow")
    other.remove("d0.md")
    reader = Workspace(tmp_path, embedder=FakeEmbedder())  # snapshot older than the database
    ids = {h.source_id for h in reader.search("river", mode="vector", top_k=50)}
    assert ids == {"d1.md", "d2.md", "d3.md", "d4.md", "late.md"}
    assert np.isclose(
        reader.search("lantern meadow", mode="vector", top_k=1)[0].score,
        other.search("lantern meadow", mode="vector", top_k=1)[0].score,
    )
