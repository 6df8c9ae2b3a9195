"""One grammar for every ``workspace-tools`` command: global options go before or after it."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

__all__ = [
    "GLOBAL_OPTIONS",
    "CommandParser",
    "ProgramParser",
    "add_global_options",
    "mounts_of",
    "resolve_root",
]

GLOBAL_OPTIONS = ("--root", "--embedder", "--backend", "--backend-uri", "--index-dir", "-q")
"""The options every command accepts, before or after its name (``--mount`` too)."""

ROOT_ENV = "WORKSPACE_TOOLS_ROOT"
INDEX_DIR_ENV = "WORKSPACE_TOOLS_INDEX_DIR"
MOUNTS_ENV = "WORKSPACE_TOOLS_MOUNTS"

_INVALID_CHOICE = re.compile(r"^argument (?P<dest>\S+): invalid choice: '(?P<value>.*?)'")


def add_global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """Add the global options (:data:`GLOBAL_OPTIONS` and ``--mount``).

    Args:
        parser: The parser to extend.
        top: ``True`` for the program's parser (real defaults), ``False`` for a command's.
    """

    def kw(text: str, *, default: Any = None) -> dict[str, Any]:
        if top:
            return {"help": text, "default": default}
        return {"help": argparse.SUPPRESS, "default": argparse.SUPPRESS}

    parser.add_argument(
        "--root",
        metavar="DIR",
        **kw(f"workspace folder (default: ${ROOT_ENV}, else the current folder)"),
    )
    parser.add_argument(
        "--embedder",
        metavar="NAME",
        **kw(
            "'default' (packaged all-MiniLM-L6-v2), 'none', or a sentence-transformers model "
            "name or path (default: the config file's, else 'default')",
        ),
    )
    from workspace_tools.core.backends.config import backend_names  # light: no backend loaded

    parser.add_argument(
        "--backend",
        choices=backend_names(),
        **kw(
            "search backend (default: the config file's, else 'embedded'); 'milvus' needs "
            'pip install "workspace-tools[milvus]"',
        ),
    )
    parser.add_argument(
        "--backend-uri",
        metavar="URI",
        **kw(
            "Milvus server URI or Milvus Lite file (implies --backend milvus; token: "
            "$WORKSPACE_TOOLS_MILVUS_TOKEN)",
        ),
    )
    parser.add_argument(
        "--index-dir",
        metavar="DIR",
        **kw(
            "index folder (default: $WORKSPACE_TOOLS_INDEX_DIR, else the config file's, else "
            "<root>/.workspace_tools/index); unlike the config file's, it may lie outside the root",
            default=os.environ.get(INDEX_DIR_ENV) or None,
        ),
    )
    parser.add_argument(
        "--mount",
        action="append",
        metavar="PREFIX=PATH",
        dest="mount" if top else "mount_after",  # an append after the command adds to these
        **kw(
            f"also index folder PATH under PREFIX, ids PREFIX/... (repeatable; default: "
            f"${MOUNTS_ENV}, PREFIX=PATH pairs joined by {os.pathsep!r}); unlike the config "
            "file's mounts, PATH may lie outside the root",
        ),
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        **kw(
            "results and errors only: no progress bars, notes or third-party output",
            default=False,
        ),
    )


def resolve_root(args: argparse.Namespace) -> None:
    """Fill in ``args.root`` (``$WORKSPACE_TOOLS_ROOT``, else ``.``) and ``args.root_given``."""
    given = getattr(args, "root", None)
    env = os.environ.get(ROOT_ENV)
    args.root_given = given is not None or bool(env)
    args.root = given if given is not None else (env or ".")


def mounts_of(args: argparse.Namespace) -> dict[str, str]:
    """``--mount PREFIX=PATH`` values (else ``$WORKSPACE_TOOLS_MOUNTS``): prefix -> folder.

    Raises:
        InvalidInputError: a value without ``=``.
    """
    from workspace_tools.core.errors import InvalidInputError

    given = [*(getattr(args, "mount", None) or ()), *(getattr(args, "mount_after", None) or ())]
    env = os.environ.get(MOUNTS_ENV) or ""
    out: dict[str, str] = {}
    for value in given or [v for v in env.split(os.pathsep) if v]:
        prefix, equals, path = value.partition("=")
        if not equals or not path:
            msg = (
                f"--mount {value!r} is not PREFIX=PATH. Give a prefix, '=' and a folder, like "
                "--mount /docs=../handbook."
            )
            raise InvalidInputError(msg)
        out[prefix] = os.path.abspath(os.path.expanduser(path))
    return out


class _Grammar(argparse.ArgumentParser):
    """Remembers the arguments it parses, to explain a misplaced option."""

    _seen: list[str]

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._seen = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        super().error(self._explain(message))

    def _explain(self, message: str) -> str:
        seen = getattr(self, "_seen", [])
        if message.startswith("unrecognized arguments: "):
            return self._misplaced(message, seen)
        match = _INVALID_CHOICE.match(message)
        if match is None or match["value"] not in seen:
            return message
        position = seen.index(match["value"])
        option = next((a for a in reversed(seen[:position]) if a.startswith("-")), None)
        if option is None:
            return message
        name = option.split("=", 1)[0]
        action = self._option_string_actions.get(name)
        if action is None:
            return (
                f"{option} is not an option of `{self.prog}` at this place; options of a "
                f"command go after the command's name (for example `{self.prog} search QUERY "
                f"{option} {match['value']}`). Global options ({', '.join(GLOBAL_OPTIONS)}) go "
                "before or after it."
            )
        if action.nargs is None and seen[position - 1] != option:
            return (
                f"{message}. {name} takes one value: repeat it for each ({name} A {name} B), "
                "and put other words after the options."
            )
        return message

    def _misplaced(self, message: str, seen: list[str]) -> str:
        """``--json search x``: an option of the command, written before the command's name."""
        commands = {
            name
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
            for name in action.choices
        }
        first = next((i for i, word in enumerate(seen) if word in commands), None)
        if first is None:
            return message
        unknown = message.removeprefix("unrecognized arguments: ").split()
        early = [w for w in seen[:first] if w.startswith("-") and w in unknown]
        if not early:
            return message
        return (
            f"{early[0]} is not an option of `{self.prog}` at this place; options of a command "
            f"go after the command's name (`{self.prog} {seen[first]} ... {early[0]}`). Global "
            f"options ({', '.join(GLOBAL_OPTIONS)}) go before or after it."
        )


class CommandParser(_Grammar):
    """A command's parser: the global options again, without defaults (a value here wins)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("conflict_handler", "resolve")
        kwargs.setdefault(
            "epilog",
            f"Global options ({', '.join(GLOBAL_OPTIONS)}) may also be given here, after the "
            "command; see `workspace-tools --help`.",
        )
        super().__init__(*args, **kwargs)
        add_global_options(self, top=False)


class ProgramParser(_Grammar):
    """The program's parser: global options with their defaults; commands are CommandParsers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        add_global_options(self, top=True)

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("parser_class", CommandParser)
        return super().add_subparsers(**kwargs)
