"""Metadata filters at scale (issue 28, item 11): long ``$in``/``$nin`` lists, deep nesting.

Run: ``.venv/bin/python tests/benchmarks/filter_scale.py``. Indexes 2,000 short strings (BM25
only), then times one search filtered by ``$in`` and by ``$nin`` with 300,000 values, and shows
what a filter nested 300 levels deep gives.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from workspace_tools import Workspace


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        ws = Workspace(Path(folder), embedder=None, config=False)
        ws.index_many(
            [(f"doc{i}", f"common word text number {i}", {"tag": f"t{i}"}) for i in range(2000)],
            show_progress=False,
        )
        values = [f"v{i}" for i in range(300_000)] + ["t5"]
        for op in ("$in", "$nin"):
            started = time.perf_counter()
            hits = ws.search("common word", top_k=5, filter={"tag": {op: values}})
            print(
                f"{op} of 300,001 values: {time.perf_counter() - started:.2f} s, {len(hits)} hits"
            )
        nested: dict[str, object] = {"tag": "t1"}
        for _ in range(300):
            nested = {"$and": [nested]}
        try:
            ws.search("common", filter=nested)
        except Exception as exc:
            print(f"$and 300 deep: {type(exc).__name__}: {str(exc)[:120]}")


if __name__ == "__main__":
    main()
