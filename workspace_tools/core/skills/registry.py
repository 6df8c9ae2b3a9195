"""SkillRegistry: skills from code, project folders, managed folders and installed packages.

Names resolve code > local > managed > external (see :class:`SkillCatalog`). Each call stats the
watched paths and rediscovers when anything changed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.metadata
import inspect
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeAlias

from workspace_tools.core.background import BackgroundWorker
from workspace_tools.core.errors import SkillFormatError
from workspace_tools.core.skills.discover import (
    Signature,
    discover,
    list_resources,
    spec_root,
    stat_signature,
)
from workspace_tools.core.skills.files import SkillFile, read_skill_bytes, read_skill_file
from workspace_tools.core.skills.model import (
    MANAGED_DIR,
    SOURCE_PRIORITY,
    Skill,
    SkillDiagnostic,
    SkillSource,
    SourceListing,
    SourceType,
)
from workspace_tools.core.skills.parse import ParsedSkill, parse_skill_file, validate_name
from workspace_tools.core.skills.resolved import SkillCatalog, conflict_message
from workspace_tools.core.skills.search import SkillSearchHit
from workspace_tools.core.skills.store import SkillStore, VersionedSkillSource

__all__ = [
    "ENTRY_POINT_GROUP",
    "MANAGED_DIR",
    "FolderSkillSource",
    "SkillCatalog",
    "SkillRegistry",
    "classify_source",
]

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP: Final = "workspace_tools.skills"
"""Entry-point group through which installed packages register skills folders."""
_EXTERNAL_PARTS: Final = frozenset({"site-packages", "dist-packages", "node_modules"})

PathLike: TypeAlias = "str | os.PathLike[str]"
DynamicPaths: TypeAlias = Callable[
    [Any], "Iterable[str | os.PathLike[str]] | Awaitable[Iterable[str | os.PathLike[str]]]"
]
"""A function of the request context giving skills paths; ``async def`` functions work too."""


def classify_source(folder: Path, *, managed_roots: Collection[Path] = ()) -> SourceType:
    """Source type of a skill folder: ``external`` (site-packages...), ``managed`` or ``local``."""
    if _EXTERNAL_PARTS.intersection(folder.parts):
        return "external"
    text = folder.as_posix()
    if f"/{MANAGED_DIR}/" in f"{text}/" or any(
        r == folder or r in folder.parents for r in managed_roots
    ):
        return "managed"
    return "local"


@dataclass(slots=True)
class _State:
    specs: tuple[tuple[str, SourceType | None], ...]
    catalog: SkillCatalog
    watched: list[Path]
    signature: Signature
    checked_at: float
    code_version: int


class SkillRegistry:
    """Skills of a project, kept fresh, with dynamic per-request paths.

    Args:
        paths: Skills paths relative to ``root``, or a (sync or async) function of the context.
        root: Project root; defaults to the current directory.
        skills: Skills defined in code; they take precedence over filesystem skills.
        managed_paths: Extra managed folders (besides ``<root>/.workspace_tools/skills``).
        entry_points: Also load skills folders of installed packages (``workspace_tools.skills``).
        strict: Raise :class:`SkillFormatError` on any problem instead of reporting diagnostics.
        check_interval: Seconds during which a freshness check is not repeated (0: every call).
        cache_size: Catalogues kept for distinct dynamic path sets.
        disabled: Names left out everywhere (``None``: the project file's ``disabled_skills``).
        sources: More :class:`SkillSource` objects (the project's pinned versions always too).
    """

    def __init__(
        self,
        paths: Sequence[PathLike] | DynamicPaths = (),
        *,
        root: PathLike | None = None,
        skills: Iterable[Skill] = (),
        managed_paths: Sequence[PathLike] = (),
        entry_points: bool = False,
        strict: bool = False,
        check_interval: float = 0.0,
        cache_size: int = 32,
        disabled: Collection[str] | None = None,
        sources: Sequence[SkillSource] = (),
    ) -> None:
        self.root = Path(root if root is not None else Path.cwd()).absolute()
        self.sources: list[SkillSource] = [*sources, VersionedSkillSource(SkillStore(self.root))]
        """The sources listed besides the folders (the project's pinned versions last)."""
        self._disabled_fixed = None if disabled is None else frozenset(disabled)
        self._disabled: frozenset[str] = self._disabled_fixed or frozenset()
        self._disabled_sig: tuple[int, int] | str | None = "unread"
        self._paths: list[str] | DynamicPaths = (
            paths if callable(paths) else [os.fspath(p) for p in paths]
        )
        self._managed = [self._abs(p) for p in managed_paths]
        self.entry_points = entry_points
        self.strict = strict
        self.check_interval = check_interval
        self.cache_size = cache_size
        self._code: dict[str, Skill] = {}
        self._code_version = 0
        for skill in skills:
            self.register(skill)
        self._external: list[str] | None = None
        self._states: OrderedDict[tuple[tuple[str, SourceType | None], ...], _State] = OrderedDict()
        self._parsed: dict[tuple[str, int, int, str], ParsedSkill] = {}
        self._lock = threading.RLock()

    @classmethod
    def from_project(
        cls,
        root: PathLike,
        *,
        entry_points: bool = False,
        strict: bool = False,
        skills: Iterable[Skill] = (),
    ) -> SkillRegistry:
        """A registry for the skills paths listed in ``<root>/workspace-tools.yaml``."""
        from workspace_tools.core.config import ProjectConfig

        config = ProjectConfig.load(root)
        return cls(
            list(config.skills),
            root=config.root,
            skills=skills,
            entry_points=entry_points,
            strict=strict,
        )

    @property
    def paths(self) -> list[str] | DynamicPaths:
        """The configured paths (a copy), or the dynamic callable."""
        return self._paths if callable(self._paths) else list(self._paths)

    def add_path(self, path: PathLike) -> None:
        """Add a skills path (static configuration only)."""
        if callable(self._paths):
            msg = (
                "This registry uses dynamic paths; change what the paths callable returns instead."
            )
            raise TypeError(msg)
        if os.fspath(path) not in self._paths:
            self._paths.append(os.fspath(path))

    def remove_path(self, path: PathLike) -> None:
        """Remove a skills path previously configured or added (no error if absent)."""
        if not callable(self._paths) and os.fspath(path) in self._paths:
            self._paths.remove(os.fspath(path))

    def register(self, skill: Skill) -> None:
        """Add (or replace) a skill defined in code.

        Raises:
            SkillFormatError: the name or description breaks the spec.
        """
        problems = validate_name(skill.name) if skill.name else ["name is empty"]
        if not skill.description.strip():
            problems.append("description is empty; say what the skill does and when to use it")
        elif len(skill.description) > 1024:
            problems.append(
                f"description is {len(skill.description)} characters; the limit is 1024"
            )
        if problems:
            msg = f"Invalid skill {skill.name!r} defined in code: " + "; ".join(problems) + "."
            raise SkillFormatError(msg)
        if skill.source != "code":
            skill = dataclasses.replace(skill, source="code")
        self._code[skill.name] = skill
        self._code_version += 1

    def unregister(self, name: str) -> None:
        """Remove a skill defined in code (no error if absent)."""
        if self._code.pop(name, None) is not None:
            self._code_version += 1

    def catalog(self, *, context: Any = None) -> SkillCatalog:
        """The fresh catalogue for ``context`` (used only by dynamic paths)."""
        raw = self._paths(context) if callable(self._paths) else self._paths
        if inspect.isawaitable(raw):
            raw = _await(raw)
        return self._catalog_for(self._specs_of(raw))

    async def acatalog(self, *, context: Any = None) -> SkillCatalog:
        """Async twin of :meth:`catalog` (file checks run in a worker thread)."""
        raw = self._paths(context) if callable(self._paths) else self._paths
        if inspect.isawaitable(raw):
            raw = await raw
        return await asyncio.to_thread(self._catalog_for, self._specs_of(raw))

    @property
    def disabled(self) -> frozenset[str]:
        """Names currently disabled (see the ``disabled`` argument)."""
        with self._lock:
            self._check_disabled()
            return self._disabled

    def _check_disabled(self) -> None:
        """Re-read ``disabled_skills`` when the project file changed (the lock is held)."""
        if self._disabled_fixed is not None:
            return
        from workspace_tools.core.config import CONFIG_FILE, ProjectConfig
        from workspace_tools.core.errors import InvalidInputError

        try:
            st = (self.root / CONFIG_FILE).stat()
            sig: tuple[int, int] | None = (st.st_mtime_ns, st.st_size)
        except OSError:
            sig = None
        if sig == self._disabled_sig:
            return
        self._disabled_sig = sig
        names: frozenset[str] = frozenset()
        if sig is not None:
            try:
                names = frozenset(ProjectConfig.load(self.root).disabled_skills)
            except InvalidInputError as exc:  # a broken project file must not stop the skills
                logger.warning("Ignoring disabled_skills: %s", exc)
        if names != self._disabled:
            self._disabled = names
            self._states.clear()

    def _catalog_for(self, specs: tuple[tuple[str, SourceType | None], ...]) -> SkillCatalog:
        key = specs
        with self._lock:
            self._check_disabled()
            state = self._states.get(key)
            now = time.monotonic()
            if state is not None and now - state.checked_at < self.check_interval:
                return state.catalog
            if (
                state is not None
                and stat_signature(state.watched) == state.signature
                and not self._code_changed(state)
            ):
                state.checked_at = now
                self._states.move_to_end(key)
                return state.catalog
            state = self._build(specs)
            self._states[key] = state
            self._states.move_to_end(key)
            while len(self._states) > self.cache_size:
                self._states.popitem(last=False)
            return state.catalog

    def list_skills(self, *, context: Any = None) -> list[Skill]:
        """Every distinct skill, sorted by name (same-named skills from several places included)."""
        return list(self.catalog(context=context).skills)

    def get(self, identifier: str, *, context: Any = None) -> Skill:
        """Resolve a name or a path; see :meth:`SkillCatalog.get`."""
        return self.catalog(context=context).get(identifier)

    def diagnostics(self, *, context: Any = None) -> list[SkillDiagnostic]:
        """Problems found by the last discovery."""
        return list(self.catalog(context=context).diagnostics)

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        skill_names: Collection[str] | None = None,
        include_references: bool = True,
        context: Any = None,
    ) -> list[SkillSearchHit]:
        """Search skills; see :meth:`SkillCatalog.search`."""
        return self.catalog(context=context).search(
            query, top_k=top_k, skill_names=skill_names, include_references=include_references
        )

    def read_file(
        self,
        identifier: str,
        path: str,
        *,
        start_line: int | None = None,
        end_line: int | None = None,
        context: Any = None,
    ) -> SkillFile:
        """Read a file of a skill, relative to its root; see :func:`read_skill_file`."""
        skill = self.get(identifier, context=context)
        return read_skill_file(skill, path, start_line=start_line, end_line=end_line)

    def refresh(self) -> None:
        """Forget every cached catalogue and parse result; the next call rediscovers."""
        with self._lock:
            self._states.clear()
            self._parsed.clear()

    def _abs(self, path: PathLike) -> Path:
        p = Path(path).expanduser()
        return Path(os.path.normpath(p if p.is_absolute() else self.root / p))

    def _specs_of(
        self, raw: Iterable[str | os.PathLike[str]]
    ) -> tuple[tuple[str, SourceType | None], ...]:
        if isinstance(raw, (str, os.PathLike)):
            raw = [raw]
        specs: list[tuple[str, SourceType | None]] = [(os.fspath(p), None) for p in raw]
        managed = self.root / MANAGED_DIR
        specs.append((str(managed), "managed"))
        specs.extend((str(p), "managed") for p in self._managed)
        if self.entry_points:
            specs.extend((p, "external") for p in self._entry_point_paths())
        return tuple(dict.fromkeys(specs))

    def _entry_point_paths(self) -> list[str]:
        if self._external is None:
            found: list[str] = []
            for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
                try:
                    value = ep.load()
                    value = value() if callable(value) else value
                except Exception as exc:  # a broken plug-in must not stop the others
                    logger.warning("Skipping skills entry point %s: %s", ep.name, exc)
                    continue
                items = [value] if isinstance(value, (str, os.PathLike)) else list(value)
                found.extend(os.fspath(v) for v in items if os.fspath(v))
            self._external = found
        return self._external

    def _code_changed(self, state: _State) -> bool:
        return state.code_version != self._code_version

    def _build(self, specs: tuple[tuple[str, SourceType | None], ...]) -> _State:
        folders = FolderSkillSource(
            [(p, t) if t else p for p, t in specs],
            root=self.root,
            managed_roots=[self.root / MANAGED_DIR, *self._managed],
            strict=self.strict,
        )
        folders._parsed = self._parsed  # one parse cache for every set of paths
        diags: list[SkillDiagnostic] = []
        watched: list[Path] = []
        found: list[Skill] = []
        for source in (folders, *self.sources):
            listing = source.list()
            found.extend(listing.skills)
            diags.extend(listing.diagnostics)
            watched.extend(listing.watched)
        skills = _dedupe_aliases(found)
        skills.extend(self._code.values())
        catalog = SkillCatalog(skills, root=self.root, diagnostics=diags, disabled=self._disabled)
        if self.strict and catalog.conflicts:
            raise SkillFormatError(
                " ".join(conflict_message(n, c) for n, c in catalog.conflicts.items())
            )
        watched = list(dict.fromkeys(watched))
        return _State(
            specs, catalog, watched, stat_signature(watched), time.monotonic(), self._code_version
        )


class FolderSkillSource:
    """The :class:`SkillSource` of skills in folders on disk (the configured skills paths).

    Args:
        paths: Skills paths relative to ``root``; a ``(path, type)`` pair forces the type.
        root: Project root.
        managed_roots: Folders whose skills count as managed.
        strict: Raise :class:`SkillFormatError` on any problem instead of reporting it.
    """

    def __init__(
        self,
        paths: Sequence[PathLike | tuple[str, SourceType]],
        *,
        root: PathLike,
        managed_roots: Sequence[PathLike] = (),
        strict: bool = False,
    ) -> None:
        self.root = Path(root).absolute()
        self.specs = [(p[0], p[1]) if isinstance(p, tuple) else (os.fspath(p), None) for p in paths]
        self.managed_roots = [Path(p) for p in managed_roots]
        self.strict = strict
        self._parsed: dict[tuple[str, int, int, str], ParsedSkill] = {}

    def list(self) -> SourceListing:
        """The skills under the paths; a path's own problems only when it has no fixed type."""
        out = SourceListing()
        candidates: dict[str, Skill] = {}
        roots = [spec_root(spec, base=self.root) for spec, _ in self.specs]
        for spec, forced in self.specs:
            found = discover(spec, base=self.root, allowed=roots)
            out.watched.extend(found.watched)
            if forced is None:
                out.diagnostics.extend(found.diagnostics)
            for skill_md in found.skill_files:
                if str(skill_md) in candidates:
                    continue
                kind = forced or classify_source(skill_md.parent, managed_roots=self.managed_roots)
                parsed = self._parse(skill_md, kind)
                out.diagnostics.extend(parsed.diagnostics)
                if parsed.skill is not None:
                    resources = list_resources(skill_md.parent)
                    candidates[str(skill_md)] = dataclasses.replace(
                        parsed.skill, resources=resources
                    )
        out.skills = list(candidates.values())
        return out

    def read(self, skill: Skill, path: str) -> bytes:
        """The bytes of a file of ``skill`` (inside its folder; see :func:`read_skill_file`)."""
        return read_skill_bytes(skill, path)

    def _parse(self, skill_md: Path, source: SourceType) -> ParsedSkill:
        try:
            st = skill_md.stat()
            key = (str(skill_md), st.st_mtime_ns, st.st_size, source)
        except OSError:
            key = (str(skill_md), -1, -1, source)
        parsed = self._parsed.get(key)
        if parsed is None:
            parsed = parse_skill_file(skill_md, source=source, strict=self.strict)
            for diag in parsed.diagnostics:
                if diag.severity == "error":
                    field = f"{diag.field}: " if diag.field else ""
                    logger.warning("Skipping %s: %s%s", diag.path, field, diag.message)
            self._parsed[key] = parsed
        return parsed


def _await(awaitable: Awaitable[Any]) -> Any:
    """The result of ``awaitable`` from synchronous code."""

    async def wrap() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrap())
    # This thread's loop is busy: run the coroutine on a loop of its own elsewhere.
    worker = BackgroundWorker("workspace-tools-skills-paths")
    return worker.submit(lambda: asyncio.run(wrap())).result()


def _dedupe_aliases(skills: list[Skill]) -> list[Skill]:
    """Keep one skill per real folder: the best source, then the real (non-alias) path."""
    best: dict[str, tuple[tuple[int, bool, str], Skill]] = {}
    for skill in skills:
        real = os.path.realpath(skill.path) if skill.path is not None else skill.name
        rank = (SOURCE_PRIORITY[skill.source], str(skill.path) != real, str(skill.path))
        kept = best.get(real)
        if kept is None or rank < kept[0]:
            best[real] = (rank, skill)
    return [skill for _, skill in best.values()]
