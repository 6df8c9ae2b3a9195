"""Rankings after 1,000 incremental writes equal a fresh full build (SciFact, nDCG@10).

Run: ``.venv/bin/python tests/benchmarks/storage_rankings.py [--writes 1000] [--scifact DIR]``

Two workspaces over the SciFact corpus (5,183 documents) with the packaged MiniLM embedder, whose
vectors are memoised by text so both sides embed identically and each text is embedded once:

* **fresh**: every document in one ``index_many`` call;
* **incremental**: all but ``writes * 0.7`` documents in one call, then ``writes`` single-document
  writes with autosave: the remaining documents one by one, and 15% of the writes remove a
  document that a later write puts back. The final document set is the same.

It prints nDCG@10 on the 300 test queries for bm25, vector and hybrid for both, the largest
difference, and how many queries' top-10 lists differ (ties aside).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from _scifact import load_scifact, ndcg_at_10

from workspace_tools import Workspace


class MemoEmbedder:
    """The packaged model (or the tests' hashed bag of words with ``fake``), each distinct text
    embedded once across both workspaces."""

    def __init__(self, *, fake: bool = False) -> None:
        if fake:
            from tests.support.fakes import FakeEmbedder

            self._inner: Any = FakeEmbedder(dimension=256, max_batch_size=512)
        else:
            from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder

            self._inner = SentenceTransformerEmbedder()
        self._memo: dict[str, np.ndarray] = {}

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    @property
    def max_batch_size(self) -> int:
        return self._inner.max_batch_size

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            for text, vector in zip(todo, self._inner.embed(todo), strict=True):
                self._memo[text] = vector
        return np.vstack([self._memo[t] for t in texts])


def rank(ws: Workspace, queries: dict[str, str], mode: str) -> dict[str, list[str]]:
    out = {}
    for qid, text in queries.items():
        hits = ws.search(text, top_k=10, mode=mode)
        out[qid] = [h.source_id for h in hits]
    return out


def top_sets(ws: Workspace, queries: dict[str, str], mode: str) -> dict[str, list[tuple]]:
    return {
        qid: sorted((-round(h.score, 5), h.source_id) for h in ws.search(text, top_k=10, mode=mode))
        for qid, text in queries.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--scifact", type=Path, default=None, help="SciFact folder")
    parser.add_argument(
        "--fake-embedder",
        action="store_true",
        help="the tests' hashed bag-of-words vectors instead of the model (storage check only)",
    )
    args = parser.parse_args()
    corpus, queries, qrels = load_scifact(args.scifact) if args.scifact else load_scifact()
    docs = list(corpus.items())
    rng = random.Random(14)
    embedder = MemoEmbedder(fake=args.fake_embedder)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        Path(tmp, "fresh").mkdir()
        fresh = Workspace(Path(tmp, "fresh"), embedder=embedder)
        fresh.index_many(docs)
        print(f"fresh build: {len(docs):,} documents in {time.perf_counter() - started:.1f} s")
        Path(tmp, "inc").mkdir()
        inc = Workspace(Path(tmp, "inc"), embedder=embedder)
        adds = int(args.writes * 0.7)
        rng.shuffle(docs)
        inc.index_many(docs[:-adds])
        later = docs[-adds:]
        removes = (args.writes - adds) // 2
        plan: list[tuple[str, str, str]] = []
        for doc_id, text in later:
            plan.append(("index", doc_id, text))
        for doc_id, text in rng.sample(docs[:-adds], removes):
            spot = rng.randrange(len(plan) + 1)
            plan.insert(spot, ("remove", doc_id, text))
            plan.insert(rng.randrange(spot + 1, len(plan) + 1), ("index", doc_id, text))
        started = time.perf_counter()
        times = []
        for action, doc_id, text in plan:
            began = time.perf_counter()
            if action == "index":
                inc.index(doc_id, text)
            else:
                inc.remove(doc_id)
            times.append(time.perf_counter() - began)
        elapsed = time.perf_counter() - started
        print(
            f"incremental: {len(plan):,} single-document writes in {elapsed:.1f} s "
            f"(median {np.median(times) * 1000:.1f} ms, max {max(times) * 1000:.0f} ms)"
        )
        assert sorted(inc.source_ids()) == sorted(fresh.source_ids())
        worst = 0.0
        for mode in ("bm25", "vector", "hybrid"):
            a = ndcg_at_10(rank(fresh, queries, mode), qrels)
            b = ndcg_at_10(rank(inc, queries, mode), qrels)
            differ = sum(
                x != y
                for x, y in zip(
                    top_sets(fresh, queries, mode).values(),
                    top_sets(inc, queries, mode).values(),
                    strict=True,
                )
            )
            worst = max(worst, abs(a - b))
            print(
                f"{mode:>6}: nDCG@10 fresh {a:.4f}, after {len(plan):,} writes {b:.4f} "
                f"(difference {abs(a - b):.4f}); top-10 (score, id) lists differ for "
                f"{differ} of {len(queries)} queries"
            )
        print(f"largest nDCG@10 difference: {worst:.4f} (target: within 0.001)")


if __name__ == "__main__":
    main()
