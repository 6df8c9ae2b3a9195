"""What MCP roots cost a ranked search: no filter, one root, five roots (issue 29).

    .venv/bin/python tests/benchmarks/roots_filter.py [--chunks 10000] [--repeats 15]

Indexes ``--chunks`` one-chunk sources spread over 50 folders (BM25 only, no embedder), then
times one bm25 search with no filter, confined to one root and to five roots (the filter
:func:`~workspace_tools.core.text.within.within_filter` writes, what the MCP server passes), and
the same roots and-ed with a metadata condition. Each confined search also runs row by row (the
backend told that no part of the filter is ``source_id`` only: the compiled predicate on every
live row, as every filter ran before the sorted source column), and its results must be the
same. Figures are medians over ``--repeats`` searches after one warm-up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from workspace_tools import Workspace
from workspace_tools.core.backends import embedded
from workspace_tools.core.text.within import and_filters, within_filter

FOLDERS = 50


def _median_ms(ws: Workspace, query: str, conditions: dict[str, Any] | None, repeats: int) -> Any:
    ws.search(query, mode="bm25", top_k=10, filter=conditions)  # warm-up (metadata, column)
    times, found = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        found = ws.search(query, mode="bm25", top_k=10, filter=conditions)
        times.append(time.perf_counter() - started)
    assert found is not None
    return statistics.median(times) * 1000, [(r.id, r.score) for r in found]


def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        ws = Workspace(Path(folder), embedder=None, config=False)
        ws.index_many(
            [
                (
                    f"pkg{i % FOLDERS:02d}/mod{i // FOLDERS}/file{i}.md",
                    f"sun park word{i % 97} river{i % 13} note {i}",
                    {"lang": i % 3},
                )
                for i in range(args.chunks)
            ],
            show_progress=False,
        )
        one = within_filter(("pkg07",))
        five = within_filter(("pkg01", "pkg11", "pkg21/mod3", "pkg33", "pkg40"))
        cases: list[tuple[str, dict[str, Any] | None]] = [
            ("no filter", None),
            ("one root", one),
            ("five roots", five),
            ("five roots + lang", and_filters({"lang": {"$in": [0, 2]}}, five)),
        ]
        print(f"{len(ws)} chunks, bm25, top 10, median of {args.repeats}")
        print(f"{'filter':20} {'now ms':>8} {'row by row ms':>14}  same results")
        for label, conditions in cases:
            now, hits = _median_ms(ws, "sun park word5 river3", conditions, args.repeats)
            if conditions is None:
                print(f"{label:20} {now:8.2f} {'':>14}")
                continue
            split = embedded.split_source_conditions
            embedded.split_source_conditions = lambda c: ([], dict(c))  # type: ignore[assignment]
            try:
                before, reference = _median_ms(
                    ws, "sun park word5 river3", conditions, args.repeats
                )
            finally:
                embedded.split_source_conditions = split
            print(f"{label:20} {now:8.2f} {before:14.2f}  {hits == reference}")


if __name__ == "__main__":
    main()
