"""Metadata filters (``ranking/filters.py``) as Milvus boolean expressions, same semantics.

What Milvus cannot express (control characters, lone surrogates, ``$in`` lists longer than
:data:`MAX_MILVUS_IN_VALUES`) raises :class:`InvalidInputError`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.ranking.filters import compile_filter
from workspace_tools.core.text.validate import check_unicode

__all__ = ["ALWAYS", "MAX_MILVUS_IN_VALUES", "NEVER", "milvus_expression"]

ALWAYS: Final = "key >= 0"
"""An expression every row satisfies (chunk keys are never negative)."""
NEVER: Final = "key < 0"
_COMPARISONS: Final = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
MAX_MILVUS_IN_VALUES: Final = 1_000
"""Most values one ``$in``/``$nin`` list may hold on the Milvus backend."""
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
"""Characters ``json.dumps`` writes as ``\\u00XX``, ``\\b`` or ``\\f``: escapes Milvus refuses."""


def milvus_expression(conditions: Mapping[str, Any]) -> str:
    """The Milvus expression of a filter (validated first by ``compile_filter``).

    Raises:
        InvalidInputError: A malformed filter, or a value Milvus cannot compare.
    """
    compile_filter(conditions)
    return _expression(conditions)


def _expression(conditions: Mapping[str, Any]) -> str:
    return _all([_entry(str(k), v) for k, v in conditions.items()])


def _all(parts: list[str]) -> str:
    if not parts:
        return ALWAYS
    return parts[0] if len(parts) == 1 else " and ".join(f"({p})" for p in parts)


def _entry(key: str, value: Any) -> str:
    if key in {"$and", "$or"}:
        subs = [_expression(item) for item in value]
        joiner = " and " if key == "$and" else " or "
        return joiner.join(f"({s})" for s in subs)
    if isinstance(value, Mapping) and any(str(op).startswith("$") for op in value):
        return _all([_operator(key, str(op), operand) for op, operand in value.items()])
    return _operator(key, "$eq", value)


def _field(key: str) -> str:
    if key == "source_id":
        return "source_id"
    return f"metadata[{_literal(key, key='')}]"


def _exists(key: str) -> str:
    return ALWAYS if key == "source_id" else f"exists {_field(key)}"


def _operator(key: str, op: str, operand: Any) -> str:
    field = _field(key)
    if op == "$exists":
        return _exists(key) if operand else f"not ({_exists(key)})"
    if op in {"$eq", "$ne"}:
        literal = _literal(operand, key=key, op=op)
        same = f"{field} == {literal}"
        if key != "source_id":  # a list value holding the operand (the embedded rule)
            same = f"{same} or json_contains({field}, {literal})"
        if op == "$eq":
            return same
        return same.replace(" == ", " != ") if key == "source_id" else _or_missing(key, same)
    if op in {"$in", "$nin"}:
        values = list(operand)
        if len(values) > MAX_MILVUS_IN_VALUES:
            msg = (
                f"{op} on {key!r} lists {len(values)} values; the Milvus backend takes at most "
                f"{MAX_MILVUS_IN_VALUES}. Filter on a coarser metadata key (or search with the "
                "embedded backend, which takes long lists)."
            )
            raise InvalidInputError(msg)
        if not values:
            return NEVER if op == "$in" else ALWAYS
        literals = [_literal(v, key=key, op=op) for v in values]
        if key == "source_id":
            member = f"source_id in [{', '.join(literals)}]"
        else:
            equal = [f"{field} == {lit}" for lit in literals]
            equal.append(f"json_contains_any({field}, [{', '.join(literals)}])")
            member = " or ".join(equal)
        return member if op == "$in" else _or_missing(key, member)
    symbol = _COMPARISONS[op]
    return f"{field} {symbol} {_literal(operand, key=key, op=op, ordered=True)}"


def _or_missing(key: str, holds: str) -> str:
    """``not holds``, also true where the key is missing (the embedded rule)."""
    return f"(not {_exists(key)}) or (not ({holds}))"


def _literal(value: Any, *, key: str, op: str = "$eq", ordered: bool = False) -> str:
    if isinstance(value, bool):
        if ordered:
            raise _untranslatable(key, op, value, "booleans cannot be ordered")
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _untranslatable(key, op, value, "the number is not finite")
        return repr(value)
    if isinstance(value, str):
        _check_text(value, key=key, op=op)
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        raise _untranslatable(key, op, value, "Milvus cannot compare with null")
    if isinstance(value, Sequence | Mapping):
        raise _untranslatable(key, op, value, "Milvus compares only numbers, strings, booleans")
    raise _untranslatable(key, op, value, f"{type(value).__name__} is not a JSON scalar")


def _check_text(value: str, *, key: str, op: str) -> None:
    """Refuse a string no Milvus expression can carry (an input error, not a storage one)."""
    where = f"{op} on {key!r}" if key else "a metadata key"
    check_unicode(value, what=f"The filter value of {where} ({value[:40]!r})")
    control = _CONTROL.search(value)
    if control is not None:
        msg = (
            f"The filter value of {where} ({value[:40]!r}) holds the control character "
            f"\\u{ord(control.group()):04x} at position {control.start()}, which a Milvus "
            "expression cannot carry. Drop it from the value (or search with the embedded "
            "backend)."
        )
        raise InvalidInputError(msg)


def _untranslatable(key: str, op: str, value: Any, why: str) -> InvalidInputError:
    where = f"{op} on {key!r}" if key else "a metadata key"
    msg = (
        f"The Milvus backend cannot express the filter condition {where} with value {value!r}: "
        f"{why}. Use a number, string or boolean (or search with the embedded backend)."
    )
    return InvalidInputError(msg)
