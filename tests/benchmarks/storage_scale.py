"""Storage at scale: open, one-document write and remove, first search after a write, BM25 p50.

Run: ``.venv/bin/python tests/benchmarks/storage_scale.py [--sizes 10000 50000 200000]
[--baseline /work/wt-before] [--baseline-sizes 10000 50000] [--repeat 5] [--rounds 3]
[--series 2000 --merge-every 500]``

For each size a workspace of that many chunks is built from synthetic text (Zipf-distributed words,
one ~1,000-character chunk per document) with a fast fake embedder (384-d vectors seeded by the
text's CRC, so only storage is timed). Then a fresh process, with everything imported, times:

* ``open``: ``Workspace(root)`` (what a CLI call or a new agent process pays);
* ``write``: one ``ws.index(id, two lines)`` with autosave, until it returns (the change durable);
* ``first search``: the BM25 search right after that write;
* ``remove``: ``ws.remove(id)`` of that document;
* ``bm25 p50``: median of 40 BM25 queries on an unchanged index (after one warm-up query);
* ``peak RSS``: the measuring process's peak resident memory.

Write, first search and remove are repeated ``--repeat`` times and the median is reported;
each measuring process runs ``--rounds`` times per code and size, the codes interleaved
(alternating which goes first), and the median of the rounds is reported. ``--series N`` then
times ``N`` one-document writes in a row in the new code with a low merge threshold
(``--merge-every``), so merges happen during them: the first write after opening apart (it loads
the vectors), then p50/p90/p99/max. The same children run against a second checkout
(``--baseline``: the code before the storage engine, e.g. ``git worktree add /work/wt-before
734010d``) in the same run, with the same venv, so the ratios compare like with like on a
shared, noisy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
DIM = 384
WORDS = 20_000
BATCH = 5_000


class FastEmbedder:
    """Random unit vectors seeded by the text: storage, not a model, is what is timed."""

    model_id = "fake-fast-384"
    dimension = DIM
    max_batch_size = 4096

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
            vector = rng.standard_normal(DIM).astype(np.float32)
            out[row] = vector / np.linalg.norm(vector)
        return out


def _vocabulary() -> list[str]:
    rng = np.random.default_rng(7)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = set()
    while len(words) < WORDS:
        size = int(rng.integers(3, 11))
        words.add("".join(rng.choice(letters, size)))
    return sorted(words)


def _documents(count: int, *, seed: int = 1) -> list[tuple[str, str]]:
    words = np.array(_vocabulary())
    rng = np.random.default_rng(seed)
    ranks = rng.zipf(1.2, size=(count, 160)) % WORDS
    docs = []
    for number in range(count):
        text = " ".join(words[ranks[number]].tolist())
        docs.append((f"doc{number:07d}.txt", f"Document {number}\n{text}\n"))
    return docs


def _queries() -> list[str]:
    words = _vocabulary()
    rng = np.random.default_rng(11)
    return [" ".join(rng.choice(words[1:500], 3).tolist()) for _ in range(40)]


def build(root: Path, size: int) -> float:
    """Index ``size`` one-chunk documents into ``root``; returns the seconds it took."""
    from workspace_tools import Workspace

    started = time.perf_counter()
    ws = Workspace(root, embedder=FastEmbedder())
    docs = _documents(size)
    for start in range(0, size, BATCH):
        ws.index_many(docs[start : start + BATCH])
    ws.save()
    assert len(ws) == size, (len(ws), size)
    return time.perf_counter() - started


def measure(root: Path, repeat: int) -> dict[str, Any]:
    """Time open, writes, removes and searches in this (fresh) process."""
    import bm25s  # noqa: F401  - imports are not what is timed
    import faiss  # noqa: F401

    from workspace_tools import Workspace

    started = time.perf_counter()
    ws = Workspace(root, embedder=FastEmbedder())
    opened = time.perf_counter() - started
    queries = _queries()
    started = time.perf_counter()
    ws.search(queries[0], mode="bm25")
    first_after_open = time.perf_counter() - started
    times = []
    for query in queries:
        started = time.perf_counter()
        ws.search(query, mode="bm25")
        times.append(time.perf_counter() - started)
    writes, firsts, removes = [], [], []
    for number in range(repeat):
        doc_id = f"new/one-{number}.md"
        started = time.perf_counter()
        ws.index(doc_id, f"A two-line document {number}.\nIt mentions zorblax{number}.\n")
        writes.append(time.perf_counter() - started)
        started = time.perf_counter()
        hits = ws.search(f"zorblax{number}", mode="bm25", top_k=3)
        firsts.append(time.perf_counter() - started)
        assert hits and hits[0].source_id == doc_id, hits
        started = time.perf_counter()
        ws.remove(doc_id)
        removes.append(time.perf_counter() - started)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ws.save()  # the next round starts from an unchanged, saved index too
    import workspace_tools

    return {
        "code": str(Path(workspace_tools.__file__).parent),
        "open": opened,
        "first_search_after_open": first_after_open,
        "write": statistics.median(writes),
        "first_search_after_write": statistics.median(firsts),
        "remove": statistics.median(removes),
        "bm25_p50": statistics.median(times),
        "peak_rss_mb": rss,
    }


def series(root: Path, writes: int, merge_every: int) -> dict[str, Any]:
    """Time ``writes`` one-document writes in a row, with merges every ``merge_every`` changes."""
    from workspace_tools import Workspace
    from workspace_tools.core.backends.embedded import segments

    segments.MERGE_MINIMUM, segments.MERGE_FRACTION = merge_every, 0.0  # merge often: seen often
    ws = Workspace(root, embedder=FastEmbedder())
    times, snapshots = [], set()
    started = time.perf_counter()
    ws.index("series/first.md", "The first write after opening.\nIt loads the vectors.\n")
    first = time.perf_counter() - started
    started_all = time.perf_counter()
    for number in range(writes):
        started = time.perf_counter()
        ws.index(f"series/doc-{number}.md", f"Series document {number}.\nIt says blorft{number}.\n")
        times.append(time.perf_counter() - started)
        snapshots.add(ws._state.snapshot_version)
    total = time.perf_counter() - started_all
    hits = ws.search(f"blorft{writes - 1}", mode="bm25", top_k=1)
    assert hits and hits[0].source_id == f"series/doc-{writes - 1}.md", hits
    ordered = sorted(times)
    return {
        "writes": writes,
        "first": first,
        "merge_every": merge_every,
        "snapshots_seen": len(snapshots),
        "p50": statistics.median(times),
        "p90": ordered[int(0.9 * (writes - 1))],
        "p99": ordered[int(0.99 * (writes - 1))],
        "max": ordered[-1],
        "total": total,
        "over_100ms": sum(t > 0.1 for t in times),
    }


def _child(code: Path, *args: str) -> Any:
    env = dict(os.environ, PYTHONPATH=str(code), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    out = subprocess.run(
        [sys.executable, str(HERE), "--child", *args],
        env=env,
        cwd=str(code),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"child failed ({code}, {args}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _fmt(seconds: float) -> str:
    if seconds < 0.001:
        return f"{seconds * 1000:.3f} ms"
    return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def _median_of(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-measure median over rounds (the ``code`` path of the first)."""
    out: dict[str, Any] = {"code": results[0]["code"]}
    for key, value in results[0].items():
        if isinstance(value, int | float):
            out[key] = statistics.median(r[key] for r in results)
    return out


