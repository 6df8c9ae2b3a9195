"""Value objects of the skills core: a skill, its resources and the problems found loading it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

__all__ = [
    "RESOURCE_DIRS",
    "SOURCE_PRIORITY",
    "Skill",
    "SkillDiagnostic",
    "SkillSource",
]

SkillSource = Literal["code", "local", "managed", "external"]
"""Where a skill comes from; see :data:`SOURCE_PRIORITY`."""

SOURCE_PRIORITY: Final[dict[str, int]] = {"code": 0, "local": 1, "managed": 2, "external": 3}
"""Resolution order of a name found in several sources: lower wins."""

RESOURCE_DIRS: Final[tuple[str, ...]] = ("references", "scripts", "assets")
"""Sub-folders of a skill whose files are listed as resources."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillDiagnostic:
    """A problem found while discovering or parsing a skill."""

    path: str
    """The SKILL.md, folder or configured path the problem is about."""
    message: str
    """What is wrong and what to do about it."""
    severity: Literal["error", "warning"] = "warning"
    """``error``: the skill was skipped; ``warning``: it loaded anyway."""
    field: str | None = None
    """The frontmatter field concerned, if any."""
    skill: str | None = None
    """The skill name, when known."""

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        what = f"{self.field}: " if self.field else ""
        return f"{self.severity}: {where}{what}{self.message}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """One Agent Skill: frontmatter fields, instructions and resource files.

    Skills defined in Python are built directly (``Skill(name=..., description=..., body=...)``)
    and registered with :meth:`SkillRegistry.register`; they take precedence over filesystem
    skills of the same name. Their resource files may live in ``files`` (relative path -> text).
    """

    name: str
    """Skill name (lowercase letters, digits and single hyphens)."""
    description: str
    """What the skill does and when to use it."""
    body: str = ""
    """The Markdown instructions after the frontmatter, stripped."""
    body_line: int = 1
    """1-based line of SKILL.md on which ``body`` starts."""
    path: Path | None = None
    """Absolute skill folder, ``None`` for a skill defined in code without a folder."""
    source: SkillSource = "code"
    """Source type, used for resolution (code > local > managed > external)."""
    license: str | None = None
    """Licence name or bundled licence file."""
    compatibility: str | None = None
    """Environment requirements."""
    metadata: Mapping[str, str] = field(default_factory=dict)
    """Free string-to-string metadata."""
    allowed_tools: tuple[str, ...] = ()
    """Pre-approved tools (experimental field of the spec)."""
    user_invocable: bool = False
    """Whether a user may activate the skill explicitly."""
    resources: tuple[str, ...] = ()
    """Files under ``references/``, ``scripts/`` and ``assets/``, relative to the skill root."""
    files: Mapping[str, str] = field(default_factory=dict)
    """In-memory resource files of a code-defined skill (relative path -> text)."""

    @property
    def skill_md(self) -> Path | None:
        """Path of the SKILL.md file, if the skill lives on disk."""
        return None if self.path is None else self.path / "SKILL.md"

    @property
    def location(self) -> str:
        """Identifier shown in the catalogue: the SKILL.md path, or the name for code skills."""
        return self.name if self.path is None else str(self.path / "SKILL.md")

    def resources_in(self, folder: str) -> tuple[str, ...]:
        """Resource files under one of :data:`RESOURCE_DIRS`."""
        prefix = folder.rstrip("/") + "/"
        return tuple(r for r in self.resources if r.startswith(prefix))
