"""Child process of the crash-safety test: change files and sync, forever, logging each commit.

Usage: ``python -m tests.unit.reliability.crash_child <root> <log>``. The child imports everything, prints ``ready``,
waits for a line on stdin, then loops: rewrite/delete/create the workspace files for the next
version, log ``pending`` with the state the index must hold after the sync, ``sync()`` (which
saves), log ``done``. The parent kills it with SIGKILL at a random moment.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

FILES = 6


def content(version: int, number: int) -> str:
    pad = "filler words " * (1 + (version * 7 + number) % 5)
    return (
        f"# File {number}\n\nMarker tok{version}x{number} for this version.\n{pad}\n"
        + "## Details\n\nSome stable text about searching and indexing.\n" * (1 + number % 3)
    )


def exists(version: int, number: int) -> bool:
    return (version + number) % 4 != 0


def write_version(root: Path, version: int) -> dict[str, list[object]]:
    """Put version ``version`` on disk; returns ``{id: [hash, marker]}`` for the index."""
    from workspace_tools.core.text.hashing import text_hash

    state: dict[str, list[object]] = {}
    for number in range(FILES):
        path = root / f"doc{number}.md"
        if exists(version, number):
            data = content(version, number).encode()
            path.write_bytes(data)
            stamp = (1_000_000 + version) * 1_000_000_000 + number
            os.utime(path, ns=(stamp, stamp))
            state[f"doc{number}.md"] = [text_hash(data), f"tok{version}x{number}"]
        else:
            path.unlink(missing_ok=True)
    return state


def log_line(handle: object, record: dict[str, object]) -> None:
    handle.write(json.dumps(record) + "\n")  # type: ignore[attr-defined]
    handle.flush()  # type: ignore[attr-defined]
    os.fsync(handle.fileno())  # type: ignore[attr-defined]


def last_version(log: Path) -> int:
    version = 0
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                version = max(version, int(json.loads(line)["version"]))
            except (ValueError, KeyError):
                continue
    return version


def main() -> None:
    root, log = Path(sys.argv[1]), Path(sys.argv[2])
    import bm25s  # noqa: F401  - import the heavy modules before the parent starts the clock
    import faiss  # noqa: F401

    from tests.support.fakes import FakeEmbedder
    from workspace_tools.core.workspace import Workspace

    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return  # the parent went away
    if log.exists():  # drop a line cut by the previous kill
        data = log.read_bytes()
        with open(log, "r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)
    version = last_version(log)
    ws = Workspace(root, embedder=FakeEmbedder())
    with open(log, "a", encoding="utf-8") as handle:
        while True:
            version += 1
            state = write_version(root, version)
            log_line(handle, {"event": "pending", "version": version, "state": state})
            ws.sync()
            log_line(handle, {"event": "done", "version": version})


if __name__ == "__main__":
    main()
