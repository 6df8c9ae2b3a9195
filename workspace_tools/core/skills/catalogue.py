"""Render the skills catalogue for a system prompt: XML (default), Markdown or JSON.

Entries are sorted (byte-stable for prompt caches); past a :class:`CatalogueBudget` only the
skills most relevant to the conversation are listed, with a line on finding the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal
from xml.sax.saxutils import escape

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.skills.model import SOURCE_PRIORITY, Skill
from workspace_tools.core.skills.registry import SkillCatalog, SkillRegistry
from workspace_tools.core.skills.search import SkillSearchIndex

__all__ = [
    "DEFAULT_BUDGET",
    "SKILLS_INSTRUCTIONS",
    "SKILLS_INTRO",
    "CatalogueBudget",
    "CatalogueFormat",
    "render_catalog_prompt",
    "render_catalogue",
    "render_skills_prompt",
    "select_skills",
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

MAX_QUERY_CHARS: Final = 2000
"""Characters of the conversation used to rank skills when the budget is exceeded."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogueBudget:
    """Most skills, and most characters of entries, the prompt lists (``None``: no limit)."""

    max_skills: int | None = 50
    """Most skills listed."""
    max_chars: int | None = 15_000
    """Most characters of the listed entries (the intro and instructions not counted)."""

    def __post_init__(self) -> None:
        for name in ("max_skills", "max_chars"):
            value = getattr(self, name)
            if value is not None and value < 1:
                msg = f"CatalogueBudget {name} must be at least 1 (None: no limit), got {value}."
                raise InvalidInputError(msg)


DEFAULT_BUDGET: Final = CatalogueBudget()
"""The budget of :func:`render_skills_prompt` and ``SkillsMiddleware`` unless told otherwise."""


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


def _entry_chars(skill: Skill, fmt: CatalogueFormat, root: Path | None) -> int:
    return len(render_catalogue([skill], fmt=fmt, root=root))


def select_skills(
    skills: Sequence[Skill],
    *,
    budget: CatalogueBudget = DEFAULT_BUDGET,
    query: str | None = None,
    fmt: CatalogueFormat = "xml",
    root: Path | None = None,
    index: Callable[[], SkillSearchIndex] | None = None,
) -> list[Skill]:
    """The skills a budgeted catalogue lists: all of them when they fit, else the most relevant."""
    limit_n = budget.max_skills
    limit_c = budget.max_chars
    sizes = {id(s): _entry_chars(s, fmt, root) for s in skills}
    fits_n = limit_n is None or len(skills) <= limit_n
    fits_c = limit_c is None or sum(sizes.values()) <= limit_c
    if fits_n and fits_c:
        return list(skills)
    order = sorted(skills, key=lambda s: (SOURCE_PRIORITY[s.source], s.name, s.location))
    text = " ".join((query or "").split())[-MAX_QUERY_CHARS:]
    if text.strip():
        search = index() if index is not None else SkillSearchIndex(skills)
        hits = search.search(text, top_k=max(1, len(search)), include_references=False)
        rank: dict[str, int] = {}
        for position, hit in enumerate(hits):
            rank.setdefault(hit.location, position)
        order.sort(key=lambda s: rank.get(s.location, len(rank)))
    chosen: list[Skill] = []
    used = 0
    for skill in order:
        if limit_n is not None and len(chosen) >= limit_n:
            break
        size = sizes[id(skill)]
        if limit_c is not None and used + size > limit_c:
            continue
        chosen.append(skill)
        used += size
    return chosen


def _more_line(hidden: int, total: int) -> str:
    what = "skill is" if hidden == 1 else "skills are"
    return (
        f"{hidden} more {what} not listed here ({total} in all). Find them with the "
        "`skill_search` tool (it searches names, descriptions and instructions), then load "
        "one with `skill`."
    )


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
    budget: CatalogueBudget | None = DEFAULT_BUDGET,
    query: str | None = None,
) -> str:
    """The system-prompt section for a set of skills: intro, catalogue and loading instructions.

    Args:
        skills: A registry (refreshed and resolved for ``context``), a catalogue or skills.
        fmt: ``xml`` (``<available_skills>``), ``markdown`` or ``json``.
        context: Request context handed to a registry with dynamic paths.
        root: Locations are shown relative to this folder; defaults to the registry's root.
        instructions: Add the intro and the instructions on loading skills.
        budget: Past it only the skills most relevant to ``query`` are listed (``None``: all).
        query: What the conversation is about (e.g. the last user message).

    Returns:
        The text, or ``""`` when there are no skills.
    """
    if isinstance(skills, SkillRegistry):
        skills = skills.catalog(context=context)
    return render_catalog_prompt(
        skills, fmt=fmt, root=root, instructions=instructions, budget=budget, query=query
    )


def render_catalog_prompt(
    skills: SkillCatalog | Sequence[Skill],
    *,
    fmt: CatalogueFormat = "xml",
    root: Path | None = None,
    instructions: bool = True,
    budget: CatalogueBudget | None = DEFAULT_BUDGET,
    query: str | None = None,
) -> str:
    """:func:`render_skills_prompt` for a resolved catalogue (explicit-only skills left out)."""
    index: Callable[[], SkillSearchIndex] | None = None
    if isinstance(skills, SkillCatalog):
        items: Sequence[Skill] = skills.model_skills
        root = root or skills.root
        index = skills.search_index
    else:  # explicit-only skills (disable-model-invocation) are never listed for the model
        items = [s for s in skills if not s.disable_model_invocation]
    shown = list(items)
    if budget is not None:
        shown = select_skills(items, budget=budget, query=query, fmt=fmt, root=root, index=index)
    body = render_catalogue(shown, fmt=fmt, root=root)
    if len(shown) < len(items):
        more = _more_line(len(items) - len(shown), len(items))
        body = f"{body}\n\n{more}" if body else more
    if not body or not instructions:
        return body
    return f"{SKILLS_INTRO}\n\n{body}\n\n{SKILLS_INSTRUCTIONS}"
