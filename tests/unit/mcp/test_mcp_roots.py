"""MCP roots: the client's roots, within what the command line allows (issue 29)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.stdio import stdio_client
from pydantic import FileUrl

from tests.unit.mcp.conftest import stdio_params
from workspace_tools.mcp.roots import RootsScope, allowed_directories, serve_within, uri_path


async def _run(root: Path, body: Any, roots: list[Path] | None, *, answer: Any = None) -> Any:
    async def list_roots(_: Any) -> types.ListRootsResult | types.ErrorData:
        if answer is not None:
            return answer  # type: ignore[no-any-return]
        assert roots is not None
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(p.as_uri())) for p in roots])

    callback = list_roots if roots is not None or answer is not None else None
    async with (
        stdio_client(stdio_params(root)) as (read, write),
        ClientSession(read, write, list_roots_callback=callback) as session,
    ):
        await session.initialize()
        return await body(session)


async def _calls(session: ClientSession) -> dict[str, types.CallToolResult]:
    return {
        "inside": await session.call_tool("search_documents", {"query": "parse", "paths": ["src"]}),
        "outside": await session.call_tool(
            "search_documents", {"query": "install", "paths": ["docs"]}
        ),
        "index outside": await session.call_tool("workspace_index", {"path": "notes.txt"}),
        "docs": await session.call_tool("docs_get_page", {"path": "index"}),
    }


async def test_client_roots_narrow_the_workspace(project: Path) -> None:
    results = await _run(project, _calls, [project / "src"])
    assert not results["inside"].isError
    assert results["outside"].isError
    text = results["outside"].content[0].text
    assert text.startswith("Path 'docs' is outside the directories this session serves")
    assert str((project / "src").resolve()) in text
    assert results["index outside"].isError
    assert results["docs"].isError  # the docs folder holds no client root: nothing served
    assert "This session serves no part of" in results["docs"].content[0].text


async def test_without_client_roots_the_command_line_decides(project: Path) -> None:
    results = await _run(project, _calls, None)
    assert not any(r.isError for r in results.values())


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # the client's http root
async def test_a_mixed_or_unreadable_roots_list_narrows(project: Path) -> None:
    """An ``http://`` root beside a ``file://`` one is ignored alone (the SDK's result model
    refused the whole list, and the server served the project); an unreadable list serves
    nothing."""
    web = types.Root.model_construct(uri="http://example.com/repo")
    src = types.Root(uri=FileUrl((project / "src").as_uri()))
    mixed = types.ListRootsResult(roots=[web, src])
    results = await _run(project, _calls, None, answer=mixed)
    assert not results["inside"].isError
    text = results["outside"].content[0].text
    assert text.startswith("Path 'docs' is outside the directories this session serves")
    broken = types.ErrorData(code=-32603, message="roots unavailable")
    results = await _run(project, _calls, None, answer=broken)
    assert all(r.isError for r in results.values())
    assert results["inside"].content[0].text == (
        "Path 'src' is outside the directories this session serves (the client's roots within "
        "what the server allows): none. Use a path inside one of them."
    )
    assert "This session serves no part of" in results["docs"].content[0].text


def test_serve_within_and_allowed_directories(tmp_path: Path) -> None:
    ws, docs, other = tmp_path / "ws", tmp_path / "ws" / "docs", tmp_path / "elsewhere"
    allowed = allowed_directories(workspace=ws, docs=docs, skills=[ws / "skills"])
    assert allowed == [ws.resolve(), docs.resolve(), (ws / "skills").resolve()]
    assert serve_within([ws / "src"], [ws]) == [ws / "src"]  # narrower client root
    assert serve_within([tmp_path], [ws]) == [ws]  # a wider root serves the allowed folder
    assert serve_within([other], [ws]) == []
    assert uri_path("file:///tmp/a%20b") == Path("/tmp/a b").resolve()
    assert uri_path("https://example.com/x") is None
    assert uri_path("file://otherhost/share") is None  # another machine's folder
    assert uri_path("file:///tmp/a%20b/") == Path("/tmp/a b").resolve()  # trailing slash


class _Client:
    """The two calls RootsScope makes of a session, answering with fixed roots."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = roots
        self.logged: list[str] = []

    def check_client_capability(self, _: Any) -> bool:
        return True

    async def send_request(self, _: Any, result_type: Any) -> Any:
        return result_type.model_validate({"roots": [{"uri": u} for u in self.roots]})

    async def send_log_message(self, *, level: str, data: str, logger: str) -> None:
        self.logged.append(f"{level}: {data}")


async def test_roots_confine_the_project_not_folders_served_outside_it(tmp_path: Path) -> None:
    project, shared = tmp_path / "project", tmp_path / "shared-docs"
    for folder in (project / "src", project / "docs" / "api", shared / "guides"):
        folder.mkdir(parents=True)
    allowed = allowed_directories(workspace=project, docs=shared)
    scope = RootsScope(allowed, base=project.resolve(), project=project)
    client = _Client([(project / "src").as_uri(), (tmp_path / "nowhere").as_uri()])
    await scope.refresh(client)
    assert scope.within(project) == ("src",)
    assert scope.within(project / "docs") == ()  # a folder of the project outside the roots
    assert scope.within(shared) is None  # a docs tree outside the project: as the flags say
    assert scope.serves(shared / "guides") and not scope.serves(project / "docs")
    assert scope.served_now() == [(project / "src").resolve(), shared.resolve()]
    assert scope.ignored == [((tmp_path / "nowhere").as_uri(), scope.ignored[0][1])]
    assert client.logged == [
        f"warning: Ignored the client's root {(tmp_path / 'nowhere').as_uri()}: outside the "
        f"folders the server allows ({project.resolve()}, {shared.resolve()})."
    ]
    assert scope.refusal({"paths": ["**/*.py"]}, narrows=True) is None  # searched inside src
    assert scope.refusal({"path": "."}) is not None  # a write tool's folder around the roots


async def test_roots_that_are_all_ignored_leave_the_command_line_in_charge(tmp_path: Path) -> None:
    project, other = tmp_path / "project", tmp_path / "other-project"
    for folder in (project / "src", other):
        folder.mkdir(parents=True)
    scope = RootsScope([project.resolve()], base=project.resolve(), project=project)
    for roots in ([], [other.as_uri()]):  # the Inspector sends none; an editor another project
        client = _Client(roots)
        scope.invalidate()
        await scope.refresh(client)
        assert scope.client_roots is None
        assert scope.within(project) is None
        assert scope.served == [project.resolve()]
        assert scope.ignored == ([(other.as_uri(), scope.ignored[0][1])] if roots else [])
        assert bool(client.logged) == bool(roots)


async def test_calls_made_while_the_roots_are_asked_for_wait_for_them(tmp_path: Path) -> None:
    import anyio

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    scope = RootsScope([project.resolve()], base=project.resolve(), project=project)
    answer = anyio.Event()

    class Slow(_Client):
        async def send_request(self, request: Any, result_type: Any) -> Any:
            await answer.wait()
            return await super().send_request(request, result_type)

    client = Slow([(project / "src").as_uri()])
    seen: list[Any] = []

    async def call() -> None:
        await scope.refresh(client)
        seen.append(scope.within(project))

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        group.start_soon(call)
        await anyio.wait_all_tasks_blocked()
        answer.set()
    assert seen == [("src",), ("src",)]  # neither was served the whole project meanwhile
