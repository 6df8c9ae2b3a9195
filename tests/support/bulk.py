"""Bulk changes of a few dozen texts in tests: the tokenizing worker's thresholds lowered."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from workspace_tools import Workspace
from workspace_tools.core.text import token_split
from workspace_tools.core.workspace import _writes


def small_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change of 20 texts starts the worker (not thousands); 10 use a running one."""
    monkeypatch.setattr(token_split, "BULK_TEXTS", 20)
    monkeypatch.setattr(token_split, "WORKER_MIN_TEXTS", 10)
    monkeypatch.setattr(_writes, "WORKER_MIN_TEXTS", 10)


def opened_workspaces() -> Iterator[list[Workspace]]:
    """A fixture body: the workspaces a test appends are closed after it (their workers stop)."""
    made: list[Workspace] = []
    yield made
    for ws in made:
        ws.close()
