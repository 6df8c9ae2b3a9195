"""A test MCP server process: the real server code over a fake embedder (no model load).

Run as ``python _server.py --root DIR [--http HOST:PORT] [--read-only] [--noisy] [--scope S]
[--grace SECONDS]``.
With ``--noisy``, start-up and every ``workspace_search`` call print to stdout, write to file
descriptor 1 directly, warn and draw a progress bar, to show none of it reaches the protocol.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from tqdm import tqdm  # noqa: E402

from tests.support.fakes import FakeEmbedder  # noqa: E402
from workspace_tools.mcp import (  # noqa: E402
    ServerOptions,
    build_tools,
    create_server,
    protect_stdout,
    run_http,
    run_stdio,
)
from workspace_tools.mcp.run import parse_address  # noqa: E402
from workspace_tools.tools.workspace import WorkspaceSearchTool  # noqa: E402


def _noise(where: str) -> None:
    print(f"stray print {where}")
    sys.stdout.flush()
    os.write(1, f"raw fd 1 write {where}\n".encode())
    warnings.warn(f"a warning {where}", UserWarning, stacklevel=1)
    for _ in tqdm(range(3), desc=f"progress {where}"):
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--http")
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--noisy", action="store_true")
    parser.add_argument("--scope", action="append", default=[])
    parser.add_argument("--skills", action="append", help="skills paths (default: skills)")
    parser.add_argument("--grace", type=float, default=30.0, help="see run_stdio(grace=)")
    args = parser.parse_args()
    protocol = None if args.http else protect_stdout()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(name)s: %(message)s")
    if args.noisy:
        _noise("at start-up")
        original = WorkspaceSearchTool._run

        def noisy_run(self, *a, **k):  # type: ignore[no-untyped-def]
            _noise("in a tool call")
            return original(self, *a, **k)

        WorkspaceSearchTool._run = noisy_run  # type: ignore[method-assign]
    root = Path(args.root)
    # docs vectors of the fake embedder go next to the test project, not the user's cache
    os.environ["WORKSPACE_TOOLS_CACHE_DIR"] = str(root.parent / "cache")
    options = ServerOptions(
        root=root,
        workspace=root,
        docs=root / "docs",
        docs_scopes=tuple(args.scope),
        skills=tuple(args.skills or ["skills"]),
        read_only=args.read_only,
    )
    served = build_tools(options, embedder=FakeEmbedder(), show_progress=True)
    server = create_server(served)
    if args.http:
        host, port = parse_address(args.http)
        run_http(server, host=host, port=port)
    else:
        run_stdio(server, stdout=protocol, grace=args.grace)


if __name__ == "__main__":
    main()
