"""A batch's document frequencies equal one ``np.unique`` per document, as the array grows."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from workspace_tools.core.index._document_counts import count_documents, grow_frequencies


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
