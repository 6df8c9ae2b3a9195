"""How the embedded backend turns chunks into BM25 term ids (a part of :class:`EmbeddedBackend`).

A chunk read from the database has only its text (the database stores no terms); a chunk this
process just wrote may carry its terms. Texts go to ids with the workspace tokenizer, a bulk
change's partly in a worker process (``text/token_split.py``), a small change's on a helper thread
while its ``COMMIT`` waits for the disk (``_ahead.py``); every path gives the ids one call of
``Tokenizer.term_ids`` per chunk, one after the other, would.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from itertools import chain
from typing import Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends._ahead import Ahead, ahead
from workspace_tools.core.backends.follow import TokenizerCheck
from workspace_tools.core.index._document_counts import DocumentCounts, count_terms
from workspace_tools.core.store.database import Changes
from workspace_tools.core.text.kind_split import KindJob
from workspace_tools.core.text.token_split import WORKER_MIN_TEXTS, SplitTokenizer
from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = ["Prepared", "TermIds"]

Prepared = tuple[list[npt.NDArray[np.int32]], DocumentCounts | None]
"""A change's term ids, and (a bulk change) the document frequencies they add, counted."""

_AHEAD_CHUNKS: Final = 64
"""A change of up to this many chunks has its term ids made while its commit waits for the disk
(:meth:`TermIds.prepare`)."""
_AHEAD_BULK: Final = WORKER_MIN_TEXTS
"""So has a change of this many chunks or more (a bulk change: its COMMIT writes megabytes and
waits tens of milliseconds, this process's part of its tokenizing and the worker's reply fill
that wait). A change in between is tokenized after its commit: its commit waits a few
milliseconds, about what handing the GIL back after it can cost."""


