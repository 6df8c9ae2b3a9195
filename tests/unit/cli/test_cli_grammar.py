"""One grammar: global options before or after every command, nested ones included."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from workspace_tools.cli import build_parser, main

GLOBALS = [
    *("--root", "R", "--embedder", "none", "--backend", "milvus", "--backend-uri", "u"),
    *("--index-dir", "I", "-q"),
]


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    runnable = not any(
        isinstance(a, argparse._SubParsersAction) and a.required for a in parser._actions
    )
    found = [(path, parser)] if path and runnable else []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(_commands(sub, (*path, name)))
    return found


COMMANDS = _commands(build_parser())


def _positionals(parser: argparse.ArgumentParser) -> list[str]:
    """A value for each required positional (``x``), so any command parses."""
    return [
        "x"
        for a in parser._actions
        if not a.option_strings
        and not isinstance(a, argparse._SubParsersAction)
        and a.nargs in (None, "+", 1)
    ]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_every_command_is_covered() -> None:
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"search", "grep", "skills list", "docs search", "mcp", "mcp smoke"} <= names


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
@pytest.mark.parametrize("where", ["before", "after"])
def test_global_options_before_or_after_every_command(
    path: tuple[str, ...], parser: argparse.ArgumentParser, where: str
) -> None:
    words = [*path, *_positionals(parser)]
    argv = [*GLOBALS, *words] if where == "before" else [*words, *GLOBALS]
    args = build_parser().parse_args(argv)
    assert args.root == "R"
    assert args.embedder == "none"
    assert args.backend == "milvus"
    assert args.backend_uri == "u"
    assert args.index_dir == "I"
    assert args.quiet is True


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_the_value_after_the_command_wins_and_none_given_keeps_the_default(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    words = [*path, *_positionals(parser)]
    args = build_parser().parse_args(["--root", "before", *words, "--root", "after"])
    assert args.root == "after"
    args = build_parser().parse_args(words)
    assert args.root is None and args.quiet is False and args.embedder is None


def test_global_options_after_the_query_and_the_command(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `search "x" --root docs -q` was "unrecognized arguments: -q"
    code, out, err = run(
        capsys, "search", "install package", "--root", str(tree), "-q", "--embedder", "none"
    )
    assert code == 0 and "docs/guide.md" in out and err == ""
    code, out, _ = run(capsys, "stats", "-q", "--embedder", "none", "--root", str(tree))
    assert code == 0 and json.loads(out)["sources"] == 4


def test_nested_commands_take_global_options_after_them(
    tree: Path, make_skill, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill("alpha", parent=tree / "skills")
    code, out, _ = run(capsys, "skills", "validate", "skills", "--root", str(tree), "-q")
    assert code == 0 and "ok: skills/alpha" in out
    code, out, _ = run(capsys, "docs", "list", "-q", "--root", str(tree / "docs"))
    assert code == 0 and out.splitlines() == ["faq.md\tFAQ", "guide.md\tGuide"]


def test_a_command_option_before_the_command_is_explained(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["-k", "1", "search", "x"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice" not in err
    assert (
        "error: -k is not an option of `workspace-tools` at this place; options of a command go "
        "after the command's name (for example `workspace-tools search QUERY -k 1`)" in err
    )


def test_a_command_flag_before_the_command_is_explained(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--json", "search", "x"])
    assert info.value.code == 2
    assert (
        "error: --json is not an option of `workspace-tools` at this place; options of a command "
        "go after the command's name (`workspace-tools search ... --json`)"
    ) in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["search", "x", "--nope"])
    assert "error: unrecognized arguments: --nope" in capsys.readouterr().err


def test_a_list_option_does_not_swallow_the_next_word(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["mcp", "--skills", "skills", "smoke"])
    assert args.mcp_command == "smoke" and args.skills == ["skills"]
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["mcp", "--skills", "a", "b"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--skills takes one value: repeat it for each (--skills A --skills B)" in err


def test_help_of_a_command_points_at_the_global_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["grep", "--help"])
    out = capsys.readouterr().out
    assert "Global options (--root, --embedder, --backend, --backend-uri, --index-dir, -q)" in out
