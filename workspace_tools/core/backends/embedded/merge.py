"""Merging the BM25 segments into a new base, without holding up writes.

Three steps, only the first and last under the backend's lock: :func:`freeze` copies the state,
:func:`build` makes the new base (vocabulary compacted) and snapshot, :func:`adopt` swaps it in
and replays what changed since. After a bulk write it first waits for writes to stop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.embedded import segments
from workspace_tools.core.backends.embedded.base_segment import build_base_compacted
from workspace_tools.core.backends.embedded.live_rows import live_flat
from workspace_tools.core.backends.embedded.segments import BaseArrays, SparseSegments
from workspace_tools.core.backends.embedded.snapshot import read_pointer, snapshot_draft
from workspace_tools.core.background import EXITING

if TYPE_CHECKING:
    from workspace_tools.core.backends.embedded.dense import DenseIndex, FrozenDense
    from workspace_tools.core.store.database import IndexDatabase
    from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = ["MergeJob", "adopt", "build", "dense_reusable", "freeze", "wait_for_quiet"]

VACUUM_PAGES = 2048
"""Freed database pages a background merge gives back to the file system after its snapshot."""
DENSE_LAG = 3.0
"""Merge thresholds of rows the saved FAISS file may lag behind before a merge writes it again."""

BULK_ROWS = 1_000
"""Chunk rows (written or deleted) from which a write is a bulk write: its merge is deferred."""
QUIET_SECONDS = 0.5
"""A deferred merge starts once no change has come for this long..."""
QUIET_MOST = 5.0
"""...or for one and a half times the gap between the last two changes, at most this long..."""
DEFER_LIMIT = 30.0
"""...or once it has waited this long (writes that never stop still get merged)."""
_POLL: Final = 0.05


def wait_for_quiet(hurry: threading.Event, last_apply: Callable[[], tuple[float, float]]) -> None:
    """Block until the writes stop (see :data:`QUIET_SECONDS`), ``hurry`` is set, or exit."""
    import filelock  # noqa: F401  (imported here, where the time is free)

    deadline = time.monotonic() + DEFER_LIMIT
    while not (hurry.is_set() or EXITING.is_set()):
        last, gap = last_apply()
        now = time.monotonic()
        quiet = max(QUIET_SECONDS, min(1.5 * gap, QUIET_MOST))
        if now >= deadline or now >= last + quiet:
            return
        hurry.wait(min(_POLL, last + quiet - now))


class MergeState(Protocol):
    """What a merge reads and replaces of the embedded backend (``backend.py``)."""

    db: IndexDatabase
    tokenizer: Tokenizer
    sparse: SparseSegments
    dense: DenseIndex | None
    version: int
    snapshot_version: int
    snapshot_dense_current: bool
    generation: int

    def dense_current(self) -> bool: ...

    def __len__(self) -> int: ...


@dataclass(slots=True)
class MergeJob:
    """One merge: what was frozen, then what was built."""

    rows: SparseSegments
    """A frozen copy of the segments (see :meth:`SparseSegments.frozen`)."""
    vocab: dict[str, int]
    """The tokenizer's vocabulary at the freeze (numbers the frozen rows' terms)."""
    version: int
    generation: int
    dense: DenseIndex | FrozenDense | None
    reuse_dense: bool
    """Link the previous snapshot's FAISS file instead of writing :attr:`dense`."""
    save: bool
    config: dict[str, Any]
    keys: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    words: list[str] = field(default_factory=list)
    base: BaseArrays | None = None
    nonoccurrence: Any = None
    fresh: SparseSegments | None = None
    """The new segments (built on :attr:`base`), which :func:`adopt` brings up to date."""
    saved: bool = False
    vocab_generation: int = -1
    """The tokenizer's :attr:`~Tokenizer.vocab_generation` at the freeze."""


def freeze(state: MergeState, *, save: bool, config: dict[str, Any], background: bool) -> MergeJob:
    """Step 1 (workspace lock held): what the merge will fold.

    With ``background``, the saved FAISS file is reused while it lags little, else serialized here.
    """
    save = save and state.version >= 0
    dense: DenseIndex | FrozenDense | None = None
    reuse = False
    if save and state.dense_current():
        assert state.dense is not None
        if not background:
            dense = state.dense  # its graph (a flat index saves nothing: the database has it)
        else:
            reuse = state.dense.kind == "hnsw" and dense_reusable(state, config)
            dense = None if reuse else state.dense.frozen()
    elif save and state.dense is None and config.get("embedder") is not None:
        # FAISS not loaded here: link the previous graph while it lags little, else save none
        reuse = dense_reusable(state, config)
    return MergeJob(
        rows=state.sparse.frozen(),
        vocab=dict(state.tokenizer.vocab),
        vocab_generation=state.tokenizer.vocab_generation,
        version=state.version,
        generation=state.generation,
        dense=dense,
        reuse_dense=reuse,
        save=save,
        config=config,
    )


