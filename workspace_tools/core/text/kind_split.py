"""Content kinds of a bulk change on two cores: the first texts here, the last in the worker.

Staging an ``index_many`` is mostly ``content_kind`` (``ranking/prior.py``, ~25 us of the ~36 us
a text costs; chunking and hashing the rest), in this process, while the tokenizing worker
(:mod:`.token_worker`) waits for the change's texts. :meth:`KindSplit.ahead` sends the
``(source id, text, format)`` of the last texts of a change to that worker as a kinds job, right
after the change's texts are known; this process computes the kinds of the first ones and chunks
every text meanwhile (the worker's texts with a placeholder kind), then takes the worker's kinds
(:meth:`KindJob.result`: one byte per text, an index into :data:`~..ranking.prior.KINDS`) and
puts them in. ``content_kind`` is a pure function of its arguments, and the texts cross the pipe
unchanged (``surrogatepass``), so the kinds are those computed here.

The share is chosen so both finish together: this process, busy ``k`` seconds per kind and ``R``
seconds with the rest of the staging, gives the worker ``t`` of ``n`` texts with
``(n - t) k + R = L + t w``, where ``w`` is the worker's seconds per kind (as last measured;
until then ``k``, the same code on a like core) and ``L`` how long until the worker can start:
the rest of its start-up while it is new (a worker started for a kinds job loads its tokenizer
only after it, so it is ready in ~40-60 ms: :data:`_START`, then as measured by its first reply),
else the time its jobs take beyond their busy time (sending, unpacking: as last measured).
``k`` and ``R`` are measured on the change's first texts, staged here before the job is sent,
or (the workspace keeps them) on the whole change before.

Anything wrong with the worker (it cannot start, it died, hangs, or answers garbage) gives
``None``: the caller computes those kinds itself, the same ones, only later. The worker is only
asked when one runs or is being started for the change (``SplitTokenizer.expect``), so the
:data:`~.token_split.WORKER_ENV` switch and a failed worker turn this off too.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Sequence
from typing import Final, Protocol

from workspace_tools.core.ranking.prior import KINDS
from workspace_tools.core.text.token_pipe import TokenWorker
from workspace_tools.core.text.token_worker import KIND_REPLY
from workspace_tools.core.text.token_worker import KINDS as KINDS_TAG

__all__ = ["KindJob", "KindSplit", "WorkerOwner"]

_START: Final = 0.06
"""Seconds from a new (lazy) worker's start to its first job, until measured: Python, this
package and ``prior`` (~40 ms on a quiet core of the 2-core machine, ``-X importtime``)."""
_LEAST: Final = 32
"""Texts the worker's share must reach (fewer are not worth a message)."""
_MOST: Final = 0.95
"""The largest share of a change's texts the worker gets."""


class WorkerOwner(Protocol):
    """What :class:`KindSplit` needs of its owner (a :class:`~.token_split.SplitTokenizer`)."""

    worker: TokenWorker | None
    least: int

    def disown_forked(self) -> None:
        """Forget a worker a forked child shares with its parent."""
        ...

    def fail(self, exc: BaseException) -> None:
        """Give the worker up."""
        ...


