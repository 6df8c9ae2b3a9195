"""The ``backend`` fixture: every behaviour test here runs once per search backend.

The backends are the registry's built-in ones plus the toy of ``toy_backend.py``, registered
for the test through the registry API (and removed after it).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import FakeEmbedder
from tests.unit.core.backends.toy_backend import TOY_SPEC
from workspace_tools.core.backends import registry
from workspace_tools.core.workspace import Workspace

MILVUS_MISSING = [
    name
    for module, name in (("pymilvus", "pymilvus"), ("milvus_lite", "milvus-lite"))
    if importlib.util.find_spec(module) is None
]


@pytest.fixture(
    params=[
        "embedded",
        pytest.param(
            "milvus",
            marks=[
                pytest.mark.skipif(
                    bool(MILVUS_MISSING),
                    reason=f"the milvus extra is not installed (missing {', '.join(MILVUS_MISSING)})",
                ),
                pytest.mark.slow,  # Milvus Lite starts a server process: --full runs it
            ],
        ),
        "toy",
    ]
)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """A backend name (the Milvus one on a Milvus Lite file in the index folder)."""
    registry.register(TOY_SPEC)
    try:
        yield str(request.param)
    finally:
        registry.unregister(TOY_SPEC.name)


OpenWorkspace = Callable[..., Workspace]


@pytest.fixture
def open_ws(backend: str, tmp_path: Path) -> Iterator[OpenWorkspace]:
    """Open (or reopen) a workspace at ``tmp_path/ws`` served by the backend under test."""
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    opened: list[Workspace] = []

    def make(**options: Any) -> Workspace:
        options.setdefault("embedder", FakeEmbedder())
        options.setdefault("config", False)
        ws = Workspace(root, backend=backend, **options)
        opened.append(ws)
        return ws

    yield make
    for ws in opened:
        ws._state.close()
