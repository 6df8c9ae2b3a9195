"""Start a helper process of this package: a plain ``python -c``, not ``multiprocessing``.

The conversion pool (``convert/pool.py``) and the tokenizing worker (``text/token_split.py``)
run a module's ``main()`` in a child that talks over its stdin and stdout. ``multiprocessing``
is not used: its spawn and forkserver methods import the user's ``__main__`` again (an unguarded
script would run twice) and fork is unsafe beside threads. The child puts this package's folder
first on ``sys.path``, so it imports the same package whatever the current directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = ["LEAN_ENV", "start_package_child"]

_PACKAGE_PARENT: Final = str(Path(__file__).resolve().parents[2])
_BOOT: Final = "import sys; sys.path.insert(0, {path!r}); from {module} import main; main()"
LEAN_ENV: Final = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""A child runs one job at a time: no numeric thread pools to start."""


def start_package_child(
    module: str, *, env: Mapping[str, str] = LEAN_ENV
) -> subprocess.Popen[bytes]:
    """Start ``module.main()`` of this package in a child process with piped stdin and stdout.

    Args:
        module: The dotted module name (``workspace_tools....``) whose ``main()`` runs.
        env: Variables set on top of this process's environment.

    Returns:
        The running child; its stderr goes nowhere, it has its own session (Ctrl-C at the
        terminal reaches this process only) and no other file descriptor of this one.

    Raises:
        OSError: the process could not be started.
    """
    return subprocess.Popen(
        [sys.executable, "-c", _BOOT.format(path=_PACKAGE_PARENT, module=module)],
        env={**os.environ, **env},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
