"""Crash safety: SIGKILL in the middle of sync()/save() never leaves an unloadable or mixed index.

A child process (``crash_child.py``, a fresh interpreter) keeps changing the files of a workspace
and syncing it; the parent kills it with SIGKILL at seeded random moments, then reopens the index
and checks it equals the state of the last completed save or of the interrupted one, never
anything else. The next child is started (and has imported everything) while the previous one
runs, so the kills cost little wall time.

The second half damages every file of a saved index (the database and the derived snapshot) in
several ways and checks that loading either raises :class:`IndexCorruptError` naming
``rebuild=True`` or heals itself with identical results; never an obscure traceback. And no
pickle anywhere.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from tests.support.paths import REPO
from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.workspace import Workspace

KILLS = 25


def _start_child(root: Path, log: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.unit.reliability.crash_child", str(root), str(log)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=REPO,
        text=True,
    )


def _go(child: subprocess.Popen[str]) -> None:
    """Wait until the child has imported everything, then let it start working."""
    assert child.stdout is not None and child.stdin is not None
    line = child.stdout.readline()
    assert line.strip() == "ready", line
    child.stdin.write("go\n")
    child.stdin.flush()


def _records(log: Path) -> list[dict[str, Any]]:
    out = []
    if not log.exists():
        return out
    text = log.read_text(encoding="utf-8")
    for line in text.split("\n")[:-1]:  # the last piece is "" or a line cut by the kill
        out.append(json.loads(line))
    return out


def _allowed_states(
    records: list[dict[str, Any]], before: dict[str, list[Any]] | None
) -> list[dict[str, list[Any]] | None]:
    """States the index may hold after a kill: the last completed save (or, if the child completed
    none, the state ``before`` it started), and the save it was in the middle of, if any."""
    committed = before
    pending: dict[str, list[Any]] | None = None
    states: dict[int, dict[str, list[Any]]] = {}
    for record in records:
        if record["event"] == "pending":
            states[record["version"]] = record["state"]
            pending = record["state"]
        else:
            committed = states[record["version"]]
            pending = None
    allowed: list[dict[str, list[Any]] | None] = [committed]
    if pending is not None:
        allowed.append(pending)
    return allowed


def _index_state(root: Path) -> dict[str, list[Any]] | None:
    """What the index holds, read by a read-only workspace that is closed before returning.

    Closed, database connection included: a connection left open keeps SQLite's WAL index
    (``-shm``) alive across the next kill, and a writer killed in its COMMIT after writing the
    WAL frames but before publishing them in that index leaves a transaction that readers
    sharing it do not see, while the first connection after every one closed recovers it from
    the WAL: the state read after one kill would come back different later, with no writer.
    """
    ws = Workspace(root, embedder=FakeEmbedder(), read_only=True)
    try:
        return _read_state(ws)
    finally:
        ws.close()
        ws._db.close()


def _read_state(ws: Workspace) -> dict[str, list[Any]] | None:
    if not ws.source_ids():
        return None
    state = {}
    for source_id in ws.source_ids():
        record = ws.source(source_id)
        assert record is not None
        state[source_id] = record.content_hash
    # Every search answers from the same generation: the marker of each file finds that file.
    markers = {}
    for source_id in ws.source_ids():
        text = "\n".join(c.text for c in ws.chunks_of(source_id))
        marker = re.search(r"tok\d+x\d+", text)
        assert marker is not None
        markers[source_id] = marker.group()
        hits = ws.search(marker.group(), top_k=3, mode="bm25")
        assert hits and hits[0].source_id == source_id, (marker.group(), hits)
        for mode in ("vector", "hybrid"):
            for hit in ws.search(marker.group(), top_k=10, mode=mode):
                chunks = {c.id: c.text for c in ws.chunks_of(hit.source_id)}
                assert chunks.get(hit.id) == hit.content, (mode, hit.id)
    return {sid: [state[sid], markers[sid]] for sid in state}


@pytest.mark.slow
def test_sigkill_during_sync_leaves_the_state_before_or_after(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    log = tmp_path / "commits.jsonl"
    rng = random.Random(20240609)
    survived = 0
    before: dict[str, list[Any]] | None = None
    mid_save = 0  # kills that landed while a sync/save was in progress
    outcomes = {"before": 0, "after": 0, "empty": 0}
    child = _start_child(root, log)
    following = child
    started = time.monotonic()
    try:
        for _kill in range(KILLS):
            seen = len(_records(log))
            _go(child)
            following = _start_child(root, log)  # imports while this one works
            time.sleep(rng.uniform(0.02, 0.3))
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            assert child.returncode == -signal.SIGKILL
            allowed = _allowed_states(_records(log)[seen:], before)
            mid_save += len(allowed) == 2
            state = _index_state(root)
            before = state
            assert state in allowed, f"kill {_kill}: index {state} not in {allowed}"
            if state is None:
                outcomes["empty"] += 1
            elif state == allowed[0]:
                outcomes["before"] += 1
            else:
                outcomes["after"] += 1
            survived += 1
            child = following
    finally:
        for proc in (child, following):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    elapsed = time.monotonic() - started
    versions = len([r for r in _records(log) if r["event"] == "done"])
    print(
        f"\ncrash safety: {survived} SIGKILLs survived in {elapsed:.1f} s, {versions} saves "
        f"completed; index equal to the last completed save {outcomes['before']}x, to the "
        f"interrupted one {outcomes['after']}x, empty {outcomes['empty']}x; {mid_save} kills "
        "landed during a sync"
    )
    assert survived == KILLS
    assert versions >= 1 and mid_save >= 5, (versions, mid_save)  # kills landed amid real saves
    # No stale staging folders or snapshots pile up: the next snapshot collects them.
    ws = Workspace(root, embedder=FakeEmbedder())
    (root / "after.md").write_text("A change, so that sync saves.\n", encoding="utf-8")
    ws.sync()
    ws.save()
    leftovers = [p.name for p in ws.index_dir.iterdir() if p.name.startswith(".tmp-")]
    assert not leftovers, leftovers
    assert len(list(ws.index_dir.glob("snapshot-*"))) == 1


# -- tampered and truncated files ---------------------------------------------------------------


def _build(tmp_path: Path) -> tuple[Path, list[str]]:
    root = tmp_path / "base"
    root.mkdir()
    for number in range(8):
        (root / f"doc{number}.md").write_text(
            f"# Doc {number}\n\nAlpha beta gamma {number}.\n\n## Part\n\n"
            + f"Searching delta epsilon marker{number}.\n" * 40,
            encoding="utf-8",
        )
    ws = Workspace(root, embedder=FakeEmbedder(), chunking=None, hnsw_threshold=5)
    ws.sync()
    ws.search("alpha", mode="vector")  # FAISS loaded: the removal below tombstones a node
    (root / "doc7.md").unlink()  # a tombstone in the graph, so its files are all there
    ws.sync()
    ws.save()  # a snapshot too, so its files are damaged as well
    answers = [json.dumps([r.to_dict() for r in ws.search(q, top_k=5)]) for q in QUERIES]
    ws._db.close()
    return root, answers


QUERIES = ["alpha", "marker3 searching", "delta epsilon", "gamma 7"]


def _damages(data: bytes, rng: random.Random) -> dict[str, bytes | None]:
    middle = len(data) // 2
    flipped = bytearray(data)
    for _ in range(max(1, len(data) // 50)):
        i = rng.randrange(len(data)) if data else 0
        if data:
            flipped[i] ^= 0xFF
    return {
        "deleted": None,
        "empty": b"",
        "half": data[:middle],
        "last byte cut": data[:-1],
        "garbage": bytes(rng.randrange(256) for _ in range(max(16, min(len(data), 4096)))),
        "bytes flipped": bytes(flipped),
        "header only": data[:16],
    }


@pytest.mark.slow  # opens every damaged file
def test_every_damaged_index_file_gives_a_clear_error_or_heals(tmp_path: Path) -> None:
    base, answers = _build(tmp_path)
    index = base / ".workspace_tools" / "index"
    files = sorted(p.relative_to(index).as_posix() for p in index.rglob("*") if p.is_file())
    snapshot = next(index.glob("snapshot-*")).name
    assert "index.sqlite3" in files
    graph = ("dense.graph", "dense.ids.npy", "dense.dead.npy", "dense.deadcodes.npy")
    for expected in ("vocab.txt", "keys.npy", "lengths.npy", "scores.npy", *graph):
        assert f"{snapshot}/{expected}" in files
    rng = random.Random(7)
    tried, refused, healed, problems = 0, 0, 0, []
    rebuilt_once: set[str] = set()
    for rel in files:
        original = (index / rel).read_bytes()
        for how, damaged in _damages(original, rng).items():
            case = tmp_path / "case"
            if case.exists():
                shutil.rmtree(case)
            shutil.copytree(base, case, symlinks=True)
            target = case / ".workspace_tools" / "index" / rel
            if damaged is None:
                target.unlink()
            else:
                target.write_bytes(damaged)
            tried += 1
            try:
                ws = Workspace(case, embedder=FakeEmbedder())
                got = [json.dumps([r.to_dict() for r in ws.search(q, top_k=5)]) for q in QUERIES]
            except IndexCorruptError as exc:
                if "rebuild=True" not in str(exc):
                    problems.append(f"{rel} {how}: message does not say rebuild=True: {exc}")
                refused += 1
                if rel in rebuilt_once:
                    continue
                rebuilt_once.add(rel)
                rebuilt = Workspace(case, embedder=FakeEmbedder(), rebuild=True)
                rebuilt.sync()
                got = [
                    json.dumps([r.to_dict() for r in rebuilt.search(q, top_k=5)]) for q in QUERIES
                ]
                if got != answers:
                    problems.append(f"{rel} {how}: rebuild gives other results")
                continue
            except Exception as exc:
                problems.append(f"{rel} {how}: {type(exc).__name__}: {str(exc)[:200]}")
                continue
            if got != answers:
                problems.append(f"{rel} {how}: loaded silently with different results")
            else:
                healed += 1
    print(
        f"\ntampering: {tried} damaged files ({len(files)} files x 7 damages): "
        f"{refused} refused with IndexCorruptError, {healed} healed with identical results"
    )
    assert not problems, "\n".join(problems)


def test_a_damaged_snapshot_record_is_rebuilt_from_the_database(tmp_path: Path) -> None:
    import sqlite3

    base, answers = _build(tmp_path)
    database = base / ".workspace_tools" / "index" / "index.sqlite3"
    for text in ("", '{"folder": "snapshot-9999999999"}', '{"folder": "../../etc"}', "garbage"):
        with sqlite3.connect(database) as conn:
            conn.execute("UPDATE meta SET value=? WHERE key='snapshot'", (text,))
        conn.close()
        ws = Workspace(base, embedder=FakeEmbedder(), read_only=True)
        got = [json.dumps([r.to_dict() for r in ws.search(q, top_k=5)]) for q in QUERIES]
        assert got == answers, text
        ws._db.close()


def test_no_pickle_anywhere() -> None:
    package = REPO / "workspace_tools"
    offenders = []
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if re.search(
                r"\bimport pickle\b|\bfrom pickle\b|\bpickle\.(?:loads?|dumps?|Unpickler)\b|cPickle|joblib|\bdill\b",
                line,
            ):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
            if "allow_pickle=True" in line:
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
            if re.search(r"\bnp\.load\(", line) and "allow_pickle=False" not in line:
                offenders.append(
                    f"{path.relative_to(REPO)}:{number}: np.load without allow_pickle=False"
                )
    assert not offenders, offenders


def test_saved_arrays_hold_no_objects(tmp_path: Path) -> None:
    base, _answers = _build(tmp_path)
    snapshot = next((base / ".workspace_tools" / "index").glob("snapshot-*"))
    arrays = list(snapshot.rglob("*.npy"))
    assert arrays
    for path in arrays:
        array = np.load(path, allow_pickle=False)  # raises on any pickled object array
        assert array.dtype != object
