from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from tests.support.docs_tree import make_docs_tree
from workspace_tools.core.docs.index import DocsIndex
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.tools.docs import (
    MAX_PAGE_CHARS,
    DocsGetPageTool,
    DocsListTool,
    DocsRefreshIndexTool,
    DocsSearchTool,
    make_docs_tools,
)

_TREE = tempfile.TemporaryDirectory(prefix="docs-tools-")
SHARED_INDEX = DocsIndex(make_docs_tree(Path(_TREE.name)))


def call(tool: BaseTool, **args: Any) -> ToolMessage:
    message = tool.invoke({"args": args, "id": "1", "name": tool.name, "type": "tool_call"})
    assert isinstance(message, ToolMessage)
    return message


def by_name(tools: list[BaseTool]) -> dict[str, BaseTool]:
    return {tool.name: tool for tool in tools}


# -- standard LangChain suites --------------------------------------------------------------------


class _Standard:
    tool_class: ClassVar[type[BaseTool]]
    example: ClassVar[dict[str, Any]] = {}

    @property
    def tool_constructor(self) -> type[BaseTool]:
        return self.tool_class

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"index": SHARED_INDEX}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return self.example


class TestDocsSearchUnit(_Standard, ToolsUnitTests):
    tool_class = DocsSearchTool
    example: ClassVar[dict[str, Any]] = {"query": "docker", "top_k": 3}


class TestDocsSearchIntegration(_Standard, ToolsIntegrationTests):
    tool_class = DocsSearchTool
    example: ClassVar[dict[str, Any]] = {"query": "docker", "top_k": 3}


class TestDocsListUnit(_Standard, ToolsUnitTests):
    tool_class = DocsListTool
    example: ClassVar[dict[str, Any]] = {"folder": "guides"}


class TestDocsListIntegration(_Standard, ToolsIntegrationTests):
    tool_class = DocsListTool
    example: ClassVar[dict[str, Any]] = {"folder": "guides"}


class TestDocsGetPageUnit(_Standard, ToolsUnitTests):
    tool_class = DocsGetPageTool
    example: ClassVar[dict[str, Any]] = {"path": "guides/deployment.md"}


class TestDocsGetPageIntegration(_Standard, ToolsIntegrationTests):
    tool_class = DocsGetPageTool
    example: ClassVar[dict[str, Any]] = {"path": "guides/deployment.md"}


class TestDocsRefreshIndexUnit(_Standard, ToolsUnitTests):
    tool_class = DocsRefreshIndexTool


class TestDocsRefreshIndexIntegration(_Standard, ToolsIntegrationTests):
    tool_class = DocsRefreshIndexTool


# -- behaviour ------------------------------------------------------------------------------------


def test_factory_gives_four_tools_over_one_index(docs_root: Path) -> None:
    tools = make_docs_tools(docs_root)
    assert [t.name for t in tools] == [
        "docs_search",
        "docs_list",
        "docs_get_page",
        "docs_refresh_index",
    ]
    indexes = {id(t.index) for t in tools}  # type: ignore[attr-defined]
    assert len(indexes) == 1
    assert tools[0].index.stats.build == 1  # type: ignore[attr-defined]  # built eagerly


def test_every_argument_has_a_type_and_description(docs_root: Path) -> None:
    for tool in make_docs_tools(docs_root):
        schema = tool.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
        assert schema["type"] == "object"
        for name, prop in schema.get("properties", {}).items():
            assert prop.get("description"), (tool.name, name)
            assert "type" in prop or "anyOf" in prop, (tool.name, name)


def test_search_content_and_artifact(docs_root: Path) -> None:
    search = by_name(make_docs_tools(docs_root))["docs_search"]
    message = call(search, query="registry", top_k=2)
    assert message.status == "success"
    first_line = str(message.content).split("\n")[0]
    assert first_line.startswith("1. Deployment Guide › Docker (guides/deployment.md:")
    assert "<<registry>>" in str(message.content)
    [hit] = message.artifact
    assert set(hit) == {"path", "title", "heading", "snippet", "score", "line"}
    assert hit["path"] == "guides/deployment.md"


