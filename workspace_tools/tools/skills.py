"""LangChain tools over the skills core: ``skill``, ``skill_read`` and ``skill_search``.

They share one :class:`SkillRegistry`, fresh on every call; :func:`use_skill_context` gives them
the run's context for dynamic skills paths.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Annotated, Any, ClassVar

from langchain_core.callbacks import CallbackManagerForToolRun
from pydantic import BaseModel, ConfigDict, Field

from workspace_tools.core.skills import (
    MAX_SKILL_NAMES,
    MAX_SKILL_QUERY_CHARS,
    SkillRegistry,
    read_skill_file,
    skill_location,
)
from workspace_tools.tools.base import ToolFacts, WorkspaceBaseTool, as_tool_errors
from workspace_tools.tools.outputs import SkillOutput, SkillReadOutput, SkillSearchOutput

__all__ = [
    "SkillInput",
    "SkillReadInput",
    "SkillReadTool",
    "SkillSearchInput",
    "SkillSearchTool",
    "SkillTool",
    "current_skill_context",
    "skill_tools",
    "use_skill_context",
]

_SKILL_CONTEXT: ContextVar[Any] = ContextVar("workspace_tools_skill_context", default=None)


def current_skill_context() -> Any:
    """The request context set by :func:`use_skill_context` (``None`` outside of one)."""
    return _SKILL_CONTEXT.get()


@contextlib.contextmanager
def use_skill_context(context: Any) -> Iterator[None]:
    """Make skill tools called inside the block resolve dynamic paths with ``context``."""
    token = _SKILL_CONTEXT.set(context)
    try:
        yield
    finally:
        _SKILL_CONTEXT.reset(token)


class _SkillToolBase(WorkspaceBaseTool):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    registry: SkillRegistry
    """The registry shared by the skill tools."""


class SkillInput(BaseModel):
    """Arguments of the ``skill`` tool."""

    name: str = Field(
        min_length=1,
        max_length=1000,
        description="Skill name from the catalogue, or its location (the path shown in the "
        "catalogue) when several skills share a name.",
    )


class SkillTool(_SkillToolBase):
    """Load a skill's full instructions and the list of its resource files."""

    name: str = "skill"
    description: str = (
        "Load a skill: returns its full instructions and the list of its resource files. Call "
        "it as soon as a request matches a skill in the catalogue, without asking first. Pass "
        "the skill name, or its location when several skills share a name. Read resource files "
        "with skill_read."
    )
    args_schema: type[BaseModel] = SkillInput
    output_model: ClassVar[type[BaseModel] | None] = SkillOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="Load a skill", writes=False, idempotent=True, destructive=False
    )

    def _run(
        self, name: str, run_manager: CallbackManagerForToolRun | None = None
    ) -> tuple[str, dict[str, Any]]:
        with as_tool_errors():  # explicit-only skills are refused: the model is asking
            skill = self.registry.catalog(context=current_skill_context()).get(name, by_model=True)
        location = skill_location(skill, root=self.registry.root)
        folder = str(skill.path) if skill.path is not None else "(defined in code)"
        if skill.path is not None and skill.files and not skill.path.is_dir():
            folder += " (a stored version, not a folder: read its files with skill_read)"
        resources = sorted({*skill.resources, *skill.files} - {"SKILL.md"})
        parts = [
            f'<skill_content name="{skill.name}">',
            f"<skill_folder>{folder}</skill_folder>",
            skill.body,
        ]
        if resources:
            parts.append("<skill_resources>\n" + "\n".join(resources) + "\n</skill_resources>")
            parts.append(
                f'Read these files with skill_read(skill_name="{skill.name}", path=...); paths '
                "are relative to the skill folder."
            )
        parts.append("</skill_content>")
        artifact = {
            "name": skill.name,
            "description": skill.description,
            "location": location,
            "source": skill.source,
            "folder": folder,
            "resources": resources,
            "license": skill.license,
            "compatibility": skill.compatibility,
            "metadata": dict(skill.metadata),
            "allowed_tools": list(skill.allowed_tools),
        }
        return "\n".join(parts), artifact


class SkillReadInput(BaseModel):
    """Arguments of the ``skill_read`` tool."""

    skill_name: str = Field(
        min_length=1, max_length=1000, description="Skill name (or location) the file belongs to."
    )
    path: str = Field(
        min_length=1,
        max_length=1000,
        description="File path relative to the skill folder, e.g. 'references/guide.md'.",
    )
    start_line: int | None = Field(
        default=None, ge=1, description="First line to read (1-based); omit to start at line 1."
    )
    end_line: int | None = Field(
        default=None, ge=1, description="Last line to read (inclusive); omit to read on."
    )