class KindSplit:
    """Kinds jobs of a :class:`~.token_split.SplitTokenizer`'s worker, and their balance.

    Not thread-safe: its owner serialises calls (the embedded backend's lock).

    Args:
        split: The tokenizer whose worker (started, kept and given up by it) answers.
    """

    def __init__(self, split: WorkerOwner) -> None:
        self.split = split
        self.worker_texts = 0
        """Texts whose kind came from a worker (tests read it)."""
        self._there: float | None = None
        """The worker's seconds per kind, as last measured."""
        self.start = _START
        """Seconds a new worker takes to start (:data:`_START`, then as its first reply tells)."""
        self.lag = 0.0
        """Seconds a running worker's kinds take beyond its busy time (the frame sent, read and
        unpacked; the reply back), as last measured."""

    def ahead(
        self, items: Sequence[tuple[str, str, str]], *, here: float, rest: float
    ) -> KindJob | None:
        """Send the last part of ``items`` (``(source id, text, format)``) to the worker.

        Args:
            items: The texts whose kinds this process needs next, in order.
            here: This process's seconds per kind (measured on the change's first texts).
            rest: Seconds of other work this process has before it needs the kinds.

        Returns:
            The job (the worker has ``items[job.start:]``), or ``None``: no worker runs, or
            its share would be too small.
        """
        split = self.split
        split.disown_forked()
        worker = split.worker
        if worker is None or not worker.alive() or len(items) < split.least:
            return None
        if worker.pending():  # only an idle worker: replies unread could fill its pipe
            return None
        there = here if self._there is None else self._there
        now = time.perf_counter()
        lag = self.lag if worker.answered else max(0.0, worker.started + self.start - now)
        count = len(items)
        tail = (count * here + rest - lag) / max(here + there, 1e-9)
        tail = round(min(count * _MOST, max(0.0, tail)))
        if tail < _LEAST:
            return None
        start = count - tail
        flat = [value for item in items[start:] for value in item]
        try:
            number = worker.submit(flat, tag=KINDS_TAG)
        except (OSError, RuntimeError) as exc:
            split.fail(exc)
            return None
        return KindJob(self, worker, number, start, tail, now)

    def measured(self, there: float, started: float | None, lag: float | None = None) -> None:
        """Keep the worker's seconds per kind, and a new worker's start-up when it was told."""
        self._there = there
        if started is not None:
            self.start = started
        if lag is not None:
            self.lag = lag


class KindJob:
    """Kinds asked of the worker: those of ``items[start:]`` (:meth:`KindSplit.ahead`)."""

    __slots__ = ("_count", "_fresh", "_number", "_owner", "_sent", "_worker", "start")

    def __init__(
        self,
        owner: KindSplit,
        worker: TokenWorker,
        number: int,
        start: int,
        count: int,
        sent: float,
    ) -> None:
        self._owner, self._worker, self._number = owner, worker, number
        self.start = start
        """Index of the first item the worker has."""
        self._count, self._sent = count, sent
        self._fresh = not worker.answered

    def result(self) -> list[str] | None:
        """The worker's kinds, in order; ``None`` when the worker failed (compute them here)."""
        owner, worker = self._owner, self._worker
        split = owner.split
        split.disown_forked()
        if split.worker is not worker:  # given up (or replaced) since: the reply is lost
            return None
        ready = worker.ready()
        try:
            reply = worker.reply(self._number, count=self._count)
            count, busy = KIND_REPLY.unpack_from(reply)
            codes = reply[KIND_REPLY.size :]
            if count != self._count or len(codes) != count:
                msg = f"the worker answered {len(codes)} kinds for {self._count} texts"
                raise RuntimeError(msg)
            if codes and max(codes) >= len(KINDS):
                msg = f"the worker answered kind {max(codes)}, not one of the {len(KINDS)} kinds"
                raise RuntimeError(msg)
        except (OSError, RuntimeError, ValueError, struct.error) as exc:
            split.fail(exc)
            return None
        started = lag = None
        if self._fresh and not ready:  # waited for it: it began the job ``busy`` ago
            began = time.perf_counter() - busy - worker.started
            late = began > self._sent - worker.started + 0.005  # not ready when the job came
            started = began if late else min(owner.start, began)
        elif not self._fresh:  # waited: the lag is what the wait tells; else at most that
            lag = max(0.0, time.perf_counter() - self._sent - busy)
            lag = lag if not ready else min(owner.lag, lag)
        owner.measured(busy / max(count, 1), started, lag)
        owner.worker_texts += count
        return [KINDS[code] for code in codes]

    def drop(self) -> None:
        """Not wanted any more: the reply is thrown away when it comes."""
        if self._owner.split.worker is self._worker:
            self._worker.forget(self._number)
