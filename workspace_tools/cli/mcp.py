"""``workspace-tools mcp``: serve the tools over MCP; ``workspace-tools mcp smoke``: check them."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

__all__ = ["add_mcp_parser"]


def add_mcp_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``mcp`` (serve) and ``mcp smoke``.

    Args:
        subparsers: The object returned by ``parser.add_subparsers()``.

    Returns:
        The ``mcp`` parser.
    """
    mcp = subparsers.add_parser(
        "mcp",
        parents=[_group_options(after_command=False)],
        help="serve the tools over the Model Context Protocol (stdio or HTTP)",
        description="Serve the workspace, documents, docs and skill tools to MCP clients.",
    )
    mcp.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio",
    )
    mcp.add_argument(
        "--auth-token",
        metavar="TOKEN",
        help="HTTP: require 'Authorization: Bearer TOKEN' on every request (default: "
        "$WORKSPACE_TOOLS_MCP_TOKEN; required for an address other than loopback)",
    )
    mcp.add_argument(
        "--allow-origin",
        metavar="ORIGIN",
        action="append",
        default=[],
        help="HTTP: a browser origin (scheme://host[:port]) allowed besides loopback ones "
        "(repeatable); requests from any other Origin get 403",
    )
    mcp.set_defaults(func=_serve)
    commands = mcp.add_subparsers(dest="mcp_command")
    smoke = commands.add_parser(
        "smoke",
        parents=[_group_options(after_command=True)],
        help="start a server, list its tools through a client and call each once",
        description="Start `workspace-tools mcp` with these tool groups (given before or after "
        "`smoke`), read-only so that your index is never written, and call each tool once "
        "through the MCP SDK's client. Exit status 1 when a tool fails or a search finds "
        "nothing.",
    )
    smoke.set_defaults(func=_smoke)
    return mcp


def _group_options(*, after_command: bool) -> argparse.ArgumentParser:
    """``--workspace``, ``--docs``... for ``mcp`` and, without defaults, for ``mcp smoke``."""

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if after_command else value

    groups = argparse.ArgumentParser(add_help=False)
    groups.add_argument(
        "--workspace",
        metavar="PATH",
        default=default(None),
        help="serve the workspace tools of PATH",
    )
    groups.add_argument(
        "--docs", metavar="PATH", default=default(None), help="serve the docs tools over PATH"
    )
    groups.add_argument(
        "--docs-scope",
        metavar="SUBDIR",
        action="append",
        dest="docs_scopes",
        default=default(None),
        help="a domain-scoped docs server: only SUBDIR of --docs, tools named docs_search_SUBDIR "
        "and so on (repeatable)",
    )
    groups.add_argument(
        "--skills",
        metavar="PATH",
        action="append",
        default=default(None),
        help="serve the skill tools over this skills path (repeatable)",
    )
    groups.add_argument(
        "--read-only",
        action="store_true",
        default=default(None),
        help="never write to the index",
    )
    groups.add_argument(
        "--no-sync",
        action="store_false",
        dest="sync",
        default=default(None),
        help="do not index new and changed files at start-up",
    )
    groups.add_argument(
        "--no-watch",
        action="store_false",
        dest="watch",
        default=default(None),
        help="do not follow file changes after start-up (default: a writable server watches)",
    )
    groups.add_argument("--name", default=default(None), help="server name shown to clients")
    return groups


def _options(args: argparse.Namespace) -> Any:
    from workspace_tools.cli._grammar import mounts_of
    from workspace_tools.core.config import ProjectConfig
    from workspace_tools.mcp.config import server_options

    options = server_options(args.root).with_flags(
        workspace=args.workspace,
        docs=args.docs,
        docs_scopes=args.docs_scopes,
        skills=args.skills,
        read_only=args.read_only,
        sync=args.sync,
        watch=args.watch,
        name=args.name,
    )
    _check_paths(options, skills=args.skills or ())
    if getattr(args, "index_dir", None):  # the global --index-dir (or its environment variable)
        options = replace(options, index_dir=Path(args.index_dir).expanduser().resolve())
    options = replace(options, mounts=mounts_of(args) or None)  # the global --mount
    return options.defaulted(ProjectConfig.load(args.root).skills)


def _check_paths(options: Any, *, skills: Sequence[str]) -> None:
    """Every folder given on the command line must exist, like ``--docs``.

    Raises:
        InvalidInputError: A ``--workspace`` or ``--skills`` path does not exist.
    """
    from workspace_tools.core.errors import InvalidInputError
    from workspace_tools.core.skills import is_glob

    if options.workspace is not None and not options.workspace.is_dir():
        msg = f"--workspace {str(options.workspace)!r} is not a folder. Give an existing folder."
        raise InvalidInputError(msg)
    for spec in skills:
        path = options.root / Path(spec).expanduser()
        if not is_glob(spec) and not path.exists():
            msg = (
                f"--skills {spec!r} does not exist (looked for {path}). Give a skills folder, a "
                "skill folder or a SKILL.md (relative to --root), or a glob."
            )
            raise InvalidInputError(msg)