def build(job: MergeJob, db: IndexDatabase) -> None:
    """Step 2 (no lock): the new base and, with ``save``, the snapshot."""
    frozen = job.rows
    keys, flat, lengths = live_flat(frozen)  # in key order
    words = [""] * len(job.vocab)
    for word, number in job.vocab.items():
        words[number] = word
    if not job.save:
        _build_base(job, keys, flat, lengths, words, ready=None)
        return
    # The snapshot's files are written as the base's arrays are made
    with snapshot_draft(db, version=job.version, with_dense=job.dense is not None) as draft:
        _build_base(job, keys, flat, lengths, words, ready=draft.add if draft else None)
        if draft is not None:
            draft.finish(
                base=job.base,
                vocab=job.words,
                dense=job.dense,
                config=job.config,
                reuse_dense=job.reuse_dense,
            )
    job.saved = True
    if not db.read_only:
        db.compact(pages=VACUUM_PAGES)  # the pages the merged deletions freed


def _build_base(
    job: MergeJob,
    keys: npt.NDArray[np.int64],
    flat: npt.NDArray[np.int32],
    lengths: npt.NDArray[np.int64],
    words: list[str],
    *,
    ready: Callable[[str, npt.NDArray[Any]], None] | None,
) -> None:
    frozen = job.rows
    job.base, job.nonoccurrence, used = build_base_compacted(
        frozen.model, keys, flat, lengths, len(words), ready=ready
    )
    # The ids still used, renumbered in order (often all of them: then the same list).
    job.words = words if len(used) == len(words) else [words[i] for i in used.tolist()]
    job.keys = keys
    job.fresh = SparseSegments(frozen.config)
    job.fresh.load_built(job.base, job.nonoccurrence)  # here, not in adopt(): that holds the lock


def adopt(state: MergeState, job: MergeJob) -> bool:
    """Step 3 (workspace lock held): swap the new base in and replay later changes on it.

    Returns:
        ``False`` when the state was reloaded since the freeze (the merge is dropped).
    """
    if job.fresh is None or state.generation != job.generation:
        return False
    current, fresh = state.sparse, job.fresh
    assert fresh is not None
    tokenizer = state.tokenizer
    # Every id still used and no term added since the freeze: the ids (and caches) stay
    same_ids = (
        len(job.words) == len(job.vocab) == len(tokenizer.vocab)
        and tokenizer.vocab_generation == job.vocab_generation
    )
    vocab = tokenizer.vocab if same_ids else {w: n for n, w in enumerate(job.words)}
    live = current.live_keys()
    removed = np.setdiff1d(job.keys, live, assume_unique=True)
    added = np.setdiff1d(live, job.keys, assume_unique=True)
    for key in removed.tolist():
        fresh.remove(key)
    if len(added):
        replayed = []
        if same_ids:
            for key in added.tolist():
                row = current.row_of(key)
                assert row is not None
                replayed.append(current.terms_of_row(row))
        else:
            words = [""] * len(tokenizer.vocab)
            for word, number in tokenizer.vocab.items():
                words[number] = word
            setdefault = vocab.setdefault
            for key in added.tolist():
                row = current.row_of(key)
                assert row is not None
                old = current.terms_of_row(row).tolist()
                ids = [setdefault(words[t], len(vocab)) for t in old]
                replayed.append(np.asarray(ids, np.int32))
        fresh.add_many(added.tolist(), replayed)
    if not same_ids:
        tokenizer.set_vocabulary(list(vocab))
    state.sparse = fresh
    if job.saved:
        state.snapshot_version = job.version
        state.snapshot_dense_current = job.dense is not None or not job.config.get("embedder")
    state.generation += 1
    return True


def dense_reusable(state: MergeState, config: dict[str, Any]) -> bool:
    """The previous snapshot's FAISS file may be linked: same embedder, lagging little."""
    lag = dense_lag(state, config)
    return lag is not None and lag <= DENSE_LAG * merge_threshold(state)


def merge_threshold(state: MergeState) -> float:
    """Changes past which the segments merge (``SparseSegments.wants_merge``)."""
    return max(segments.MERGE_MINIMUM, segments.MERGE_FRACTION * len(state))


def dense_lag(state: MergeState, config: dict[str, Any]) -> int | None:
    """Chunk rows changed since the last snapshot's FAISS file (``None``: no usable file)."""
    info = read_pointer(state.db)
    embedder = config.get("embedder")
    if info is None or embedder is None or info.config.get("embedder") != embedder:
        return None
    if not info.has_dense:  # flat: filled from the database when loaded, so never behind
        return 0
    return _rows_changed_since(state.db, info.dense_version)


def _rows_changed_since(db: IndexDatabase, version: int) -> int:
    """Chunk rows written and deletions logged after ``version`` (what a catch-up applies)."""
    return db.count("chunks", since=version) + db.count("removed", since=version)
