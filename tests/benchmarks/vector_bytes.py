"""Where the bytes of a 50k-chunk build go, and what the vectors cost to build and to load.

Run: ``.venv/bin/python tests/benchmarks/vector_bytes.py [--size 50000]``

Builds the synthetic chunks and precomputed vectors of ``storage_peers.py`` (the same ``Ours``
store: ``index_many`` in batches of 10,000, then ``save()``) and prints the build's wall and CPU
time, how many HNSW graphs were built, the largest files of the index folder and the largest
tables of the database (SQLite's ``dbstat``). Then, twice in a fresh ``Workspace``: the first
vector search, which fills the vector index from the embedding cache (the one copy of the
vectors; a saved HNSW graph gets its storage from it: ``core/backends/embedded/dense_fill.py``).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import storage_peers as sp

from workspace_tools import Workspace

MB = 1 << 20


def _sizes(index: Path) -> None:
    files = {p.relative_to(index).as_posix(): p.stat().st_size for p in index.rglob("*")}
    files = {name: size for name, size in files.items() if (index / name).is_file()}
    print(f"total {sum(files.values()) / MB:.1f} MB")
    for name, size in sorted(files.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {name:48s} {size / MB:8.1f} MB")
    with sqlite3.connect(index / "index.sqlite3") as conn:
        tables = conn.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 6"
        ).fetchall()
    conn.close()
    for name, size in tables:
        print(f"  table {name:42s} {size / MB:8.1f} MB")


class _Query:
    """One fixed query vector (the search's text is not embedded)."""

    def __init__(self, vectors: sp.Vectors, query: np.ndarray) -> None:
        self.model_id, self.dimension, self.max_batch_size = vectors.model_id, sp.DIM, 4096
        self.query = query

    def embed(self, texts: Any) -> np.ndarray:
        return np.tile(self.query, (len(texts), 1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vector-bytes-") as name:
        tmp = Path(name)
        sp.make_vectors(tmp / "v.npy", args.size)
        docs = list(sp.chunks(args.size))
        vectors = sp.Vectors(tmp / "v.npy", [t for _, t in docs])
        store = sp.Ours(tmp / "ws", vectors)
        wall, cpu = time.perf_counter(), time.process_time()
        store.build(docs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        dense = store.ws._state.dense
        builds = 0 if dense is None else dense.hnsw_builds
        print(f"{args.size} chunks: build {wall:.1f} s wall, {cpu:.1f} s CPU, HNSW graphs {builds}")
        _sizes(tmp / "ws" / "index")
        embedder = _Query(vectors, np.asarray(vectors.array[123], dtype=np.float32))
        for _ in range(2):
            ws = Workspace(tmp / "ws", index_dir=tmp / "ws" / "index", embedder=embedder)
            start = time.perf_counter()
            ws.search("x", mode="vector", top_k=10)
            first = time.perf_counter() - start
            print(f"first vector search (fills the index from the cache) {first * 1000:.0f} ms")


if __name__ == "__main__":
    main()
