"""docs/cli.md lists every command and option of the real ``workspace-tools`` parser."""

from __future__ import annotations

import argparse
import re

import pytest

from tests.support.paths import REPO
from workspace_tools.cli import build_parser

CLI_DOC = REPO / "docs" / "cli.md"


def _walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_walk(sub, (*path, name)))
    return found


def _documented_arguments(parser: argparse.ArgumentParser) -> list[str]:
    """Option strings (``--json``, ``-k``) and positional names (``query``), help options left out."""
    names: list[str] = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        names.extend(action.option_strings or [action.dest])
    return names


def _sections(text: str) -> dict[str, str]:
    """Heading text -> body, for every ``#``-level heading."""
    parts = re.split(r"^(#{1,6} .*)$", text, flags=re.M)
    return {parts[i].lstrip("#").strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


COMMANDS = [(path, parser) for path, parser in _walk(build_parser()) if path]


def test_cli_doc_exists() -> None:
    assert CLI_DOC.is_file()


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_a_section_listing_its_arguments(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    sections = _sections(CLI_DOC.read_text(encoding="utf-8"))
    title = f"`workspace-tools {' '.join(path)}`"
    assert title in sections, f"docs/cli.md needs a heading {title}"
    body = sections[title]
    missing = [name for name in _documented_arguments(parser) if f"`{name}" not in body]
    assert not missing, f"{title} in docs/cli.md does not mention {missing}"


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_argument_has_a_help_line(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    """``search --help`` showed ``query`` and ``remove --help`` ``target`` with no text."""
    commands = argparse._SubParsersAction  # each of its commands has its help
    bare = [a.dest for a in parser._actions if not (a.help or isinstance(a, commands))]
    assert not bare, f"workspace-tools {' '.join(path)}: no help for {bare}"


def test_global_options_are_documented() -> None:
    sections = _sections(CLI_DOC.read_text(encoding="utf-8"))
    body = sections["Global options"]
    missing = [n for n in _documented_arguments(build_parser()) if f"`{n}" not in body]
    assert not missing, f"Global options in docs/cli.md do not mention {missing}"


def test_no_documented_command_is_missing_from_the_parser() -> None:
    """A heading for a command that no longer exists is caught too."""
    real = {" ".join(path) for path, _ in COMMANDS}
    headings = re.findall(r"^#{2,6} `workspace-tools ([a-z ]+)`$", CLI_DOC.read_text(), flags=re.M)
    stale = [h for h in headings if h not in real]
    assert not stale, f"docs/cli.md documents commands the parser does not have: {stale}"
