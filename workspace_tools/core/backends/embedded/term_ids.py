"""The BM25 term ids of chunks: their texts tokenized with the workspace tokenizer.

The database stores no terms: every chunk applied is tokenized from its text, once
:class:`TokenizerCheck` confirms the tokenizer is the one the index records. Bulk changes are
tokenized on two cores (:class:`SplitTokenizer`, the same ids).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.embedded.tokenizing import Job, SplitTokenizer, worker_allowed
from workspace_tools.core.backends.follow import TokenizerCheck
from workspace_tools.core.store.database import Changes
from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = ["TermIds"]


class TermIds:
    """Term ids of the chunks of a change (the backend's lock serialises every call).

    Args:
        tokenizer: The workspace tokenizer (its vocabulary numbers the terms).
        check: Refuses an index tokenized with other settings.
        index_terms: ``False`` for a workspace without BM25: chunks get no ids.
        token_worker: Tokenize bulk changes in a worker process (``None``: see ``worker_allowed``).
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        *,
        check: TokenizerCheck,
        index_terms: bool = True,
        token_worker: bool | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.check = check
        self.index_terms = index_terms
        self.split = SplitTokenizer(tokenizer, enabled=worker_allowed(option=token_worker))
        """Term ids of bulk changes, part of them from a worker process."""

    def of(self, changes: Changes) -> list[npt.NDArray[np.int32]]:
        """The term ids of each chunk of ``changes``, in order."""
        chunks = changes.chunks
        if not self.index_terms:
            return [np.zeros(0, dtype=np.int32) for _ in chunks]
        self.check(changes.settings)
        return self.split.term_ids([chunk.text for chunk in chunks])

    def start(self, changes: Changes) -> Job | None:
        """Hand a bulk change's texts to the worker (``None``: tokenize them with :meth:`of`)."""
        if not self.index_terms:
            return None
        self.check(changes.settings)
        return self.split.start([chunk.text for chunk in changes.chunks])

    def finish(self, job: Job) -> list[npt.NDArray[np.int32]]:
        """The term ids of a change :meth:`start` handed over, in order."""
        return self.split.finish(job)

    def close(self) -> None:
        """Stop the tokenizing worker, if one runs (a later bulk change starts another)."""
        self.split.close()
