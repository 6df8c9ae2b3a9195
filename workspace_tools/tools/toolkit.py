"""``WorkspaceToolkit``: every workspace, document, skill and docs tool over one shared core."""

from __future__ import annotations

import difflib
import logging
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, BaseToolkit
from pydantic import ConfigDict, Field, PrivateAttr

from workspace_tools.core.config import CONFIG_FILE, ProjectConfig
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.skills import MANAGED_DIR, SkillRegistry, is_glob
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.groups import RESERVED_TOOL_NAMES, DocsGroup, build_tool_groups

__all__ = ["RESERVED_TOOL_NAMES", "WorkspaceToolkit"]

logger = logging.getLogger(__name__)


class WorkspaceToolkit(BaseToolkit):
    """The tools of a workspace, sharing one :class:`Workspace` (and one skill registry).

    Example::

        toolkit = WorkspaceToolkit(workspace=Workspace("."), skills_paths=["skills"])
        agent = create_agent(model, tools=toolkit.get_tools())
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    workspace: Workspace
    """The workspace every tool searches and indexes."""
    skills_paths: list[str] | None = None
    """Skills folders relative to the root, adding the skill tools (``None``: the project's)."""
    skills_entry_points: bool = False
    """Also load skills registered by installed packages (entry points; opt-in)."""
    docs_root: str | None = None
    """A documentation folder (relative to the workspace root), adding the docs tools."""
    include: list[str] | None = None
    """Only these tool names (default: all)."""
    exclude: list[str] = Field(default_factory=list)
    """Leave out these tool names."""
    read_only: bool = False
    """Leave out ``workspace_index`` (also left out when the workspace is read-only)."""
    require_approval: list[str] = Field(default_factory=list)
    """Tool names that need a person's approval; see :meth:`interrupt_on`."""

    _tools: list[BaseTool] | None = PrivateAttr(default=None)
    _skills: SkillRegistry | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        """Build the toolkit; see the fields.

        Raises:
            InvalidInputError: An unknown option, or a ``skills_paths`` path does not exist.
        """
        unknown = sorted(set(data) - set(type(self).model_fields))
        if unknown:
            fields = sorted(type(self).model_fields)
            hints = [
                f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name)
                for name in unknown
                for close in [difflib.get_close_matches(name, fields, n=1)]
            ]
            msg = (
                f"WorkspaceToolkit got unknown option(s) {', '.join(hints)}; "
                f"its options are: {', '.join(fields)}."
            )
            raise InvalidInputError(msg)
        super().__init__(**data)
        for spec in self.skills_paths or ():
            path = self.workspace.root / Path(spec).expanduser()
            if not is_glob(str(spec)) and not path.exists():
                msg = (
                    f"skills_paths entry {str(spec)!r} does not exist (looked for {path}); "
                    "give skills folders relative to the workspace root, or globs."
                )
                raise InvalidInputError(msg)

    @property
    def skills(self) -> SkillRegistry | None:
        """The shared skill registry (``None`` when no skills paths are set or configured)."""
        if self._skills is None:
            paths = self.skills_paths
            if paths is None:
                paths = list(ProjectConfig.load(self.workspace.root).skills)
                for spec in paths:
                    if not is_glob(spec) and not (self.workspace.root / spec).exists():
                        logger.warning(
                            "Skills path %r of %s does not exist (looked for %s); no skills "
                            "come from it.",
                            spec,
                            CONFIG_FILE,
                            self.workspace.root / spec,
                        )
            managed = self.skills_paths is None and (self.workspace.root / MANAGED_DIR).is_dir()
            if paths or self.skills_entry_points or managed:  # managed: git skills, versions
                self._skills = SkillRegistry(
                    paths, root=self.workspace.root, entry_points=self.skills_entry_points
                )
        return self._skills

    def get_tools(self) -> list[BaseTool]:
        """The selected tools, built once and shared between calls.

        Raises:
            ValueError: ``include``, ``exclude`` or ``require_approval`` names an unknown tool.
        """
        tools = self._all_tools()
        names = [t.name for t in tools]
        for label, chosen in (
            ("include", self.include or []),
            ("exclude", self.exclude),
            ("require_approval", self.require_approval),
        ):
            unknown = sorted(set(chosen) - set(names))
            if unknown:
                msg = (
                    f"{label} names unknown tool(s) {', '.join(unknown)}; this toolkit has: "
                    f"{', '.join(names)}."
                )
                raise ValueError(msg)
        return [
            t
            for t in tools
            if (self.include is None or t.name in self.include) and t.name not in self.exclude
        ]

    def interrupt_on(self) -> dict[str, bool]:
        """``interrupt_on`` for ``HumanInTheLoopMiddleware``: the tools needing approval."""
        return {
            t.name: True
            for t in self.get_tools()
            if t.name in self.require_approval or getattr(t, "require_approval", False)
        }

    def skills_middleware(self, **kwargs: Any) -> Any:
        """A ``SkillsMiddleware`` (keyword arguments) over :attr:`skills`, adding no tools.

        Raises:
            ValueError: the toolkit has no ``skills_paths``.
        """
        from workspace_tools.tools.middleware import SkillsMiddleware

        if self.skills is None:
            msg = (
                "This toolkit has no skills: pass skills_paths=[...] to WorkspaceToolkit, or "
                "list skills folders in workspace-tools.yaml (workspace-tools skills add PATH)."
            )
            raise ValueError(msg)
        return SkillsMiddleware(self.skills, include_tools=False, **kwargs)

    def _all_tools(self) -> list[BaseTool]:
        if self._tools is None:
            ws = self.workspace
            docs = []
            if self.docs_root is not None:
                # hybrid with the workspace's vectors; pages cited as workspace_search cites them
                root = ws.root / self.docs_root
                docs.append(DocsGroup(root=root, embedder=ws.embedder, cite_from=ws.root))
            self._tools = build_tool_groups(
                workspace=ws,
                skills=self.skills,
                docs=docs,
                read_only=self.read_only,
                require_approval=self.require_approval,
            )
        return self._tools
