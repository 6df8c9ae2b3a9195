"""embedding_groups: the forward-pass groups a local sync forms, computed on the driver."""

from __future__ import annotations

import numpy as np

from workspace_tools.core.distributed.indexing import embedding_groups


def local_groups(texts: dict[str, str], *, call_size: int, group_size: int) -> list[list[str]]:
    """What embed_texts + sentence-transformers' encode do, written out independently."""
    hashes = sorted(texts, key=lambda h: -len(texts[h]))
    out = []
    for start in range(0, len(hashes), call_size):
        call = hashes[start : start + call_size]
        order = np.argsort([-len(texts[h]) for h in call])
        ranked = [call[int(i)] for i in order]
        out += [ranked[i : i + group_size] for i in range(0, len(ranked), group_size)]
    return out


def test_groups_are_the_passes_of_a_local_sync() -> None:
    texts = {f"h{n}": "x" * (n * 7 % 23 + 1) for n in range(50)}  # many equal lengths (ties)

    groups = embedding_groups(texts, call_size=20, group_size=4)

    assert [[h for h, _ in g] for g in groups] == local_groups(texts, call_size=20, group_size=4)
    assert sorted(h for g in groups for h, _ in g) == sorted(texts)
    assert [len(g) for g in groups] == [4] * 5 + [4] * 5 + [4, 4, 2]
    assert all(text == texts[h] for g in groups for h, text in g)


def test_longest_texts_come_first_and_no_group_spans_two_calls() -> None:
    texts = {"a": "aa", "b": "bbbbbb", "c": "c", "d": "dddd"}

    groups = embedding_groups(texts, call_size=3, group_size=2)

    assert [[h for h, _ in g] for g in groups] == [["b", "d"], ["a"], ["c"]]
