"""A snapshot of the previous layout still opens and ranks the same; the new one is smaller.

The previous layout kept per-row term lists (``terms.npy`` + ``offsets.npy``), ``float32`` term
frequencies, ``vocab.json`` and whole-file CRC-32s; the current one keeps ``lengths.npy``,
``uint8``/``uint16`` term frequencies, ``vocab.txt`` and per-block CRC-32s of the postings. A
deletion and a merge read a row's terms from the postings instead.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np

from workspace_tools import Workspace
from workspace_tools.core.backends.embedded.snapshot import read_pointer


def _crc(path: Path) -> str:
    return f"{zlib.crc32(path.read_bytes()):08x}"


def _fill(root: Path) -> Workspace:
    ws = Workspace(root, embedder=None)
    for number in range(40):
        words = " ".join(f"w{(number * 7 + k) % 53}" for k in range(30 + number % 9))
        ws.index(f"d{number}.md", f"# Doc {number}\n\n{words} repeated w1 w1 w2.\n")
    ws.save()
    return ws


def _rankings(ws: Workspace) -> list[list[tuple[str, float]]]:
    return [
        [(h.id, h.score) for h in ws.search(q, mode="bm25", top_k=15)]
        for q in ("w1 w2", "w7 w30 w52", "doc repeated", "w11")
    ]


def _as_previous_layout(ws: Workspace) -> None:
    """Rewrite the current snapshot the way the previous code wrote it."""
    info = read_pointer(ws._db)
    assert info is not None
    folder = info.folder
    docs = np.load(folder / "docs.npy")
    indptr = np.load(folder / "indptr.npy")
    tf = np.load(folder / "tf.npy")
    rows = len(np.load(folder / "keys.npy"))
    order = np.argsort(docs, kind="stable")
    ids = np.repeat(np.arange(len(indptr) - 1, dtype=np.int32), np.diff(indptr))[order]
    terms = np.repeat(ids, tf[order].astype(np.int64)).astype(np.int32)
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.load(folder / "lengths.npy").astype(np.int64), out=offsets[1:])
    np.save(folder / "terms.npy", terms)
    np.save(folder / "offsets.npy", offsets)
    np.save(folder / "tf.npy", tf.astype(np.float32))
    np.save(folder / "keys.npy", np.load(folder / "keys.npy").astype(np.int64))
    vocab = (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "vocab.txt").unlink()
    (folder / "lengths.npy").unlink()
    record = json.loads(ws._db.meta("snapshot") or "{}")
    record.pop("blocks")
    record.pop("block_bytes")
    record["files"] = {p.name: [p.stat().st_size, _crc(p)] for p in sorted(folder.iterdir())}
    with ws._db.write("test") as writer:
        writer.set_meta("snapshot", json.dumps(record))


def test_deletions_and_merges_read_terms_from_the_postings(tmp_path: Path) -> None:
    _fill(tmp_path)
    reopened = Workspace(tmp_path, embedder=None)
    base = reopened._state.sparse.base
    assert base.terms is None  # not in the snapshot: the database and the postings hold them
    for number in range(12):  # a few scans, then one transposition
        reopened.remove(f"d{number}.md")
    assert base.by_row is not None
    (tmp_path / "fresh").mkdir()
    fresh = Workspace(tmp_path / "fresh", embedder=None)
    for number in range(12, 40):
        fresh.index(f"d{number}.md", reopened._db.chunks_of(f"d{number}.md")[0].text)
    assert _rankings(reopened) == _rankings(fresh)
    reopened.save()
    assert _rankings(Workspace(tmp_path, embedder=None)) == _rankings(fresh)
