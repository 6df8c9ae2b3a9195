"""Value objects of the skills core: a skill, its resources and the problems found loading it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, Protocol, runtime_checkable

__all__ = [
    "MANAGED_DIR",
    "RESOURCE_DIRS",
    "SOURCE_PRIORITY",
    "Skill",
    "SkillDiagnostic",
    "SkillSource",
    "SourceListing",
    "SourceType",
]

SourceType = Literal["code", "local", "managed", "external"]
"""Where a skill comes from; see :data:`SOURCE_PRIORITY`."""

SOURCE_PRIORITY: Final[dict[str, int]] = {"code": 0, "local": 1, "managed": 2, "external": 3}
"""Resolution order of a name found in several sources: lower wins."""

MANAGED_DIR: Final = ".workspace_tools/skills"
"""Managed skills folder under a project root (skills the tool installs or serves)."""
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
    """One Agent Skill: frontmatter fields, instructions and resource files."""

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
    source: SourceType = "code"
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
    disable_model_invocation: bool = False
    """Explicit-only: hidden from the model, still loaded by the CLI or ``registry.get``."""
    files: Mapping[str, str | bytes] = field(default_factory=dict)
    """Files not on disk (relative path -> content), e.g. a code skill's resources."""

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


@dataclass(slots=True, kw_only=True)
class SourceListing:
    """What one :class:`SkillSource` lists."""

    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[SkillDiagnostic] = field(default_factory=list)
    watched: list[Path] = field(default_factory=list)
    """Files and folders whose ``stat`` tells whether listing again may give something else."""


@runtime_checkable
class SkillSource(Protocol):
    """Where skills come from: folders on disk, a versioned store, or your own backend."""

    def list(self) -> SourceListing:
        """The skills of this source, the problems found, and what to watch for changes."""
        ...

    def read(self, skill: Skill, path: str) -> bytes:
        """The bytes of ``path`` (relative to the skill root) of a skill this source listed."""
        ...
