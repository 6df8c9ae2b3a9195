"""Storage peers: workspace-tools beside tantivy-py, SQLite FTS5 and LanceDB OSS, in one run.

Run: ``.venv/bin/python tests/benchmarks/storage_peers.py [--sizes 50000] [--rounds 5]
[--build-rounds 5] [--stores ws tantivy fts5 lancedb] [--queries 40] [--writes 50] [--json OUT]``

The peers come from the benchmark-only dependency group (``pip install --group bench``: tantivy,
lancedb; SQLite FTS5 is Python's standard ``sqlite3``). Nothing in the package imports them.

Every store gets the same data:

* **SciFact** (5,183 abstracts, title + text, one document each): a durable BM25 build (text only,
  no vectors, for every store), then nDCG@10 on the 300 test queries (the quality check; untimed);
* **N synthetic chunks** (``--sizes``): sentences of the SciFact corpus recombined by a seeded
  generator into ~1,000-character chunks (one chunk per document, so no store re-chunks; the
  chunks of a smaller size are the first chunks of a larger one). The vector stores (ours and
  LanceDB) get the same vectors: 384-d unit vectors drawn once per run by the parent from a
  seeded generator and saved to ``vectors.npy`` in the run's folder, which every child loads
  (storage, not a model, is what is timed; quality with the real model is the SciFact benchmarks').
  tantivy and FTS5 index the text only.

Each store is built ``--build-rounds`` times per size in a fresh process (the order rotating each
round; median reported), then ``--rounds`` fresh processes per store (interleaved, rotating)
each start from a copy of the built folder (copied before the process starts, untimed) and time:

* ``open + first query``: open the store and answer one BM25 query (imports done before);
* ``RSS above imports``: peak resident memory after the queries minus the resident memory after
  the imports;
* ``BM25 p50`` and ``queries/s`` over ``--queries`` SciFact test queries (top 10, ids returned);
* ``--writes`` one-document writes (a new ~1,000-character chunk each, durable: committed and,
  where the store does, fsynced, then visible to the next search): p50 and worst (the first write
  after opening included);
* ``BM25 p50 with pending writes``: the same queries right after those writes (before any merge;
  ours: pending changes scored at query time), and again after a 1 s
  pause (the same pause for every store: whatever a store does in the background may be done).

Queries are the SciFact test queries with non-alphanumerics replaced by spaces (tantivy's and
FTS5's query syntaxes would otherwise reject some), OR-ed: the same bag of words for every store.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve()
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))

from _scifact import load_scifact, ndcg_at_10  # noqa: E402

DIM = 384
STORES = ("ws", "tantivy", "fts5", "lancedb")
LABELS = {
    "ws": "workspace-tools",
    "ws-bm25": "workspace-tools (bm25 only)",
    "ws-hybrid": "workspace-tools (default: hybrid)",
    "tantivy": "tantivy",
    "fts5": "SQLite FTS5",
    "lancedb": "LanceDB",
}
WRITE_BASE = 10_000_000  # chunk numbers of the written documents: never in the corpus


# --- the shared data ----------------------------------------------------------------------------


def _sentences() -> list[str]:
    corpus, _, _ = load_scifact()
    out = []
    for text in corpus.values():
        out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+", text.replace("\n", " ")))
    return [s for s in out if len(s) > 20]


def chunks(count: int, *, start: int = 0) -> Iterator[tuple[str, str]]:
    """``(id, text)`` of synthetic chunks ``start .. start+count``: deterministic per number."""
    pool = _sentences()
    for number in range(start, start + count):
        rng = np.random.default_rng(number)
        parts = [f"Chunk {number}."]
        size = 0
        while size < 900:
            sentence = pool[int(rng.integers(len(pool)))]
            parts.append(sentence)
            size += len(sentence) + 1
        yield f"c{number:08d}", " ".join(parts)


def make_vectors(path: Path, count: int) -> None:
    """Unit vectors of chunks ``0..count`` then of the written chunks, saved once per run."""
    rng = np.random.default_rng(2025)
    vectors = rng.standard_normal((count, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    np.save(path, vectors)


def queries(limit: int) -> list[str]:
    _, test, _ = load_scifact()
    return [clean(text) for text in list(test.values())[:limit]]


def clean(text: str) -> str:
    return " ".join(re.sub(r"[^0-9A-Za-z]+", " ", text).split())


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _peak_rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak_rss() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _disk_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / (1 << 20)


# --- the stores ---------------------------------------------------------------------------------


class Vectors:
    """Text -> its precomputed vector (an embedder for ours, a column for LanceDB)."""

    model_id = "precomputed-384"
    dimension = DIM
    max_batch_size = 4096

    def __init__(self, file: Path | None, texts: Sequence[str]) -> None:
        self._rows: dict[str, int] = {text: row for row, text in enumerate(texts)}
        self.array = np.load(file, mmap_mode="r") if file is not None else None

    def add(self, text: str, row: int) -> None:
        self._rows[text] = row

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        assert self.array is not None
        rows = [self._rows.get(t) for t in texts]
        if None not in rows:  # documents: one read of their rows
            return np.asarray(self.array[rows], dtype=np.float32)
        return np.vstack([self._vector(t) for t in texts]).astype(np.float32)

    def _vector(self, text: str) -> np.ndarray:
        """A document's saved vector; a query's, drawn from a generator seeded by its text."""
        row = self._rows.get(text)
        if row is not None:
            return np.asarray(self.array[row])  # type: ignore[index]
        seed = int.from_bytes(text.encode()[:8].ljust(8, b"\0"), "little")
        vector = np.random.default_rng(seed).normal(size=DIM)
        return vector / np.linalg.norm(vector)


class Ours:
    mode = "bm25"

    def __init__(self, path: Path, vectors: Vectors | None) -> None:
        import bm25s  # noqa: F401  - imports are not what is timed
        import faiss  # noqa: F401

        from workspace_tools import Workspace  # noqa: F401  - the lazy import done here
        from workspace_tools.core.workspace import _workspace  # noqa: F401

        self.path, self.vectors = path, vectors
        self.ws: Any = None

    def _open(self) -> Any:
        from workspace_tools import Workspace

        self.path.mkdir(exist_ok=True)
        return Workspace(self.path, index_dir=self.path / "index", embedder=self.vectors)

    def build(self, docs: list[tuple[str, str]]) -> None:
        ws = self._open()
        for start in range(0, len(docs), 10_000):
            ws.index_many(docs[start : start + 10_000])
        ws.save()
        self.ws = ws

    def open(self) -> None:
        self.ws = self._open()

    def query(self, text: str) -> list[str]:
        mode = self.mode if self.vectors is not None else "bm25"  # SciFact: text only
        return [hit.source_id for hit in self.ws.search(text, mode=mode, top_k=10)]

    def write(self, doc_id: str, text: str, row: int) -> None:
        if self.vectors is not None:
            self.vectors.add(text, row)
        self.ws.index(doc_id, text)

    def disk(self) -> Path:
        return self.path / "index"


class Tantivy:
    def __init__(self, path: Path, vectors: Vectors | None) -> None:
        import tantivy

        self.tantivy, self.path, self.index, self.writer = tantivy, path, None, None

    def _schema(self) -> Any:
        builder = self.tantivy.SchemaBuilder()
        builder.add_text_field("id", stored=True, tokenizer_name="raw")
        builder.add_text_field("text", stored=True, tokenizer_name="en_stem")
        return builder.build()

    def build(self, docs: list[tuple[str, str]]) -> None:
        self.path.mkdir(exist_ok=True)
        self.index = self.tantivy.Index(self._schema(), path=str(self.path))
        writer = self.index.writer()
        for doc_id, text in docs:
            writer.add_document(self.tantivy.Document(id=doc_id, text=text))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()

    def open(self) -> None:
        self.index = self.tantivy.Index.open(str(self.path))

    def query(self, text: str) -> list[str]:
        searcher = self.index.searcher()
        found = searcher.search(self.index.parse_query(text, ["text"]), 10)
        return [searcher.doc(address)["id"][0] for _, address in found.hits]

    def write(self, doc_id: str, text: str, row: int) -> None:
        if self.writer is None:
            self.writer = self.index.writer()
        self.writer.add_document(self.tantivy.Document(id=doc_id, text=text))
        self.writer.commit()
        self.index.reload()

    def disk(self) -> Path:
        return self.path


class Fts5:
    def __init__(self, path: Path, vectors: Vectors | None) -> None:
        import sqlite3

        self.sqlite3, self.path, self.con = sqlite3, path, None

    def _connect(self) -> Any:
        self.path.mkdir(exist_ok=True)
        con = self.sqlite3.connect(self.path / "fts.sqlite3", isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        return con

    def build(self, docs: list[tuple[str, str]]) -> None:
        con = self.con = self._connect()
        con.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, text, tokenize='porter unicode61')"
        )
        con.execute("BEGIN")
        con.executemany("INSERT INTO docs(id, text) VALUES (?, ?)", docs)
        con.execute("COMMIT")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def open(self) -> None:
        self.con = self._connect()

    def query(self, text: str) -> list[str]:
        match = " OR ".join(f'"{word}"' for word in text.split())
        rows = self.con.execute(
            "SELECT id FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10", (match,)
        )
        return [row[0] for row in rows]

    def write(self, doc_id: str, text: str, row: int) -> None:
        self.con.execute("BEGIN")
        self.con.execute("INSERT INTO docs(id, text) VALUES (?, ?)", (doc_id, text))
        self.con.execute("COMMIT")

    def disk(self) -> Path:
        return self.path


class Lance:
    def __init__(self, path: Path, vectors: Vectors | None) -> None:
        import lancedb
        import pyarrow as pa

        self.lancedb, self.pa, self.path, self.vectors, self.table = (
            lancedb,
            pa,
            path,
            vectors,
            None,
        )

    def _rows(self, docs: Sequence[tuple[str, str]], vectors: np.ndarray | None) -> Any:
        columns: dict[str, Any] = {
            "id": self.pa.array([d for d, _ in docs]),
            "text": self.pa.array([t for _, t in docs]),
        }
        if vectors is not None:
            flat = self.pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel())
            columns["vector"] = self.pa.FixedSizeListArray.from_arrays(flat, DIM)
        return self.pa.table(columns)

    def build(self, docs: list[tuple[str, str]]) -> None:
        db = self.lancedb.connect(str(self.path))
        vectors = None
        if self.vectors is not None:
            vectors = self.vectors.embed([t for _, t in docs])
        self.table = db.create_table("docs", data=self._rows(docs, vectors), mode="overwrite")
        self.table.create_fts_index("text", use_tantivy=False, stem=True, language="English")

    def open(self) -> None:
        self.table = self.lancedb.connect(str(self.path)).open_table("docs")

    def query(self, text: str) -> list[str]:
        found = self.table.search(text, query_type="fts").select(["id"]).limit(10).to_list()
        return [row["id"] for row in found]

    def write(self, doc_id: str, text: str, row: int) -> None:
        vectors = None
        if self.vectors is not None:
            self.vectors.add(text, row)
            vectors = self.vectors.embed([text])
        self.table.add(self._rows([(doc_id, text)], vectors))

    def disk(self) -> Path:
        return self.path


class OursHybrid(Ours):
    """The default path: vectors on, every query hybrid (the default mode then)."""

    mode = "hybrid"


def _store(name: str, path: Path, vectors: Vectors | None) -> Any:
    if name == "ws-hybrid":
        return OursHybrid(path, vectors)
    if name in ("ws", "ws-bm25"):
        return Ours(path, vectors if name == "ws" else None)
    return {"tantivy": Tantivy, "fts5": Fts5, "lancedb": Lance}[name](path, vectors)


# --- what a child process does ------------------------------------------------------------------


def child_build(name: str, path: Path, size: int, vectors_file: Path | None) -> dict[str, Any]:
    """Build ``size`` synthetic chunks (0: SciFact, text only) into ``path``; time it."""
    if size == 0:
        corpus, test, qrels = load_scifact()
        docs = list(corpus.items())
        vectors = None
    else:
        docs = list(chunks(size))
        wants = vectors_file and name != "ws-bm25"
        vectors = Vectors(vectors_file, [t for _, t in docs]) if wants else None
    store = _store(name, path, vectors)
    started = time.perf_counter()
    store.build(docs)
    seconds = time.perf_counter() - started
    out: dict[str, Any] = {"build": seconds, "disk_mb": _disk_mb(store.disk())}
    if size == 0:
        ranked = {qid: store.query(clean(text)) for qid, text in test.items()}
        out["ndcg"] = ndcg_at_10(ranked, qrels)
    return out


def child_measure(
    name: str,
    path: Path,
    size: int,
    vectors_file: Path | None,
    count: int,
    writes: int,
    args_settle: float = 1.0,
) -> dict[str, Any]:
    """Open a built store, query, write, query again; time each step."""
    asked = queries(count)
    new_docs = list(chunks(writes, start=WRITE_BASE))
    vectors = None
    if vectors_file is not None and name in ("ws", "ws-hybrid", "lancedb"):
        vectors = Vectors(vectors_file, [t for _, t in chunks(size)])
    store = _store(name, path, vectors)
    rss_imports = _rss_mb()
    _reset_peak_rss()
    started = time.perf_counter()
    store.open()
    first = store.query(asked[0])
    open_first = time.perf_counter() - started
    assert first, "the first query found nothing"
    times = []
    began = time.perf_counter()
    for text in asked[1:]:
        started = time.perf_counter()
        store.query(text)
        times.append(time.perf_counter() - started)
    elapsed = time.perf_counter() - began
    rss_above = _peak_rss_mb() - rss_imports
    rss_first = _peak_rss_mb() - rss_imports
    write_times, doing = [], []
    steps = _write_steps() if name.startswith("ws") else None
    for number, (doc_id, text) in enumerate(new_docs):
        if steps is not None:
            steps.clear()
        started = time.perf_counter()
        store.write(doc_id, text, size + number)
        write_times.append(time.perf_counter() - started)
        doing.append(dict(steps or {}))
    pending = []
    for text in asked[1:]:
        started = time.perf_counter()
        store.query(text)
        pending.append(time.perf_counter() - started)
    time.sleep(args_settle)  # the same pause for every store: background work may finish
    settled = []
    for text in asked[1:]:
        started = time.perf_counter()
        store.query(text)
        settled.append(time.perf_counter() - started)
    probe = clean(new_docs[-1][1])
    assert new_docs[-1][0] in store.query(probe), "the last write is not searchable"
    return {
        "open_first_query": open_first,
        "rss_above_imports_mb": rss_above,
        "rss_after_first_query_mb": rss_first,
        "bm25_p50": statistics.median(times),
        "qps": len(times) / elapsed,
        "write_p50": statistics.median(write_times),
        "write_worst": max(write_times),
        "worst_write_steps": doing[write_times.index(max(write_times))],
        "first_write": write_times[0],
        "bm25_p50_pending": statistics.median(pending),
        "bm25_p50_settled": statistics.median(settled),
    }


def _write_steps() -> dict[str, float]:
    """Seconds one write spends in each step of ours, filled while it runs (cleared per write).

    The steps: embedding its text, its database transaction (the COMMIT, with SQLite's own WAL
    checkpoint when due), the backend's apply (term ids, segments, FAISS), loading the vector
    index, and a merge or graph round run in the caller's thread (none should).
    """
    from workspace_tools.core.backends.embedded import backend, dense, merge
    from workspace_tools.core.store import database

    steps: dict[str, float] = {}

    def timed(owner: Any, attr: str, step: str) -> None:
        real = getattr(owner, attr)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                steps[step] = steps.get(step, 0.0) + time.perf_counter() - started

        setattr(owner, attr, wrapper)

    real_write = database.IndexDatabase.write

    @contextlib.contextmanager
    def write(self: Any, action: str) -> Iterator[Any]:
        started = time.perf_counter()
        try:
            with real_write(self, action) as writer:
                yield writer
        finally:
            steps["transaction"] = steps.get("transaction", 0.0) + time.perf_counter() - started

    database.IndexDatabase.write = write  # type: ignore[method-assign]
    timed(Vectors, "embed", "embed")
    timed(backend.EmbeddedBackend, "_apply", "apply")
    timed(backend.EmbeddedBackend, "ensure_vectors", "load vectors")
    timed(dense.DenseIndex, "_start_graph", "graph start")
    timed(merge, "build", "merge build")
    return steps


# --- the parent ---------------------------------------------------------------------------------


def _child(*args: str) -> dict[str, Any]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    out = subprocess.run(
        [sys.executable, str(HERE), "--child", *args],
        env=env,
        cwd=str(REPO),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"child failed ({args}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        key: statistics.median(r[key] for r in results)
        for key, value in results[0].items()
        if isinstance(value, int | float)
    } | {"rounds": results}


def _rotate(names: Sequence[str], number: int) -> list[str]:
    shift = number % len(names)
    return list(names[shift:]) + list(names[:shift])


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    vectors_file: Path | None = None
    if args.sizes:
        vectors_file = work / "vectors.npy"
        make_vectors(vectors_file, max(args.sizes) + args.writes)
    names = list(args.stores)
    builds: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for number in range(args.build_rounds):
        for name in _rotate(names, number):
            path = work / f"scifact-{name}-{number}"
            builds[name].append(_child("--build", str(path), "--store", name, "--size", "0"))
            shutil.rmtree(path, ignore_errors=True)
    results["scifact"] = {name: _median(builds[name]) for name in names}
    _report_scifact(results["scifact"], names)
    for size in args.sizes:
        built: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for number in range(args.build_rounds):
            for name in _rotate(names, number):
                path = work / f"{size}-{name}-{number}"
                cmd = ["--build", str(path), "--store", name, "--size", str(size)]
                built[name].append(_child(*cmd, "--vectors", str(vectors_file)))
                if number:
                    shutil.rmtree(path, ignore_errors=True)
        measured: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for number in range(args.rounds):
            for name in _rotate(names, number):
                pristine, copy = work / f"{size}-{name}-0", work / f"{size}-{name}-run"
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(pristine, copy, symlinks=True)
                os.sync()
                cmd = ["--measure", str(copy), "--store", name, "--size", str(size)]
                cmd += ["--vectors", str(vectors_file), "--queries", str(args.queries)]
                measured[name].append(_child(*cmd, "--writes", str(args.writes)))
                shutil.rmtree(copy, ignore_errors=True)
        for name in names:
            shutil.rmtree(work / f"{size}-{name}-0", ignore_errors=True)
        results[str(size)] = {
            name: _median(built[name]) | _median(measured[name]) for name in names
        }
        _report_size(size, results[str(size)], names)
    return results


def _ms(seconds: float) -> str:
    value = seconds * 1000
    return f"{value:.3f}" if value < 1 else f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def _ratio(ours: float, theirs: float) -> str:
    if not theirs:
        return "-"
    ratio = ours / theirs
    return f"{ratio:,.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x"


def _table(title: str, rows: list[tuple[str, dict[str, float]]], names: list[str]) -> None:
    base = names[0]
    peers = names[1:]
    print(f"\n{title}")
    header = ["on the same work", *(LABELS[n] for n in names)]
    header += [f"{LABELS[base]} / {LABELS[p]}" for p in peers]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "--:|" * (len(header) - 1))
    for label, values in rows:
        cells = [label, *(values[f"{n}:text"] for n in names)]
        cells += [_ratio(values[base], values[p]) for p in peers]
        print("| " + " | ".join(str(c) for c in cells) + " |")


def _cells(rows: dict[str, Any], names: list[str], key: str, fmt: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        out[name] = rows[name][key]
        out[f"{name}:text"] = fmt(rows[name][key])
    return out


def _report_scifact(rows: dict[str, Any], names: list[str]) -> None:
    table = [
        ("build SciFact BM25, durable (s)", _cells(rows, names, "build", lambda v: f"{v:.2f}")),
        ("disk, SciFact BM25 (MB)", _cells(rows, names, "disk_mb", lambda v: f"{v:.1f}")),
        ("bm25 nDCG@10, SciFact test", _cells(rows, names, "ndcg", lambda v: f"{v:.3f}")),
    ]
    _table("SciFact (5,183 documents)", table, names)


def _report_size(size: int, rows: dict[str, Any], names: list[str]) -> None:
    mb = lambda v: f"{v:,.0f}"  # noqa: E731
    table = [
        (f"build {size:,} chunks (s)", _cells(rows, names, "build", lambda v: f"{v:.2f}")),
        (f"disk at {size:,} (MB)", _cells(rows, names, "disk_mb", mb)),
        (f"open + first query at {size:,} (ms)", _cells(rows, names, "open_first_query", _ms)),
        (f"RSS above imports at {size:,} (MB)", _cells(rows, names, "rss_above_imports_mb", mb)),
        (f"BM25 query p50 at {size:,} (ms)", _cells(rows, names, "bm25_p50", _ms)),
        ("... right after the writes (ms)", _cells(rows, names, "bm25_p50_pending", _ms)),
        ("... 1 s after the writes (ms)", _cells(rows, names, "bm25_p50_settled", _ms)),
        ("queries per second", _cells(rows, names, "qps", lambda v: f"{v:,.0f}")),
        ("one-doc write p50 (ms)", _cells(rows, names, "write_p50", _ms)),
        ("one-doc write worst (ms)", _cells(rows, names, "write_worst", _ms)),
        (
            "RSS above imports after the first query (MB)",
            _cells(rows, names, "rss_after_first_query_mb", mb),
        ),
        ("first write after opening (ms)", _cells(rows, names, "first_write", _ms)),
    ]
    _table(f"{size:,} chunks", table, names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[50_000])
    parser.add_argument("--rounds", type=int, default=5, help="measuring processes per store")
    parser.add_argument("--build-rounds", type=int, default=5, help="builds per store and size")
    parser.add_argument(
        "--stores", nargs="+", default=list(STORES), choices=[*STORES, "ws-bm25", "ws-hybrid"]
    )
    parser.add_argument("--queries", type=int, default=40, help="SciFact test queries timed")
    parser.add_argument("--writes", type=int, default=50, help="one-document writes timed")
    parser.add_argument("--json", type=Path, default=None, help="save the raw figures here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--build", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--measure", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--store", default="ws", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--vectors", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.build is not None:
            out = child_build(args.store, args.build, args.size, args.vectors)
        else:
            out = child_measure(
                args.store, args.measure, args.size, args.vectors, args.queries, args.writes
            )
        print(json.dumps(out))
        return
    started = time.time()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()[0]:.1f}, "
        f"stores {', '.join(args.stores)}, sizes {args.sizes}, {args.build_rounds} builds and "
        f"{args.rounds} measuring rounds per store, {args.queries} queries, {args.writes} writes",
        flush=True,
    )
    work = Path(tempfile.mkdtemp(prefix="storage-peers-"))
    try:
        results = run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{(time.time() - started) / 60:.1f} min, load {os.getloadavg()[0]:.1f} at the end")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
