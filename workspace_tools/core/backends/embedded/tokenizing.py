"""Term ids of a bulk change on two cores: the first texts here, the last in a worker process.

The worker's ids are mapped to this process's vocabulary so they equal sequential tokenizing;
if it fails, the texts are tokenized here. :data:`WORKER_ENV` set to ``0`` turns it off.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import time
from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.embedded.token_worker import (
    CONFIG,
    HELLO,
    PIECE,
    REPLY,
    TOKENS,
    pack_strings,
    unpack_strings,
)
from workspace_tools.core.helper_process import HelperProcess
from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = [
    "BULK_TEXTS",
    "WORKER_ENV",
    "WORKER_MIN_TEXTS",
    "SplitTokenizer",
    "TokenWorker",
    "worker_allowed",
]

logger = logging.getLogger(__name__)

BULK_TEXTS: Final = 2000
"""Texts a change needs before part of it goes to the worker."""
WORKER_MIN_TEXTS: Final = 200
"""Texts a change needs to use a worker already running."""
STREAM_SECONDS: Final = 5.0
"""Changes that together reach :data:`BULK_TEXTS` within this many seconds start the worker too."""
WORKER_ENV: Final = "WORKSPACE_TOOLS_TOKEN_WORKER"
"""``0`` (or ``false``, ``off``, ``no``): tokenize in this process only."""
_FAILURES: Final = 2
"""Worker failures after which this process stops starting new ones."""
_TERMS_KEPT: Final = 2_000_000
"""A worker whose vocabulary grew past this many terms is replaced."""
_DEADLINE: Final = 60.0
"""Seconds a reply may take beyond :data:`_PER_TEXT` per text before the worker is given up."""
_PER_TEXT: Final = 0.005
_PUMP_EVERY: Final = 16
"""Texts tokenized here between two writes of the job to a worker that is still starting."""
_PIECE: Final = 64
"""Texts a job's piece holds (about a pipe's buffer)."""
_SHARE_NOW: Final = 0.5
"""The worker's share of a change's texts while the two rates are not measured yet."""


def worker_allowed(*, option: bool | None = None) -> bool:
    """Whether to use a worker: ``option`` when given, else :data:`WORKER_ENV` (POSIX only)."""
    if os.name != "posix":
        return False
    if option is not None:
        return option
    value = os.environ.get(WORKER_ENV, "").strip().lower()
    return value not in {"0", "false", "off", "no"}


class TokenWorker:
    """One tokenizing worker process (:mod:`.token_worker`): jobs out, replies in, one at a time.

    Raises:
        OSError: the process could not be started.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.helper = HelperProcess("workspace_tools.core.backends.embedded.token_worker")
        self.owner = self.helper.owner
        self._expected = tokenizer.fingerprint()
        self.greeted = False
        self.helper.queue(CONFIG + json.dumps(tokenizer.config.to_dict()).encode())

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self.helper.pid

    def alive(self) -> bool:
        """Whether the process still runs, and this process started it."""
        return self.helper.alive()

    def submit(self, texts: list[str], *, whole: bool = False) -> None:
        """Queue one job in pieces (:meth:`pump` sends them; ``whole``: one, written at once)."""
        size = len(texts) if whole else _PIECE
        pieces = [
            pack_strings(texts[start : start + size], tag=PIECE)
            for start in range(0, len(texts), size)
        ]
        self.helper.queue(*pieces, TOKENS)
        if whole:
            self.helper.flush(time.monotonic() + _DEADLINE)

    def pump(self) -> None:
        """Write what the pipe takes of the job now (a worker still starting reads nothing).

        Raises:
            OSError: the worker exited.
        """
        self.helper.pump()

    def result(self, count: int) -> tuple[list[str], npt.NDArray[np.int32], bytes, float]:
        """The reply to the job of ``count`` texts.

        Returns:
            ``(new terms, terms per text, local ids as int32 bytes, seconds busy)``.

        Raises:
            RuntimeError: the worker died, hangs, or tokenizes otherwise than this process.
            OSError: the worker stopped reading.
        """
        deadline = time.monotonic() + _DEADLINE + _PER_TEXT * count
        self.helper.flush(deadline)
        reply = self._frame(deadline)
        if reply[:1] == HELLO:
            fingerprint = json.loads(reply[1:]).get("fingerprint")
            if fingerprint != self._expected:
                msg = f"the worker tokenizes with {fingerprint}, not {self._expected}"
                raise RuntimeError(msg)
            self.greeted = True
            reply = self._frame(deadline)
        if not self.greeted or reply[:1] != TOKENS:
            msg = f"the worker answered a {reply[:1]!r} frame before its greeting or its ids"
            raise RuntimeError(msg)
        terms_size, lengths_size, busy = REPLY.unpack_from(reply, 1)
        lengths_at = 1 + REPLY.size + terms_size
        new_terms = unpack_strings(reply[1 + REPLY.size : lengths_at])
        counts = np.frombuffer(reply[lengths_at : lengths_at + lengths_size], dtype=np.int32)
        ids = reply[lengths_at + lengths_size :]
        if counts.size != count or int(counts.sum()) * 4 != len(ids):
            msg = f"the worker answered {counts.size} texts for {count}"
            raise RuntimeError(msg)
        return list(new_terms), counts, ids, float(busy)

    def _frame(self, deadline: float) -> bytes:
        frame = self.helper.receive(deadline)
        if frame is None:
            msg = "the worker exited or did not answer in time"
            raise RuntimeError(msg)
        return frame

    def stop(self, *, kill: bool = False) -> None:
        """End the process (killed at once with ``kill``: it failed)."""
        self.helper.stop(kill=kill)


