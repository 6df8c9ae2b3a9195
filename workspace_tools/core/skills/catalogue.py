"""Render the skills catalogue for a system prompt: XML (default), Markdown or JSON.

Entries are sorted by name (then source and location) so the text is byte-stable across turns and
provider prompt caches keep working. With no skills the result is the empty string.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Literal
from xml.sax.saxutils import escape

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.skills.model import SOURCE_PRIORITY, Skill
from workspace_tools.core.skills.registry import SkillCatalog, SkillRegistry

__all__ = [
    "SKILLS_INSTRUCTIONS",
    "SKILLS_INTRO",
    "CatalogueFormat",
    "render_catalogue",
    "render_skills_prompt",
    "skill_location",
]

CatalogueFormat = Literal["xml", "markdown", "json"]

SKILLS_INTRO: Final = (
    "## Skills\n\n"
    "You can use skills: folders of instructions for specific tasks. Only their names and "
    "descriptions are listed here; load a skill's full instructions when it is relevant."
)
"""Heading and first paragraph of the prompt section."""

SKILLS_INSTRUCTIONS: Final = (
    "Skills are NOT tools: do not call a skill name as a tool. To use a skill, call the `skill` "
    "tool with its name; if several skills share a name, pass its location instead. When a "
    "request matches a skill's description, load that skill first, without asking for "
    "permission. Read the files a skill mentions (references/, scripts/, assets/) with "
    "`skill_read`, using paths relative to the skill root, and find details across skills with "
    "`skill_search`."
)
"""How the model should load skills; follows the catalogue."""


def skill_location(skill: Skill, *, root: Path | None = None) -> str:
    """Catalogue location of a skill: its SKILL.md relative to ``root`` when inside it."""
    if skill.path is None:
        return skill.name
    skill_md = skill.path / "SKILL.md"
    if root is not None:
        try:
            return skill_md.relative_to(root).as_posix()
        except ValueError:
            pass
    return skill_md.as_posix() if os.sep == "/" else str(skill_md)


def render_catalogue(
    skills: Sequence[Skill],
    *,
    fmt: CatalogueFormat = "xml",
    root: Path | None = None,
) -> str:
    """The catalogue alone (no instructions); ``""`` when ``skills`` is empty."""
    if not skills:
        return ""
    ordered = sorted(
        skills, key=lambda s: (s.name, SOURCE_PRIORITY[s.source], skill_location(s, root=root))
    )
    rows: list[dict[str, Any]] = [
        {
            "name": s.name,
            "description": " ".join(s.description.split()),
            "location": skill_location(s, root=root),
            "source": s.source,
        }
        for s in ordered
    ]
    if fmt == "xml":
        lines = ["<available_skills>"]
        for row in rows:
            lines.append("  <skill>")
            lines.extend(f"    <{k}>{escape(str(v))}</{k}>" for k, v in row.items())
            lines.append("  </skill>")
        lines.append("</available_skills>")
        return "\n".join(lines)
    if fmt == "markdown":
        items = [
            f"- **{r['name']}** [{r['source']}] ({r['location']}): {r['description']}" for r in rows
        ]
        return "# Available Skills\n\n" + "\n".join(items)
    if fmt == "json":
        return "Available Skills:\n\n" + json.dumps(rows, indent=2, ensure_ascii=False)
    msg = f"Unknown catalogue format {fmt!r}; use 'xml', 'markdown' or 'json'."
    raise InvalidInputError(msg)


def render_skills_prompt(
    skills: SkillRegistry | SkillCatalog | Sequence[Skill],
    *,
    fmt: CatalogueFormat = "xml",
    context: Any = None,
    root: Path | None = None,
    instructions: bool = True,
) -> str:
    """The system-prompt section for a set of skills: intro, catalogue and loading instructions.

    Works for notebooks and other frameworks as well as for :class:`SkillsMiddleware`.

    Args:
        skills: A registry (refreshed and resolved for ``context``), a catalogue or skills.
        fmt: ``xml`` (``<available_skills>``), ``markdown`` or ``json``.
        context: Request context handed to a registry with dynamic paths.
        root: Locations are shown relative to this folder; defaults to the registry's root.
        instructions: Add the intro and the instructions on loading skills.

    Returns:
        The text, or ``""`` when there are no skills.
    """
    if isinstance(skills, SkillRegistry):
        catalog = skills.catalog(context=context)
        items: Sequence[Skill] = catalog.skills
        root = root or catalog.root
    elif isinstance(skills, SkillCatalog):
        items = skills.skills
        root = root or skills.root
    else:
        items = skills
    body = render_catalogue(items, fmt=fmt, root=root)
    if not body or not instructions:
        return body
    return f"{SKILLS_INTRO}\n\n{body}\n\n{SKILLS_INSTRUCTIONS}"
