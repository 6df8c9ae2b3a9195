"""Shared SciFact loading and nDCG@10 for the benchmark scripts."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

SHARED = Path(
    os.environ.get("WORKSPACE_TOOLS_SHARED") or Path(__file__).resolve().parents[3] / "shared"
)
SCIFACT = SHARED / "benchmarks" / "scifact"
"""SciFact in the shared data sets: ``shared/`` beside the repository, or ``$WORKSPACE_TOOLS_SHARED``."""


def load_scifact(
    folder: Path = SCIFACT, *, split: str = "test"
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    """Corpus (id -> title + text), queries of a split (id -> text) and qrels (query -> doc -> grade)."""
    corpus = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            corpus[row["_id"]] = f"{row['title']}\n{row['text']}"
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t")
        next(reader)
        for qid, did, grade in reader:
            qrels.setdefault(qid, {})[did] = int(grade)
    queries = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["_id"] in qrels:
                queries[row["_id"]] = row["text"]
    return corpus, queries, qrels


def ndcg_at_10(ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> float:
    """Mean nDCG@10 over the judged queries (BEIR's definition, linear gains)."""
    total = 0.0
    for qid, judged in qrels.items():
        docs = ranked.get(qid, [])[:10]
        dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(docs))
        ideal = sorted(judged.values(), reverse=True)[:10]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        total += dcg / idcg if idcg else 0.0
    return total / len(qrels)


def recall_at(
    ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]], k: int = 100
) -> float:
    """Mean recall@k."""
    total = 0.0
    for qid, judged in qrels.items():
        relevant = {d for d, g in judged.items() if g > 0}
        found = relevant.intersection(ranked.get(qid, [])[:k])
        total += len(found) / len(relevant) if relevant else 0.0
    return total / len(qrels)