class TermIds:
    """The term-id methods of :class:`~workspace_tools.core.backends.embedded.EmbeddedBackend`.

    The backend sets the attributes below; its lock serialises every call.
    """

    tokenizer: Tokenizer
    split: SplitTokenizer
    index_terms: bool
    version: int
    _tokenizer_check: TokenizerCheck
    _ahead: tuple[int, list[int], int, Ahead[Prepared]] | None

    def _term_ids_of(self, changes: Changes) -> list[npt.NDArray[np.int32]]:
        """The term ids of each chunk of ``changes``: from its terms in memory, else its text.

        The database stores no terms: a chunk read from it (another process's, or any chunk
        when rebuilding from the database) and a chunk whose writer handed no terms over are
        tokenized with this workspace's tokenizer, checked to be the one the index records
        (:class:`TokenizerCheck`), so its terms are the writer's. A text goes to ids directly
        (``Tokenizer.term_ids``: no term string is made for a word seen before); new terms get
        their ids in the order the chunks, one after the other, first use them. The texts of a
        bulk change are tokenized on two cores (:class:`SplitTokenizer`: the same ids).
        """
        chunks = changes.chunks
        if all(chunk.terms is not None for chunk in chunks):
            return self._term_ids_many([chunk.terms for chunk in chunks if chunk.terms is not None])
        if not self.index_terms:
            return self._term_ids_many([chunk.terms or () for chunk in chunks])
        self._tokenizer_check(changes.settings)
        if all(chunk.terms is None for chunk in chunks):
            return self.split.term_ids([chunk.text for chunk in chunks])
        text_ids, term_ids = self.tokenizer.term_ids, self._term_ids
        return [text_ids(c.text) if c.terms is None else term_ids(c.terms) for c in chunks]

    def prepare(self, changes: Changes) -> None:
        """Start the term ids of a small or a bulk change of this process, right before its commit.

        A helper thread tokenizes the texts while the ``COMMIT`` waits for the disk
        (``_ahead.py``); :meth:`apply` takes the ids (the ones it would make: the same texts, in
        the same order, against the same vocabulary, which nothing else changes meanwhile). For
        a bulk change that is :meth:`_term_ids_of` whole: this process's head of the texts, then
        the worker's part collected (:class:`SplitTokenizer`, its job handed over before the
        write by :meth:`tokenize_ahead`), and the document frequencies the ids add counted
        (``_document_counts.count_terms``: a sort of every ``(document, term)`` pair, ~30 ms
        for 10,000 chunks), so the segments only add them after the commit.
        """
        self.abandon()
        chunks = changes.chunks
        if (
            not self.index_terms
            or self.version != changes.version - 1
            or not chunks
            or _AHEAD_CHUNKS < len(chunks) < _AHEAD_BULK
            or any(chunk.terms is not None for chunk in chunks)
        ):
            return
        job = ahead(partial(self._prepared, changes, count=len(chunks) >= _AHEAD_BULK))
        self._ahead = (changes.version, [c.key for c in chunks], len(self.tokenizer.vocab), job)

    def _prepared(self, changes: Changes, *, count: bool) -> Prepared:
        ids = self._term_ids_of(changes)
        return ids, count_terms(ids) if count and len(ids) > 1 else None

    def abandon(self) -> None:
        """Drop the term ids :meth:`prepare` started, and any term they added to the vocabulary."""
        started, self._ahead = self._ahead, None
        if started is None:
            return
        _, _, size, job = started
        job.drop()
        vocab = self.tokenizer.vocab
        if len(vocab) > size:  # terms no row uses: ids as if they were never made
            kept = sorted((t for t, i in vocab.items() if i < size), key=vocab.__getitem__)
            self.tokenizer.set_vocabulary(kept)

    def _term_ids_ahead(self, changes: Changes) -> Prepared:
        """:meth:`_term_ids_of`, from the job :meth:`prepare` started for exactly these chunks.

        Returns:
            The ids, and the frequencies they add when the job counted them (else ``None``).
        """
        started = self._ahead
        if started is not None:
            version, keys, _, job = started
            if version == changes.version and keys == [c.key for c in changes.chunks]:
                try:
                    prepared = job.result()
                except BaseException:
                    self.abandon()  # the terms a failed (or interrupted) job added go too
                    raise
                self._ahead = None
                return prepared
            self.abandon()
        return self._term_ids_of(changes), None

    def expect_change(self, chunks: int, *, kinds: bool = False) -> None:
        """A change of about ``chunks`` chunks is being staged (a bulk one starts the worker).

        ``kinds``: :meth:`kinds_ahead` comes first (a new worker loads its tokenizer after).
        """
        if self.index_terms:
            self.split.expect(chunks, kinds=kinds)

    def kinds_ahead(
        self, items: Sequence[tuple[str, str, str]], *, here: float, rest: float
    ) -> KindJob | None:
        """The content kinds of the last of ``items``, from the worker (``text/kind_split.py``)."""
        if not self.index_terms:
            return None
        return self.split.kinds.ahead(items, here=here, rest=rest)

    def tokenize_ahead(self, texts: Sequence[str]) -> None:
        """Start tokenizing the texts of a change about to be written (a bulk one, on a worker).

        :meth:`apply` then takes the ids of those texts (when the change it applies ends with
        them), so the worker tokenizes while this process writes the database.
        """
        if self.index_terms:
            self.split.ahead(texts)

    def _term_ids(self, terms: Sequence[str]) -> npt.NDArray[np.int32]:
        """Vocabulary ids of a chunk's terms; a new term gets the next id, in order."""
        if not terms:
            return np.zeros(0, dtype=np.int32)
        vocab = self.tokenizer.vocab
        distinct = dict.fromkeys(terms)  # first-seen order: new ids as one setdefault each gave
        new = set(distinct).difference(vocab)  # (a set's difference looks up the small side)
        if new:
            fresh = list(filter(new.__contains__, distinct))
            vocab.update(zip(fresh, range(len(vocab), len(vocab) + len(fresh)), strict=True))
        return np.fromiter(map(vocab.__getitem__, terms), dtype=np.int32, count=len(terms))

    def _term_ids_many(self, lists: list[Sequence[str]]) -> list[npt.NDArray[np.int32]]:
        """:meth:`_term_ids` of many chunks from one lookup of all their terms.

        New terms get their ids in the order the chunks, one after the other, first use them:
        the ids one call per chunk gives.
        """
        if len(lists) < 2:
            return [self._term_ids(terms) for terms in lists]
        counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        flat = self._term_ids(list(chain.from_iterable(lists)))
        return np.split(flat, np.cumsum(counts[:-1]))
