"""The MCP docs server ranks hybrid when the vector extra is installed, and says how it ranks."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.fakes import FakeEmbedder
from tests.unit.mcp.conftest import server_env
from workspace_tools.core.docs import embedding
from workspace_tools.core.embedding import embedder as embedder_module
from workspace_tools.mcp.config import server_options
from workspace_tools.mcp.server import build_tools

CLI = ("-m", "workspace_tools.cli")


class _Packaged(FakeEmbedder):
    """Stands in for the packaged model: built with no model name, as the default is."""

    def __init__(self) -> None:
        super().__init__()


@pytest.fixture
def docs_only(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project with the docs vectors of these tests kept under ``tmp_path``."""
    monkeypatch.setenv("WORKSPACE_TOOLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(embedder_module, "SentenceTransformerEmbedder", _Packaged)
    return project


def _docs_note(project: Path, embedder: str | None) -> str:
    served = build_tools(server_options(project).with_flags(docs="docs"), embedder=embedder)
    assert "docs_search" in [t.name for t in served.tools]
    return next(n for n in served.notes if n.startswith("docs: "))


@pytest.mark.parametrize("name", [None, "default"])
def test_docs_alone_rank_hybrid_with_the_packaged_model(
    docs_only: Path, monkeypatch: pytest.MonkeyPatch, name: str | None
) -> None:
    monkeypatch.setattr(embedding, "missing_vector_packages", lambda: [])
    where = docs_only.resolve() / "docs"
    assert _docs_note(docs_only, name) == f"docs: {where} (hybrid ranking with the packaged model)"


def test_docs_rank_by_keywords_without_the_vector_extra_or_with_none(
    docs_only: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = docs_only.resolve() / "docs"
    assert _docs_note(docs_only, "none") == f"docs: {where} (keyword ranking: --embedder none)"
    monkeypatch.setattr(embedding, "missing_vector_packages", lambda: ["faiss-cpu"])
    assert _docs_note(docs_only, None) == (
        f"docs: {where} (keyword ranking: the vector extra is not installed (faiss-cpu))"
    )


@pytest.mark.requires_model
async def test_the_served_docs_turn_hybrid_with_the_real_model(project: Path) -> None:
    """``workspace-tools mcp --docs docs`` as a client starts it: hybrid once vectors are ready."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[*CLI, "mcp", "--docs", "docs"],
        env=server_env(),  # the user's cache: the converted model is there
        cwd=str(project),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        deadline = time.monotonic() + 240
        while True:
            result = await session.call_tool("docs_refresh_index", {})
            text = result.content[0].text  # type: ignore[union-attr]
            if "hybrid ranking" in text or time.monotonic() > deadline:
                break
            assert "keyword ranking until the section vectors are ready" in text
            await anyio.sleep(2)
        assert text.endswith(
            "hybrid ranking (keywords + vectors of sentence-transformers/all-MiniLM-L6-v2)."
        )
        found = await session.call_tool("docs_search", {"query": "put the package on a machine"})
        assert "Installing" in found.content[0].text  # type: ignore[union-attr]
