"""Compact JSON schemas for the declared tool outputs: the same rules in fewer subschemas."""

from __future__ import annotations

from typing import Any, Final

__all__ = ["compact_schema", "omit_nulls", "single_type_schema"]

_DEFS_PREFIX: Final = "#/$defs/"
_ANNOTATIONS: Final = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"}
)
"""Keywords that never change which instances are valid."""
_OWN_TYPE: Final = frozenset(
    {
        # arrays
        "items",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "minItems",
        "maxItems",
        "uniqueItems",
        # objects
        "properties",
        "patternProperties",
        "additionalProperties",
        "required",
        "minProperties",
        "maxProperties",
        "propertyNames",
        # strings
        "minLength",
        "maxLength",
        "pattern",
        "format",
        # numbers
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
    }
)
"""Keywords that only constrain instances of their own type (``null`` passes them)."""
_SCHEMA_MAPS: Final = frozenset({"properties", "patternProperties", "$defs"})
_SCHEMA_LISTS: Final = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_VALUES: Final = frozenset(
    {"items", "additionalProperties", "contains", "propertyNames", "not", "if", "then", "else"}
)


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (as pydantic generates it) with the same valid instances and fewer subschemas."""
    defs: dict[str, Any] = schema.get("$defs", {})
    compact: dict[str, Any] = _walk(schema, defs, ())
    if _refers(compact):  # a recursive model: keep its definitions
        compact["$defs"] = {name: _walk(node, defs, (name,)) for name, node in defs.items()}
    else:
        compact.pop("$defs", None)
    return compact


def _walk(node: Any, defs: dict[str, Any], inlined: tuple[str, ...]) -> Any:
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    siblings = {k: v for k, v in node.items() if k != "$ref"}
    if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
        name = ref.removeprefix(_DEFS_PREFIX)
        if name in defs and name not in inlined and set(siblings) <= _ANNOTATIONS:
            node, inlined = {**defs[name], **siblings}, (*inlined, name)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "additionalProperties" and value is True) or key == "$defs":
            continue
        if key in _SCHEMA_MAPS:
            out[key] = {name: _walk(sub, defs, inlined) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS:
            out[key] = [_walk(sub, defs, inlined) for sub in value]
        elif key in _SCHEMA_VALUES:
            out[key] = _walk(value, defs, inlined)
        else:
            out[key] = value
    return _nullable_as_type_list(out)


def _refers(node: Any) -> bool:
    """True when ``node`` still holds a ``$ref`` somewhere."""
    if isinstance(node, dict):
        return "$ref" in node or any(_refers(v) for v in node.values())
    if isinstance(node, list):
        return any(_refers(v) for v in node)
    return False


def _nullable_as_type_list(node: dict[str, Any]) -> dict[str, Any]:
    """``{anyOf: [X, {type: null}], ...}`` as ``{...X, type: [X.type, "null"], ...}`` when safe."""
    members = node.get("anyOf")
    if not isinstance(members, list) or len(members) != 2 or {"type": "null"} not in members:
        return node
    other = members[0] if members[1] == {"type": "null"} else members[1]
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    if (
        not isinstance(other, dict)
        or not isinstance(other.get("type"), str)
        or other["type"] == "null"
        or not set(other) - {"type"} <= _OWN_TYPE | _ANNOTATIONS
        or not set(rest) <= _ANNOTATIONS
    ):
        return node
    return {**other, **rest, "type": [other["type"], "null"]}


def single_type_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every nullable property optional and single-typed (see ``omit_nulls``)."""
    out: dict[str, Any] = _single(schema)
    return out


def _single(node: Any) -> Any:
    if isinstance(node, list):
        return [_single(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _single(v) for k, v in node.items()}
    properties = out.get("properties")
    if isinstance(properties, dict):
        optional = set()
        for name, sub in list(properties.items()):
            single = _without_null(sub) if isinstance(sub, dict) else None
            if single is not None:
                properties[name] = single
                optional.add(name)
        if optional and isinstance(out.get("required"), list):
            out["required"] = [r for r in out["required"] if r not in optional]
    return out


def _without_null(node: dict[str, Any]) -> dict[str, Any] | None:
    """``node`` without its ``null`` alternative, or ``None`` when it has none."""
    kind = node.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest = [t for t in kind if t != "null"]
        out = {k: v for k, v in node.items() if not (k == "default" and v is None)}
        out["type"] = rest[0] if len(rest) == 1 else rest
        return out
    members = node.get("anyOf")
    if isinstance(members, list) and {"type": "null"} in members:
        others = [m for m in members if m != {"type": "null"}]
        rest_keys = {
            k: v for k, v in node.items() if k != "anyOf" and not (k == "default" and v is None)
        }
        if len(others) == 1 and isinstance(others[0], dict):
            return {**others[0], **rest_keys}
        return {**rest_keys, "anyOf": others}
    return None


def omit_nulls(data: Any) -> Any:
    """``data`` with every ``null`` object member left out (see :func:`single_type_schema`)."""
    if isinstance(data, dict):
        return {k: omit_nulls(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [omit_nulls(v) for v in data]
    return data
