"""Catalogue rendering: a literal snapshot, formats, ordering, empty catalogue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.skills import (
    Skill,
    SkillRegistry,
    render_catalogue,
    render_skills_prompt,
)

ROOT = Path("/project")
SKILLS = [
    Skill(
        name="web-research",
        description="Research the web. Use for <current> events & news.",
        path=ROOT / "skills/web-research",
        source="local",
    ),
    Skill(
        name="code-review",
        description="Review code.\n  Use before merging.",
        path=ROOT / ".workspace_tools/skills/code-review",
        source="managed",
    ),
    Skill(
        name="pdf",
        description="Read PDFs.",
        path=Path("/venv/site-packages/x/pdf"),
        source="external",
    ),
]

EXPECTED_PROMPT = """\
## Skills

You can use skills: folders of instructions for specific tasks. Only their names and descriptions are listed here; load a skill's full instructions when it is relevant.

<available_skills>
  <skill>
    <name>code-review</name>
    <description>Review code. Use before merging.</description>
    <location>.workspace_tools/skills/code-review/SKILL.md</location>
    <source>managed</source>
  </skill>
  <skill>
    <name>pdf</name>
    <description>Read PDFs.</description>
    <location>/venv/site-packages/x/pdf/SKILL.md</location>
    <source>external</source>
  </skill>
  <skill>
    <name>web-research</name>
    <description>Research the web. Use for &lt;current&gt; events &amp; news.</description>
    <location>skills/web-research/SKILL.md</location>
    <source>local</source>
  </skill>
</available_skills>

Skills are NOT tools: do not call a skill name as a tool. To use a skill, call the `skill` tool with its name; if several skills share a name, pass its location instead. When a request matches a skill's description, load that skill first, without asking for permission. Read the files a skill mentions (references/, scripts/, assets/) with `skill_read`, using paths relative to the skill root, and find details across skills with `skill_search`."""


def test_snapshot_xml_prompt() -> None:
    assert render_skills_prompt(SKILLS, root=ROOT) == EXPECTED_PROMPT


def test_order_is_stable_whatever_the_input_order() -> None:
    assert render_skills_prompt(list(reversed(SKILLS)), root=ROOT) == EXPECTED_PROMPT


def test_markdown_and_json() -> None:
    md = render_catalogue(SKILLS, fmt="markdown", root=ROOT)
    assert md.splitlines()[:3] == [
        "# Available Skills",
        "",
        "- **code-review** [managed] (.workspace_tools/skills/code-review/SKILL.md): Review code. "
        "Use before merging.",
    ]
    text = render_catalogue(SKILLS, fmt="json", root=ROOT)
    assert text.startswith("Available Skills:\n\n")
    rows = json.loads(text.split("\n\n", 1)[1])
    assert [r["name"] for r in rows] == ["code-review", "pdf", "web-research"]
    assert rows[2] == {
        "name": "web-research",
        "description": "Research the web. Use for <current> events & news.",
        "location": "skills/web-research/SKILL.md",
        "source": "local",
    }


def test_empty_catalogue_is_empty_string(tmp_path: Path) -> None:
    assert render_skills_prompt([]) == ""
    assert render_skills_prompt(SkillRegistry([], root=tmp_path, entry_points=False)) == ""


def test_without_instructions_and_code_skill_location() -> None:
    text = render_skills_prompt([Skill(name="inline", description="D.")], instructions=False)
    assert text.startswith("<available_skills>")
    assert "<location>inline</location>" in text
    assert "<source>code</source>" in text


def test_registry_locations_are_relative_to_root(tmp_path: Path, make_skill) -> None:
    make_skill("alpha")
    registry = SkillRegistry(["skills"], root=tmp_path, entry_points=False)
    assert "<location>skills/alpha/SKILL.md</location>" in render_skills_prompt(registry)


def test_unknown_format() -> None:
    with pytest.raises(InvalidInputError, match="Unknown catalogue format 'yaml'"):
        render_catalogue(SKILLS, fmt="yaml")  # type: ignore[arg-type]
