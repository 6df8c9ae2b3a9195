"""BM25 on SciFact (test split): workspace-tools vs raw bm25s vs rank-bm25, in one run.

Run: ``.venv/bin/python tests/benchmarks/bm25_scifact.py [--json results.json]``

* ours: ``Workspace(tmp, embedder=None).index_many(corpus)`` then ``search(q, mode="bm25")``.
* raw bm25s: ``bm25s.tokenize(stopwords=<our list>, stemmer=PyStemmer english)`` + ``BM25(k1, b)``
  with our BM25 parameters, i.e. the same tokenizer settings.
* bm25s + our tokenizer: stock ``bm25s.BM25`` indexing our tokenizer's term ids, which separates
  the tokenizer's cost from the workspace's. The index step alone is also timed from the same ids,
  stock bm25s against our numpy build (``core/sparse_build.py``, same matrix bit for bit).
* rank-bm25: ``BM25Okapi`` over ``text.lower().split()`` (all2md's tokenizer; LangChain's
  BM25Retriever uses plain, case-sensitive ``str.split``, which scores lower still).

Build time is the in-memory index build, the fastest of three builds from scratch for every
system (the save to disk is timed separately for ours).
Latency is the wall time of one query, p50 over the 300 test queries, one query at a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _scifact import load_scifact, ndcg_at_10, recall_at

from workspace_tools import Workspace
from workspace_tools.core.index.bm25_build import make_bm25
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.text.tokenizer import DEFAULT_STOPWORDS


def timed_queries(fn, queries: dict[str, str]) -> tuple[dict[str, list[str]], list[float]]:
    ranked, latencies = {}, []
    for qid, text in queries.items():
        start = time.perf_counter()
        ranked[qid] = fn(text)
        latencies.append(time.perf_counter() - start)
    return ranked, latencies


BUILD_REPEATS = 3
"""Each system's index is built this many times from scratch; the fastest build counts."""


def run_ours(corpus: dict[str, str], queries: dict[str, str]) -> dict[str, float]:
    builds = []
    for _ in range(BUILD_REPEATS):
        tmp = tempfile.mkdtemp()
        ws = Workspace(tmp, embedder=None, autosave=False)
        start = time.perf_counter()
        ws.index_many(corpus.items())
        ws.search("warm up the index", mode="bm25")  # BM25 matrix is built on first search
        builds.append(time.perf_counter() - start)
    build = min(builds)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(tmp, embedder=None, autosave=False)
        ws.index_many(corpus.items())
        start = time.perf_counter()
        ws.save()
        save = time.perf_counter() - start

        def search(text: str) -> list[str]:
            seen: list[str] = []
            for hit in ws.search(text, top_k=100, mode="bm25"):
                if hit.source_id not in seen:
                    seen.append(hit.source_id)
            return seen

        ranked, lat = timed_queries(search, queries)
        # The snippet of each hit is computed on access; time it too, for the top 10.
        start = time.perf_counter()
        for text in queries.values():
            for hit in ws.search(text, top_k=10, mode="bm25"):
                _ = hit.snippet
        with_snippets = (time.perf_counter() - start) / len(queries)
    return {
        "build_s": build,
        "save_s": save,
        "ranked": ranked,
        "lat": lat,
        "lat_snippets_s": with_snippets,
    }


def run_raw_bm25s(corpus: dict[str, str], queries: dict[str, str]) -> dict[str, float]:
    import bm25s
    import Stemmer

    cfg = BM25Config()
    ids, texts = list(corpus), list(corpus.values())
    builds = []
    for _ in range(BUILD_REPEATS):
        stemmer = Stemmer.Stemmer("english")
        start = time.perf_counter()
        tokens = bm25s.tokenize(
            texts, stopwords=list(DEFAULT_STOPWORDS), stemmer=stemmer, show_progress=False
        )
        retriever = bm25s.BM25(k1=cfg.k1, b=cfg.b, method=cfg.method)
        retriever.index(tokens, show_progress=False)
        builds.append(time.perf_counter() - start)
    build = min(builds)

    def search(text: str) -> list[str]:
        q = bm25s.tokenize(
            [text],
            stopwords=list(DEFAULT_STOPWORDS),
            stemmer=stemmer,
            show_progress=False,
            return_ids=False,
        )
        docs, _ = retriever.retrieve(q, k=100, show_progress=False)
        return [ids[i] for i in docs[0]]

    ranked, lat = timed_queries(search, queries)
    return {"build_s": build, "ranked": ranked, "lat": lat}


