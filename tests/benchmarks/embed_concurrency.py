"""Concurrent embedding groups (issue 29, gap 9): one call at a time against a few at once.

Run: ``.venv/bin/python tests/benchmarks/embed_concurrency.py [--local N]``

Two embedders index the same texts through ``embed_texts`` (the indexing path), with
``max_concurrency`` 1 and then 2 and 4:

* a remote-like embedding function (``f.batch = True``): each call waits ``--latency`` seconds,
  as a request to an embedding API does, and costs almost no CPU;
* the packaged local model (``--local N`` SciFact abstracts; 0 skips it), which already uses
  every core in one call.

Prints wall time and the speed-up over one call at a time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workspace_tools.core.embedding.adapters import FunctionEmbedder
from workspace_tools.core.workspace._ingest import embed_texts

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "benchmarks" / "scifact" / "corpus.jsonl"


def remote_like(latency: float) -> Any:
    def embed(texts: Sequence[str]) -> list[list[float]]:
        time.sleep(latency)
        return [
            list(np.frombuffer(hashlib.sha256(t.encode()).digest(), dtype=np.uint8) / 255.0)
            for t in texts
        ]

    embed.batch = True  # type: ignore[attr-defined]
    embed.max_batch_size = 64  # type: ignore[attr-defined]
    return embed


class Limited:
    """The local model with a chosen ``max_concurrency``."""

    def __init__(self, inner: Any, concurrency: int) -> None:
        self.inner, self.max_concurrency = inner, concurrency
        self.model_id, self.dimension = inner.model_id, inner.dimension
        self.max_batch_size = 64

    def embed(self, texts: Sequence[str]) -> Any:
        return self.inner.embed(texts)


def timed(embedder: Any, texts: dict[str, str]) -> float:
    started = time.perf_counter()
    embed_texts(embedder, texts, show_progress=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2048, help="texts for the remote-like run")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per remote call")
    parser.add_argument("--local", type=int, default=512, help="SciFact abstracts (0: skip)")
    args = parser.parse_args()
    rows: dict[str, dict[str, float]] = {}
    texts = {f"h{i}": f"text number {i} about topic {i % 17}" for i in range(args.texts)}
    function = remote_like(args.latency)
    for workers in (1, 2, 4):
        function.max_concurrency = workers
        rows.setdefault("remote-like", {})[str(workers)] = timed(FunctionEmbedder(function), texts)
    if args.local:
        from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder

        lines = SCIFACT.read_text(encoding="utf-8").splitlines()[: args.local]
        docs = {str(i): json.loads(line)["text"] for i, line in enumerate(lines)}
        model = SentenceTransformerEmbedder()
        model.embed(["warm up"])
        for workers in (1, 2, 4):
            rows.setdefault("local model", {})[str(workers)] = timed(Limited(model, workers), docs)
    for name, times in rows.items():
        base = times["1"]
        shown = ", ".join(f"{w} at once {t:.2f} s ({base / t:.2f}x)" for w, t in times.items())
        print(f"{name:12} {shown}")


if __name__ == "__main__":
    main()
