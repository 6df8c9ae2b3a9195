"""The ranking prior's kinds on the benchmark collections: the lazy rules against the full measures.

Run: ``.venv/bin/python tests/benchmarks/prior_kinds.py``

``content_kind`` takes each shape measure only when a rule needs it (and the share of prose lines
only until its threshold is decided). This script checks, on every document of SciFact, CISI,
Cranfield and NPL and every file of the Mastra docs, the mixed documents and the Agent Skills
collections in ``../shared/benchmarks`` (converted as ``sync`` converts them), that it returns
the kind the full measures give (``reference_kind`` of the unit tests: the rules before), and
times both.
"""

from __future__ import annotations

import collections
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from _testsets import SHARED

from tests.unit.core.ranking.test_prior_kinds import reference_kind
from workspace_tools.core.convert import convert_bytes
from workspace_tools.core.errors import WorkspaceError
from workspace_tools.core.ranking.content_kinds import content_kind


def sources() -> dict[str, list[tuple[str, str, str]]]:
    out: dict[str, list[tuple[str, str, str]]] = {}
    for name, folder in {
        "scifact": SHARED / "scifact",
        "cisi": SHARED / "ir-classic" / "cisi",
        "cranfield": SHARED / "ir-classic" / "cranfield",
        "npl": SHARED / "ir-classic" / "npl",
    }.items():
        rows = out[name] = []
        with open(folder / "corpus.jsonl", encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                rows.append((row["_id"], f"{row.get('title', '')}\n{row['text']}", "text"))
    for name in ("mastra-docs", "mixed-docs", "agent-skills"):
        rows = out[name] = []
        root = SHARED / name
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            try:
                converted = convert_bytes(path, path.read_bytes())
            except WorkspaceError:
                continue  # binary files are skipped by sync too
            rows.append((path.relative_to(root).as_posix(), converted.text, converted.format))
    return out


def main() -> None:
    differ = 0
    for name, rows in sources().items():
        started = time.perf_counter()
        new = [content_kind(i, text, fmt=fmt) for i, text, fmt in rows]
        lazy = time.perf_counter() - started
        started = time.perf_counter()
        old = [reference_kind(i, text, fmt=fmt) for i, text, fmt in rows]
        full = time.perf_counter() - started
        wrong = sum(a != b for a, b in zip(new, old, strict=True))
        differ += wrong
        counts = ", ".join(f"{k} {v:,}" for k, v in collections.Counter(new).most_common())
        print(
            f"{name:>12}: {len(rows):,} sources, kinds differ for {wrong}; lazy {lazy:.2f} s, "
            f"full measures {full:.2f} s ({full / max(lazy, 1e-9):.1f}x); {counts}"
        )
    print("identical kinds on every collection" if not differ else f"{differ} kinds differ")


if __name__ == "__main__":
    main()
