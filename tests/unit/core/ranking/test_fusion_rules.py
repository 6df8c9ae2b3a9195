"""The selectable hybrid fusion rules: normalisation, missing sides, per-query weights, names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.ranking.fusion import (
    FUSION_RULES,
    fusion_rule,
    minmax_fusion,
    spread_fusion,
    zscore_fusion,
)
from workspace_tools.core.workspace import Workspace

BM25 = [(1, 10.0), (2, 6.0), (3, 2.0)]
VECTOR = [(4, 0.9), (2, 0.8), (5, 0.7)]


def _order(hits: list) -> list[int]:
    return [h.key for h in hits]


def test_minmax_normalises_both_sides() -> None:
    hits = {h.key: h.score for h in minmax_fusion(BM25, VECTOR, vector_weight=0.5)}
    assert hits[1] == pytest.approx(0.5)  # best BM25, absent from vectors
    assert hits[4] == pytest.approx(0.5)  # best vector, absent from BM25
    assert hits[2] == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)
    assert hits[3] == pytest.approx(0.0)


def test_zscore_gives_a_missing_side_its_pool_floor() -> None:
    hits = {h.key: h for h in zscore_fusion(BM25, VECTOR, vector_weight=0.5)}
    # key 1 has no vector: it gets the vector pool's lowest standard score, not 0 (the mean).
    low_vec = -1.224744871391589  # z of 0.7 in (0.9, 0.8, 0.7)
    z_bm25_1 = 1.2247448713915887  # z of 10 in (10, 6, 2)
    assert hits[1].score == pytest.approx(0.5 * low_vec + 0.5 * z_bm25_1)
    assert hits[1].vector is None and hits[1].bm25 == 10.0
    assert _order(zscore_fusion(BM25, VECTOR, vector_weight=0.5))[0] == 2  # good on both sides


def test_spread_weights_the_side_with_the_clearer_winner() -> None:
    # BM25 has one clear winner (key 1); the vector side is flat but for one outlier below.
    peaked = [(1, 30.0), (2, 5.0), (3, 4.0), (6, 3.0)]
    flat = [(4, 0.51), (2, 0.50), (5, 0.50), (7, 0.10)]
    equal = zscore_fusion(peaked, flat, vector_weight=0.5)
    adaptive = spread_fusion(peaked, flat, vector_weight=0.5)
    assert _order(adaptive)[0] == 1
    assert adaptive[0].score > equal[0].score  # BM25's weight went up for this query


def test_every_rule_is_selectable_by_name(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), autosave=False)
    ws.index_many([("a.md", "river water report"), ("b.md", "mountain snow report")])
    for name in FUSION_RULES:
        assert fusion_rule(name) is FUSION_RULES[name]
        ws.fusion = name
        assert ws.search("river report", mode="hybrid")[0].source_id == "a.md"


def test_unknown_fusion_rule_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"Unknown fusion rule 'max'. Use one of: weighted, rrf"):
        fusion_rule("max")
    with pytest.raises(InvalidInputError, match=r"fusion must be one of weighted, rrf, minmax"):
        Workspace(tmp_path, embedder=FakeEmbedder(), fusion="max")
