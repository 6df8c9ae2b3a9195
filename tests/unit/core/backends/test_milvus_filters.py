"""Operator filters as Milvus expressions (pure translation: no Milvus needed)."""

from __future__ import annotations

from typing import Any

import pytest

from workspace_tools.core.backends._milvus_filters import milvus_expression
from workspace_tools.core.errors import InvalidInputError

CASES: list[tuple[dict[str, Any], str]] = [
    ({"lang": "en"}, 'metadata["lang"] == "en" or json_contains(metadata["lang"], "en")'),
    ({"n": {"$gte": 2, "$lt": 5.5}}, '(metadata["n"] >= 2) and (metadata["n"] < 5.5)'),
    (
        {"lang": {"$ne": "en"}},
        '(not exists metadata["lang"]) or '
        '(not (metadata["lang"] == "en" or json_contains(metadata["lang"], "en")))',
    ),
    (
        {"lang": {"$in": ["en", 'qu"o']}},
        'metadata["lang"] == "en" or metadata["lang"] == "qu\\"o" or '
        'json_contains_any(metadata["lang"], ["en", "qu\\"o"])',
    ),
    ({"lang": {"$in": []}}, "key < 0"),
    ({"lang": {"$nin": []}}, "key >= 0"),
    ({"draft": {"$exists": False}}, 'not (exists metadata["draft"])'),
    ({"flag": True}, 'metadata["flag"] == true or json_contains(metadata["flag"], true)'),
    ({"source_id": {"$ne": "a.md"}}, 'source_id != "a.md"'),
    ({"source_id": {"$nin": ["a.md"]}}, '(not key >= 0) or (not (source_id in ["a.md"]))'),
    (
        {"$or": [{"a": 1}, {"b": "ü"}]},
        '(metadata["a"] == 1 or json_contains(metadata["a"], 1)) or '
        '(metadata["b"] == "ü" or json_contains(metadata["b"], "ü"))',
    ),
    ({}, "key >= 0"),
]


@pytest.mark.parametrize(("conditions", "expected"), CASES, ids=[str(c) for c, _ in CASES])
def test_translation(conditions: dict[str, Any], expected: str) -> None:
    assert milvus_expression(conditions) == expected


@pytest.mark.parametrize(
    ("conditions", "message"),
    [
        ({"lang": None}, r"\$eq on 'lang' with value None: Milvus cannot compare with null"),
        ({"tags": ["a", "b"]}, r"\$eq on 'tags' with value \['a', 'b'\]: Milvus compares only"),
        ({"flag": {"$gt": True}}, r"\$gt on 'flag' with value True: booleans cannot be ordered"),
        ({"x": {"$lt": float("nan")}}, r"\$lt on 'x' with value nan: the number is not finite"),
        ({"x": {"$eq": {"a": 1}}}, r"\$eq on 'x'.*Milvus compares only numbers"),
    ],
)
def test_what_milvus_cannot_express_is_refused(conditions: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message) as caught:
        milvus_expression(conditions)
    assert "or search with the embedded backend" in str(caught.value)


def test_malformed_filters_are_refused_before_translation() -> None:
    with pytest.raises(InvalidInputError, match=r"Unknown filter operator '\$like'"):
        milvus_expression({"a": {"$like": "x%"}})
