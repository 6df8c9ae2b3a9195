"""A test MCP server process that indexes behind the protocol, with a slow fake embedder.

Run as ``python _live_server.py --root DIR [--delay SECONDS] [--read-only] [--no-watch]
[--gate FILE]``: the real server code (``build_tools(background=True)``, ``create_server``,
``run_stdio``) with an embedder that sleeps ``--delay`` seconds per text, so a first index takes
a while. With ``--gate``, behind a ``LazyServer`` whose build waits for FILE to exist.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from tests.support.fakes import FakeEmbedder  # noqa: E402
from workspace_tools.mcp import ServerOptions, build_tools, create_server  # noqa: E402
from workspace_tools.mcp.lazy_server import LazyServer  # noqa: E402
from workspace_tools.mcp.run import protect_stdout, run_stdio  # noqa: E402


class SlowEmbedder(FakeEmbedder):
    def __init__(self, delay: float) -> None:
        super().__init__(max_batch_size=16)
        self.delay = delay

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(self.delay * len(texts))
        return super().embed(texts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--read-only", action="store_true")
    parser.add_argument("--no-watch", action="store_true")
    parser.add_argument("--gate", help="build the tools only once this file exists (LazyServer)")
    args = parser.parse_args()
    protocol = protect_stdout()
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(name)s: %(message)s")
    root = Path(args.root)
    options = ServerOptions(
        root=root, workspace=root, read_only=args.read_only, watch=not args.no_watch
    )

    def build() -> Any:
        served = build_tools(options, embedder=SlowEmbedder(args.delay), background=True)
        server = create_server(served)
        served.background.start()
        return server

    if args.gate is None:
        run_stdio(build(), stdout=protocol)
        return
    lazy = LazyServer(name="workspace-tools", prompts_and_resources=False)

    def gated() -> Any:
        while not Path(args.gate).exists():
            time.sleep(0.05)
        return build()

    lazy.start(gated)
    run_stdio(lazy.server, stdout=protocol)


if __name__ == "__main__":
    main()
