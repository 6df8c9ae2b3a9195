"""The server over stdio, driven by the ``mcp`` SDK's own ``ClientSession``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
from mcp import ClientSession, types
from mcp.client.stdio import stdio_client

from tests.support.fakes import FakeEmbedder
from tests.unit.mcp.conftest import stdio_params
from workspace_tools.core.skills import SkillRegistry
from workspace_tools.mcp.smoke import example_arguments
from workspace_tools.tools.docs import make_docs_tools
from workspace_tools.tools.search_documents import SearchDocumentsInput
from workspace_tools.tools.skills import skill_tools

EXPECTED = {
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
    "workspace_status",
}


async def _session_run(root: Path, body: Any, *flags: str) -> Any:
    params = stdio_params(root, *flags)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await body(session)


async def test_lists_every_tool_with_an_object_output_schema(project: Path) -> None:
    async def body(session: ClientSession) -> list[types.Tool]:
        return (await session.list_tools()).tools

    tools = await _session_run(project, body)
    assert {t.name for t in tools} == EXPECTED
    for tool in tools:
        assert tool.outputSchema is not None, tool.name
        assert tool.outputSchema["type"] == "object", tool.name
        assert tool.outputSchema["properties"], tool.name
        assert tool.inputSchema["type"] == "object", tool.name
        assert tool.description


async def test_input_schemas_and_descriptions_are_the_langchain_tools(project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, types.Tool]:
        return {t.name: t for t in (await session.list_tools()).tools}

    tools = await _session_run(project, body)
    local = [  # the test server ranks docs hybrid with its fake embedder
        *make_docs_tools(project / "docs", embedder=FakeEmbedder(), vector_cache=False),
        *skill_tools(SkillRegistry(["skills"], root=project)),
    ]
    for tool in local:
        assert tools[tool.name].inputSchema == tool.tool_call_schema.model_json_schema()
        assert tools[tool.name].description == tool.description
    # search_documents keeps all2md's input names; its modes use the package's one name each
    # (bm25, with all2md's 'keyword' accepted as an alias and said so in the schema).
    schema = tools["search_documents"].inputSchema
    assert schema["properties"] == SearchDocumentsInput.model_json_schema()["properties"]
    props = schema["properties"]
    assert schema["required"] == ["query"]
    assert props["mode"]["default"] == "bm25"
    assert "alias 'keyword'" in props["mode"]["description"]
    assert props["top_k"]["default"] == 10
    assert props["recursive"]["default"] is True
    assert props["regex"]["default"] is False
    assert props["ignore_case"]["default"] is False
    assert "paths" in props


async def test_each_tool_returns_structured_content_matching_its_schema(project: Path) -> None:
    async def body(session: ClientSession) -> dict[str, tuple[types.Tool, types.CallToolResult]]:
        out = {}
        for tool in (await session.list_tools()).tools:
            arguments = example_arguments(tool.name, page="guides/install.md", skill="hello")
            if tool.name == "workspace_read":
                arguments = {"path": "notes.txt"}  # the smoke reads what search found
            out[tool.name] = (tool, await session.call_tool(tool.name, arguments))
        return out

    results = await _session_run(project, body)
    assert set(results) == EXPECTED
    for name, (tool, result) in results.items():
        assert not result.isError, (name, result.content)
        assert result.structuredContent is not None, name
        jsonschema.validate(result.structuredContent, tool.outputSchema)
        text = result.content[0]
        assert isinstance(text, types.TextContent)
        assert text.text.strip(), name
    hits = results["workspace_search"][1].structuredContent["results"]
    assert hits
    assert hits[0]["source_id"] in {
        "notes.txt",
        "src/app.py",
        "docs/api/search.md",
        "docs/index.md",
    }
    page = results["docs_get_page"][1].structuredContent
    assert page["success"] is True
    assert page["page"]["title"] == "Installing"
    assert results["skill"][1].structuredContent["name"] == "hello"


async def test_errors_are_tool_errors_with_the_langchain_messages(project: Path) -> None:
    docs_search = make_docs_tools(project / "docs")[0]
    skill = skill_tools(SkillRegistry(["skills"], root=project))[0]
    expected_validation = docs_search.invoke(
        {"type": "tool_call", "name": "docs_search", "id": "1", "args": {"query": "x", "top_k": 0}}
    ).content
    expected_missing = skill.invoke(
        {"type": "tool_call", "name": "skill", "id": "1", "args": {"name": "no-such-skill"}}
    ).content

    async def body(session: ClientSession) -> list[types.CallToolResult]:
        return [
            await session.call_tool("docs_search", {"query": "x", "top_k": 0}),
            await session.call_tool("skill", {"name": "no-such-skill"}),
            await session.call_tool("no_such_tool", {}),
            await session.call_tool("workspace_search", {"query": "install"}),
        ]

    invalid, missing, unknown, fine = await _session_run(project, body)
    assert invalid.isError
    assert invalid.content[0].text == expected_validation
    assert "Invalid tool input: 'top_k'" in expected_validation
    assert missing.isError
    assert missing.content[0].text == expected_missing
    assert "no-such-skill" in expected_missing
    assert unknown.isError
    assert unknown.content[0].text.startswith("Unknown tool 'no_such_tool'; this server has: ")
    assert not fine.isError  # the server keeps serving after errors


async def test_missing_docs_page_is_an_error_like_every_tool(project: Path) -> None:
    # issue 18: docs_get_page reports a missing page as a tool error, as the other tools do
    async def body(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool("docs_get_page", {"path": "nowhere.md"})

    result = await _session_run(project, body)
    assert result.isError
    assert "No docs page 'nowhere.md'" in result.content[0].text


async def test_skills_catalogue_as_prompt_and_resources(project: Path) -> None:
    async def body(session: ClientSession) -> tuple[Any, ...]:
        prompts = (await session.list_prompts()).prompts
        prompt = await session.get_prompt("skills_catalogue")
        resources = (await session.list_resources()).resources
        catalogue = await session.read_resource("skills://catalogue")  # type: ignore[arg-type]
        hello = await session.read_resource("skills://hello")  # type: ignore[arg-type]
        return prompts, prompt, resources, catalogue, hello

    prompts, prompt, resources, catalogue, hello = await _session_run(project, body)
    assert [p.name for p in prompts] == ["skills_catalogue"]
    text = prompt.messages[0].content.text
    assert "<name>hello</name>" in text
    assert "skill_read" in text  # the loading instructions come with it
    assert {"skills://catalogue", "skills://hello"} <= {str(r.uri) for r in resources}
    assert "Greet people when asked" in catalogue.contents[0].text
    assert hello.contents[0].text.strip().endswith("Greet the user by name.")


async def test_domain_scoped_docs_tools(project: Path) -> None:
    async def body(session: ClientSession) -> tuple[set[str], types.CallToolResult]:
        names = {t.name for t in (await session.list_tools()).tools}
        return names, await session.call_tool("docs_list_guides", {})

    names, listing = await _session_run(project, body, "--scope", "guides", "--scope", "api")
    assert {"docs_search_guides", "docs_get_page_api", "docs_refresh_index_api"} <= names
    assert not names & {"docs_search", "docs_list"}
    assert [p["path"] for p in listing.structuredContent["results"]] == ["guides/install.md"]


async def test_read_only_server_has_no_index_tool(project: Path) -> None:
    async def body(session: ClientSession) -> set[str]:
        return {t.name for t in (await session.list_tools()).tools}

    assert await _session_run(project, body) >= {"workspace_index"}
    names = await _session_run(project, body, "--read-only")
    assert "workspace_index" not in names
    assert "workspace_search" in names

    async def search(session: ClientSession) -> str:
        result = await session.call_tool("search_documents", {"query": "install"})
        return str(result.content[0].text)  # type: ignore[union-attr]

    (project / "later.md").write_text("# Later\n\nInstall later.\n", encoding="utf-8")
    text = await _session_run(project, search, "--read-only")  # it pointed to workspace_index
    assert text.endswith(
        "1 file(s) in scope are not indexed (new since the last indexing, or not convertible); "
        "search them with mode='grep'. The workspace is read-only here: ask the user to index "
        f"them (`workspace-tools --root {project.resolve()} index`)."
    )
