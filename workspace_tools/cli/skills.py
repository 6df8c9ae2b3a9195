"""``workspace-tools skills`` subcommands: paths, git skills, versions, explicit loads."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any

from workspace_tools.core.config import CONFIG_FILE

__all__ = ["add_skills_parser"]


def add_skills_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``skills`` and its subcommands on an argparse ``subparsers`` object."""
    from workspace_tools.cli import add_root_option

    skills: argparse.ArgumentParser = subparsers.add_parser(
        "skills",
        help="list, inspect, validate and register Agent Skills",
        description="Manage the Agent Skills of a project (paths listed in workspace-tools.yaml).",
    )
    add_root_option(skills)
    sub = skills.add_subparsers(dest="skills_command", metavar="COMMAND")
    skills.set_defaults(func=lambda _args: _usage(skills))

    p = sub.add_parser("list", help="list skills and loading problems")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    _entry_point_flags(p)
    p.set_defaults(func=_command("cmd_list"))

    p = sub.add_parser("show", help="show one skill (by name or path)")
    p.add_argument("name", help="skill name or path")
    _entry_point_flags(p, shown=False)
    p.set_defaults(func=_command("cmd_show"))

    p = sub.add_parser("load", help="print a skill's instructions (explicit-only skills too)")
    p.add_argument("name", help="skill name or path")
    p.set_defaults(func=_command("cmd_load"))

    p = sub.add_parser("validate", help="check skills against the Agent Skills spec")
    p.add_argument("path", nargs="?", help="skill folder, folder of skills, SKILL.md or glob")
    p.add_argument(
        "--lenient", action="store_true", help="fail only on skipped skills, not on warnings"
    )
    p.set_defaults(func=_command("cmd_validate"))

    p = sub.add_parser("add", help=f"register a skills path, or a git skill, in {CONFIG_FILE}")
    p.add_argument(
        "path",
        metavar="PATH|URL",
        help="skills folder, skill folder, SKILL.md or glob; or a git URL[@REF][#SUBDIR], "
        "copied into the managed skills folder at a pinned commit",
    )
    p.set_defaults(func=_command("cmd_add"))

    p = sub.add_parser("remove", help=f"unregister a skills path or a git skill ({CONFIG_FILE})")
    p.add_argument("path", metavar="PATH|NAME", help="a path previously added, or a git skill")
    p.set_defaults(func=_command("cmd_remove"))

    for name, what in [
        ("update", "move git skills to the commits their refs name now"),
        ("sync", "install the pinned commits of git skills (e.g. after a fresh clone)"),
    ]:
        p = sub.add_parser(name, help=what)
        p.add_argument("names", nargs="*", metavar="NAME", help="git skills (default: all)")
        p.set_defaults(func=_command(f"cmd_{name}"))

    p = sub.add_parser("publish", help="store a skill folder as an immutable version; pin it")
    p.add_argument("path", help="the skill folder")
    p.add_argument("--no-pin", action="store_true", help="publish without pinning")
    p.set_defaults(func=_command("cmd_publish"))

    p = sub.add_parser("versions", help="list the published versions of a skill")
    p.add_argument("name", help="skill name")
    p.set_defaults(func=_command("cmd_versions"))

    p = sub.add_parser("pin", help=f"serve one published version of a skill ({CONFIG_FILE})")
    p.add_argument("name", help="skill name")
    p.add_argument("version", help="version hash or a unique prefix of it")
    p.set_defaults(func=_command("cmd_pin"))

    p = sub.add_parser("rollback", help="pin the version published before the pinned one")
    p.add_argument("name", help="skill name")
    p.set_defaults(func=_command("cmd_rollback"))

    p = sub.add_parser(
        "disable", help=f"leave a skill out everywhere (disabled_skills in {CONFIG_FILE})"
    )
    p.add_argument("name", help="skill name")
    p.set_defaults(func=_command("cmd_disable"))

    p = sub.add_parser("enable", help="use a disabled skill again")
    p.add_argument("name", help="skill name")
    p.set_defaults(func=_command("cmd_enable"))
    for command in sub.choices.values():
        add_root_option(command)
    return skills


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    """``name`` of :mod:`workspace_tools.cli._skills_commands`, imported when it runs."""

    def run(args: argparse.Namespace) -> int:
        module = importlib.import_module("workspace_tools.cli._skills_commands")
        command: Callable[[argparse.Namespace], int] = getattr(module, name)
        return command(args)

    return run


def _entry_point_flags(parser: argparse.ArgumentParser, *, shown: bool = True) -> None:
    """``--entry-points`` (opt in to skills registered by installed packages) and its opposite."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--entry-points",
        dest="entry_points",
        action="store_true",
        help="also list skills registered by installed packages" if shown else argparse.SUPPRESS,
    )
    group.add_argument(
        "--no-entry-points",
        dest="entry_points",
        action="store_false",
        help="ignore skills registered by installed packages (the default)"
        if shown
        else argparse.SUPPRESS,
    )


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2
