"""A merge's new base equals a build of the live rows by stock bm25s, bit for bit (issue 25).

The merge gathers the live rows as one concatenation (``_live_rows.py``), counts the pairs on
32-bit keys split by term ranges (``count_pairs``), compacts the vocabulary after counting and
scores through the term-frequency grid. Each mix of segments below is merged and compared with
the rows the merge folded before (each live row's terms in key order, the unused ids dropped)
indexed by stock ``bm25s``: the scores, the postings, the counts, the keys and the words.
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt
import pytest

from workspace_tools.core.backends.embedded import merge as _merge
from workspace_tools.core.backends.embedded.segments import SparseSegments
from workspace_tools.core.index import pair_counts as _pair_counts
from workspace_tools.core.index import tfc_grid as _tfc_grid
from workspace_tools.core.index.bm25_build import block_terms, count_pairs
from workspace_tools.core.index.pair_counts import count_postings
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.text.tokenizer import Tokenizer

METHODS = ["lucene", "robertson", "atire", "bm25l", "bm25+"]
VOCAB = 300


def _rows(rng: np.random.Generator, count: int, *, longest: int = 40) -> list[Any]:
    """Zipf-like rows: a few frequent ids, many rare ones, repeats inside a row."""
    return [
        np.minimum(rng.zipf(1.3, int(rng.integers(0, longest))) - 1, VOCAB - 1).astype(np.int32)
        for _ in range(count)
    ]


def _segments(method: str, mix: str) -> SparseSegments:
    rng = np.random.default_rng(len(mix))
    seg = SparseSegments(BM25Config(method=method))
    if mix == "empty":
        return seg
    if mix == "one doc":
        seg.add(5, np.asarray([3, 3, 7], dtype=np.int32))
        return seg
    if mix in ("base only", "base and recent", "removals", "replaced", "snapshot base", "all gone"):
        seg.build(list(range(0, 120, 2)), _rows(rng, 60), VOCAB)
    if mix == "snapshot base":  # a loaded snapshot keeps no row terms: read from the postings
        seg.load(dataclasses.replace(seg.base, terms=None, offsets=None))
    if mix != "base only":
        seg.add_many(list(range(200, 240)), _rows(rng, 40))
    if mix in ("removals", "snapshot base", "renumbered"):
        for key in (0, 14, 202, 239):
            seg.remove(key)
    if mix == "removals" or mix == "renumbered":  # ids only removed rows used: compacted away
        seg.add_many([300, 301], [np.asarray([VOCAB - 1, VOCAB - 2] * 3, dtype=np.int32)] * 2)
        seg.remove(300)
        seg.remove(301)
    if mix == "replaced":  # the same keys again: rows out of key order (row by row)
        seg.add(4, np.asarray([1, 2, 2, 9], dtype=np.int32))
        seg.add(210, np.asarray([], dtype=np.int32))
    if mix == "all gone":
        for key in seg.live_keys().tolist():
            seg.remove(key)
    if mix == "long rows":  # counts past 255: uint16 term frequencies
        seg.add_many([400, 401], [np.asarray([1] * 300 + [2] * 5, dtype=np.int32)] * 2)
    if mix == "long rows, small counts":  # rows past 255 terms, no count past 255: uint8
        seg.add_many([500, 501], [np.arange(VOCAB, dtype=np.int32).repeat(2)] * 2)
    return seg


MIXES = [
    "empty",
    "one doc",
    "base only",
    "recent only",
    "base and recent",
    "removals",
    "replaced",
    "snapshot base",
    "renumbered",
    "all gone",
    "long rows",
    "long rows, small counts",
]


def _folded_before(
    seg: SparseSegments, words: list[str]
) -> tuple[npt.NDArray[np.int64], list[Any], list[str]]:
    """What a merge folded before: each live row's terms in key order, unused ids dropped."""
    frozen = seg.frozen()
    keys, rows = frozen.live_row_numbers()
    terms = [frozen.terms_of_row(int(r)) for r in rows]
    flat = np.concatenate(terms) if terms else np.zeros(0, dtype=np.int32)
    used = np.unique(flat)
    remap = np.full(max(len(words), 1), -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    return keys, [remap[t] for t in terms], [words[i] for i in used.tolist()]


def _merge_job(seg: SparseSegments, vocab: dict[str, int]) -> _merge.MergeJob:
    job = _merge.MergeJob(
        rows=seg.frozen(),
        vocab=dict(vocab),
        version=1,
        generation=0,
        dense=None,
        reuse_dense=False,
        save=False,
        config={},
    )
    _merge.build(job, db=None)  # type: ignore[arg-type]  # save=False: no database
    return job


@pytest.mark.parametrize("mix", MIXES)
@pytest.mark.parametrize("method", METHODS)
def test_a_merge_gives_the_stock_bm25s_arrays_of_the_live_rows(method: str, mix: str) -> None:
    seg = _segments(method, mix)
    words = [f"w{i}" for i in range(VOCAB)]
    keys, rows, kept = _folded_before(seg, words)

    job = _merge_job(seg, {word: number for number, word in enumerate(words)})
    base = job.base
    assert base is not None
    assert job.words == kept
    np.testing.assert_array_equal(job.keys, keys)
    np.testing.assert_array_equal(base.keys, keys)
    lengths = np.asarray([len(r) for r in rows], dtype=np.int64)
    np.testing.assert_array_equal(base.lengths, lengths)
    flat = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int32)
    np.testing.assert_array_equal(base.terms, flat)
    # Term frequencies: the distinct (term, row) pairs counted, in the narrowest exact dtype.
    pairs = flat.astype(np.int64) * max(len(rows), 1) + np.repeat(np.arange(len(rows)), lengths)
    distinct, counts = np.unique(pairs, return_counts=True)
    np.testing.assert_array_equal(np.asarray(base.tf, dtype=np.int64), counts)
    assert base.tf.dtype == (np.uint16 if mix == "long rows" else np.uint8)
    assert len(base.indptr) == len(kept) + 1
    if not rows or not len(flat):
        assert len(base.docs) == 0 and len(base.scores) == 0
        return
    stock = bm25s.BM25(k1=1.35, b=0.6, method=method)
    stock.index(
        ([r.tolist() for r in rows], dict(zip(kept, range(len(kept))))), show_progress=False
    )
    np.testing.assert_array_equal(base.indptr, stock.scores["indptr"])
    np.testing.assert_array_equal(base.docs, stock.scores["indices"])
    assert base.scores.dtype == stock.scores["data"].dtype
    np.testing.assert_array_equal(base.scores, stock.scores["data"])
    if stock.nonoccurrence_array is None:
        assert job.nonoccurrence is None
    else:
        np.testing.assert_array_equal(job.nonoccurrence, stock.nonoccurrence_array)


