"""The embedding cache keeps float16 vectors and still reads the float32 ones written before."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store._rows import row_checksum
from workspace_tools.core.store._vectors import FLOAT16_TAG, decode_vector, encode_vector

TEXTS = {"a.txt": "alpha beta gamma", "b.txt": "delta epsilon zeta", "c.txt": "eta theta iota"}


def test_a_vector_round_trips_through_float16() -> None:
    vector = np.random.default_rng(0).normal(size=384).astype(np.float32)
    vector /= np.linalg.norm(vector)
    blob = encode_vector(vector)
    assert len(blob) == 1 + 2 * 384 and blob[:1] == FLOAT16_TAG
    back = decode_vector(blob)
    assert back.dtype == np.float32 and back.shape == (384,)
    assert np.array_equal(back, vector.astype(np.float16).astype(np.float32))
    assert float(np.max(np.abs(back - vector))) < 5e-4
    assert abs(float(back @ vector) - 1.0) < 1e-4  # a cosine moves by ~1e-4 at most
    assert np.array_equal(decode_vector(encode_vector(back)), back)  # stable once rounded


def test_a_float32_blob_written_before_is_read_exactly() -> None:
    vector = np.random.default_rng(1).normal(size=64).astype(np.float32)
    assert np.array_equal(decode_vector(vector.tobytes()), vector)


@pytest.mark.parametrize(
    ("blob", "message"),
    [(b"\x11" + bytes(128), "unknown vector encoding"), (bytes(6), "a float32 vector of 6 bytes")],
)
def test_a_blob_of_neither_kind_is_refused(blob: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode_vector(blob)


def _built(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.index_many(sorted(TEXTS.items()))
    ws.save()
    return root, ws._db.path


def _cache(db: Path) -> dict[str, bytes]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT hash, vector FROM vectors").fetchall())


def _rewrite(db: Path, blobs: dict[str, bytes]) -> None:
    with sqlite3.connect(db) as conn:
        for digest, blob in blobs.items():
            conn.execute(
                "UPDATE vectors SET vector=?, checksum=? WHERE hash=?",
                (blob, row_checksum(digest, blob), digest),
            )
    conn.close()


def _forget_snapshots(root: Path) -> None:
    """Drop the snapshot folders: the next vector search rebuilds FAISS from the cache."""
    for folder in (root / ".workspace_tools" / "index").glob("snapshot-*"):
        shutil.rmtree(folder)


def test_new_cache_rows_are_float16(tmp_path: Path) -> None:
    _, db = _built(tmp_path)
    blobs = _cache(db)
    assert len(blobs) == 3
    assert all(len(b) == 1 + 2 * 64 and b[:1] == FLOAT16_TAG for b in blobs.values())


def test_a_float32_cache_written_before_still_loads(tmp_path: Path) -> None:
    root, db = _built(tmp_path)
    fresh = FakeEmbedder()
    hashes = dict(sqlite3.connect(db).execute("SELECT text, hash FROM chunks").fetchall())
    old = {hashes[t]: fresh.embed([t])[0] for t in TEXTS.values()}
    _rewrite(db, {digest: vector.tobytes() for digest, vector in old.items()})  # float32, as before
    _forget_snapshots(root)

    embedder = FakeEmbedder()
    ws = Workspace(root, embedder=embedder)
    cached = ws._db.vectors(old)
    assert all(np.array_equal(cached[d], v) for d, v in old.items())  # exactly as written
    hits = ws.search("delta epsilon zeta", mode="vector", top_k=3)
    assert hits[0].source_id == "b.txt" and len(hits) == 3
    ws.index("d.txt", "eta theta iota")  # the same text: its old cached vector is reused
    assert embedder.texts_embedded == 1  # the query only
    assert ws.search("eta theta iota", mode="vector", top_k=2)[0].score == pytest.approx(
        1.0, abs=1e-3
    )


def test_a_cached_vector_of_an_unknown_encoding_is_a_damaged_index(tmp_path: Path) -> None:
    root, db = _built(tmp_path)
    digest = next(iter(_cache(db)))
    _rewrite(db, {digest: b"\x11" + bytes(128)})  # a valid checksum, an unknown tag
    _forget_snapshots(root)
    ws = Workspace(root, embedder=FakeEmbedder())
    with pytest.raises(IndexCorruptError, match=r"unknown vector encoding.*rebuild=True"):
        ws.search("alpha", mode="vector")


def test_a_cached_vector_that_fails_its_checksum_is_a_damaged_index(tmp_path: Path) -> None:
    root, db = _built(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE vectors SET checksum='0'")
    conn.close()
    _forget_snapshots(root)
    ws = Workspace(root, embedder=FakeEmbedder())
    with pytest.raises(IndexCorruptError, match=r"fails its checksum.*rebuild=True"):
        ws.search("alpha", mode="vector")


def test_a_float32_cache_is_converted_once_by_a_save(tmp_path: Path) -> None:
    root, db = _built(tmp_path)
    hashes = dict(sqlite3.connect(db).execute("SELECT text, hash FROM chunks").fetchall())
    old = {hashes[t]: FakeEmbedder().embed([t])[0] for t in TEXTS.values()}
    _rewrite(db, {digest: vector.tobytes() for digest, vector in old.items()})
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.index("d.txt", "kappa lambda mu")
    assert sum(len(b) % 2 == 0 for b in _cache(db).values()) == 3  # read as they are, until...
    ws.save()
    blobs = _cache(db)
    assert len(blobs) == 4 and all(b[:1] == FLOAT16_TAG for b in blobs.values())
    cached = Workspace(root, embedder=FakeEmbedder())._db.vectors(old)
    assert all(
        np.array_equal(cached[d], v.astype(np.float16).astype(np.float32)) for d, v in old.items()
    )


def test_a_damaged_float32_row_is_not_converted_but_reported(tmp_path: Path) -> None:
    root, db = _built(tmp_path)
    digest = next(iter(_cache(db)))
    with sqlite3.connect(db) as conn:
        conn.execute(
            "UPDATE vectors SET vector=?, checksum='0' WHERE hash=?", (bytes(4 * 64), digest)
        )
    conn.close()
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.index("d.txt", "kappa lambda mu")
    ws.save()  # its vectors come from the snapshot's flat index: the damaged row is not read
    assert len(_cache(db)[digest]) == 4 * 64  # left as it was, not converted
    _forget_snapshots(root)
    with pytest.raises(IndexCorruptError, match="fails its checksum"):
        Workspace(root, embedder=FakeEmbedder()).search("alpha", mode="vector")
