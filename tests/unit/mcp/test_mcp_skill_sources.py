"""Skill sources over MCP (issue 40), through the SDK client and the server as a subprocess.

A pinned version and a git skill are served from the managed folder (also within the client's
roots); an explicit-only skill is absent from the catalogue, the ``skill`` tool and search.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession, types
from mcp.client.stdio import stdio_client
from pydantic import AnyUrl, FileUrl

from tests.support.skills import git_repo, skill_md, write_skill
from tests.unit.mcp.conftest import stdio_params
from workspace_tools.core.skills import GitSkills, SkillStore


async def _run(root: Path, body: Any, *, roots: list[str] | None = None) -> Any:
    async def list_roots(_: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(u)) for u in roots or []])

    async with (
        stdio_client(stdio_params(root)) as (read, write),
        ClientSession(read, write, list_roots_callback=list_roots if roots else None) as session,
    ):
        await session.initialize()
        return await body(session)


def _text(result: Any) -> str:
    return str(result.content[0].text)


def _sources(project: Path, tmp_path: Path) -> str:
    """An explicit-only local skill, a pinned version (two published) and a git skill."""
    write_skill(
        project / "skills",
        "deploy",
        "Deploy the service to production. Use when asked to ship.",
        "Run the deploy pipeline.",
        extra="disable-model-invocation: true\n",
    )
    store = SkillStore(project)
    draft = project.parent / "drafts"
    folder = write_skill(draft, "review", "Review code changes.", "Review body one.")
    one = store.publish(folder)
    write_skill(draft, "review", "Review code changes.", "Review body two.")
    store.publish(folder)
    store.pin("review", one.version)
    repo = tmp_path / "repo"
    git_repo(repo, {"lint/SKILL.md": skill_md("lint", "Lint the code base.", "Run ruff.")})
    GitSkills(project).add(f"{repo.as_uri()}#lint")
    return one.version[:12]


async def test_sources_served_and_explicit_only_kept_from_the_model(
    project: Path, tmp_path: Path
) -> None:
    short = _sources(project, tmp_path)

    async def body(session: ClientSession) -> dict[str, Any]:
        prompt = await session.get_prompt("skills_catalogue")
        catalogue = await session.read_resource(AnyUrl("skills://catalogue"))
        return {
            "prompt": prompt.messages[0].content.text,  # type: ignore[union-attr]
            "catalogue": catalogue.contents[0].text,  # type: ignore[union-attr]
            "deploy": await session.call_tool("skill", {"name": "deploy"}),
            "read deploy": await session.call_tool(
                "skill_read", {"skill_name": "deploy", "path": "SKILL.md"}
            ),
            "search": await session.call_tool(
                "skill_search", {"query": "deploy production review code"}
            ),
            "review": await session.call_tool("skill", {"name": "review"}),
            "lint": await session.call_tool("skill", {"name": "lint"}),
            "resource": await session.read_resource(AnyUrl("skills://deploy")),
        }

    out = await _run(project, body)
    for key in ("prompt", "catalogue"):
        assert "<name>review</name>" in out[key] and "<name>lint</name>" in out[key]
        assert "deploy" not in out[key]
    assert out["deploy"].isError and "'deploy' is explicit-only" in _text(out["deploy"])
    assert out["read deploy"].isError
    assert "[review]" in _text(out["search"]) and "[deploy]" not in _text(out["search"])
    assert not out["review"].isError and "Review body one." in _text(out["review"])
    assert f"review@{short}" in out["review"].structuredContent["location"]
    assert "Run ruff." in _text(out["lint"])
    # a person may still attach the explicit-only skill as a resource
    assert out["resource"].contents[0].text == "Run the deploy pipeline."


async def test_managed_skills_are_served_within_the_client_roots(
    project: Path, tmp_path: Path
) -> None:
    _sources(project, tmp_path)

    async def body(session: ClientSession) -> tuple[Any, Any]:
        review = await session.call_tool("skill", {"name": "review"})
        return review, await session.call_tool("skill", {"name": "lint"})

    review, lint = await _run(project, body, roots=[project.as_uri()])
    assert not review.isError and "Review body one." in _text(review)
    assert not lint.isError and "Run ruff." in _text(lint)


def test_a_skills_server_allows_the_managed_folder(project: Path, tmp_path: Path) -> None:
    from workspace_tools.mcp import ServerOptions, build_tools
    from workspace_tools.mcp.roots import RootsScope, serve_within

    _sources(project, tmp_path)
    served = build_tools(ServerOptions(root=project, skills=("skills",)))
    managed = (project / ".workspace_tools" / "skills").resolve()
    assert managed in served.allowed
    scope = RootsScope(served.allowed, base=None, project=project)
    scope.client_roots = [project.resolve()]
    scope.served = serve_within(scope.client_roots, scope.allowed)  # as a session does
    view = scope.skills(served.skills)
    assert {s.name for s in view.catalog().skills} == {"hello", "deploy", "review", "lint"}


def test_the_default_server_serves_managed_skills_without_skills_paths(tmp_path: Path) -> None:
    from workspace_tools.mcp import ServerOptions

    options = ServerOptions(root=tmp_path)
    assert options.defaulted([]).skills == ()
    (tmp_path / ".workspace_tools" / "skills").mkdir(parents=True)
    assert options.defaulted([]).skills == (".workspace_tools/skills",)
    assert options.defaulted(["skills"]).skills == ("skills",)
