"""WorkspaceToolkit: tool selection, one shared core, approvals, names; lazy exports; retriever."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.documents import Document

from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.toolkit import RESERVED_TOOL_NAMES, WorkspaceToolkit


def _skill(root: Path) -> None:
    folder = root / "skills" / "pdf-tools"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: Work with PDF forms.\n---\n\n# PDF\n\nUse pdfplumber.\n",
        encoding="utf-8",
    )


def _toolkit(ws: Workspace, **kwargs: object) -> WorkspaceToolkit:
    return WorkspaceToolkit(workspace=ws, skills_entry_points=False, **kwargs)


def test_default_tools(bm25_ws: Workspace) -> None:
    names = [t.name for t in _toolkit(bm25_ws).get_tools()]
    assert names == ["workspace_search", "workspace_index", "search_documents", "workspace_read"]


def test_all_tools_share_one_core(bm25_ws: Workspace, tree: Path) -> None:
    _skill(tree)
    toolkit = _toolkit(bm25_ws, skills_paths=["skills"], docs_root="docs")
    tools = toolkit.get_tools()
    assert [t.name for t in tools] == [
        "workspace_search",
        "workspace_index",
        "search_documents",
        "workspace_read",
        "skill",
        "skill_read",
        "skill_search",
        "docs_search",
        "docs_list",
        "docs_get_page",
        "docs_refresh_index",
    ]
    assert {id(t.workspace) for t in tools if hasattr(t, "workspace")} == {id(bm25_ws)}
    assert toolkit.skills is not None
    assert {id(t.registry) for t in tools if hasattr(t, "registry")} == {id(toolkit.skills)}
    assert [id(t) for t in toolkit.get_tools()] == [id(t) for t in tools]  # built once
    assert not {t.name for t in tools} & RESERVED_TOOL_NAMES
    assert toolkit.skills.root == bm25_ws.root


def test_include_exclude(bm25_ws: Workspace) -> None:
    assert [t.name for t in _toolkit(bm25_ws, include=["search_documents"]).get_tools()] == [
        "search_documents"
    ]
    names = [t.name for t in _toolkit(bm25_ws, exclude=["workspace_index"]).get_tools()]
    assert names == ["workspace_search", "search_documents", "workspace_read"]
    with pytest.raises(
        ValueError, match="include names unknown tool\\(s\\) grep; this toolkit has"
    ):
        _toolkit(bm25_ws, include=["grep"]).get_tools()


def test_read_only_drops_index(bm25_ws: Workspace, tree: Path) -> None:
    assert "workspace_index" not in [t.name for t in _toolkit(bm25_ws, read_only=True).get_tools()]
    ro = Workspace(tree, embedder=None, index_dir=bm25_ws.index_dir, read_only=True)
    assert "workspace_index" not in [t.name for t in _toolkit(ro).get_tools()]


def test_interrupt_on_feeds_human_in_the_loop(bm25_ws: Workspace) -> None:
    toolkit = _toolkit(bm25_ws, require_approval=["workspace_index"])
    assert toolkit.interrupt_on() == {"workspace_index": True}
    index_tool = next(t for t in toolkit.get_tools() if t.name == "workspace_index")
    assert index_tool.require_approval is True
    HumanInTheLoopMiddleware(interrupt_on=toolkit.interrupt_on())
    assert _toolkit(bm25_ws).interrupt_on() == {}
    with pytest.raises(ValueError, match="require_approval names unknown tool"):
        _toolkit(bm25_ws, require_approval=["nope"]).interrupt_on()


def test_skills_middleware(bm25_ws: Workspace, tree: Path) -> None:
    _skill(tree)
    middleware = _toolkit(bm25_ws, skills_paths=["skills"]).skills_middleware()
    assert middleware.tools == []
    assert "pdf-tools" in middleware.skills_prompt()
    with pytest.raises(ValueError, match="no skills"):
        _toolkit(bm25_ws).skills_middleware()


def test_lazy_exports() -> None:
    import workspace_tools.tools as tools_pkg

    for name in tools_pkg.__all__:
        assert getattr(tools_pkg, name) is not None
    with pytest.raises(AttributeError):
        tools_pkg.nope


def test_retriever_documents(hybrid_ws: Workspace) -> None:
    from workspace_tools.tools.retriever import WorkspaceRetriever

    retriever = WorkspaceRetriever(workspace=hybrid_ws, mode="bm25")
    docs = retriever.invoke("install package", k=1)
    assert len(docs) == 1
    doc = docs[0]
    assert isinstance(doc, Document)
    assert doc.id == "docs/guide.md"
    assert doc.metadata["source"] == "docs/guide.md"
    assert doc.metadata["score"] > 0
    assert (doc.metadata["line_start"], doc.metadata["line_end"]) == (5, 7)
    assert doc.metadata["section_heading"] == "Installation"
    assert doc.metadata["chunk_id"] == "docs/guide.md"
    assert "pip install" in doc.page_content
    filtered = WorkspaceRetriever(workspace=hybrid_ws, filter={"source_id": "docs/faq.md"})
    assert {d.metadata["source"] for d in filtered.invoke("keyword")} == {"docs/faq.md"}


async def test_retriever_async_and_tool(hybrid_ws: Workspace) -> None:
    from langchain_core.tools import create_retriever_tool

    from workspace_tools.tools.retriever import WorkspaceRetriever

    retriever = WorkspaceRetriever(workspace=hybrid_ws, k=2)
    docs = await retriever.ainvoke("search chunks")
    assert len(docs) == 2
    tool = create_retriever_tool(retriever, "find_passages", "Find passages.")
    assert "Call search with a query" in await tool.ainvoke({"query": "search chunks"})


def test_a_misspelt_option_is_an_error_naming_the_close_field(bm25_ws: Workspace) -> None:
    from workspace_tools.core.errors import InvalidInputError

    with pytest.raises(InvalidInputError) as caught:
        _toolkit(bm25_ws, doc_root="docs")
    message = str(caught.value)
    assert "unknown option(s) 'doc_root' (did you mean 'docs_root'?)" in message
    assert "its options are: " in message and "skills_paths" in message