class Job:
    """Texts sent to the worker, waiting for their ids (:meth:`SplitTokenizer.finish`)."""

    __slots__ = ("sent", "texts")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.sent = time.perf_counter()


class SplitTokenizer:
    """``Tokenizer.term_ids`` of many texts, the last part tokenized by a worker process.

    Not thread-safe: its owner serialises calls.

    Args:
        tokenizer: The workspace tokenizer (its vocabulary numbers the terms).
        enabled: Use a worker for bulk changes (see :func:`worker_allowed`).
        bulk: Texts a change needs to use the worker (default :data:`BULK_TEXTS`).
    """

    def __init__(
        self, tokenizer: Tokenizer, *, enabled: bool = True, bulk: int | None = None
    ) -> None:
        self.tokenizer = tokenizer
        self.enabled = enabled
        self.bulk = BULK_TEXTS if bulk is None else bulk
        self.least = min(self.bulk, WORKER_MIN_TEXTS)
        self.worker: TokenWorker | None = None
        self.failures = 0
        self.worker_texts = 0
        """Texts whose ids came from a worker (tests read it)."""
        self._job: Job | None = None
        self._terms: list[str] = []
        """The worker's vocabulary: its term ``i`` is ``_terms[i]``."""
        self._remap = np.zeros(0, dtype=np.int32)
        """Worker id -> vocabulary id (``-1``: not in the vocabulary), for :attr:`_generation`."""
        self._generation = tokenizer.vocab_generation
        self._rates: tuple[float, float] | None = None
        """Seconds per text here and in the worker, as last measured."""
        self._stream: list[tuple[float, int]] = []

    def start(self, texts: Sequence[str]) -> Job | None:
        """Hand a bulk change's texts to the worker (ids: :meth:`finish`; ``None``: not bulk)."""
        self.disown_forked()
        if not self._wanted(len(texts), count_in=False):  # term_ids counts it, if it comes
            return None
        self._submit(list(texts), whole=True)
        job, self._job = self._job, None
        return job

    def finish(self, job: Job) -> list[npt.NDArray[np.int32]]:
        """The ids of a job :meth:`start` began (tokenized here if the worker failed)."""
        tail = self._collect(job)
        if tail is None:
            return [self.tokenizer.term_ids(text) for text in job.texts]
        return tail[0]

    def term_ids(self, texts: Sequence[str]) -> list[npt.NDArray[np.int32]]:
        """The ids ``[tokenizer.term_ids(t) for t in texts]`` gives (vocabulary grown the same)."""
        self.disown_forked()
        job = None
        if self._wanted(len(texts)):
            share = _SHARE_NOW if self._rates is None else self._share()
            self._submit(list(texts[len(texts) - int(len(texts) * share) :]))
            job = self._job
        term_ids = self.tokenizer.term_ids
        if job is None:
            return [term_ids(text) for text in texts]
        self._job = None
        head = len(texts) - len(job.texts)
        started = time.perf_counter()
        out = []
        for start in range(0, head, _PUMP_EVERY):
            out += [term_ids(text) for text in texts[start : min(start + _PUMP_EVERY, head)]]
            self._pump()
        mine = time.perf_counter() - started
        tail = self._collect(job)
        if tail is None:  # the worker failed: the same ids, tokenized here after the head
            out.extend(term_ids(text) for text in job.texts)
            return out
        if head:
            self._rates = (mine / head, tail[1])
        out.extend(tail[0])
        return out

    def close(self) -> None:
        """Stop the worker (a later bulk change starts another)."""
        self.disown_forked()
        self._job = None
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.stop()
        self._forget_worker()

    def disown_forked(self) -> None:
        """In a forked child, forget the parent's worker and its job (its pipes are shared)."""
        if self.worker is not None and self.worker.owner != os.getpid():
            self.worker, self._job = None, None
            self._forget_worker()

    def _wanted(self, count: int, *, count_in: bool = True) -> bool:
        """Whether a change of ``count`` texts should use the worker (``count_in``: record it)."""
        if count >= self.bulk:
            return True
        if count < self.least:
            return False
        now = time.monotonic()
        self._stream = [(t, n) for t, n in self._stream if now - t < STREAM_SECONDS]
        if count_in:
            self._stream.append((now, count))
        running = self.worker is not None and self.worker.alive()
        return running or sum(n for _, n in self._stream) >= self.bulk

    def _share(self) -> float:
        """The worker's share that makes both finish together, from the rates last measured."""
        assert self._rates is not None
        here, there = self._rates
        if here + there <= 0:
            return _SHARE_NOW
        return min(0.9, max(0.1, here / (here + there)))

    def _submit(self, texts: list[str], *, whole: bool = False) -> None:
        if not (self.enabled and texts) or self.failures >= _FAILURES:
            return
        if self.worker is not None and len(self._terms) > _TERMS_KEPT:
            self.close()
        try:
            if self.worker is None or not self.worker.alive():
                self._forget_worker()
                self.worker = TokenWorker(self.tokenizer)
            self.worker.submit(texts, whole=whole)
            self.worker.pump()
        except (OSError, RuntimeError) as exc:
            self.fail(exc)
            return
        self._job = Job(texts)

    def _pump(self) -> None:
        worker = self.worker
        if worker is not None:
            try:
                worker.pump()
            except OSError as exc:  # collected as a failure: the texts are tokenized here
                logger.debug("tokenizing worker stopped reading (%s)", exc)

    def _collect(self, job: Job) -> tuple[list[npt.NDArray[np.int32]], float] | None:
        """The job's ids in the vocabulary's numbers, and the worker's seconds per text."""
        worker = self.worker
        if worker is None:
            return None
        try:
            new_terms, counts, ids, busy = worker.result(len(job.texts))
            local = np.frombuffer(ids, dtype=np.int32)
            first_new = self._absorb(new_terms)
            if local.size and (int(local.max()) >= len(self._terms) or int(local.min()) < 0):
                msg = "the worker's ids are out of its vocabulary"
                raise RuntimeError(msg)
        except (OSError, RuntimeError, ValueError, struct.error) as exc:
            self.fail(exc)
            return None
        remap = self._number(local, first_new)
        flat = remap[local]
        self.worker_texts += len(job.texts)
        bounds = np.cumsum(counts[:-1], dtype=np.int64)
        return list(np.split(flat, bounds)), busy / max(len(job.texts), 1)

    def _absorb(self, new_terms: list[str]) -> int:
        """Add the worker's new terms to its term list and to the map (``-1``: not yet known).

        Returns:
            The worker id of the first of ``new_terms``.
        """
        first_new = len(self._terms)
        if self._generation != self.tokenizer.vocab_generation:  # renumbered: map again
            self._remap = np.zeros(0, dtype=np.int32)
            self._generation = self.tokenizer.vocab_generation
            new_terms = [*self._terms, *new_terms]
            self._terms = []
        get = self.tokenizer.vocab.get
        self._terms.extend(new_terms)
        fresh = np.fromiter((get(t, -1) for t in new_terms), dtype=np.int32, count=len(new_terms))
        self._remap = np.concatenate([self._remap, fresh])
        return first_new

    def _number(self, local: npt.NDArray[np.int32], first_new: int) -> npt.NDArray[np.int32]:
        """The map with every worker term of ``local`` in the vocabulary, new ones numbered next.

        Missing terms get ids in the order ``local`` first uses them (as sequential tokenizing).
        """
        remap, terms, vocab = self._remap, self._terms, self.tokenizer.vocab
        missing: npt.NDArray[np.intp] = np.flatnonzero(remap < 0)
        if missing.size == 0:
            return remap
        known = [vocab.get(terms[i], -1) for i in missing.tolist()]  # numbered here since
        remap[missing] = known
        missing = missing[np.asarray(known, dtype=np.int32) < 0]
        if missing.size == 0:
            return remap
        if missing[0] < first_new:
            wanted = local[remap[local] < 0]
            distinct, first = np.unique(wanted, return_index=True)
            missing = distinct[np.argsort(first, kind="stable")].astype(np.intp)
        setdefault = vocab.setdefault
        remap[missing] = [setdefault(terms[i], len(vocab)) for i in missing.tolist()]
        return remap

    def fail(self, exc: BaseException) -> None:
        """Give the worker up after ``exc`` (this process does its jobs; a later one may start)."""
        logger.debug("tokenizing worker given up (%s); tokenizing in this process", exc)
        self.failures += 1
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.stop(kill=True)
        self._forget_worker()

    def _forget_worker(self) -> None:
        """A new worker starts with an empty vocabulary: so does the map."""
        self._terms = []
        self._remap = np.zeros(0, dtype=np.int32)
