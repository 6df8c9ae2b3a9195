"""The CPU time of one build of a storage peer, in this process: a build figure that holds under load.

Run: ``.venv/bin/python tests/benchmarks/build_cpu.py [--size 0] [--store ws-bm25]``

``--size 0`` is SciFact (5,183 abstracts, text only), any other size that many synthetic chunks
of ``storage_peers.py`` (with its precomputed vectors for ``ws``). The store is built once with
``storage_peers.py``'s classes into a temporary folder, and the wall and CPU time
(``time.process_time``: every thread of the process, a background merge included) of
``store.build(docs)`` are printed. Wall time on a shared machine mostly measures the other jobs;
CPU time compares two checkouts run one after the other (run the script from each checkout, with
its own venv, interleaved) and our store with tantivy (whose build is multi-threaded: its CPU
time is above its wall time on a quiet machine).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import storage_peers as sp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=int, default=0, help="0: SciFact; else synthetic chunks")
    parser.add_argument(
        "--store", default="ws-bm25", choices=["ws", "ws-bm25", "tantivy", "fts5", "lancedb"]
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="build-cpu-"))
    try:
        vectors = None
        if args.size == 0:
            corpus, _, _ = sp.load_scifact()
            docs = list(corpus.items())
        else:
            docs = list(sp.chunks(args.size))
            if args.store in ("ws", "lancedb"):
                sp.make_vectors(work / "vectors.npy", args.size)
                vectors = sp.Vectors(work / "vectors.npy", [text for _, text in docs])
        store = sp._store(args.store, work / "store", vectors)
        wall, cpu = time.perf_counter(), time.process_time()
        store.build(docs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"{args.store} size {args.size or 'scifact'}: wall {wall:.2f} s, cpu {cpu:.2f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
