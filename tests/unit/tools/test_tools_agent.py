"""End to end: create_agent with a fake chat model calling every toolkit tool, sync and async."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage

from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.toolkit import WorkspaceToolkit


class ToolCallingFake(GenericFakeChatModel):
    """Fake chat model that accepts tools (and ignores them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:
        return self


CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("c-search", "workspace_search", {"query": "install package", "top_k": 2}),
    ("c-index", "workspace_index", {"path": "notes/new.md", "content": "# New\n\nZebra crossing."}),
    ("c-keyword", "search_documents", {"query": "keyword ranking", "paths": ["docs"]}),
    ("c-grep", "search_documents", {"query": r"def \w+", "mode": "grep", "regex": True}),
    ("c-bad", "search_documents", {"query": "(", "mode": "grep", "regex": True}),
    ("c-skill", "skill", {"name": "pdf-tools"}),
    ("c-skill-search", "skill_search", {"query": "pdf forms"}),
    ("c-docs", "docs_search", {"query": "installation"}),
]


def _agent(tree: Path, tmp_path: Path) -> Any:
    skill = tree / "skills" / "pdf-tools"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: Work with PDF forms.\n---\n\n# PDF body\n",
        encoding="utf-8",
    )
    ws = Workspace(tree, embedder=None, index_dir=tmp_path / "index")
    ws.sync(["docs", "src"])
    toolkit = WorkspaceToolkit(
        workspace=ws, skills_paths=["skills"], skills_entry_points=False, docs_root="docs"
    )
    calls = [{"name": n, "args": a, "id": i, "type": "tool_call"} for i, n, a in CALLS]
    model = ToolCallingFake(
        messages=iter([AIMessage(content="", tool_calls=calls), AIMessage(content="done")])
    )
    return create_agent(model, tools=toolkit.get_tools(), system_prompt="You help.")


def _check(result: dict[str, Any]) -> None:
    messages = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    assert set(messages) == {i for i, _, _ in CALLS}
    search = messages["c-search"]
    assert search.status == "success"
    assert search.content.startswith("1. docs/guide.md:5-7 › Installation")
    assert search.artifact[0]["source_id"] == "docs/guide.md"
    index = messages["c-index"]
    assert index.content.startswith("Indexed notes/new.md (1 chunk(s)")
    assert index.artifact["chunk_ids"] == ["notes/new.md"]
    keyword = messages["c-keyword"]
    assert keyword.artifact["mode"] == "bm25"
    assert keyword.artifact["results"][0]["document_path"] == "docs/faq.md"
    assert keyword.artifact["results"][0]["section_heading"] == "Why BM25?"
    grep = messages["c-grep"]
    assert grep.artifact["mode"] == "grep"
    assert grep.content.startswith("src/http.py:1:1: <<def parseHttpRequest>>(raw):")
    bad = messages["c-bad"]
    assert bad.status == "error"
    assert bad.content.startswith("Invalid regular expression '(': missing )")
    skill = messages["c-skill"]
    assert '<skill_content name="pdf-tools">' in skill.content
    assert skill.artifact["name"] == "pdf-tools"
    assert messages["c-skill-search"].artifact[0]["skill_name"] == "pdf-tools"
    docs = messages["c-docs"]
    assert "Installation" in docs.content
    assert docs.artifact
    assert result["messages"][-1].content == "done"


def test_agent_invoke(tree: Path, tmp_path: Path) -> None:
    _check(_agent(tree, tmp_path).invoke({"messages": [("user", "look around")]}))


async def test_agent_ainvoke(tree: Path, tmp_path: Path) -> None:
    _check(await _agent(tree, tmp_path).ainvoke({"messages": [("user", "look around")]}))


@pytest.mark.parametrize("read_only", [True])
def test_agent_without_index_tool_when_read_only(
    tree: Path, tmp_path: Path, read_only: bool
) -> None:
    ws = Workspace(tree, embedder=None, index_dir=tmp_path / "i")
    ws.sync()
    toolkit = WorkspaceToolkit(workspace=ws, read_only=read_only, skills_entry_points=False)
    call = {
        "name": "workspace_index",
        "args": {"path": "x.md", "content": "x"},
        "id": "c1",
        "type": "tool_call",
    }
    model = ToolCallingFake(
        messages=iter([AIMessage(content="", tool_calls=[call]), AIMessage(content="ok")])
    )
    result = create_agent(model, tools=toolkit.get_tools()).invoke({"messages": [("user", "x")]})
    message = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert message.status == "error"
    assert "workspace_index is not a valid tool" in message.content
