"""Document frequencies of a batch (``backends/embedded/document_counts.py``).

Counted apart (``count_terms``) then added (``add_counts``), the array must be the one counting
in place gives, and the one a ``np.unique`` per document gives.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from workspace_tools.core.backends.embedded.document_counts import (
    add_counts,
    count_documents,
    count_terms,
    grow_frequencies,
)


def _reference(df: np.ndarray, terms: list[np.ndarray]) -> tuple[np.ndarray, int]:
    out = df.copy()
    for ids in terms:  # one document after the other, as one-document adds grow it
        if len(ids):
            out = grow_frequencies(out, [int(ids.max())])
            out[np.unique(ids)] += 1
    return out, sum(len(ids) for ids in terms)


@pytest.mark.parametrize("seed", range(40))
def test_counted_apart_equals_counted_in_place_and_one_by_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    top = int(rng.choice([3, 50, 5_000, 200_000]))  # few pairs among many ids, and many
    terms = [
        rng.integers(0, top, int(rng.integers(0, 40))).astype(np.int32)
        for _ in range(int(rng.integers(2, 60)))
    ]
    df = rng.integers(0, 4, int(rng.integers(0, 2 * top))).astype(np.int64)
    expected, total = _reference(df, terms)
    in_place, in_place_total = count_documents(df.copy(), terms)
    counted = count_terms(terms)
    apart = add_counts(df.copy(), counted)
    assert in_place.tolist() == expected.tolist()
    assert apart.tolist() == expected.tolist()
    assert in_place_total == counted.total == total


def test_the_two_forms_of_a_count_give_the_same_frequencies() -> None:
    few = [np.array([90_000, 3, 3], np.int32), np.array([7], np.int32)]  # 3 pairs, 90k ids
    many = [np.array([0, 1, 2, 1], np.int32), np.array([2, 3], np.int32)]
    few_counts, many_counts = count_terms(few), count_terms(many)
    assert few_counts.per_term is None and few_counts.distinct is not None
    assert many_counts.per_term is not None and many_counts.distinct is None
    assert many_counts.per_term.tolist() == [1, 1, 2, 1]
    grown = add_counts(np.zeros(4, np.int64), few_counts)
    assert len(grown) == 90_001
    assert grown[[3, 7, 90_000]].tolist() == [1, 1, 1] and int(grown.sum()) == 3


def test_documents_without_terms_count_nothing() -> None:
    counted = count_terms([np.zeros(0, np.int32), np.zeros(0, np.int32)])
    assert (counted.total, counted.highest) == (0, [])
    df = np.array([1, 2], np.int64)
    assert add_counts(df, counted).tolist() == [1, 2]


def _expected(
    df: npt.NDArray[np.int64], rows: list[npt.NDArray[np.int32]]
) -> npt.NDArray[np.int64]:
    want = df.copy()
    for row in rows:  # one document at a time, as the frequencies grew before
        if len(row):
            want = grow_frequencies(want, [int(row.max())])
            want[np.unique(row)] += 1
    return want


@pytest.mark.parametrize(
    ("documents", "vocabulary", "start"),
    [
        (1, 40, 64),  # one document: its terms only
        (3, 500, 16),  # a few documents, the array doubling
        (400, 300, 4096),  # many documents, no growth
        (2_000, 5_000, 100),  # growth to the highest id + 1
        (1 << 17, 1 << 16, 8),  # 17 + 17 bits: 64-bit keys
    ],
)
def test_a_batch_counts_each_document_once_per_term(
    documents: int, vocabulary: int, start: int
) -> None:
    rng = np.random.default_rng(documents)
    rows = [
        rng.integers(0, vocabulary, int(rng.integers(0, 30) if documents < 10_000 else 0)).astype(
            np.int32
        )
        for _ in range(documents)
    ]
    rows[-1] = np.asarray([vocabulary - 1, 0, 0], dtype=np.int32)
    rows[0] = np.asarray([], dtype=np.int32)
    df = np.zeros(start, dtype=np.int64)
    df[: min(start, 5)] = 2  # earlier documents
    want = _expected(df, rows)
    got, total = count_documents(df.copy(), rows)
    assert total == sum(len(r) for r in rows)
    assert len(got) == len(want)
    np.testing.assert_array_equal(got, want)


def test_an_empty_batch_changes_nothing() -> None:
    df = np.arange(5, dtype=np.int64)
    got, total = count_documents(df, [np.zeros(0, dtype=np.int32)] * 3)
    assert got is df and total == 0 and df.tolist() == [0, 1, 2, 3, 4]
