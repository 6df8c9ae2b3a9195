"""The content kinds of a bulk ``index_many``, the last ones from the tokenizing worker.

Staging a change's texts (``_ingest.stage_texts``) is mostly ``content_kind``. The embedded
backend's tokenizing worker is started for a bulk change before the texts are staged and is idle
until their term ids are wanted, so :class:`KindsPlan` hands it the kinds of the change's last
texts: this process stages the first few texts (:data:`_SAMPLE_LEAST`..:data:`_SAMPLE_MOST`)
as before, timing their kinds and the rest of their staging; from those rates the backend
chooses the worker's share so both finish together (``text/kind_split.py``); this process then
computes the kinds of the texts before that share, chunks every text (the worker's with a
placeholder kind, first in their metadata as always), and finally puts the worker's kinds in.
A text whose metadata sets a kind keeps it (its kind is neither asked for nor computed). When
the worker fails, the kinds are computed here: the same chunks, only later.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

from workspace_tools.core.backends.base import KindsJob, kinds_ahead
from workspace_tools.core.convert import Converted
from workspace_tools.core.ranking.prior import KIND_KEY, content_kind
from workspace_tools.core.store.database import SourceRecord
from workspace_tools.core.types import Chunk

__all__ = ["AskKinds", "KindRates", "KindsPlan", "kinds_asker"]

AskKinds = Callable[[Sequence[tuple[str, str, str]], float, float], KindsJob | None]
"""``(items, seconds per kind here, seconds of other work here) -> job`` (see ``kinds_ahead``)."""

_SAMPLE_LEAST: Final = 16
_SAMPLE_MOST: Final = 128
"""Texts staged here first, timed (1/64 of the change within these bounds)."""
_CHANGED_LEAST: Final = 256
"""Changed texts a change needs before the worker is asked (fewer: not worth a message)."""


def kinds_asker(backend: object, lock: threading.RLock | threading.Lock) -> AskKinds | None:
    """How ``stage_texts`` asks ``backend``'s helper for kinds (``None``: it has none).

    Every call into the backend holds ``lock`` (the workspace's, which serialises the backend).
    """
    if not kinds_ahead(backend):
        return None

    def ask(items: Sequence[tuple[str, str, str]], here: float, rest: float) -> KindsJob | None:
        with lock:
            job = backend.kinds_ahead(items, here=here, rest=rest)
        return None if job is None else _Locked(job, lock)

    return ask


class _Locked:
    """A :class:`KindsJob` whose calls hold the workspace's lock."""

    def __init__(self, job: KindsJob, lock: threading.RLock | threading.Lock) -> None:
        self._job, self._lock = job, lock
        self.start = job.start

    def result(self) -> list[str] | None:
        with self._lock:
            return self._job.result()

    def drop(self) -> None:
        with self._lock:
            self._job.drop()


class KindRates:
    """This process's seconds per kind and per text of the rest of staging, as last measured.

    Kept by the workspace across its changes: a change staged after one that was measured asks
    the worker before its first text (no sample), with rates measured on thousands of texts.
    """

    __slots__ = ("kind", "other")

    def __init__(self) -> None:
        self.kind: float | None = None
        self.other = 0.0


class KindsPlan:
    """Which changed texts get their kind here, which from the worker, and when to ask.

    Args:
        changed: ``(source id, converted, metadata, digest, replaces)`` of each changed text,
            in the order they are staged.
        ask: Asks the worker (``None``: every kind is computed here).
        rates: The workspace's measured rates (updated when the change is staged).
    """

    def __init__(
        self,
        changed: Sequence[tuple[str, Converted, dict[str, Any], str, bool]],
        ask: AskKinds | None,
        rates: KindRates | None = None,
    ) -> None:
        self._changed = changed
        count = len(changed)
        self._ask = ask if count >= _CHANGED_LEAST else None
        self._rates = rates
        measured = rates is not None and rates.kind is not None
        self._sample = 0 if measured else min(max(_SAMPLE_LEAST, count // 64), _SAMPLE_MOST)
        self._cut = count
        """Index of the first text whose kind may come from the worker."""
        self._job: KindsJob | None = None
        self._pending: list[int] = []
        self._started = time.perf_counter()
        self._kind_seconds = 0.0
        self._kinds = 0

    def kind(self, number: int) -> str | None:
        """The kind to chunk text ``number`` with (``""``: not used, or put in later)."""
        if number == self._sample and self._ask is not None:
            self._send(number)
        source_id, converted, metadata, _, _ = self._changed[number]
        if KIND_KEY in metadata or KIND_KEY in converted.metadata:
            return ""  # the caller's kind wins: computing one would change nothing
        if number >= self._cut:
            self._pending.append(number)
            return ""
        if self._ask is None:
            return content_kind(source_id, converted.text, fmt=converted.format)
        started = time.perf_counter()
        kind = content_kind(source_id, converted.text, fmt=converted.format)
        self._kind_seconds += time.perf_counter() - started
        self._kinds += 1
        return kind

    def _send(self, sampled: int) -> None:
        """Ask the worker for the kinds of the texts from ``sampled`` on (its share of them)."""
        assert self._ask is not None
        rates = self._rates
        if rates is not None and rates.kind is not None:
            here, other = rates.kind, rates.other
        elif self._kinds:
            here = self._kind_seconds / self._kinds
            other = (time.perf_counter() - self._started - self._kind_seconds) / sampled
        else:
            return
        left = range(sampled, len(self._changed))
        wanted = [i for i in left if self._wanted(i)]
        items = [self._item(i) for i in wanted]
        job = self._ask(items, here, other * len(left)) if items else None
        if job is not None:
            self._job, self._cut = job, wanted[job.start]

    def finish(self, staged: list[tuple[SourceRecord, list[Chunk]]]) -> None:
        """Put the worker's kinds (or, when it failed, kinds computed here) in their chunks."""
        job, pending = self._job, self._pending
        if self._rates is not None and self._kinds and self._ask is not None:
            spent = time.perf_counter() - self._started
            self._rates.kind = self._kind_seconds / self._kinds
            self._rates.other = max(0.0, spent - self._kind_seconds) / max(len(staged), 1)
        if job is None or not pending:
            return
        self._job = None
        kinds = job.result()
        if kinds is None or len(kinds) != len(pending):
            kinds = [content_kind(*self._item(i)[:2], fmt=self._item(i)[2]) for i in pending]
        for number, kind in zip(pending, kinds, strict=True):
            for chunk in staged[number][1]:  # chunk_text's own dict: replaced in place
                cast("dict[str, Any]", chunk.metadata)[KIND_KEY] = kind

    def drop(self) -> None:
        """Staging stopped before :meth:`finish` took the worker's kinds: they are not wanted."""
        job, self._job = self._job, None
        if job is not None:
            job.drop()

    def _wanted(self, number: int) -> bool:
        _, converted, metadata, _, _ = self._changed[number]
        return KIND_KEY not in metadata and KIND_KEY not in converted.metadata

    def _item(self, number: int) -> tuple[str, str, str]:
        source_id, converted, _, _, _ = self._changed[number]
        return source_id, converted.text, converted.format
