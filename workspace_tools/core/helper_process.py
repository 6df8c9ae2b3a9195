"""A helper process of this package: a plain ``python -c`` child that speaks frames on its pipes.

A module's ``main()`` runs in the child, reading frames (an 8-byte big-endian length, then the
payload; never pickle) on stdin and answering on stdout. ``multiprocessing`` is avoided: spawn
re-imports the user's ``__main__`` and fork is unsafe beside threads. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import subprocess
import sys
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Final

__all__ = ["LEAN_ENV", "HelperProcess", "read_frame", "write_frame"]

_PACKAGE_PARENT: Final = str(Path(__file__).resolve().parents[2])
_BOOT: Final = "import sys; sys.path.insert(0, {path!r}); from {module} import main; main()"
_HEADER: Final = struct.Struct(">Q")
LEAN_ENV: Final = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""A child runs one job at a time: no numeric thread pools to start."""


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    """Write one length-prefixed frame and flush (the child's side)."""
    stream.write(_HEADER.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def read_frame(stream: IO[bytes]) -> bytes | None:
    """One frame's payload; ``None`` at the end of the input (the child's side)."""
    head = _read_exactly(stream, _HEADER.size)
    if head is None:
        return None
    return _read_exactly(stream, _HEADER.unpack(head)[0])


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    parts: list[bytes] = []
    left = size
    while left:
        part = stream.read(left)
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


class HelperProcess:
    """One child process running ``module.main()``, and the parent's end of its pipes.

    Stopped by :meth:`stop`, on collection, at exit, or when its input ends; forks leave it alone.

    Args:
        module: The dotted module name (``workspace_tools....``) whose ``main()`` runs.
        env: Variables set on top of this process's environment.

    Raises:
        OSError: the process could not be started.
    """

    def __init__(self, module: str, *, env: Mapping[str, str] = LEAN_ENV) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT.format(path=_PACKAGE_PARENT, module=module)],
            env={**os.environ, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C at the terminal reaches the parent only
            close_fds=True,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._stdin: IO[bytes] = self.process.stdin
        self._stdout: IO[bytes] = self.process.stdout
        self.owner = os.getpid()
        self._outgoing = memoryview(b"")
        """Bytes of frames queued by :meth:`queue` and not written yet."""
        self._finalizer = weakref.finalize(self, _stop, self.process, self.owner)

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self.process.pid

    def alive(self) -> bool:
        """Whether the child still runs, and this process started it."""
        return self.owner == os.getpid() and self.process.poll() is None

    def send(self, *payloads: bytes) -> None:
        """Write frames, waiting until the child has taken them.

        Raises:
            OSError: the child stopped reading (it exited).
        """
        self.queue(*payloads)
        self.flush()

    def queue(self, *payloads: bytes) -> None:
        """Queue frames: :meth:`pump` writes what the pipe takes, :meth:`flush` the rest."""
        parts = [self._outgoing.tobytes()] if self._outgoing else []
        for payload in payloads:
            parts += [_HEADER.pack(len(payload)), payload]
        self._outgoing = memoryview(b"".join(parts))
        os.set_blocking(self._stdin.fileno(), False)

    def pump(self) -> None:
        """Write as much of the queued frames as the pipe takes now, without waiting.

        Raises:
            OSError: the child stopped reading (it exited).
        """
        while self._outgoing:
            try:
                written = os.write(self._stdin.fileno(), self._outgoing[: 1 << 20])
            except BlockingIOError:
                return
            self._outgoing = self._outgoing[written:]

    def flush(self, deadline: float | None = None) -> None:
        """Write the queued frames, waiting until the child reads them (by ``deadline``, monotonic).

        Raises:
            OSError: the child stopped reading, or (``TimeoutError``) did not read by ``deadline``.
        """
        fd = self._stdin.fileno()
        while self._outgoing:
            self.pump()
            wait = None if deadline is None else deadline - time.monotonic()
            if self._outgoing and (
                (wait is not None and wait <= 0) or not select.select([], [fd], [], wait)[1]
            ):
                msg = "the helper process did not read its input in time"
                raise TimeoutError(msg)
        os.set_blocking(fd, True)

    def receive(self, deadline: float) -> bytes | None:
        """One frame from the child; ``None`` when it exits or does not answer by ``deadline``."""
        fd = self._stdout.fileno()
        head = self._read(fd, _HEADER.size, deadline)
        return None if head is None else self._read(fd, _HEADER.unpack(head)[0], deadline)

    @staticmethod
    def _read(fd: int, size: int, deadline: float) -> bytes | None:
        parts: list[bytes] = []
        left = size
        while left:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                return None
            part = os.read(fd, min(left, 1 << 22))
            if not part:
                return None
            parts.append(part)
            left -= len(part)
        return b"".join(parts)

    def stop(self, *, kill: bool = False, wait: float = 0.5) -> None:
        """End the child: input closed, killed after ``wait`` seconds (``kill``: at once)."""
        if kill and self.alive():
            with contextlib.suppress(OSError):
                self.process.kill()
        self._finalizer.detach()
        _stop(self.process, self.owner, wait=wait)


def _stop(process: subprocess.Popen[bytes], owner: int, *, wait: float = 0.5) -> None:
    if os.getpid() != owner:  # a forked child's copy: the helper is its parent's
        return
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        process.wait(timeout=wait)  # an idle child exits at the end of its input at once
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