def test_search_without_results_says_so(docs_root: Path) -> None:
    search = by_name(make_docs_tools(docs_root))["docs_search"]
    message = call(search, query="quantum entanglement")
    assert message.content == (
        "No section of the documentation matches 'quantum entanglement'. Try other words, "
        "or docs_list to browse the pages."
    )
    assert message.artifact == []


def test_bad_folder_and_bad_arguments_are_tool_errors(docs_root: Path) -> None:
    search = by_name(make_docs_tools(docs_root))["docs_search"]
    message = call(search, query="docker", folder="../etc")
    assert message.status == "error"
    assert "is outside the docs root" in str(message.content)
    message = call(search, query="docker", top_k=500)
    assert message.status == "error"
    assert "'top_k'" in str(message.content)


def test_list_shows_every_page_with_title(docs_root: Path) -> None:
    listing = by_name(make_docs_tools(docs_root))["docs_list"]
    message = call(listing)
    lines = str(message.content).split("\n")
    assert lines[0] == "6 pages in the documentation:"
    assert "- guides/plain.md: plain" in lines
    assert len(message.artifact) == 6
    assert call(listing, folder="reference").artifact[0]["title"] == "API Reference"


def test_get_page_returns_success_object(docs_root: Path) -> None:
    get_page = by_name(make_docs_tools(docs_root))["docs_get_page"]
    message = call(get_page, path="guides/deployment")
    assert message.artifact["success"] is True
    page = message.artifact["page"]
    assert page["path"] == "guides/deployment.md"
    assert page["truncated"] is False
    assert str(message.content).startswith("# Deployment Guide\npath: guides/deployment.md\n")


def test_get_page_failure_is_a_tool_error(docs_root: Path) -> None:
    get_page = by_name(make_docs_tools(docs_root))["docs_get_page"]
    message = call(get_page, path="../../etc/passwd")
    assert message.status == "error"  # like every other tool (docs/tools.md)
    assert "outside the docs root" in str(message.content)
    assert message.artifact is None
    missing = call(get_page, path="guides/nope")
    assert missing.status == "error"
    assert "guides/nope" in str(missing.content)


def test_long_page_is_cut_with_a_note(docs_root: Path) -> None:
    (docs_root / "long.md").write_text("# Long\n\n" + "word " * 4000)
    get_page = by_name(make_docs_tools(docs_root))["docs_get_page"]
    message = call(get_page, path="long.md")
    page = message.artifact["page"]
    assert page["truncated"] is True
    assert page["total_chars"] > MAX_PAGE_CHARS
    assert len(page["content"]) == MAX_PAGE_CHARS
    assert str(message.content).endswith(
        f"[Page cut at 8,000 of {page['total_chars']:,} characters. Call docs_get_page with "
        "offset=8000 to read on, or use docs_search to find the section you need.]"
    )


def test_refresh_tool_rebuilds(docs_root: Path) -> None:
    tools = by_name(make_docs_tools(docs_root))
    (docs_root / "guides" / "k8s.md").write_text("# Kubernetes\n\nRun pods.\n")
    message = call(tools["docs_refresh_index"])
    assert message.artifact["pages"] == 7
    assert message.artifact["build"] == 2
    assert str(message.content).startswith("Rebuilt the index of the documentation: 7 pages")
    assert call(tools["docs_search"], query="kubernetes").artifact[0]["path"] == "guides/k8s.md"


