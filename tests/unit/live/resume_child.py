"""Child of the resume tests: a first index of many files, embedded slowly, killed part-way.

Usage: ``python -m tests.unit.live.resume_child ROOT (api|cli)``. The embedder sleeps a
little per text and prints ``embedded N`` (flushed) after each call, so the parent knows how
many batches are at least embedded; batches are 25 files. ``api`` calls ``Workspace.sync()``,
``cli`` runs ``workspace-tools index`` (its exit code is this process's).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from tests.support.fakes import FakeEmbedder

BATCH = 25


class SlowEmbedder(FakeEmbedder):
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        time.sleep(0.01 * len(texts))
        out = super().embed(texts)
        print(f"embedded {len(texts)}", flush=True)
        return out


def main(root: str, how: str) -> int:
    from workspace_tools.core.workspace import _workspace

    embedder = SlowEmbedder(max_batch_size=BATCH)

    def make(_: Any) -> Any:
        return embedder

    _workspace._make_embedder = make  # type: ignore[assignment]
    _workspace.BATCH_FILES = BATCH  # type: ignore[misc]
    if how == "api":
        ws = _workspace.Workspace(root, embedder=embedder)
        ws.sync()
        return 0
    from workspace_tools.cli import main as cli_main

    return cli_main(["--root", root, "index"])


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
