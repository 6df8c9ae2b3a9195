"""``skill_search``: every input bounded, and only the text ``skill_read`` would serve.

Before: a 1,000,000-character query was taken (and echoed back: an answer of 1,000,042
characters) and 100,000 ``skill_names`` were accepted; the other tools cap their inputs.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.reliability import CANARY, Arena
from tests.support.tools import call
from workspace_tools.core.errors import InvalidInputError, WorkspaceError
from workspace_tools.core.skills import MAX_SKILL_NAMES, MAX_SKILL_QUERY_CHARS, SkillRegistry
from workspace_tools.tools.skills import skill_tools

pytestmark = pytest.mark.timeout(60)


def _registry(arena: Arena) -> SkillRegistry:
    return SkillRegistry([str(arena.skills)], root=arena.base, entry_points=False)


def _tools(registry: SkillRegistry) -> dict[str, Any]:
    return {t.name: t for t in skill_tools(registry)}


def test_a_long_query_and_many_names_are_refused(arena: Arena) -> None:
    registry = _registry(arena)
    with pytest.raises(InvalidInputError, match=f"the limit is {MAX_SKILL_QUERY_CHARS}"):
        registry.search("x" * 1_000_000)
    with pytest.raises(
        InvalidInputError, match=f"lists 100000 skills; the limit is {MAX_SKILL_NAMES}"
    ):
        registry.search("demo", skill_names=[f"s{i}" for i in range(100_000)])
    assert registry.search("demo", skill_names=[f"s{i}" for i in range(MAX_SKILL_NAMES)]) == []

    search = _tools(registry)["skill_search"]
    long_query = call(search, query="x" * 1_000_000)
    assert long_query.status == "error"
    assert len(str(long_query.content)) < 2_000
    assert "query" in str(long_query.content)
    many = call(search, query="demo", skill_names=[f"s{i}" for i in range(100_000)])
    assert many.status == "error" and "skill_names" in str(many.content)
    assert len(str(many.content)) < 2_000


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("skill", {"name": "n" * 100_000}),
        ("skill_read", {"skill_name": "demo", "path": "p/" * 50_000}),
        ("skill_read", {"skill_name": "d" * 100_000, "path": "SKILL.md"}),
        ("skill_search", {"query": "demo", "skill_names": ["n" * 100_000]}),
    ],
)
def test_every_skill_tool_input_is_bounded(arena: Arena, tool: str, args: dict[str, Any]) -> None:
    message = call(_tools(_registry(arena))[tool], **args)
    assert message.status == "error"
    assert len(str(message.content)) < 2_000


def _plant_links(arena: Arena) -> None:
    """Every way a skill folder can lead out: linked skill folders, resource folders, files."""
    (arena.skills / "borrowed").symlink_to(arena.outside / "evil", target_is_directory=True)
    demo = arena.skills / "demo"
    (demo / "assets").symlink_to(arena.outside, target_is_directory=True)
    (demo / "references" / "canary.txt").symlink_to(arena.canary)
    (demo / "references" / "sub").symlink_to(arena.outside, target_is_directory=True)
    store = arena.skills / "store" / "linked"
    store.mkdir(parents=True)
    (store / "SKILL.md").write_text(
        "---\nname: linked\ndescription: Linked skill. Use it for linked tasks.\n---\n\nBody\n"
    )
    (store / "references").symlink_to(arena.outside, target_is_directory=True)
    (arena.skills / "linked").symlink_to(store, target_is_directory=True)


def test_search_serves_only_what_skill_read_serves(arena: Arena) -> None:
    _plant_links(arena)
    registry = _registry(arena)
    tools = _tools(registry)
    for query in (CANARY, "canary", "evil"):
        hits = registry.search(query, top_k=50)
        assert CANARY not in str(hits)
        message = call(tools["skill_search"], query=query, top_k=50)
        assert CANARY not in str(message.artifact)
        assert CANARY not in str(message.content).replace(repr(query), "")
    for hit in registry.search("skill linked demo guide", top_k=50):
        found = registry.read_file(hit.skill_name, hit.source)  # the same confined view
        assert CANARY not in found.text
    for skill in registry.list_skills():
        for rel in (*skill.resources, "references/canary.txt", "assets/canary.txt"):
            try:
                text = registry.read_file(skill.name, rel).text
            except WorkspaceError:
                continue
            assert CANARY not in text


def test_a_query_at_the_limit_still_finds_references(arena: Arena) -> None:
    query = ("guide " * MAX_SKILL_QUERY_CHARS)[:MAX_SKILL_QUERY_CHARS]
    hits = _registry(arena).search(query, top_k=5)
    assert ("demo", "references/guide.md") in [(h.skill_name, h.source) for h in hits]
