"""``workspace-tools mcp``: serve the tools over MCP; ``workspace-tools mcp smoke``: check them.

``add_mcp_parser(subparsers)`` registers both. The server speaks stdio by default and streamable
HTTP with ``--http HOST:PORT``; the tool groups come from ``--workspace``, ``--docs`` (and
``--docs-scope``), ``--skills``, else from the ``mcp`` section of ``workspace-tools.yaml``.
"""

from __future__ import annotations

import argparse
import logging
import sys
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
    groups = argparse.ArgumentParser(add_help=False)
    groups.add_argument("--workspace", metavar="PATH", help="serve the workspace tools of PATH")
    groups.add_argument("--docs", metavar="PATH", help="serve the docs tools over PATH")
    groups.add_argument(
        "--docs-scope",
        metavar="SUBDIR",
        action="append",
        dest="docs_scopes",
        help="a domain-scoped docs server: only SUBDIR of --docs, tools named docs_search_SUBDIR "
        "and so on (repeatable)",
    )
    groups.add_argument(
        "--skills", metavar="PATH", nargs="+", help="serve the skill tools over these paths"
    )
    groups.add_argument(
        "--read-only", action="store_true", default=None, help="never write to the index"
    )
    groups.add_argument(
        "--no-sync",
        action="store_false",
        dest="sync",
        default=None,
        help="do not index new and changed files at start-up",
    )
    groups.add_argument("--name", help="server name shown to clients")

    mcp = subparsers.add_parser(
        "mcp",
        parents=[groups],
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
        parents=[groups],
        help="start a server, list its tools through a client and call each once",
    )
    smoke.set_defaults(func=_smoke)
    return mcp


def _options(args: argparse.Namespace) -> Any:
    from workspace_tools.core.config import ProjectConfig
    from workspace_tools.mcp.config import server_options

    options = server_options(args.root).with_flags(
        workspace=args.workspace,
        docs=args.docs,
        docs_scopes=args.docs_scopes,
        skills=args.skills,
        read_only=args.read_only,
        sync=args.sync,
        name=args.name,
    )
    return options.defaulted(ProjectConfig.load(args.root).skills)


def _serve(args: argparse.Namespace) -> int:
    from workspace_tools.mcp.run import parse_address, protect_stdout, run_http, run_stdio
    from workspace_tools.mcp.server import build_tools, create_server

    address = None
    if args.http:
        from workspace_tools.mcp._http_guard import http_policy

        try:
            address = parse_address(args.http)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        # refused before any indexing: a bind that is not loopback needs a token
        http_policy(address[0], token=args.auth_token, allowed_origins=args.allow_origin)
    protocol = None if address else protect_stdout()  # before anything can print
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    log = logging.getLogger("workspace_tools.mcp")
    log.setLevel(logging.WARNING if args.quiet else logging.INFO)
    logging.getLogger("workspace_tools").setLevel(log.level)
    served = build_tools(_options(args), embedder=args.embedder, show_progress=not args.quiet)
    for note in served.notes:
        log.info(note)
    log.info("serving %d tools: %s", len(served.tools), ", ".join(t.name for t in served.tools))
    server = create_server(served)
    if address is None:
        run_stdio(server, stdout=protocol)
    else:
        run_http(
            server,
            host=address[0],
            port=address[1],
            token=args.auth_token,
            allowed_origins=args.allow_origin,
        )
    return 0


def _serve_argv(args: argparse.Namespace) -> list[str]:
    argv = ["--root", str(args.root), "-q"]
    if args.embedder is not None:
        argv += ["--embedder", args.embedder]
    argv.append("mcp")
    for flag, value in (("--workspace", args.workspace), ("--docs", args.docs)):
        if value:
            argv += [flag, value]
    for scope in args.docs_scopes or ():
        argv += ["--docs-scope", scope]
    if args.skills:
        argv += ["--skills", *args.skills]
    if args.read_only:
        argv.append("--read-only")
    if args.sync is False:
        argv.append("--no-sync")
    if args.name:
        argv += ["--name", args.name]
    return argv


def _smoke(args: argparse.Namespace) -> int:
    import asyncio  # here, not at the top: every other command starts without it

    from workspace_tools.mcp.smoke import smoke

    argv = ["-m", "workspace_tools.cli", *_serve_argv(args)]
    verdicts = asyncio.run(smoke(sys.executable, argv))
    for verdict in verdicts:
        print(verdict.line())
    failed = [v.tool for v in verdicts if not v.ok]
    summary = f"{len(verdicts) - len(failed)}/{len(verdicts)} tools ok"
    print(summary + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed or not verdicts else 0
