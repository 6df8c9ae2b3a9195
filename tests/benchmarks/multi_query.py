"""Several formulations in one search (issue 29): fused rankings against the query alone.

Run: ``.venv/bin/python tests/benchmarks/multi_query.py [--collections cisi cranfield ...]
[--modes bm25 vector hybrid] [--fake]``

A second formulation is made by a program, without a model, from each query:

* ``content``: the query's content words only (its words minus the tokenizer's stop words, in
  their order and original form), the keyword list an agent often sends next;
* ``lead``: its first five content words (a title-like prefix).

For each collection and mode, nDCG@10 (``top_k=10``, chunk hits deduplicated to documents, as
``quality_collections.py``) of: the query alone; ``[query, content]`` fused; ``[query, content,
lead]`` fused (``Workspace.search`` with a list: reciprocal rank fusion, ``core/ranking/multi.py``).
Vectors come from the default model behind the on-disk cache of ``_testsets.CachedEmbedder``
(``--fake``: the test suite's hashed bag-of-words embedder instead, which needs no model).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from _testsets import FOLDERS, default_cached_embedder, load, ndcg_at_10

from workspace_tools import Workspace
from workspace_tools.core.text.tokenizer import DEFAULT_STOPWORDS

WORD = re.compile(r"\w[\w'-]*")


def content_words(query: str) -> str:
    """The query's words that are not stop words, in order (the query itself if none is left)."""
    words = [w for w in WORD.findall(query) if w.lower() not in DEFAULT_STOPWORDS]
    return " ".join(words) or query


def lead(query: str, n: int = 5) -> str:
    """The first ``n`` content words: a title-like prefix."""
    return " ".join(content_words(query).split()[:n])


def ranked(ws: Workspace, queries: dict[str, Any], mode: str) -> dict[str, list[str]]:
    return {
        qid: list(dict.fromkeys(h.source_id for h in ws.search(q, top_k=10, mode=mode)))
        for qid, q in queries.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", nargs="*", default=["cisi", "cranfield", "scifact-test"])
    parser.add_argument("--modes", nargs="*", default=["bm25", "vector", "hybrid"])
    parser.add_argument("--fake", action="store_true", help="hashed bag-of-words vectors")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    if args.fake:
        from tests.support.fakes import FakeEmbedder

        embedder: Any = FakeEmbedder(256, max_batch_size=512)
    else:
        embedder = default_cached_embedder()
    results: dict[str, Any] = {}
    for name in args.collections:
        assert name in FOLDERS, name
        started = time.perf_counter()
        corpus, queries, qrels = load(name)
        vectors = {"vector", "hybrid"} & set(args.modes)
        ws = Workspace(
            tempfile.mkdtemp(),
            embedder=embedder if vectors else None,
            autosave=False,
            config=False,
        )
        ws.index_many(corpus.items())
        variants = {
            "query alone": dict(queries),
            "query + content words": {q: [t, content_words(t)] for q, t in queries.items()},
            "query + content + lead": {
                q: [t, content_words(t), lead(t)] for q, t in queries.items()
            },
        }
        rows: dict[str, dict[str, float]] = {}
        for mode in args.modes:
            for label, formulations in variants.items():
                score = ndcg_at_10(ranked(ws, formulations, mode), qrels)
                rows.setdefault(label, {})[mode] = score
        results[name] = rows
        print(f"\n== {name} ({time.perf_counter() - started:.0f} s, {len(queries)} queries)")
        print(f"{'formulations':26}" + "".join(f"{m:>9}" for m in args.modes))
        for label, row in rows.items():
            print(f"{label:26}" + "".join(f"{row[m]:9.4f}" for m in args.modes), flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
