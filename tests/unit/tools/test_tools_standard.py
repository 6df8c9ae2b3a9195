"""langchain-tests standard suites for every workspace tool and the retriever."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests, ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.retriever import WorkspaceRetriever
from workspace_tools.tools.search_documents import SearchDocumentsTool
from workspace_tools.tools.workspace import WorkspaceIndexTool, WorkspaceSearchTool


def _workspace(base: Path) -> Workspace:
    root = base / "ws"
    root.mkdir()
    for i in range(5):
        (root / f"doc{i}.md").write_text(
            f"# Doc {i}\n\nThe workspace search finds passages, number {i}.\n", encoding="utf-8"
        )
    ws = Workspace(root, embedder=FakeEmbedder(), index_dir=base / "index")
    ws.sync()
    return ws


@pytest.fixture(scope="module")
def shared_ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    base = tmp_path_factory.mktemp("std")
    yield _workspace(base)
    shutil.rmtree(base, ignore_errors=True)


class _Base:
    @pytest.fixture(autouse=True)
    def _setup(self, shared_ws: Workspace) -> None:
        self._ws = shared_ws

    @property
    def tool_constructor_params(self) -> dict:
        return {"workspace": self._ws}


SEARCH_EXAMPLE = {"query": "workspace search", "top_k": 3, "mode": "hybrid"}
INDEX_EXAMPLE = {
    "path": "notes/extra.md",
    "content": "# Extra\n\nMore text.",
    "metadata": {"k": "v"},
}
DOCS_EXAMPLE = {"query": "passages", "mode": "grep", "paths": ["doc1.md"], "context_lines": 1}


class TestWorkspaceSearchUnit(_Base, ToolsUnitTests):
    tool_constructor = WorkspaceSearchTool
    tool_invoke_params_example = SEARCH_EXAMPLE


class TestWorkspaceSearchIntegration(_Base, ToolsIntegrationTests):
    tool_constructor = WorkspaceSearchTool
    tool_invoke_params_example = SEARCH_EXAMPLE


class TestWorkspaceIndexUnit(_Base, ToolsUnitTests):
    tool_constructor = WorkspaceIndexTool
    tool_invoke_params_example = INDEX_EXAMPLE


class TestWorkspaceIndexIntegration(_Base, ToolsIntegrationTests):
    tool_constructor = WorkspaceIndexTool
    tool_invoke_params_example = INDEX_EXAMPLE


class TestSearchDocumentsUnit(_Base, ToolsUnitTests):
    tool_constructor = SearchDocumentsTool
    tool_invoke_params_example = DOCS_EXAMPLE


class TestSearchDocumentsIntegration(_Base, ToolsIntegrationTests):
    tool_constructor = SearchDocumentsTool
    tool_invoke_params_example = DOCS_EXAMPLE


class TestSearchDocumentsKeywordIntegration(_Base, ToolsIntegrationTests):
    tool_constructor = SearchDocumentsTool
    tool_invoke_params_example = {"query": "workspace passages", "paths": ["*.md"], "top_k": 2}  # noqa: RUF012


class TestWorkspaceRetriever(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _setup(self, shared_ws: Workspace) -> None:
        self._ws = shared_ws

    @property
    def retriever_constructor(self) -> type[WorkspaceRetriever]:
        return WorkspaceRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"workspace": self._ws, "mode": "bm25"}

    @property
    def retriever_query_example(self) -> str:
        return "workspace search passages"