def run_bm25s_our_tokenizer(corpus: dict[str, str], queries: dict[str, str]) -> dict[str, float]:
    """bm25s fed the terms of our tokenizer: isolates the workspace's own overhead."""
    import bm25s

    from workspace_tools.core.text.tokenizer import Tokenizer

    cfg = BM25Config()
    ids, texts = list(corpus), list(corpus.values())
    builds = []
    for _ in range(BUILD_REPEATS):
        tokenizer = Tokenizer()
        start = time.perf_counter()
        tokens = [tokenizer.tokenize_ids(t) for t in texts]
        retriever = bm25s.BM25(k1=cfg.k1, b=cfg.b, method=cfg.method)
        retriever.index((tokens, dict(tokenizer.vocab)), show_progress=False)
        builds.append(time.perf_counter() - start)
    build = min(builds)
    # The index step alone, from the same term ids: stock bm25s vs our numpy build.
    index_only = {}
    for label, factory in [
        ("stock", lambda: bm25s.BM25(k1=cfg.k1, b=cfg.b, method=cfg.method)),
        ("numpy", lambda: make_bm25(k1=cfg.k1, b=cfg.b, method=cfg.method)),
    ]:
        times = []
        for _ in range(BUILD_REPEATS):
            model = factory()
            start = time.perf_counter()
            model.index((tokens, dict(tokenizer.vocab)), show_progress=False)
            times.append(time.perf_counter() - start)
        index_only[label] = min(times)

    def search(text: str) -> list[str]:
        terms = tokenizer.ids_of(tokenizer.query_terms(text))
        if not terms:
            return []
        docs, _ = retriever.retrieve([terms], k=100, show_progress=False)
        return [ids[i] for i in docs[0]]

    ranked, lat = timed_queries(search, queries)
    return {
        "build_s": build,
        "index_stock_s": index_only["stock"],
        "index_numpy_s": index_only["numpy"],
        "ranked": ranked,
        "lat": lat,
    }


def run_rank_bm25(corpus: dict[str, str], queries: dict[str, str]) -> dict[str, float]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    ids, texts = list(corpus), list(corpus.values())
    builds = []
    for _ in range(BUILD_REPEATS):
        start = time.perf_counter()
        model = BM25Okapi([t.lower().split() for t in texts])
        builds.append(time.perf_counter() - start)
    build = min(builds)

    def search(text: str) -> list[str]:
        scores = model.get_scores(text.lower().split())
        return [ids[i] for i in np.argsort(-scores)[:100]]

    ranked, lat = timed_queries(search, queries)
    return {"build_s": build, "ranked": ranked, "lat": lat}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    corpus, queries, qrels = load_scifact()
    import bm25s  # noqa: F401  (import cost is not part of any build time)
    import rank_bm25  # noqa: F401

    print(f"SciFact test: {len(corpus)} documents, {len(queries)} queries")
    rows = {}
    for name, fn in [
        ("workspace-tools bm25", run_ours),
        ("raw bm25s", run_raw_bm25s),
        ("bm25s + our tokenizer", run_bm25s_our_tokenizer),
        ("rank-bm25 BM25Okapi", run_rank_bm25),
    ]:
        out = fn(corpus, queries)
        out["ndcg10"] = ndcg_at_10(out["ranked"], qrels)
        out["recall100"] = recall_at(out["ranked"], qrels, 100)
        out["p50_ms"] = statistics.median(out.pop("lat")) * 1000
        out.pop("ranked")
        rows[name] = out
    ours, raw, rank = rows["workspace-tools bm25"], rows["raw bm25s"], rows["rank-bm25 BM25Okapi"]
    print(f"{'system':24} {'nDCG@10':>8} {'R@100':>7} {'build s':>8} {'p50 ms':>8}")
    for name, r in rows.items():
        print(
            f"{name:24} {r['ndcg10']:8.4f} {r['recall100']:7.4f} {r['build_s']:8.3f} {r['p50_ms']:8.3f}"
        )
    print(
        f"ours save to disk: {ours['save_s']:.3f} s; ours with top-10 snippets: {ours['lat_snippets_s'] * 1000:.3f} ms/query"
    )
    print(f"build ours / raw bm25s: {ours['build_s'] / raw['build_s']:.2f}x (target <= 1.3)")
    same = rows["bm25s + our tokenizer"]
    print(
        f"build ours / bm25s fed our tokenizer: {ours['build_s'] / same['build_s']:.2f}x (workspace overhead)"
    )
    print(
        f"bm25s index step from the same term ids: stock {same['index_stock_s']:.3f} s, "
        f"our numpy build {same['index_numpy_s']:.3f} s (identical matrix)"
    )
    print(
        f"p50 rank-bm25 / ours: {rank['p50_ms'] / ours['p50_ms']:.1f}x lower latency (target >= 20)"
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
