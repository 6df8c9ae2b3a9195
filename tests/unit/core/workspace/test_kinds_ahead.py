"""A bulk index_many whose content kinds partly come from the worker stores the same rows."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.bulk import opened_workspaces, small_bulk
from tests.unit.core.text.test_kind_split import _FAKE, _SAMPLES
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded import EmbeddedBackend
from workspace_tools.core.ranking.prior import KIND_KEY
from workspace_tools.core.text import token_pipe, token_split
from workspace_tools.core.text.token_split import SplitTokenizer
from workspace_tools.core.workspace import _kinds_ahead


@pytest.fixture(autouse=True)
def _small_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk change of 20 texts starts the worker here; 40 changed texts ask it for kinds."""
    small_bulk(monkeypatch)
    monkeypatch.setattr(_kinds_ahead, "_CHANGED_LEAST", 40)


opened = pytest.fixture(opened_workspaces)


_STORABLE = [s for s in _SAMPLES if "\ud800" not in s[1]]  # index_many refuses a lone surrogate


def _docs(count: int, *, seed: int) -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for n in range(count):
        source, text, fmt = _STORABLE[(n + seed) % len(_STORABLE)]
        name = f"s{seed}/{n}-{source}" + (".md" if fmt == "markdown" else "")
        metadata: dict[str, Any] = {}
        if n % 7 == 0:
            metadata = {KIND_KEY: "code", "team": "a"}  # the caller's kind wins
        elif n % 5 == 0:
            metadata = {"format": "mine", "tags": ["x", n]}  # "format" is the converter's
        out.append((name, f"{text} {n}", metadata))
    return out


def _rows(ws: Workspace) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with sqlite3.connect(ws._db.path) as conn:
        chunks = conn.execute("SELECT * FROM chunks ORDER BY key").fetchall()
        sources = conn.execute("SELECT * FROM sources ORDER BY id").fetchall()
    return chunks, sources


def _split(ws: Workspace) -> SplitTokenizer:
    state = ws._state
    assert isinstance(state, EmbeddedBackend)
    return state.split


def _build(root: Path, opened: list[Workspace]) -> Workspace:
    root.mkdir()
    ws = Workspace(root, embedder=None)
    opened.append(ws)
    ws.index_many(_docs(300, seed=1))
    ws.index_many(_docs(300, seed=2))
    ws.index_many([(i, f"{t} again", m) for i, t, m in _docs(150, seed=1)])  # replaced
    ws.index_many(_docs(300, seed=2))  # unchanged: nothing staged, nothing asked
    return ws


def test_the_rows_are_those_of_an_index_without_the_worker(
    tmp_path: Path, opened: list[Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_worker = _build(tmp_path / "with", opened)
    monkeypatch.setenv(token_split.WORKER_ENV, "0")
    without = _build(tmp_path / "without", opened)
    assert _split(with_worker).kinds.worker_texts > 0
    assert with_worker._kind_rates.kind is not None  # measured: later changes ask at once
    assert _split(without).kinds.worker_texts == 0
    assert _split(without).worker is None
    assert _rows(with_worker) == _rows(without)
    chunks, sources = _rows(with_worker)
    kinds = {m for row in chunks for m in re.findall(r'"content_kind":"(\w+)"', row[8])}
    assert len(kinds) >= 6  # many kinds, each as computed here
    team = {row[0] for row in sources if '"team"' in row[4]}
    assert team
    own = [row[8] for row in chunks if row[2] in team]
    assert own
    assert not any('"content_kind":"' in m and '"content_kind":"code"' not in m for m in own)


def test_a_worker_answering_garbage_leaves_the_rows_unchanged(
    tmp_path: Path, opened: list[Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    def start(module: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-c", _FAKE, b"Kgarbage".hex()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    real = token_pipe.start_package_child
    monkeypatch.setattr(token_pipe, "start_package_child", start)
    broken = _build(tmp_path / "broken", opened)
    assert _split(broken).failures == 2  # then it stopped trying
    assert _split(broken).kinds.worker_texts == 0
    monkeypatch.setattr(token_pipe, "start_package_child", real)
    monkeypatch.setenv(token_split.WORKER_ENV, "0")
    without = _build(tmp_path / "without", opened)
    assert _rows(broken) == _rows(without)