@pytest.mark.parametrize("method", METHODS)
def test_the_grid_and_the_stock_term_frequency_function_give_the_same_scores(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seg = _segments(method, "base and recent")
    vocab = {f"w{i}": i for i in range(VOCAB)}
    looked_up = _merge_job(seg, vocab).base
    monkeypatch.setattr(_tfc_grid, "GRID_CELLS", 0)  # no grid: bm25s's function per pair
    computed = _merge_job(seg, vocab).base
    assert looked_up is not None and computed is not None
    np.testing.assert_array_equal(looked_up.scores, computed.scores)


def _unique_counts(
    flat: npt.NDArray[Any], lengths: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    docs = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    pairs = np.unique(np.stack([flat.astype(np.int64), docs]), axis=1, return_counts=True)
    (terms, rows), counts = pairs
    return terms, rows, counts


@pytest.mark.parametrize(
    ("top", "ranges", "key_dtype"),
    [
        (90, 1, np.int32),  # one range: 32-bit keys
        ((1 << 22) * 3 + 5, 4, np.int32),  # three ranges past the first (1,000 rows: 10 bits)
        ((1 << 22) * 40, 41, np.int64),  # past 4 ranges: 64-bit keys
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "uint8", "uint16"])
def test_pair_counts_split_by_term_ranges_are_the_distinct_pairs_counted(
    top: int, ranges: int, key_dtype: Any, dtype: str
) -> None:
    rng = np.random.default_rng(ranges)
    lengths = rng.integers(0, 12, 1_000)
    total = int(lengths.sum())
    # Mostly low ids, a few in every range up to ``top`` (and ranges with none at all).
    flat = np.where(
        rng.random(total) < 0.9, rng.integers(0, 50, total), rng.integers(0, top + 1, total)
    )
    flat[0] = top
    flat = flat.astype(np.int32)
    terms, docs, tf = count_pairs(flat, lengths, dtype=dtype)
    want_terms, want_docs, want_counts = _unique_counts(flat, lengths)
    assert terms.dtype == key_dtype and docs.dtype == key_dtype and tf.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(terms, want_terms)
    np.testing.assert_array_equal(docs, want_docs)
    np.testing.assert_array_equal(tf, want_counts.astype(dtype))


@pytest.mark.parametrize(
    ("top", "wide"),
    [
        (90, False),  # one range
        (4096 * 3 + 5, False),  # 2**20 rows leave 12 bits: ranges of 4,096 ids
        (4096 * 20, False),  # past 4 ranges: 64-bit keys
        (90, True),  # 64-bit keys, told so
    ],
)
@pytest.mark.parametrize("n_terms", [0, 200])
def test_postings_are_the_pair_counts_by_term(
    top: int, wide: bool, n_terms: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if wide:
        monkeypatch.setattr(_pair_counts, "_RANGES", 0)
    rng = np.random.default_rng(top % 97)
    lengths = np.zeros(1 << 20, dtype=np.int64)  # few rows hold tokens, the last one too
    lengths[rng.integers(0, 1 << 20, 800)] = rng.integers(1, 12, 800)
    lengths[-1] = 2
    total = int(lengths.sum())
    low = rng.integers(0, 50, total)
    flat = np.where(rng.random(total) < 0.9, low, rng.integers(0, top + 1, total))
    flat[0] = top
    flat = flat.astype(np.int32)
    indptr, docs, tf = count_postings(flat, lengths, n_terms=n_terms, dtype="uint8")
    terms, want_docs, want_tf = count_pairs(flat, lengths, dtype="uint8")
    assert len(indptr) == max(n_terms, top + 1) + 1 and indptr[0] == 0
    want = np.searchsorted(terms, np.arange(len(indptr)), side="left")
    np.testing.assert_array_equal(indptr, want)
    np.testing.assert_array_equal(docs, want_docs)
    np.testing.assert_array_equal(tf, want_tf)
    for block in (slice(0, 7), slice(5, 5000), slice(len(docs) - 3, len(docs) + 10)):
        np.testing.assert_array_equal(block_terms(indptr, block), terms[block])


def test_postings_of_nothing_are_empty() -> None:
    indptr, docs, tf = count_postings(
        np.zeros(0, dtype=np.int32), np.zeros(2, dtype=np.int64), n_terms=3, dtype="uint8"
    )
    assert indptr.tolist() == [0, 0, 0, 0] and len(docs) == 0 and len(tf) == 0


def test_pair_counts_keep_a_key_equal_to_the_set_aside_marker() -> None:
    # 2**10 rows use every document bit: term 2**22 - 1 in the last row makes the key
    # 0xFFFFFFFF, the marker of the tokens set aside for the next range.
    lengths = np.ones(1 << 10, dtype=np.int64)
    flat = np.zeros(1 << 10, dtype=np.int32)
    flat[-1] = (1 << 22) - 1
    flat[0] = 1 << 22  # a second range
    terms, docs, tf = count_pairs(flat, lengths, dtype="float32")
    want_terms, want_docs, want_counts = _unique_counts(flat, lengths)
    np.testing.assert_array_equal(terms, want_terms)
    np.testing.assert_array_equal(docs, want_docs)
    np.testing.assert_array_equal(tf, want_counts)


def _state(seg: SparseSegments, tokenizer: Tokenizer) -> Any:
    return SimpleNamespace(
        sparse=seg,
        tokenizer=tokenizer,
        generation=0,
        snapshot_version=-1,
        snapshot_dense_current=False,
    )


def _tokenizer(words: list[str]) -> Tokenizer:
    tokenizer = Tokenizer()
    tokenizer.set_vocabulary(words)
    return tokenizer


def test_adopt_keeps_the_vocabulary_when_no_id_changed() -> None:
    words = [f"w{i}" for i in range(VOCAB)]
    seg = _segments("lucene", "base and recent")
    seg.add_many([500], [np.arange(VOCAB, dtype=np.int32)])  # every id in use
    tokenizer = _tokenizer(words)
    vocab, generation = tokenizer.vocab, tokenizer.vocab_generation
    job = _merge_job(seg, vocab)
    job.vocab_generation = generation
    seg.add(600, np.asarray([4, 4, 8], dtype=np.int32))  # a write between freeze and adopt
    state = _state(seg, tokenizer)
    assert _merge.adopt(state, job)
    assert tokenizer.vocab is vocab and tokenizer.vocab_generation == generation  # kept
    np.testing.assert_array_equal(state.sparse.terms_of_row(state.sparse.row_of(600)), [4, 4, 8])
    assert 600 in state.sparse and len(state.sparse) == len(seg)


@pytest.mark.parametrize("change", ["unused ids", "a term added", "renumbered"])
def test_adopt_renumbers_when_ids_changed(change: str) -> None:
    words = [f"w{i}" for i in range(VOCAB)]
    seg = _segments("lucene", "base and recent")
    if change != "unused ids":
        seg.add_many([500], [np.arange(VOCAB, dtype=np.int32)])
    tokenizer = _tokenizer(words)
    job = _merge_job(seg, tokenizer.vocab)
    job.vocab_generation = tokenizer.vocab_generation
    if change == "a term added":
        tokenizer.vocab["new"] = VOCAB
        seg.add(600, np.asarray([VOCAB, 1], dtype=np.int32))
    if change == "renumbered":
        tokenizer.set_vocabulary(words)
    generation = tokenizer.vocab_generation
    state = _state(seg, tokenizer)
    assert _merge.adopt(state, job)
    assert tokenizer.vocab_generation == generation + 1
    expected = [*job.words, "new"] if change == "a term added" else job.words
    assert list(tokenizer.vocab) == expected
    assert tokenizer.vocab == {word: number for number, word in enumerate(expected)}
    if change == "a term added":
        row = state.sparse.terms_of_row(state.sparse.row_of(600))
        assert [expected[t] for t in row.tolist()] == ["new", "w1"]


def test_count_pairs_takes_the_64_bit_path_when_told_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_pair_counts, "_RANGES", 0)
    lengths = np.asarray([3, 0, 2], dtype=np.int64)
    flat = np.asarray([5, 1, 5, 1, 1], dtype=np.int64)
    terms, docs, tf = count_pairs(flat, lengths, dtype="float32", in_place=True)
    assert terms.dtype == np.int64
    assert (terms.tolist(), docs.tolist(), tf.tolist()) == ([1, 1, 5], [0, 2, 0], [1, 2, 2])
