"""``source_id`` conditions answered from a sorted column of source ids, not row by row.

:func:`split_source_conditions` takes the ``source_id``-only parts out of a filter;
:class:`SourceColumn` answers them by bisection, as the compiled predicate would.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["SourceColumn", "split_source_conditions"]

SOURCE_KEY: Final = "source_id"
_RANGE_OPS: Final = frozenset({"$gt", "$gte", "$lt", "$lte"})
_OPS: Final = frozenset({"$eq", "$ne", "$in", "$nin", "$exists"} | _RANGE_OPS)

Selection = npt.NDArray[np.bool_]
"""One flag per distinct source id of a :class:`SourceColumn`, in sorted order."""


class SourceColumn:
    """The source id of every row, as positions in the sorted list of distinct ids."""

    __slots__ = ("codes", "sources")

    def __init__(self, row_sources: Sequence[str | None]) -> None:
        """Index ``row_sources`` (one per row; ``None`` for a row without a source: no match)."""
        self.sources: list[str] = sorted({s for s in row_sources if s is not None})
        position = {source: i for i, source in enumerate(self.sources)}
        missing = len(self.sources)  # one past the end: a row that never matches
        self.codes: npt.NDArray[np.int64] = np.fromiter(
            (missing if s is None else position[s] for s in row_sources),
            dtype=np.int64,
            count=len(row_sources),
        )

    def rows(self, selection: Selection) -> npt.NDArray[np.bool_]:
        """The rows whose source is selected."""
        return np.append(selection, False)[self.codes]

    def select(self, conditions: Sequence[Mapping[str, Any]]) -> Selection:
        """The sources every one of ``conditions`` holds for (each a ``source_id``-only filter)."""
        selected = np.ones(len(self.sources), dtype=bool)
        for condition in conditions:
            selected &= self._node(condition)
        return selected

    def _node(self, node: Mapping[str, Any]) -> Selection:
        selected = np.ones(len(self.sources), dtype=bool)
        for key, value in node.items():
            if key == "$and":
                selected &= self.select(value)
            elif key == "$or":
                either = np.zeros(len(self.sources), dtype=bool)
                for item in value:
                    either |= self._node(item)
                selected &= either
            elif _is_operators(value):
                for op, operand in value.items():
                    selected &= self._operator(op, operand)
            else:
                selected &= self._equal(value)
        return selected

    def _equal(self, *operands: Any) -> Selection:
        """The sources equal to one of ``operands`` (only strings equal a source id)."""
        out = np.zeros(len(self.sources), dtype=bool)
        sources = self.sources
        for operand in operands:
            if isinstance(operand, str):
                at = bisect.bisect_left(sources, operand)
                if at < len(sources) and sources[at] == operand:
                    out[at] = True
        return out

    def _operator(self, op: str, operand: Any) -> Selection:
        count = len(self.sources)
        if op == "$eq":
            return self._equal(operand)
        if op == "$ne":
            return ~self._equal(operand)
        if op in {"$in", "$nin"}:
            members = self._equal(*operand)
            return members if op == "$in" else ~members
        if op == "$exists":
            return np.full(count, bool(operand))
        out = np.zeros(count, dtype=bool)
        if not isinstance(operand, str):  # a string never orders against another type
            return out
        if op == "$gt":
            out[bisect.bisect_right(self.sources, operand) :] = True
        elif op == "$gte":
            out[bisect.bisect_left(self.sources, operand) :] = True
        elif op == "$lt":
            out[: bisect.bisect_left(self.sources, operand)] = True
        else:  # $lte
            out[: bisect.bisect_right(self.sources, operand)] = True
        return out


def _is_operators(value: Any) -> bool:
    return isinstance(value, Mapping) and any(str(op).startswith("$") for op in value)


def _source_only(node: Any) -> bool:
    """Whether ``node`` (a checked filter) constrains ``source_id`` alone, with known operators."""
    if not isinstance(node, Mapping) or not node:
        return False
    for key, value in node.items():
        if key in {"$and", "$or"}:
            if not all(_source_only(item) for item in value):
                return False
        elif key != SOURCE_KEY or (_is_operators(value) and not set(value) <= _OPS):
            return False
    return True


def split_source_conditions(
    conditions: Mapping[str, Any],
) -> tuple[list[Mapping[str, Any]], dict[str, Any] | None]:
    """The top-level (or top ``$and``) parts of a filter on ``source_id`` alone, and the rest."""
    parts: list[Mapping[str, Any]] = []
    rest: dict[str, Any] = {}
    others: list[Any] = []
    for key, value in conditions.items():
        if key == "$and":
            for item in value:
                (parts if _source_only(item) else others).append(item)
        elif _source_only({key: value}):
            parts.append({key: value})
        else:
            rest[key] = value
    if others:
        rest["$and"] = others
    return parts, (rest or None)
