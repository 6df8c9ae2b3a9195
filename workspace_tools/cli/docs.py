"""``workspace-tools docs search`` and ``docs list``: a documentation tree from the shell."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from workspace_tools.cli.skills import _usage
from workspace_tools.core.errors import WorkspaceError

if TYPE_CHECKING:  # imported when a docs command runs: every other command starts without it
    from workspace_tools.core.docs.index import DocsIndex

__all__ = ["add_docs_parser"]


def add_docs_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register the ``docs`` command and its ``search`` and ``list`` subcommands.

    Args:
        subparsers: The object returned by ``parser.add_subparsers()``.

    Returns:
        The ``docs`` parser.
    """
    docs = subparsers.add_parser("docs", help="search a documentation tree (.md/.mdx pages)")
    commands = docs.add_subparsers(dest="docs_command", metavar="COMMAND")
    docs.set_defaults(func=lambda _args: _usage(docs))  # its help, as `skills` alone prints

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--scope", help="only this subfolder of the root")
    common.add_argument("--folder", help="only pages under this folder (relative to the root)")
    common.add_argument("--json", action="store_true", help="print JSON instead of text")

    search = commands.add_parser("search", parents=[common], help="ranked sections for a query")
    search.add_argument("query", help="words to look for; prefixes and small typos match")
    search.add_argument("-k", "--top-k", type=int, default=5, help="most results (default 5)")
    search.add_argument(
        "--mode",
        choices=["lexical", "hybrid"],
        default="lexical",
        help="lexical (default: weighted keywords) or hybrid (keywords fused with vectors of "
        "--embedder, the packaged model by default; the first run embeds every section, later "
        "runs read the vectors from the user cache)",
    )
    search.set_defaults(func=_search)

    listing = commands.add_parser("list", parents=[common], help="every page with its title")
    listing.set_defaults(func=_list)
    return docs


def _index(args: argparse.Namespace) -> DocsIndex:
    from workspace_tools.core.docs.index import DocsIndex

    if getattr(args, "mode", "lexical") == "hybrid":
        from workspace_tools.core.docs.embedding import require_docs_embedder

        embedder = require_docs_embedder(args.embedder)
        return DocsIndex(args.root, scope=args.scope, embedder=embedder, vector_cache=True)
    return DocsIndex(args.root, scope=args.scope)


def _search(args: argparse.Namespace) -> int:
    try:
        hits = _index(args).search(args.query, top_k=args.top_k, folder=args.folder)
    except WorkspaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([hit.to_dict() for hit in hits], indent=2, ensure_ascii=False))
        return 0 if hits else 1
    if not hits:
        print(f"No section matches {args.query!r}.")
        return 1
    for rank, hit in enumerate(hits, start=1):
        heading = f" › {hit.heading}" if hit.heading and hit.heading != hit.title else ""
        print(f"{rank}. {hit.title}{heading}  ({hit.path}:{hit.line}, score {hit.score:.2f})")
        for line in hit.snippet.split("\n"):
            if line.strip():
                print(f"   {line}")
    return 0


def _list(args: argparse.Namespace) -> int:
    try:
        pages = _index(args).list_pages(args.folder)
    except WorkspaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        rows = [{"path": p.path, "title": p.title, "description": p.description} for p in pages]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0 if pages else 1
    if not pages:
        where = f" under {args.folder!r}" if args.folder else ""
        print(f"No docs pages (.md, .mdx){where} in {args.root}.")
        return 1
    for page in pages:
        print(f"{page.path}\t{page.title}")
    return 0
