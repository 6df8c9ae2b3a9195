"""The skills a session serves: a registry narrowed to the skills inside the client's roots."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from workspace_tools.core.skills import (
    Skill,
    SkillCatalog,
    SkillFile,
    SkillRegistry,
    read_skill_file,
)

__all__ = ["SkillsView"]


class SkillsView:
    """``registry`` as a session sees it: only the skills ``visible`` keeps.

    Args:
        registry: The server's registry (shared by every session).
        visible: Whether a skill is served to this session.
    """

    def __init__(self, registry: SkillRegistry, visible: Callable[[Skill], bool]) -> None:
        self.registry = registry
        self.visible = visible

    @property
    def root(self) -> Path:
        """The registry's root (locations are shown relative to it)."""
        return self.registry.root

    def catalog(self, *, context: Any = None) -> SkillCatalog:
        """The registry's catalogue without the skills this session does not serve."""
        full = self.registry.catalog(context=context)
        kept = [s for s in full.skills if self.visible(s)]
        if len(kept) == len(full.skills):
            return full
        return SkillCatalog(kept, root=full.root, disabled=full.disabled_names)

    def get(self, identifier: str, *, context: Any = None) -> Skill:
        """The served skill ``identifier`` names (as :meth:`SkillRegistry.get`)."""
        return self.catalog(context=context).get(identifier)

    def read_file(
        self,
        identifier: str,
        path: str,
        *,
        start_line: int | None = None,
        end_line: int | None = None,
        context: Any = None,
    ) -> SkillFile:
        """A file of a served skill (as :meth:`SkillRegistry.read_file`)."""
        skill = self.get(identifier, context=context)
        return read_skill_file(skill, path, start_line=start_line, end_line=end_line)
