"""The project configuration file ``workspace-tools.yaml`` at the project root.

Example::

    skills: [skills, .agents/skills, "packages/**/skills"]
    disabled_skills: [pdf-tools]

Other top-level settings are kept in :attr:`ProjectConfig.settings` and written back unchanged.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.errors import InvalidInputError

__all__ = ["CONFIG_FILE", "ProjectConfig"]

CONFIG_FILE: Final = "workspace-tools.yaml"
"""Name of the configuration file at the project root."""
MAX_CONFIG_BYTES: Final = 1_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectConfig:
    """Settings of one project."""

    root: Path
    """The project root (the folder that holds the configuration file)."""
    skills: tuple[str, ...] = ()
    """Skills paths (folders, skill folders, SKILL.md files or globs), relative to ``root``."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Every other top-level setting of the file, untouched."""

    @property
    def path(self) -> Path:
        """Path of the configuration file."""
        return self.root / CONFIG_FILE

    @classmethod
    def load(cls, root: str | os.PathLike[str]) -> ProjectConfig:
        """Read ``<root>/workspace-tools.yaml``; a missing file gives the defaults.

        Raises:
            InvalidInputError: the file is not valid YAML or breaks the expected shape.
        """
        root_path = Path(root).absolute()
        path = root_path / CONFIG_FILE
        if not path.is_file():
            return cls(root=root_path)
        if path.stat().st_size > MAX_CONFIG_BYTES:
            msg = f"{path} is larger than {MAX_CONFIG_BYTES} bytes; is it the right file?"
            raise InvalidInputError(msg)
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            msg = (
                f"{path} is not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x}). "
                "Save the file as UTF-8 and try again."
            )
            raise InvalidInputError(msg) from None
        import yaml  # most commands never read a project file

        from workspace_tools.core.text.safe_yaml import UnsafeYamlError, load_yaml

        try:
            data = load_yaml(text)
        except (UnsafeYamlError, yaml.YAMLError) as exc:
            detail = str(exc).replace("\n", " ")
            msg = f"{path} is not valid YAML ({detail}). Fix the file and try again."
            raise InvalidInputError(msg) from exc
        if data is None:
            data = {}
        if not isinstance(data, dict):
            kind = type(data).__name__
            msg = f"{path} must hold a mapping of settings (like 'skills: [...]'), got {kind}."
            raise InvalidInputError(msg)
        skills = data.get("skills") or []
        if isinstance(skills, str):
            skills = [skills]
        if not isinstance(skills, list) or not all(isinstance(s, str) for s in skills):
            msg = (
                f"'skills' in {path} must be a list of paths (strings), got {skills!r}. "
                "Example: skills: [skills, .agents/skills]"
            )
            raise InvalidInputError(msg)
        settings = {k: v for k, v in data.items() if k != "skills"}
        return cls(root=root_path, skills=tuple(skills), settings=settings)

    def section(self, name: str, *, known: Collection[str]) -> Mapping[str, Any]:
        """The mapping under the top-level key ``name`` (empty when absent), checked.

        Args:
            name: The section (``workspace``, ``mcp``...).
            known: The keys the section may hold.

        Raises:
            InvalidInputError: the section is not a mapping, or holds an unknown key.
        """
        raw = self.settings.get(name) or {}
        where = f"'{name}' in {self.path}"
        if not isinstance(raw, Mapping):
            msg = f"{where} must be a mapping of settings, got {type(raw).__name__}."
            raise InvalidInputError(msg)
        unknown = sorted(str(key) for key in set(raw) - set(known))
        if unknown:
            msg = (
                f"Unknown setting(s) {', '.join(unknown)} in {where}. "
                f"Known: {', '.join(sorted(known))}."
            )
            raise InvalidInputError(msg)
        return raw

    @property
    def disabled_skills(self) -> tuple[str, ...]:
        """Names listed under ``disabled_skills`` (skills left out everywhere).

        Raises:
            InvalidInputError: the setting is not a list of names.
        """
        raw = self.settings.get("disabled_skills") or []
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
            msg = (
                f"'disabled_skills' in {self.path} must be a list of skill names, got {raw!r}. "
                "Example: disabled_skills: [pdf-tools]"
            )
            raise InvalidInputError(msg)
        return tuple(dict.fromkeys(n.strip() for n in raw if n.strip()))

    def with_disabled_skills(self, names: Sequence[str]) -> ProjectConfig:
        """A copy whose ``disabled_skills`` is ``names`` (sorted; the key dropped when empty)."""
        settings = {k: v for k, v in self.settings.items() if k != "disabled_skills"}
        if names:
            settings["disabled_skills"] = sorted(set(names))
        return ProjectConfig(root=self.root, skills=self.skills, settings=settings)

    def by_skill(self, name: str) -> dict[str, Any]:
        """The top-level mapping ``name`` keyed by skill names (``skill_versions``...).

        Raises:
            InvalidInputError: it is not a mapping whose keys are skill names.
        """
        raw = self.settings.get(name) or {}
        if not isinstance(raw, Mapping) or not all(isinstance(k, str) for k in raw):
            msg = (
                f"'{name}' in {self.path} must map skill names to settings, got {raw!r}. "
                "Fix the file, or run the `workspace-tools skills` command that writes it again."
            )
            raise InvalidInputError(msg)
        return dict(raw)

    def with_setting(self, name: str, value: Any) -> ProjectConfig:
        """A copy whose top-level setting ``name`` is ``value`` (dropped when empty)."""
        settings = {k: v for k, v in self.settings.items() if k != name}
        if value:
            settings[name] = value
        return ProjectConfig(root=self.root, skills=self.skills, settings=settings)

    def with_skills(self, skills: Sequence[str]) -> ProjectConfig:
        """A copy with another list of skills paths (duplicates dropped, order kept)."""
        return ProjectConfig(
            root=self.root, skills=tuple(dict.fromkeys(skills)), settings=self.settings
        )

    def save(self) -> Path:
        """Write the file atomically (settings first-level order kept, ``skills`` first)."""
        import yaml

        data: dict[str, Any] = {"skills": list(self.skills), **dict(self.settings)}
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".workspace-tools.", suffix=".yaml", dir=self.root)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return self.path
