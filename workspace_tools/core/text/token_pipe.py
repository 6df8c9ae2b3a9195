"""The parent's end of the tokenizing worker's pipes: jobs out, replies in, in order.

:class:`TokenWorker` starts the worker process (:mod:`.token_worker`) and speaks its frames: each
job is numbered as it is sent and its reply, tagged with the job's kind (term ids or content
kinds), is read in the order the worker answers; a reply read before it is asked for (the reply
to an earlier job, while a later one is wanted) is kept until it is, and one no longer wanted
(:meth:`TokenWorker.forget`) is thrown away when it comes. A reply later than its deadline, a
worker that exits or stops reading, a reply of the wrong kind or a worker built with another
tokenizer raise :class:`RuntimeError`: :class:`~.token_split.SplitTokenizer` then gives that
worker up and does the job in this process.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import threading
import time
import weakref
from collections import deque
from typing import IO, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core._package_child import start_package_child
from workspace_tools.core.text.token_worker import (
    CONFIG,
    HELLO,
    KINDS,
    REPLY,
    TOKENS,
    pack_strings,
    unpack_strings,
    write_frame,
)
from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = ["TokenWorker"]

_DEADLINE: Final = 60.0
"""Seconds a reply may take beyond :data:`_PER_TEXT` per text before the worker is given up."""
_PER_TEXT: Final = 0.005


class TokenWorker:
    """One tokenizing worker process and its pipes (see :mod:`.token_worker`).

    Started at once (``Popen`` returns before the child has imported anything); the handshake
    is read with the first reply. Stopped by :meth:`stop`, when this object is collected, at
    exit, and by the end of its input when this process dies.

    Jobs are numbered as they are sent; the replies come in that order, tagged with their job's
    kind (:mod:`.token_worker`), and one read before it is asked for is kept until it is.

    Args:
        tokenizer: The tokenizer whose settings the worker uses.
        lazy: A kinds job comes first: the worker builds its tokenizer after it.

    Raises:
        OSError: the process could not be started.
    """

    def __init__(self, tokenizer: Tokenizer, *, lazy: bool = False) -> None:
        self.started = time.perf_counter()
        self.process = start_package_child("workspace_tools.core.text.token_worker")
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self._stdin: IO[bytes] = self.process.stdin
        self._stdout: IO[bytes] = self.process.stdout
        self.owner = os.getpid()
        """The process that started it (a forked child must neither use nor stop it)."""
        self._expected = tokenizer.fingerprint()
        self.greeted = False
        """Whether it has said which tokenizer it built (it is ready for term-ids jobs)."""
        self.answered = False
        """Whether it has answered a job (it has started, and loaded what a job needs)."""
        self._sender: threading.Thread | None = None
        self._send_failed = False
        self._sent: deque[tuple[int, bytes]] = deque()
        """``(number, tag)`` of each job whose reply is not read yet, in order."""
        self._numbers = 0
        self._last = {TOKENS: 0, KINDS: 0}
        self._early: dict[int, bytes] = {}
        self._forgotten: set[int] = set()
        self._finalizer = weakref.finalize(self, _stop, self.process, self.owner)
        config = {"config": tokenizer.config.to_dict(), "lazy": lazy}
        self._send(CONFIG + json.dumps(config).encode())

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self.process.pid

    def submit(self, texts: list[str], *, tag: bytes = TOKENS) -> int:
        """Send one job (its frame written by a thread: this process goes on meanwhile).

        Returns:
            The job's number (:meth:`reply`).
        """
        payload = pack_strings(texts, tag=tag)
        self._join_sender()
        sender = threading.Thread(target=self._send, args=(payload,), daemon=True)
        sender.start()
        self._sender = sender
        self._numbers += 1
        self._sent.append((self._numbers, tag))
        self._last[tag] = self._numbers
        return self._numbers

    def reply(self, number: int, *, count: int) -> bytes:
        """The reply (without its tag) to job ``number`` of ``count`` texts.

        Raises:
            RuntimeError: the worker died, hangs, answers out of turn or with another tokenizer.
        """
        deadline = time.monotonic() + _DEADLINE + _PER_TEXT * count
        while number not in self._early:
            if not any(sent == number for sent, _ in self._sent):
                msg = f"no reply is due to job {number}"
                raise RuntimeError(msg)
            frame = self._frame(deadline)
            tag = frame[:1]
            if tag == HELLO:
                self._greet(frame[1:])
                continue
            sent, wanted = self._sent.popleft()
            if tag != wanted:
                msg = f"the worker answered a {tag!r} frame to a {wanted!r} job"
                raise RuntimeError(msg)
            self.answered = True
            if sent in self._forgotten:
                self._forgotten.discard(sent)
            else:
                self._early[sent] = frame[1:]
        self._join_sender()
        return self._early.pop(number)

    def pending(self) -> bool:
        """Whether a reply is due (a job sent, its reply not read yet)."""
        return bool(self._sent)

    def ready(self) -> bool:
        """Whether a reply (or the greeting) can be read without waiting."""
        if self._early:
            return True
        return bool(select.select([self._stdout.fileno()], [], [], 0)[0])

    def forget(self, number: int) -> None:
        """Drop the reply to job ``number`` (read later with the others, then thrown away)."""
        if self._early.pop(number, None) is None and any(n == number for n, _ in self._sent):
            self._forgotten.add(number)

    def _greet(self, hello: bytes) -> None:
        fingerprint = json.loads(hello).get("fingerprint")
        if fingerprint != self._expected:
            msg = f"the worker tokenizes with {fingerprint}, not {self._expected}"
            raise RuntimeError(msg)
        self.greeted = True

    def result(self, count: int) -> tuple[list[str], npt.NDArray[np.int32], bytes, float]:
        """The reply to the term-ids job of ``count`` texts sent last.

        Returns:
            ``(new terms, terms per text, local ids as int32 bytes, seconds busy)``.

        Raises:
            RuntimeError: the worker died, hangs, or tokenizes otherwise than this process.
        """
        reply = self.reply(self._last[TOKENS], count=count)
        if not self.greeted:
            msg = "the worker answered before it said which tokenizer it has"
            raise RuntimeError(msg)
        terms_size, lengths_size, busy = REPLY.unpack_from(reply)
        lengths_at = REPLY.size + terms_size
        new_terms = unpack_strings(reply[REPLY.size : lengths_at])
        lengths = reply[lengths_at : lengths_at + lengths_size]
        ids = reply[lengths_at + lengths_size :]
        counts = np.frombuffer(lengths, dtype=np.int32)
        if counts.size != count or int(counts.sum()) * 4 != len(ids):
            msg = f"the worker answered {counts.size} texts for {count}"
            raise RuntimeError(msg)
        return list(new_terms), counts, ids, float(busy)

    def alive(self) -> bool:
        """Whether the process is still running, and this process started it."""
        return self.owner == os.getpid() and self.process.poll() is None

    def stop(self, *, kill: bool = False) -> None:
        """End the process (its input closed; killed if it does not exit at once).

        ``kill``: kill it first (it failed: a frame it does not read would keep the thread
        writing it blocked, and the input could not be closed).
        """
        if kill and self.alive():
            with contextlib.suppress(OSError):
                self.process.kill()
        self._finalizer()

    def _send(self, payload: bytes) -> None:
        try:
            write_frame(self._stdin, payload)
        except (OSError, ValueError):  # the worker died (broken pipe) or was stopped
            self._send_failed = True

    def _join_sender(self) -> None:
        if self._sender is not None:
            self._sender.join()
            self._sender = None
        if self._send_failed:
            msg = "the worker stopped reading"
            raise RuntimeError(msg)

    def _frame(self, deadline: float) -> bytes:
        """One frame from the worker, read before ``deadline``."""
        fd = self._stdout.fileno()
        head = self._read(fd, 8, deadline)
        return self._read(fd, int.from_bytes(head, "big"), deadline)

    @staticmethod
    def _read(fd: int, size: int, deadline: float) -> bytes:
        parts: list[bytes] = []
        left = size
        while left:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                msg = "the worker did not answer in time"
                raise RuntimeError(msg)
            part = os.read(fd, min(left, 1 << 22))
            if not part:
                msg = "the worker exited"
                raise RuntimeError(msg)
            parts.append(part)
            left -= len(part)
        return b"".join(parts)


def _stop(process: subprocess.Popen[bytes], owner: int) -> None:
    if os.getpid() != owner:  # a forked child's copy: the worker is its parent's
        return
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        process.wait(timeout=0.5)  # an idle worker exits at the end of its input at once
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
