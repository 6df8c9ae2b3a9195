"""Metadata filters with MongoDB-style operators, as Mastra's vector stores accept them.

A filter maps metadata keys (``source_id`` is the chunk's source) to a value (equality) or to
operators::

    {"year": {"$gte": 2020, "$lt": 2024}, "lang": {"$in": ["en", "de"]}}
    {"$or": [{"team": "docs"}, {"draft": {"$exists": False}}]}

Operators: ``$eq``, ``$ne``, ``$in``, ``$nin``, ``$gt``, ``$gte``, ``$lt``, ``$lte``, ``$exists``,
``$and``, ``$or``. A scalar equals a list value holding it; ``$ne``/``$nin`` hold for a missing
key, comparisons never do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import InvalidInputError

__all__ = [
    "FIELD_OPERATORS",
    "LOGICAL_OPERATORS",
    "MAX_FILTER_DEPTH",
    "MAX_FILTER_VALUES",
    "Filter",
    "compile_filter",
    "filter_shape",
    "rows_holding",
]

_MISSING: Final = object()

MAX_FILTER_DEPTH: Final = 32
"""Deepest nesting of ``$and``/``$or`` a filter may use."""
MAX_FILTER_VALUES: Final = 1_000_000
"""Most conditions plus ``$in``/``$nin`` values one filter may hold."""

Predicate = Callable[[Callable[[str], Any]], bool]
"""Takes a lookup (key -> value, or the missing marker) and says whether the filter holds."""


def _compare(op: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def check(value: Any, operand: Any) -> bool:
        if value is _MISSING or value is None:
            return False
        try:
            return bool(op(value, operand))
        except TypeError:
            return False

    return check


class _Members:
    """The values of an ``$in``/``$nin`` list: hashable ones in a set, the rest in a list."""

    __slots__ = ("_hashable", "_other")

    def __init__(self, values: Sequence[Any]) -> None:
        self._hashable: set[Any] = set()
        self._other: list[Any] = []
        for value in values:
            try:
                self._hashable.add(value)
            except TypeError:
                self._other.append(value)

    def __contains__(self, value: object) -> bool:
        try:
            if value in self._hashable:
                return True
        except TypeError:
            pass
        return bool(self._other) and value in self._other


def _member(value: Any, operand: Any) -> bool:
    if isinstance(value, list):
        return any(v in operand for v in value)
    return value is not _MISSING and value in operand


def _equal(value: Any, operand: Any) -> bool:
    """Equality; on a list value, also a scalar operand equal to one of its elements."""
    if value is _MISSING:
        return False
    if value == operand:
        return True
    return isinstance(value, list) and not isinstance(operand, list) and operand in value


FIELD_OPERATORS: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "$eq": _equal,
    "$ne": lambda value, operand: not _equal(value, operand),
    "$in": _member,
    "$nin": lambda value, operand: not _member(value, operand),
    "$gt": _compare(lambda a, b: a > b),
    "$gte": _compare(lambda a, b: a >= b),
    "$lt": _compare(lambda a, b: a < b),
    "$lte": _compare(lambda a, b: a <= b),
    "$exists": lambda value, operand: (value is not _MISSING) == bool(operand),
}
"""Operators on one metadata value."""
LOGICAL_OPERATORS: Final = ("$and", "$or")
"""Operators that combine a list of whole filters."""


def compile_filter(conditions: Any) -> Predicate:
    """Check ``conditions`` once and return a predicate over one chunk's metadata lookup.

    Raises:
        InvalidInputError: a malformed filter, an unknown operator, or over the limits.
    """
    filter_shape(conditions)
    return _compile(conditions)


@dataclass(frozen=True, slots=True)
class Filter:
    """A filter checked and compiled once (per search): its conditions and their predicate."""

    conditions: Mapping[str, Any]
    """As given (a backend that translates filters, such as Milvus, reads these)."""
    holds: Predicate
    """The compiled predicate (see :func:`compile_filter`)."""

    @classmethod
    def of(cls, conditions: Mapping[str, Any]) -> Filter:
        """Check and compile ``conditions`` (raises as :func:`compile_filter` does)."""
        return cls(conditions, compile_filter(conditions))


def filter_shape(conditions: Any) -> tuple[int, int]:
    """The ``(depth, values)`` of a filter, checked against the limits without recursion.

    Raises:
        InvalidInputError: over :data:`MAX_FILTER_DEPTH` or :data:`MAX_FILTER_VALUES`.
    """
    deepest, values = 0, 0
    pending: list[tuple[Any, int]] = [(conditions, 1)]
    while pending:
        node, depth = pending.pop()
        if depth > MAX_FILTER_DEPTH:
            msg = (
                f"filter nests $and/$or more than {MAX_FILTER_DEPTH} levels deep; the limit is "
                f"{MAX_FILTER_DEPTH}. Flatten it: one $and/$or takes a list of any length."
            )
            raise InvalidInputError(msg)
        deepest = max(deepest, depth)
        if not isinstance(node, Mapping):
            continue
        for key, value in node.items():
            values += 1
            if key in LOGICAL_OPERATORS and isinstance(value, list | tuple):
                pending.extend((item, depth + 1) for item in value)
            elif isinstance(value, Mapping):
                values += sum(len(v) if isinstance(v, list | tuple) else 1 for v in value.values())
            elif isinstance(value, list | tuple):
                values += len(value)
        if values > MAX_FILTER_VALUES:
            msg = (
                f"filter holds more than {MAX_FILTER_VALUES} conditions and values; the limit "
                f"is {MAX_FILTER_VALUES}. Filter on a coarser metadata key instead."
            )
            raise InvalidInputError(msg)
    return deepest, values


def _compile(conditions: Any) -> Predicate:
    if not isinstance(conditions, Mapping):
        kind = type(conditions).__name__
        msg = f"filter must be a mapping of metadata key to value or operators, got {kind}."
        raise InvalidInputError(msg)
    parts = [_compile_entry(key, value) for key, value in conditions.items()]
    return lambda lookup: all(part(lookup) for part in parts)


def missing() -> object:
    """The marker a lookup returns for a key the metadata does not have."""
    return _MISSING


def _compile_entry(key: Any, value: Any) -> Predicate:
    if not isinstance(key, str):
        msg = f"filter keys must be strings, got {key!r}."
        raise InvalidInputError(msg)
    if key.startswith("$"):
        if key not in LOGICAL_OPERATORS:
            raise _unknown(key, top_level=True)
        if not isinstance(value, Sequence) or isinstance(value, str) or not value:
            msg = f"{key} takes a non-empty list of filters, got {value!r}."
            raise InvalidInputError(msg)
        subs = [_compile(item) for item in value]
        if key == "$and":
            return lambda lookup: all(sub(lookup) for sub in subs)
        return lambda lookup: any(sub(lookup) for sub in subs)
    if isinstance(value, Mapping) and any(str(op).startswith("$") for op in value):
        checks = [_compile_operator(key, str(op), operand) for op, operand in value.items()]
        return lambda lookup: all(check(lookup(key)) for check in checks)
    return lambda lookup: FIELD_OPERATORS["$eq"](lookup(key), value)


def _compile_operator(key: str, op: str, operand: Any) -> Callable[[Any], bool]:
    check = FIELD_OPERATORS.get(op)
    if check is None:
        raise _unknown(op, top_level=False, key=key)
    if op in {"$in", "$nin"}:
        if not isinstance(operand, Sequence) or isinstance(operand, str):
            msg = f"{op} on {key!r} takes a list of values, got {operand!r}."
            raise InvalidInputError(msg)
        operand = _Members(operand)
    return lambda value: check(value, operand)


def _unknown(op: str, *, top_level: bool, key: str | None = None) -> InvalidInputError:
    where = "at the top level of the filter" if top_level else f"on {key!r}"
    known = ", ".join([*FIELD_OPERATORS, *LOGICAL_OPERATORS])
    msg = (
        f"Unknown filter operator {op!r} {where}. Known operators: {known}. "
        "A plain value means equality."
    )
    return InvalidInputError(msg)


def rows_holding(
    holds: Predicate,
    mask: npt.NDArray[np.bool_],
    keys: npt.NDArray[np.int64],
    metadata: Mapping[int, tuple[str, str, dict[str, Any]]],
) -> npt.NDArray[np.bool_]:
    """``mask`` narrowed, in place, to the rows whose chunk's metadata the filter holds on.

    Args:
        holds: The compiled filter (:attr:`Filter.holds`).
        mask: The rows still in play (a row of ``keys`` each).
        keys: The chunk key of each row.
        metadata: Chunk key -> ``(chunk id, source id, metadata)``; missing keys are dropped.
    """
    absent = missing()
    for row in np.flatnonzero(mask).tolist():
        entry = metadata.get(int(keys[row]))
        if entry is None:
            mask[row] = False
            continue
        _chunk_id, source, meta = entry

        def lookup(key: str, meta: Mapping[str, Any] = meta, source: str = source) -> Any:
            return source if key == "source_id" else meta.get(key, absent)

        mask[row] = holds(lookup)
    return mask
