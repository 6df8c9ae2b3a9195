"""The snapshot's result payload: rows decode to what the database holds, results are the same."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from workspace_tools import Workspace
from workspace_tools.core.store.snapshot import Payload, read_pointer

_ODD_TEXT = 'caf\u00e9 \U0001f600 nul\x00 byte\nline two \\ "quoted" \ud800 lone surrogate'


def _payload_of(rows: list[tuple[bytes, bytes]]) -> Payload:
    pieces = [piece for row in rows for piece in row]
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in pieces], out=offsets[1:])
    return Payload(
        blob=np.frombuffer(b"".join(pieces), dtype=np.uint8), offsets=offsets, sources=_SOURCES
    )


_SOURCES = {"docs/a b.md": {"tags": ["x", "\u00fc"], "owner": "me", "n": 2}}


def test_a_row_decodes_to_exactly_what_was_encoded() -> None:
    rows = [
        Payload.encode(
            chunk_id="docs/a b.md#chunk-2",
            source="docs/a b.md",
            start=12,
            end=40,
            headings=["T\u00eftle", "Section \x01"],
            levels=[1, 2],
            metadata={"format": "markdown", "tags": ["x", "\u00fc"], "n": 3},
            base=_SOURCES["docs/a b.md"],
            text=_ODD_TEXT,
        ),
        (b"", b""),  # a row deleted before the payload was written
        Payload.encode(
            chunk_id="t",
            source="t",
            start=1,
            end=1,
            headings=[],
            levels=[],
            metadata={},
            base={},
            text="",
        ),
    ]
    payload = _payload_of(rows)
    assert payload.row(0) == (
        "docs/a b.md#chunk-2",
        "docs/a b.md",
        12,
        40,
        ("T\u00eftle", "Section \x01"),
        (1, 2),
        {"format": "markdown", "tags": ["x", "\u00fc"], "n": 3},
        _ODD_TEXT,
    )
    assert payload.row(1) is None
    assert payload.row(2) == ("t", "t", 1, 1, (), (), {}, "")


def _results(ws: Workspace, query: str) -> list[tuple[object, ...]]:
    return [
        (h.id, h.score, h.content, h.metadata, h.snippet, h.line_range, h.headings)
        for h in ws.search(query, mode="bm25", top_k=20)
    ]


def _fill(root: Path) -> Workspace:
    ws = Workspace(root, embedder=None)
    body = "\n".join(
        f"Paragraph {n} about install steps and caf\u00e9 \U0001f600." for n in range(30)
    )
    for number in range(12):
        ws.index(
            f"notes/n{number}.md",
            f"# Guide {number}\n\n## Install\n\n{body}\n\n## Other\n\nMore install text.\n",
            metadata={"team": f"t{number % 3}", "tags": ["a", "\u00e9"]},
        )
    ws.index("plain.txt", "install " + _ODD_TEXT.replace("\ud800", ""))
    ws.save()
    return ws


def test_results_from_the_payload_equal_results_from_the_database(tmp_path: Path) -> None:
    _fill(tmp_path)
    reopened = Workspace(tmp_path, embedder=None)
    from_payload = _results(reopened, "install caf\u00e9 steps")
    assert reopened._state.payload is not None  # the results above came from it
    assert len(from_payload) == 20
    assert any(r[6] for r in from_payload)  # headings were resolved
    plain = Workspace(tmp_path, embedder=None)
    plain._follower.refresh()
    plain._state.payload = None  # every chunk from the database instead
    assert _results(plain, "install caf\u00e9 steps") == from_payload


def test_a_snapshot_without_this_payload_format_reads_results_from_the_database(
    tmp_path: Path,
) -> None:
    ws = _fill(tmp_path)
    expected = _results(ws, "install")
    info = read_pointer(ws._db)
    assert info is not None
    record = json.loads(ws._db.meta("snapshot") or "{}")
    for name in ("results.npy", "results_offsets.npy", "results_sources.json"):
        (info.folder / name).unlink()
        del record["files"][name]
    with ws._db.write("test") as writer:
        writer.set_meta("snapshot", json.dumps(record))
    reopened = Workspace(tmp_path, embedder=None)
    assert _results(reopened, "install") == expected
    assert reopened._state.payload is None