def _say_what_is_served(args: argparse.Namespace, options: Any, log: logging.Logger) -> None:
    """A ``--root`` whose workspace is not served is named, not dropped without a word."""
    served = [
        f"{label} {where}"
        for label, where in (("workspace", options.workspace), ("docs", options.docs))
        if where is not None
    ]
    if options.skills:
        served.append(f"skills {', '.join(options.skills)}")
    log.info("serving: %s", "; ".join(served) or "nothing")
    if options.workspace is None and args.root_given:
        log.warning(
            "The workspace at --root %s is not served: with --docs or --skills (or an mcp "
            "section in workspace-tools.yaml) only what they name is. Add --workspace %s to "
            "serve it too.",
            args.root,
            args.root,
        )


def _serve(args: argparse.Namespace) -> int:
    from workspace_tools.mcp.lazy_server import LazyServer
    from workspace_tools.mcp.run import parse_address, protect_stdout, run_http, run_stdio

    address = None
    if args.http:
        from workspace_tools.mcp.http_guard import http_policy

        try:
            address = parse_address(args.http)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        # refused before any indexing: a bind that is not loopback needs a token
        http_policy(address[0], token=args.auth_token, allowed_origins=args.allow_origin)
    options = _options(args)  # bad paths end here, before stdout or logging are touched
    protocol = None if address else protect_stdout()  # before anything can print
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    for handler in logging.getLogger().handlers:  # no library's debug lines (bm25s logs at DEBUG)
        handler.setLevel(logging.WARNING if args.quiet else logging.INFO)
    log = logging.getLogger("workspace_tools.mcp")
    log.setLevel(logging.WARNING if args.quiet else logging.INFO)
    logging.getLogger("workspace_tools").setLevel(log.level)
    _say_what_is_served(args, options, log)
    # The protocol is answered now; the tools are built behind it (docs/live.md).
    lazy = LazyServer(
        name=options.name,
        prompts_and_resources=bool(options.skills),
        resources=bool(options.skills) or options.workspace is not None,  # workspace://status
    )

    def build() -> Any:
        from workspace_tools.mcp.live import STATUS_TOOL
        from workspace_tools.mcp.server import build_tools, create_server

        served = build_tools(
            options, embedder=args.embedder, show_progress=not args.quiet, background=True
        )
        for note in served.notes:
            log.info(note)
        names = [*(t.name for t in served.tools), STATUS_TOOL]  # every server adds the status
        log.info("serving %d tools: %s", len(names), ", ".join(names))
        server = create_server(served)
        if served.background is not None:
            served.background.start()
        return server

    lazy.start(build)
    if address is None:
        run_stdio(lazy.server, stdout=protocol)
    else:
        if args.quiet:  # the one line -q keeps: where to connect
            print(f"MCP server at http://{address[0]}:{address[1]}/mcp", file=sys.stderr)
        run_http(
            lazy.server,
            host=address[0],
            port=address[1],
            token=args.auth_token,
            allowed_origins=args.allow_origin,
        )
    return 0 if lazy.error is None else 2


def _serve_argv(args: argparse.Namespace, options: Any) -> list[str]:
    """The ``workspace-tools ... mcp`` command line serving the resolved ``options``, read-only."""
    argv = ["-q"]  # run in the root (a --root would be a root given by the user)
    if args.embedder is not None:
        argv += ["--embedder", args.embedder]
    if options.index_dir is not None:
        argv += ["--index-dir", str(options.index_dir)]
    for prefix, folder in (options.mounts or {}).items():
        argv += ["--mount", f"{prefix}={folder}"]
    argv.append("mcp")
    for flag, value in (("--workspace", options.workspace), ("--docs", options.docs)):
        if value is not None:
            argv += [flag, str(value)]
    for scope in options.docs_scopes:
        argv += ["--docs-scope", scope]
    for spec in options.skills:
        argv += ["--skills", spec]
    argv.append("--read-only")
    if options.name:
        argv += ["--name", options.name]
    return argv


def _smoke(args: argparse.Namespace) -> int:
    import asyncio  # here, not at the top: every other command starts without it

    from workspace_tools.mcp.smoke import SmokeError, smoke

    options = _options(args)
    if options.workspace is not None:
        index = options.index_dir or options.workspace / ".workspace_tools" / "index"
        if not index.exists():
            print(
                f"No index in {index} yet: the workspace tools will find nothing. Run "
                f"`workspace-tools --root {options.workspace} index` first (smoke never writes "
                "it).",
                file=sys.stderr,
            )
        elif not args.quiet:
            print(
                f"Read-only server: workspace_index is not called and {index} is not written; "
                "search results come from the index as it is.",
                file=sys.stderr,
            )
    argv = ["-m", "workspace_tools.cli", *_serve_argv(args, options)]
    env = dict(os.environ)  # the server runs as `mcp` would here (HF_HUB_OFFLINE...)
    try:
        verdicts = asyncio.run(smoke(sys.executable, argv, env=env, cwd=options.root))
    except SmokeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for verdict in verdicts:
        print(verdict.line())
    failed = [v.tool for v in verdicts if not v.ok]
    summary = f"{len(verdicts) - len(failed)}/{len(verdicts)} tools ok"
    print(summary + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed or not verdicts else 0
