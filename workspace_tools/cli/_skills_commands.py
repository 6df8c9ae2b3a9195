"""What the ``workspace-tools skills`` subcommands do (imported only when one runs)."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from workspace_tools.core.config import CONFIG_FILE, ProjectConfig
from workspace_tools.core.errors import InvalidInputError, WorkspaceError
from workspace_tools.core.skills import (
    MANAGED_DIR,
    GitSkills,
    Skill,
    SkillDiagnostic,
    SkillRegistry,
    SkillStore,
    discover,
    is_git_source,
    is_glob,
    list_resources,
    parse_skill_file,
    skill_location,
)
from workspace_tools.core.skills import registry as registry_module
from workspace_tools.core.skills.resolved import AGENT_HINT

__all__ = [
    "cmd_add",
    "cmd_disable",
    "cmd_enable",
    "cmd_list",
    "cmd_load",
    "cmd_pin",
    "cmd_publish",
    "cmd_remove",
    "cmd_rollback",
    "cmd_show",
    "cmd_sync",
    "cmd_update",
    "cmd_validate",
    "cmd_versions",
]

T = TypeVar("T")


def cmd_list(args: argparse.Namespace) -> int:
    """``skills list``: every skill with its source and location, then the problems."""
    registry = _registry(args)
    with _registry_quiet():  # its problems are printed below, once
        catalog = registry.catalog()
    if getattr(args, "json", False):
        rows = [
            {
                "name": s.name,
                "source": s.source,
                "location": skill_location(s, root=registry.root),
                "description": s.description,
                "disable_model_invocation": s.disable_model_invocation,
            }
            for s in catalog.skills
        ]
        problems = [_diag_dict(d) for d in catalog.diagnostics]
        print(json.dumps({"skills": rows, "diagnostics": problems}, indent=2))
        return 0 if rows else 1
    if not catalog.skills:
        print("No skills found. Add a skills folder with `workspace-tools skills add PATH`.")
    else:
        width = max(len(s.name) for s in catalog.skills)
        for s in catalog.skills:
            desc = " ".join(s.description.split())
            desc = desc if len(desc) <= 80 else desc[:77] + "..."
            only = "  (explicit only)" if s.disable_model_invocation else ""
            print(
                f"{s.name:<{width}}  {s.source:<8}  {skill_location(s, root=registry.root)}{only}"
            )
            print(f"{'':<{width}}  {desc}")
    if catalog.disabled_names:
        print()
        print(f"Disabled ({CONFIG_FILE}): {', '.join(sorted(catalog.disabled_names))}")
    _print_diagnostics(catalog.diagnostics)
    return 0 if catalog.skills else 1


def _get(args: argparse.Namespace) -> tuple[SkillRegistry, Skill] | None:
    """The registry and the skill ``args.name`` names (explicit-only too), or ``None``."""
    registry = _registry(args)
    try:
        with _registry_quiet():
            return registry, registry.get(args.name)
    except WorkspaceError as exc:
        message = str(exc).replace(AGENT_HINT, "See them with `workspace-tools skills list`.")
        print(f"error: {message}", file=sys.stderr)
        return None


def cmd_load(args: argparse.Namespace) -> int:
    """``skills load NAME``: the instructions alone, for a person to hand to an agent."""
    found = _get(args)
    if found is not None:
        print(found[1].body)
    return 0 if found else 1


def cmd_show(args: argparse.Namespace) -> int:
    """``skills show NAME``: fields, resources and instructions of one skill."""
    found = _get(args)
    if found is None:
        return 1
    registry, skill = found
    print(f"name:        {skill.name}")
    print(f"source:      {skill.source}")
    print(f"location:    {skill_location(skill, root=registry.root)}")
    print(f"description: {skill.description}")
    for label, value in [
        ("license", skill.license),
        ("compatibility", skill.compatibility),
        ("metadata", dict(skill.metadata) or None),
        ("allowed-tools", " ".join(skill.allowed_tools) or None),
    ]:
        if value:
            print(f"{label + ':':<13}{value}")
    if skill.user_invocable:
        print("user-invocable: true")
    if skill.disable_model_invocation:
        print("disable-model-invocation: true (explicit only: the model cannot load it)")
    if skill.resources:
        print("resources:")
        for rel in skill.resources:
            print(f"  {rel}")
    print()
    print(skill.body)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """``skills validate [PATH]``: parse every skill found and print each problem."""
    root = _root(args)
    specs = [args.path] if args.path else list(ProjectConfig.load(root).skills)
    if not args.path:
        specs.append(".workspace_tools/skills")
    checked = 0
    problems: list[SkillDiagnostic] = []
    for spec in specs:
        found = discover(spec, base=root)
        if args.path:
            problems.extend(found.diagnostics)
        for skill_md in found.skill_files:
            checked += 1
            parsed = parse_skill_file(skill_md, resources=list_resources(skill_md.parent))
            status = (
                "ok"
                if not parsed.diagnostics
                else ("skipped" if parsed.skill is None else "loaded with warnings")
            )
            print(f"{status}: {_rel(skill_md.parent, root)}")
            for diag in parsed.diagnostics:
                print(f"  {diag.severity}: {diag.field + ': ' if diag.field else ''}{diag.message}")
            problems.extend(parsed.diagnostics)
    if not specs or (checked == 0 and not problems):
        print(f"No skills found. Give a PATH or add skills paths to {CONFIG_FILE}.")
        return 1
    for diag in problems:
        if diag.path in specs:
            print(f"{diag.severity}: {diag.message}")
    errors = sum(d.severity == "error" for d in problems)
    warnings = len(problems) - errors
    print(f"{checked} skill(s) checked: {errors} error(s), {warnings} warning(s).")
    failed = errors > 0 or (warnings > 0 and not args.lenient)
    return 1 if failed else 0


def cmd_add(args: argparse.Namespace) -> int:
    """``skills add PATH|URL``: add a skills path, or install a skill from git and pin it."""
    root = _root(args)
    if is_git_source(args.path):
        pin = _attempt(lambda: GitSkills(root).add(args.path))
        if pin is not None:
            print(
                f"Added {pin.name!r} from {pin.source} at commit {pin.commit[:12]} into "
                f"{MANAGED_DIR}/{pin.name}; pinned in {CONFIG_FILE}."
            )
        return 0 if pin else 1
    config = _load_config(root)
    if config is None:
        return 1
    entry = _normalise(args.path, root)
    if not is_glob(entry) and not (root / entry).exists():
        print(
            f"error: skills path {args.path!r} does not exist (looked for {root / entry}). "
            "Create it first or fix the path.",
            file=sys.stderr,
        )
        return 2
    if entry in config.skills:
        print(f"{entry!r} is already listed in {config.path}.")
        return 0
    found = discover(entry, base=root)
    if not found.skill_files and not is_glob(entry):
        print(
            f"error: no skills found in {args.path!r} (looked for */SKILL.md under "
            f"{root / entry}); nothing added to {config.path}. Point at a folder of skill "
            "folders, one skill folder or a SKILL.md.",
            file=sys.stderr,
        )
        return 1
    config.with_skills([*config.skills, entry]).save()
    parsed = [parse_skill_file(f, resources=()) for f in found.skill_files]
    loaded = sum(p.skill is not None for p in parsed)
    print(f"Added {entry!r} to {config.path} ({loaded} skill{'' if loaded == 1 else 's'} found).")
    skipped = [(f, p) for f, p in zip(found.skill_files, parsed, strict=True) if p.skill is None]
    for skill_md, result in skipped:
        errors = [d for d in result.diagnostics if d.severity == "error"]
        why = (
            f"{errors[0].field + ': ' if errors[0].field else ''}{errors[0].message}"
            if errors
            else ""
        )
        print(f"  skipped {_rel(skill_md.parent, root)}: {why}")
    if skipped:
        print(f"  Run `workspace-tools skills validate {entry}` for every problem.")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    """``skills remove PATH``: remove a skills path from the project configuration file."""
    root = _root(args)
    config = _load_config(root)
    if config is None:
        return 1
    entry = _normalise(args.path, root)
    if entry not in config.skills and args.path in (_attempt(GitSkills(root).pins) or {}):
        pin = _attempt(lambda: GitSkills(root).remove(args.path))
        if pin is not None:
            print(f"Removed git skill {pin.name!r} ({pin.source}) and its pin in {config.path}.")
        return 0 if pin else 1
    if entry not in config.skills:
        listed = ", ".join(repr(s) for s in config.skills) or "(none)"
        print(
            f"error: {entry!r} is not listed in {config.path}. Listed paths: {listed}.",
            file=sys.stderr,
        )
        return 1
    config.with_skills([s for s in config.skills if s != entry]).save()
    print(f"Removed {entry!r} from {config.path}.")
    return 0


@contextlib.contextmanager
def _registry_quiet() -> Iterator[None]:
    """Keep the registry from logging the problems a command prints itself."""
    log = logging.getLogger(registry_module.__name__)
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def cmd_disable(args: argparse.Namespace) -> int:
    """``skills disable NAME``: add a skill name to ``disabled_skills`` of the project file."""
    root = _root(args)
    config = _load_config(root)
    if config is None:
        return 1
    name = args.name.strip()
    try:
        disabled = config.disabled_skills
    except WorkspaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if name in disabled:
        print(f"Skill {name!r} is already disabled in {config.path}.")
        return 0
    with _registry_quiet():  # what `skills list` shows (no installed package's skills)
        names = _registry(args).catalog().names()
    if name not in names:
        print(
            f"error: no skill named {name!r} in this project; nothing disabled. "
            f"Skills (as `workspace-tools skills list` shows them): {', '.join(names) or 'none'}.",
            file=sys.stderr,
        )
        return 1
    config.with_disabled_skills([*disabled, name]).save()
    print(
        f"Disabled {name!r} in {config.path}: it is left out of the catalogue, the skill "
        f"tools and the MCP server. Undo with `workspace-tools skills enable {name}`."
    )
    return 0


def cmd_enable(args: argparse.Namespace) -> int:
    """``skills enable NAME``: remove a skill name from ``disabled_skills``."""
    root = _root(args)
    config = _load_config(root)
    if config is None:
        return 1
    name = args.name.strip()
    try:
        disabled = config.disabled_skills
    except WorkspaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if name not in disabled:
        shown = ", ".join(disabled) or "(none)"
        print(f"Skill {name!r} is not disabled in {config.path} (disabled: {shown}).")
        return 0
    config.with_disabled_skills([n for n in disabled if n != name]).save()
    print(f"Enabled {name!r} again in {config.path}.")
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    """``skills update [NAME...]``: fetch git skills again and move their pins."""
    moved = _attempt(lambda: GitSkills(_root(args)).update(args.names))
    for before, after in moved or []:
        change = f"{before.commit[:12]} -> {after.commit[:12]}"
        state = "up to date" if before.commit == after.commit else change
        print(f"{after.name}: {state} ({after.source})")
    if moved == []:
        print("No git skills in this project; add one with `workspace-tools skills add URL`.")
    return 0 if moved is not None else 1


def cmd_sync(args: argparse.Namespace) -> int:
    """``skills sync [NAME...]``: install the pinned commit of git skills."""
    pins = _attempt(lambda: GitSkills(_root(args)).sync(args.names))
    for pin in pins or []:
        print(f"{pin.name}: commit {pin.commit[:12]} installed ({pin.source})")
    return 0 if pins is not None else 1


def cmd_publish(args: argparse.Namespace) -> int:
    """``skills publish FOLDER``: store the folder as a version and pin it."""
    store = SkillStore(_root(args))
    found = _attempt(lambda: store.publish(args.path))
    if found is None:
        return 1
    what = f"Published {found.name!r} version {found.version[:12]} ({len(found.files)} file(s))"
    if args.no_pin:
        print(
            f"{what}; serve it with `workspace-tools skills pin {found.name} {found.version[:12]}`."
        )
    elif _attempt(lambda: store.pin(found.name, found.version)) is None:
        return 1
    else:
        print(f"{what}; pinned in {CONFIG_FILE}.")
    return 0


def cmd_versions(args: argparse.Namespace) -> int:
    """``skills versions NAME``: the published versions, oldest first, the pinned one marked."""
    store = SkillStore(_root(args))
    pinned = (_attempt(store.pins) or {}).get(args.name)
    versions = store.versions(args.name)
    for v in versions:
        mark = "*" if v.version == pinned else " "
        print(f"{mark} {v.version[:12]}  {v.published}  {len(v.files)} file(s)")
    if not versions:
        print(f"No published versions of {args.name!r}; publish with `skills publish FOLDER`.")
    return 0 if versions else 1


def cmd_pin(args: argparse.Namespace) -> int:
    """``skills pin NAME VERSION``: serve that version."""
    found = _attempt(lambda: SkillStore(_root(args)).pin(args.name, args.version))
    if found is not None:
        print(f"Pinned {found.name!r} at {found.version[:12]} (published {found.published}).")
    return 0 if found else 1


def cmd_rollback(args: argparse.Namespace) -> int:
    """``skills rollback NAME``: pin the version published before the pinned one."""
    found = _attempt(lambda: SkillStore(_root(args)).rollback(args.name))
    if found is not None:
        print(f"Rolled {found.name!r} back to {found.version[:12]} (published {found.published}).")
    return 0 if found else 1


def _attempt(action: Callable[[], T]) -> T | None:
    """``action()``, or ``None`` after printing the error it raised."""
    try:
        return action()
    except WorkspaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _load_config(root: Path) -> ProjectConfig | None:
    """The project configuration file, or ``None`` after printing why it cannot be read."""
    try:
        return ProjectConfig.load(root)
    except WorkspaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _root(args: argparse.Namespace) -> Path:
    """The project root of ``--root``.

    Raises:
        InvalidInputError: it is not an existing folder.
    """
    root = Path(getattr(args, "root", None) or ".").expanduser().absolute()
    if not root.is_dir():
        msg = f"Project root {str(root)!r} is not a folder. Pass --root with an existing folder."
        raise InvalidInputError(msg)
    return root


def _registry(args: argparse.Namespace) -> SkillRegistry:
    entry_points = bool(getattr(args, "entry_points", False))
    return SkillRegistry.from_project(_root(args), entry_points=entry_points)


def _normalise(path: str, root: Path) -> str:
    text = path.replace("\\", "/").rstrip("/") or "."
    if is_glob(text):
        return text
    candidate = Path(text).expanduser()
    absolute = candidate if candidate.is_absolute() else root / candidate
    absolute = Path(os.path.normpath(absolute))
    try:
        return absolute.relative_to(root).as_posix() or "."
    except ValueError:
        return absolute.as_posix()


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _diag_dict(diag: SkillDiagnostic) -> dict[str, Any]:
    return {
        "severity": diag.severity,
        "path": diag.path,
        "field": diag.field,
        "skill": diag.skill,
        "message": diag.message,
    }


def _print_diagnostics(diags: tuple[SkillDiagnostic, ...]) -> None:
    if not diags:
        return
    print()
    print(f"Problems ({len(diags)}):")
    for diag in diags:
        print(f"  {diag}")
