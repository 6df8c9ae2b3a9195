"""Same-named and disabled skills over MCP (issue 29 gaps 3 and 7), through the SDK client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import stdio_client

from tests.support.skills import write_skill
from tests.unit.mcp.conftest import stdio_params


async def _run(root: Path, body: Any, *flags: str) -> Any:
    async with (
        stdio_client(stdio_params(root, *flags)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await body(session)


def _copies(project: Path, *, second_local: bool = False) -> tuple[str, ...]:
    """A local ``hello`` (the fixture's) plus two external copies (and a second local one)."""
    for package in ("pkg-a", "pkg-b"):
        write_skill(
            project / "node_modules" / package / "skills",
            "hello",
            f"External hello from {package}.",
            "# External\n\nGreet from the package.",
        )
    flags = ["--skills", "skills"]
    flags += ["--skills", "node_modules/pkg-a/skills", "--skills", "node_modules/pkg-b/skills"]
    if second_local:
        write_skill(project / "more", "hello", "Second local hello.", "# Second")
        flags += ["--skills", "more"]
    return tuple(flags)


async def test_same_named_skills_list_once_and_the_winner_reads(project: Path) -> None:
    async def body(session: ClientSession) -> tuple[list[str], str, Any]:
        uris = [str(r.uri) for r in (await session.list_resources()).resources]
        text = (await session.read_resource("skills://hello")).contents[0].text  # type: ignore[arg-type]
        search = await session.call_tool("skill_search", {"query": "greet"})
        return uris, text, search

    uris, text, search = await _run(project, body, *_copies(project))
    assert uris.count("skills://hello") == 1
    assert text.strip().endswith("Greet the user by name.")  # the local one wins
    # gap 7: the text the model reads tells the three apart
    shown = search.content[0].text
    assert "[hello] from skills/hello/SKILL.md (local) SKILL.md" in shown
    assert "[hello] from node_modules/pkg-a/skills/hello/SKILL.md (external)" in shown
    assert "[hello] from node_modules/pkg-b/skills/hello/SKILL.md (external)" in shown


async def test_two_local_copies_list_once_and_read_as_the_candidates(project: Path) -> None:
    async def body(session: ClientSession) -> tuple[list[str], str]:
        uris = [str(r.uri) for r in (await session.list_resources()).resources]
        text = (await session.read_resource("skills://hello")).contents[0].text  # type: ignore[arg-type]
        return uris, text

    uris, text = await _run(project, body, *_copies(project, second_local=True))
    assert uris.count("skills://hello") == 1
    assert text.startswith("2 local skills are named 'hello', so the name does not resolve")
    assert "- skills/hello/SKILL.md (local)" in text
    assert "- more/hello/SKILL.md (local)" in text


async def test_disabled_skill_is_not_served(project: Path) -> None:
    write_skill(project / "skills", "secret", "A disabled skill.")
    (project / "workspace-tools.yaml").write_text(
        "skills: [skills]\ndisabled_skills: [secret]\n", encoding="utf-8"
    )

    async def body(session: ClientSession) -> tuple[list[str], str, Any]:
        uris = [str(r.uri) for r in (await session.list_resources()).resources]
        prompt = (await session.get_prompt("skills_catalogue")).messages[0].content.text
        loaded = await session.call_tool("skill", {"name": "secret"})
        return uris, prompt, loaded

    uris, prompt, loaded = await _run(project, body)
    assert "skills://secret" not in uris and "skills://hello" in uris
    assert "secret" not in prompt
    assert loaded.isError
    assert loaded.content[0].text.startswith("Skill 'secret' is disabled")