def test_scopes_side_by_side(docs_root: Path) -> None:
    tools = make_docs_tools(docs_root, scope="guides") + make_docs_tools(
        docs_root, scope="reference"
    )
    named = by_name(tools)
    assert sorted(named) == [
        "docs_get_page_guides",
        "docs_get_page_reference",
        "docs_list_guides",
        "docs_list_reference",
        "docs_refresh_index_guides",
        "docs_refresh_index_reference",
        "docs_search_guides",
        "docs_search_reference",
    ]
    assert "Covers only the pages under 'guides/'" in named["docs_search_guides"].description
    assert call(named["docs_search_guides"], query="threadId").artifact == []
    assert call(named["docs_search_reference"], query="threadId").artifact[0]["path"] == (
        "reference/api.mdx"
    )
    denied = call(named["docs_get_page_guides"], path="reference/api.mdx")
    assert denied.status == "error"
    assert denied.content == (
        "Page path 'reference/api.mdx' is outside the docs scope 'guides'. "
        "Use a path under guides/."
    )


def test_prefix_names_and_bad_names(docs_root: Path) -> None:
    names = [t.name for t in make_docs_tools(docs_root, prefix="mastra", scope="guides")]
    assert names[0] == "mastra_docs_search_guides"
    with pytest.raises(InvalidInputError, match="is invalid: names are 1-64 letters"):
        make_docs_tools(docs_root, prefix="x" * 70)


def test_disabled_by_option_or_environment(
    docs_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert make_docs_tools(docs_root, enabled=False) == []
    monkeypatch.setenv("WORKSPACE_TOOLS_DISABLE_DOCS", "1")
    assert make_docs_tools(docs_root) == []
    assert make_docs_tools(docs_root / "does-not-exist") == []  # nothing is built
    monkeypatch.setenv("WORKSPACE_TOOLS_DISABLE_DOCS", "0")
    assert len(make_docs_tools(docs_root)) == 4


def test_get_page_reads_on_past_the_first_part(docs_root: Path) -> None:
    text = "".join(f"line {i:05d}\n" for i in range(2000))  # 22,000 characters
    (docs_root / "long.md").write_text("# Long\n\n" + text)
    get_page = by_name(make_docs_tools(docs_root))["docs_get_page"]
    first = call(get_page, path="long.md")
    total = first.artifact["page"]["total_chars"]
    parts = [first.artifact["page"]["content"]]
    offset = MAX_PAGE_CHARS
    while True:
        message = call(get_page, path="long.md", offset=offset)
        page = message.artifact["page"]
        assert page["offset"] == offset
        assert f"characters {offset + 1:,}-" in str(message.content)
        parts.append(page["content"])
        if not page["truncated"]:
            break
        assert f"offset={offset + MAX_PAGE_CHARS} to read on" in str(message.content)
        offset += MAX_PAGE_CHARS
    assert len(parts) == 3
    assert "".join(parts).endswith("line 01999\n")
    assert len("".join(parts)) == total
    past = call(get_page, path="long.md", offset=total)
    assert past.status == "error"
    assert f"offset {total} is past the end of 'long.md'" in str(past.content)


def test_docs_list_pages_through_a_long_list(docs_root: Path, monkeypatch) -> None:
    from workspace_tools.tools import docs as docs_tools

    for i in range(30):
        (docs_root / f"page{i:02d}.md").write_text(f"# Page {i}\n")
    monkeypatch.setattr(docs_tools, "MAX_LIST_CHARS", 300)
    listing = by_name(make_docs_tools(docs_root))["docs_list"]
    seen: list[str] = []
    offset = 0
    calls = 0
    while True:
        message = call(listing, offset=offset)
        calls += 1
        assert len(str(message.content)) <= 300 + 120  # the list plus the closing note
        seen.extend(row["path"] for row in message.artifact)
        note = re.search(r"call docs_list with offset=(\d+)", str(message.content))
        if note is None:
            break
        assert int(note.group(1)) == offset + len(message.artifact)
        offset = int(note.group(1))
    assert calls > 2
    assert len(seen) == len(set(seen)) == 36  # the 6 fixture pages and the 30 new ones
    past = call(listing, offset=36)
    assert past.status == "error" and "offset 36 is past the end" in str(past.content)
