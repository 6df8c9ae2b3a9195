"""A process that exits while an HNSW graph round runs stops it first (``hnsw_build``).

A daemon thread still inside FAISS while the interpreter tears down aborts the process
("terminate called without an active exception", exit code 134: seen at the end of a
70,000-chunk build, one run in three). The round is stopped after its current batch and waited
for at exit, before the interpreter tears anything down.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_SCRIPT = textwrap.dedent(
    """
    import atexit, sys, threading, time
    from pathlib import Path

    report = Path(sys.argv[1])
    rounds = []

    def after_the_library():  # registered first: runs after the library's own exit handler
        build = rounds[0]
        report.write_text(f"{build.done.is_set()} {type(build.error).__name__}")

    atexit.register(after_the_library)

    import numpy as np
    from workspace_tools.core.backends.embedded import hnsw_build as _hnsw_build
    from workspace_tools.core.background import BackgroundWorker
    added = threading.Event()

    class SlowGraph:
        def add_with_ids(self, vectors, ids):
            added.set()
            time.sleep(0.3)

    count = _hnsw_build._BATCH * 20
    build = _hnsw_build.GraphBuild(
        SlowGraph(),
        np.zeros(0, dtype=np.int64),
        np.arange(count, dtype=np.int64),
        np.zeros((count, 2), dtype=np.uint8),
        [],
    )
    rounds.append(build)
    build.start(BackgroundWorker("hnsw", finish_at_exit=True))
    added.wait(30)
    """
)


def test_an_exit_stops_a_running_graph_round_after_its_batch(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    script = tmp_path / "exit_mid_round.py"
    script.write_text(_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), str(report)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # Stopped and waited for (20 batches of 0.3 s would take 6 s; the thread ends after one).
    assert report.read_text() == "True InterruptedError"
