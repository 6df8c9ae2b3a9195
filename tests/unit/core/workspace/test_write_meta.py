"""The settings and root every write stores, made once rather than on every write (issue 25)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.workspace import _writer as _writes


def test_writes_store_the_settings_and_root_made_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    ws.index("a.md", "sun and park")
    made: list[int] = []
    real = _writes.root_record

    def counting(root: Path, index_dir: Path) -> str:
        made.append(1)
        return real(root, index_dir)

    monkeypatch.setattr(_writes, "root_record", counting)
    for number in range(3):
        ws.index(f"b{number}.md", f"sun {number}")
    assert made == []  # the first write made them; the others reuse them
    assert ws._db.meta("settings") == json.dumps(ws._settings(), sort_keys=True)
    assert ws._db.meta("root") == real(ws.root, ws.index_dir)


def test_the_stored_settings_follow_what_they_are_made_of(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    ws.index("a.md", "sun and park")
    ws.embedder = None  # the vectors' settings then come from the saved settings
    ws._saved_settings = {"embedder": {"model_id": "other", "dimension": 3}}
    ws.index("b.md", "sun")
    stored = json.loads(ws._db.meta("settings") or "{}")
    assert stored["embedder"] == {"model_id": "other", "dimension": 3}
    assert stored == ws._settings()
