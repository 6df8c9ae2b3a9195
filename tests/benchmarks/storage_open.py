"""Open + first BM25 query and the BM25 p50 of one built index folder, in fresh processes.

Run: ``.venv/bin/python tests/benchmarks/storage_open.py FOLDER [--size 50000] [--rounds 3]
[--queries 300]``

Builds ``FOLDER`` with :mod:`storage_peers`'s synthetic chunks and vectors the first time (kept,
so the same folder can be opened by another checkout: run this file with that checkout's
interpreter and ``PYTHONPATH``), then opens a fresh copy of it ``--rounds`` times, each in a new
process, timing the open plus one BM25 query, then the p50 of ``--queries`` SciFact queries.
The focused measurement behind the "disk and open" notes of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))

import storage_peers as sp  # noqa: E402


def _measure(folder: Path, size: int, count: int) -> dict[str, float]:
    copy = folder.with_name(folder.name + "-open")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    vectors = sp.Vectors(folder / "vectors.npy", [t for _, t in sp.chunks(size)])
    store = sp.Ours(copy, vectors)
    asked = sp.queries(count)
    started = time.perf_counter()
    store.open()
    store.query(asked[0])
    first = time.perf_counter() - started
    times = []
    for text in asked[1:]:
        began = time.perf_counter()
        store.query(text)
        times.append(time.perf_counter() - began)
    shutil.rmtree(copy, ignore_errors=True)
    return {"open_first_query_ms": 1e3 * first, "bm25_p50_ms": 1e3 * statistics.median(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.folder, args.size, args.queries)))
        return
    if not (args.folder / "index").exists():
        args.folder.mkdir(parents=True, exist_ok=True)
        sp.make_vectors(args.folder / "vectors.npy", args.size + 100)
        vectors = sp.Vectors(args.folder / "vectors.npy", [t for _, t in sp.chunks(args.size)])
        sp.Ours(args.folder, vectors).build(list(sp.chunks(args.size)))
    rows = []
    for _ in range(args.rounds):
        cmd = [sys.executable, str(HERE), str(args.folder), "--child", "--size", str(args.size)]
        out = subprocess.run(
            [*cmd, "--queries", str(args.queries)], capture_output=True, text=True, check=True
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(rows[-1])
    for key in rows[0]:
        print(f"{key}: median {statistics.median(r[key] for r in rows):.3f}")


if __name__ == "__main__":
    main()
