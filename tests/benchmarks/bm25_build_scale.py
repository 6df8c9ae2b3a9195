"""The BM25 index step at scale: stock bm25s against our numpy build, same term ids.

Run: ``.venv/bin/python tests/benchmarks/bm25_build_scale.py [--copies 10]``

SciFact (test corpus) is tokenized once by our tokenizer. Its term-id lists are repeated
``--copies`` times (10 gives 51,830 documents and 8.6 million tokens). Both builders index the
same lists: ``bm25s.BM25`` and ``make_bm25`` (``core/sparse_build.py``). The script reports wall
time (best of two) and the peak memory that ``tracemalloc`` saw during the build (numpy reports
its arrays to it), and checks that the two score matrices are identical.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _scifact import load_scifact

from workspace_tools.core.index.bm25_build import make_bm25
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.text.tokenizer import Tokenizer


def build(factory: Any, docs: list[list[int]], vocab: dict[str, int]) -> tuple[Any, float, int]:
    model = factory()
    tracemalloc.start()
    start = time.perf_counter()
    model.index((docs, dict(vocab)), show_progress=False)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return model, seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10, help="times the corpus is repeated")
    args = parser.parse_args()
    import bm25s

    corpus, _, _ = load_scifact()
    tokenizer = Tokenizer()
    docs = [tokenizer.tokenize_ids(text) for text in corpus.values()] * args.copies
    vocab = dict(tokenizer.vocab)
    print(f"{len(docs):,} documents, {sum(map(len, docs)):,} tokens, {len(vocab):,} terms")
    cfg = BM25Config()
    builders = {
        "stock bm25s": lambda: bm25s.BM25(k1=cfg.k1, b=cfg.b, method=cfg.method),
        "numpy build": lambda: make_bm25(k1=cfg.k1, b=cfg.b, method=cfg.method),
    }
    best: dict[str, tuple[float, int]] = {}
    models = {}
    for _ in range(2):
        for label, factory in builders.items():
            models[label], seconds, peak = build(factory, docs, vocab)
            old = best.get(label, (float("inf"), 0))
            best[label] = (min(old[0], seconds), max(old[1], peak))
    for label, (seconds, peak) in best.items():
        print(f"{label:12} {seconds:6.2f} s   peak traced memory {peak / 1e6:5.0f} MB")
    stock, ours = models["stock bm25s"].scores, models["numpy build"].scores
    same = all(np.array_equal(stock[k], ours[k]) for k in ("data", "indices", "indptr"))
    print(
        f"speed-up {best['stock bm25s'][0] / best['numpy build'][0]:.1f}x; identical matrix: {same}"
    )


if __name__ == "__main__":
    main()