class SkillReadTool(_SkillToolBase):
    """Read a file that belongs to a skill."""

    name: str = "skill_read"
    description: str = (
        "Read a file from a skill folder (references/, scripts/, assets/ or any other file the "
        "skill's instructions mention). The path is relative to the skill folder. Use "
        "start_line/end_line (1-based, inclusive) to read part of a long file. Binary files are "
        "described, not shown."
    )
    args_schema: type[BaseModel] = SkillReadInput
    output_model: ClassVar[type[BaseModel] | None] = SkillReadOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="Read a skill file", writes=False, idempotent=True, destructive=False
    )

    def _run(
        self,
        skill_name: str,
        path: str,
        start_line: int | None = None,
        end_line: int | None = None,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        with as_tool_errors():
            catalog = self.registry.catalog(context=current_skill_context())
            skill = catalog.get(skill_name, by_model=True)
            found = read_skill_file(skill, path, start_line=start_line, end_line=end_line)
        artifact = {
            "skill": found.skill,
            "path": found.path,
            "start_line": found.start_line,
            "end_line": found.end_line,
            "total_lines": found.total_lines,
            "size": found.size,
            "binary": found.binary,
            "truncated": found.truncated,
        }
        if found.binary:
            text = (
                f"Binary file: {found.path} in skill {found.skill!r} ({found.size} bytes); its "
                "content is not shown. Use it by path if the instructions say so."
            )
            return text, artifact
        if found.total_lines == 0:
            return f"File {found.path!r} in skill {found.skill!r} is empty.", artifact
        header = f"{found.path} (lines {found.start_line}-{found.end_line} of {found.total_lines})"
        text = f"{header}\n{found.text}"
        if found.truncated:
            text += (
                f"\n[... lines {found.end_line + 1}-{found.total_lines} not shown; call skill_read "
                f"with start_line={found.end_line + 1} to continue]"
            )
        return text, artifact


class SkillSearchInput(BaseModel):
    """Arguments of the ``skill_search`` tool."""

    query: str = Field(
        min_length=1,
        max_length=MAX_SKILL_QUERY_CHARS,
        description="Keywords to look for in skills.",
    )
    skill_names: list[Annotated[str, Field(max_length=1000)]] | None = Field(
        default=None,
        max_length=MAX_SKILL_NAMES,
        description="Only search these skills (names); omit to search all.",
    )
    top_k: int = Field(default=5, ge=1, le=50, description="How many results to return.")


class SkillSearchTool(_SkillToolBase):
    """Keyword (BM25) search across skill names, descriptions, instructions and references."""

    name: str = "skill_search"
    description: str = (
        "Search across skills (names, descriptions, instructions and reference files) by "
        "keywords. Use it to find which skill covers a topic, or a detail inside a skill's "
        "references. Returns ranked hits with the skill name, the file, line range and a snippet; "
        "load a skill with `skill` and read a file with `skill_read`."
    )
    args_schema: type[BaseModel] = SkillSearchInput
    output_model: ClassVar[type[BaseModel] | None] = SkillSearchOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="Search skills", writes=False, idempotent=True, destructive=False
    )

    def _run(
        self,
        query: str,
        skill_names: list[str] | None = None,
        top_k: int = 5,
        run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, list[dict[str, Any]]]:
        with as_tool_errors():
            catalog = self.registry.catalog(context=current_skill_context())
            hits = catalog.search(query, top_k=top_k, skill_names=skill_names)
        names = [s.name for s in catalog.skills]
        shared = {n for n in names if names.count(n) > 1}
        artifact = [
            {
                "skill_name": h.skill_name,
                "location": h.location,
                "source": h.source,
                "score": h.score,
                "snippet": h.snippet,
                "line_range": None
                if h.line_range is None
                else [h.line_range.start, h.line_range.end],
            }
            for h in hits
        ]
        if not hits:
            scope = f" in skills {', '.join(skill_names)}" if skill_names else ""
            return f"No results found for {query!r}{scope}. Try other keywords.", artifact
        blocks = []
        for h in hits:
            lines = f" (lines {h.line_range})" if h.line_range else ""
            where = ""
            if h.skill_name in shared:  # same-named skills: say which one (load it by location)
                skill = next(s for s in catalog.skills if s.location == h.location)
                origin = skill_location(skill, root=self.registry.root)
                where = f" from {origin} ({skill.source})"
            blocks.append(
                f"[{h.skill_name}]{where} {h.source}{lines} (score: {h.score:.2f})\n{h.snippet}"
            )
        return "\n\n".join(blocks), artifact


def skill_tools(registry: SkillRegistry) -> list[WorkspaceBaseTool]:
    """The three skill tools bound to one registry."""
    return [
        SkillTool(registry=registry),
        SkillReadTool(registry=registry),
        SkillSearchTool(registry=registry),
    ]
