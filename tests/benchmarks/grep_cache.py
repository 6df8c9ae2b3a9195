"""First grep in a new process over the mixed-docs set: converting every file vs the sync cache.

Run: ``.venv/bin/python tests/benchmarks/grep_cache.py``

The mixed-docs folder (PDF, DOCX, PPTX, XLSX, HTML, EPUB, EML, ODT, Markdown...) is copied to a
temporary root and synced once, which stores the conversions. Then each round greps for ``the``
twice, each time with a fresh ``CachedConverter`` (an empty memory cache, as in a new process).
One grep converts every file; the other reads the conversions ``sync`` stored
(``CachedConverter(disk=ws.conversion_cache)``, what ``search_documents`` does). Both must find
the same matches.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from workspace_tools import Workspace
from workspace_tools.core.convert import CachedConverter
from workspace_tools.core.grep import grep

MIXED = Path(__file__).resolve().parents[2].parent / "shared" / "benchmarks" / "mixed-docs"
ROUNDS = 3


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        shutil.copytree(MIXED, root)
        ws = Workspace(root, embedder=None, show_progress=False)
        ws.sync()
        best: dict[str, float] = {}
        found: dict[str, list[tuple[str, int]]] = {}
        for _ in range(ROUNDS):
            for label, disk in [
                ("convert every file", None),
                ("read sync's cache", ws.conversion_cache),
            ]:
                start = time.perf_counter()
                report = grep(root, "the", convert=CachedConverter(disk=disk), max_matches=10_000)
                seconds = time.perf_counter() - start
                best[label] = min(best.get(label, seconds), seconds)
                found[label] = [(m.path, m.line) for m in report.matches]
        print(f"{report.files_searched} files, {len(report.matches)} matching lines")
        for label, seconds in best.items():
            print(f"{label:20} {seconds * 1000:8.1f} ms (best of {ROUNDS})")
        slow, fast = best["convert every file"], best["read sync's cache"]
        print(
            f"speed-up: {slow / fast:.0f}x; same matches: {len(set(map(tuple, found.values()))) == 1}"
        )


if __name__ == "__main__":
    main()
