"""Disk used by metadata (issue 28, item 18): one 238 KB document, metadata just under 16 KB.

Indexed through the ``workspace_index`` tool (BM25 only: vectors do not depend on metadata),
saved, and the index folder measured. Run: ``python tests/benchmarks/metadata_disk.py``.
"""

from __future__ import annotations

import gc
import json
import sys
import tempfile
from pathlib import Path

from workspace_tools import Workspace
from workspace_tools.core.workspace._ingest import MAX_METADATA_BYTES
from workspace_tools.tools.workspace import WorkspaceIndexTool


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    text = "".join(
        f"## Section {n}\n\nParagraph {n} about retries, timeouts and backoff policies.\n" * 8
        for n in range(400)
    )[:238_000]
    metadata = {"team": "search", "notes": "x" * (MAX_METADATA_BYTES - 64)}
    assert len(json.dumps(metadata)) < MAX_METADATA_BYTES
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = Workspace(root, embedder=None)
        tool = WorkspaceIndexTool(workspace=ws)
        empty = (
            folder_bytes(root / ".workspace_tools") if (root / ".workspace_tools").exists() else 0
        )
        tool.invoke({"path": "notes/big.md", "content": text, "metadata": metadata})
        ws.save()
        chunks = len(ws.chunks_of("notes/big.md"))
        hits = ws.search("backoff policies", top_k=3, filter={"team": "search"})
        assert hits and hits[0].metadata["notes"] == metadata["notes"]
        del ws, tool
        gc.collect()
        grown = folder_bytes(root / ".workspace_tools") - empty
    size = len(text.encode())
    print(
        f"text {size / 1000:.0f} KB, metadata {len(json.dumps(metadata)) / 1000:.1f} KB, "
        f"{chunks} chunks: index folder grew {grown / 1e6:.2f} MB ({grown / size:.1f}x the text)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