def _print_row(name: str, size: int, result: dict[str, Any]) -> None:
    print(
        f"{name:>5} {size:>7,} chunks: build {_fmt(result['build'])}, "
        f"open {_fmt(result['open'])}, write {_fmt(result['write'])}, "
        f"first search after write {_fmt(result['first_search_after_write'])}, "
        f"remove {_fmt(result['remove'])}, bm25 p50 {_fmt(result['bm25_p50'])} "
        f"(rounds: {', '.join(_fmt(v) for v in result['bm25_p50_rounds'])}), "
        f"first search after open {_fmt(result['first_search_after_open'])}, "
        f"peak RSS {result['peak_rss_mb']:,.0f} MB, disk {result['disk_mb']:,.0f} MB",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--baseline", type=Path, default=None, help="checkout of the old code")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="measuring processes per code and size, interleaved (medians reported)",
    )
    parser.add_argument(
        "--baseline-sizes",
        type=int,
        nargs="+",
        default=None,
        help="sizes the baseline also runs (default: every size)",
    )
    parser.add_argument(
        "--series",
        type=int,
        default=0,
        help="also time this many one-document writes in a row at each size (new code only)",
    )
    parser.add_argument("--merge-every", type=int, default=500, help="merge threshold for --series")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--build", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--measure", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.build is not None:
            print(json.dumps({"build": build(args.build, args.size)}))
        elif args.series:
            print(json.dumps(series(args.measure, args.series, args.merge_every)))
        else:
            print(json.dumps(measure(args.measure, args.repeat)))
        return
    codes = {"new": REPO}
    if args.baseline is not None:
        codes["today"] = args.baseline.resolve()
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for size in args.sizes:
        names = [
            name
            for name in codes
            if name == "new" or not args.baseline_sizes or size in args.baseline_sizes
        ]
        roots = {name: Path(tempfile.mkdtemp(prefix=f"storage-{name}-{size}-")) for name in names}
        try:
            built = {
                name: _child(codes[name], "--build", str(roots[name]), "--size", str(size))
                for name in names
            }
            rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
            for number in range(args.rounds):  # interleaved, alternating who goes first
                for name in names if number % 2 == 0 else names[::-1]:
                    rounds[name].append(
                        _child(
                            codes[name], "--measure", str(roots[name]), "--repeat", str(args.repeat)
                        )
                    )
            for name in names:
                result = _median_of(rounds[name])
                index = roots[name] / ".workspace_tools" / "index"
                result["disk_mb"] = sum(
                    p.stat().st_size for p in index.rglob("*") if p.is_file()
                ) / (1 << 20)
                result["build"] = built[name]["build"]
                result["bm25_p50_rounds"] = [r["bm25_p50"] for r in rounds[name]]
                rows[(name, size)] = result
                _print_row(name, size, result)
            if args.series:
                runs = _child(
                    codes["new"],
                    "--measure",
                    str(roots["new"]),
                    "--series",
                    str(args.series),
                    "--merge-every",
                    str(args.merge_every),
                )
                rows[("new", size)]["series"] = runs
                print(
                    f"  {size:>7,} chunks: first write after open {_fmt(runs['first'])}, then "
                    f"{runs['writes']:,} writes in a row (merge every "
                    f"{runs['merge_every']:,} changes, {runs['snapshots_seen']} snapshot "
                    f"versions seen): p50 {_fmt(runs['p50'])}, p90 {_fmt(runs['p90'])}, "
                    f"p99 {_fmt(runs['p99'])}, max {_fmt(runs['max'])}, "
                    f"{runs['over_100ms']} over 100 ms, total {_fmt(runs['total'])}",
                    flush=True,
                )
        finally:
            for root in roots.values():
                shutil.rmtree(root, ignore_errors=True)
    if "today" in codes:
        print("\nratios today / new (higher is better for new):")
        for size in args.sizes:
            if ("today", size) not in rows:
                continue
            new, old = rows[("new", size)], rows[("today", size)]
            parts = [
                f"{key} {old[key] / new[key]:,.2f}x"
                for key in ("open", "write", "first_search_after_write", "remove", "bm25_p50")
            ]
            print(f"  {size:>7,} chunks: " + ", ".join(parts))
    print(json.dumps({f"{k[0]}-{k[1]}": v for k, v in rows.items()}))


if __name__ == "__main__":
    main()
