"""A source's metadata is stored once, not on every chunk (issue 28, item 18).

Metadata just under the 16 KB limit on a 238 KB text indexed through ``workspace_index`` grew the
index folder 77x (18.4 MB: the metadata on each of 526 chunk rows and again on each result
payload row). Kept once, on the source row (results read it from there), the folder stays a
few times the text, and filters, results and rankings are the same.
"""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path

from workspace_tools import Workspace
from workspace_tools.core.workspace._ingest import MAX_METADATA_BYTES
from workspace_tools.tools.workspace import WorkspaceIndexTool

_TEXT = "".join(
    f"## Section {n}\n\nParagraph {n} about retries, timeouts and backoff policies.\n" * 8
    for n in range(400)
)[:238_000]
_METADATA = {"team": "search", "notes": "x" * (MAX_METADATA_BYTES - 64)}


def _folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def test_big_metadata_is_stored_once_per_source(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    WorkspaceIndexTool(workspace=ws).invoke(
        {"path": "notes/big.md", "content": _TEXT, "metadata": _METADATA}
    )
    ws.save()
    chunks = len(ws.chunks_of("notes/big.md"))
    assert chunks > 500
    del ws
    gc.collect()
    grown = _folder_bytes(tmp_path / ".workspace_tools")
    # 77x the text before (18.4 MB); about 5x now. The metadata alone on every row would be 17 MB.
    assert grown < 8 * len(_TEXT), grown
    index = tmp_path / ".workspace_tools" / "index"
    conn = sqlite3.connect(index / "index.sqlite3")
    longest = conn.execute("SELECT max(length(metadata)) FROM chunks").fetchone()[0]
    conn.close()
    assert longest < 200
    snapshot = next(index.glob("snapshot-*"))
    for path in snapshot.iterdir():  # results read the metadata from the database
        assert _METADATA["notes"][:1000].encode() not in path.read_bytes(), path.name


def test_results_and_filters_see_the_whole_metadata(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    ws.index("big.md", _TEXT, metadata=_METADATA)
    ws.index("other.md", "backoff policies elsewhere", metadata={"team": "infra", "format": "x"})
    before = [r.to_dict() for r in ws.search("backoff policies", top_k=8)]
    ws.save()
    for reader in (ws, Workspace(tmp_path, embedder=None, read_only=True)):
        hits = reader.search("backoff policies", top_k=8)
        assert [r.to_dict() for r in hits] == before  # same scores, order and metadata
        found = reader.search("backoff", top_k=3, filter={"team": "search"})
        assert found and all(r.metadata["notes"] == _METADATA["notes"] for r in found)
        assert found[0].metadata["format"] == "markdown"
        other = reader.search("backoff", top_k=3, filter={"team": "infra"})
        assert [r.source_id for r in other] == ["other.md"]
        # the chunk's own value wins over the source's: "format" is the converter's
        assert other[0].metadata["format"] == "markdown"
    chunk = ws.chunks_of("big.md")[0]
    assert chunk.metadata["notes"] == _METADATA["notes"] and chunk.metadata["team"] == "search"
