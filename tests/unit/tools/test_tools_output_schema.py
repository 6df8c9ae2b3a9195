"""Compact output schemas: the same valid instances as pydantic's schemas, in fewer subschemas."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel
from pydantic.json_schema import model_json_schema

from workspace_tools.tools import outputs
from workspace_tools.tools.output_schema import compact_schema

MODELS = [getattr(outputs, name) for name in outputs.__all__ if name.endswith("Output")]
VALUES: list[Any] = [None, "x", 1, 1.5, True, [], {}, [1], ["x"], {"k": 1}]


def _sample(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A valid instance of a pydantic schema: first member of a union, one item per list."""
    if "$ref" in schema:
        return _sample(defs[schema["$ref"].rsplit("/", 1)[1]], defs)
    if "anyOf" in schema:
        return _sample(schema["anyOf"][0], defs)
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: _sample(sub, defs) for name, sub in props.items()}
    if kind == "array":
        return [_sample(schema["items"], defs)] if "items" in schema else []
    return {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "null": None}[kind]


def _variants(instance: dict[str, Any]) -> list[Any]:
    """The instance, then each field (top level and in the first list item) deleted or retyped."""
    found: list[Any] = [instance, {**instance, "extra": 1}]
    for key, value in instance.items():
        found.append({k: v for k, v in instance.items() if k != key})
        found.extend({**instance, key: other} for other in VALUES)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            item = value[0]
            for inner in item:
                found.append({**instance, key: [{k: v for k, v in item.items() if k != inner}]})
                found.extend({**instance, key: [{**item, inner: other}]} for other in VALUES)
        if isinstance(value, dict):
            for inner in value:
                found.extend({**instance, key: {**value, inner: other}} for other in VALUES)
    return found


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_compact_schema_accepts_exactly_what_pydantics_accepts(model: type[BaseModel]) -> None:
    original = model_json_schema(model)
    compact = model.model_json_schema()
    assert compact == compact_schema(original)
    assert compact["type"] == "object"
    jsonschema.Draft202012Validator.check_schema(compact)
    full = jsonschema.Draft202012Validator(original)
    lean = jsonschema.Draft202012Validator(compact)
    instance = _sample(original, original.get("$defs", {}))
    assert full.is_valid(instance)
    verdicts = [(full.is_valid(v), lean.is_valid(v)) for v in _variants(instance)]
    assert [a for a, _ in verdicts] == [b for _, b in verdicts]
    assert any(not a for a, _ in verdicts)  # the variants do reach invalid instances


def test_workspace_search_schema_has_no_refs_unions_or_titles() -> None:
    schema = outputs.WorkspaceSearchOutput.model_json_schema()
    text = json.dumps(schema)
    for word in ('"$ref"', '"$defs"', '"anyOf"', '"title"', '"additionalProperties"'):
        assert word not in text
    hit = schema["properties"]["results"]["items"]
    assert hit["properties"]["line_range"] == {
        "items": {"type": "integer"},
        "type": ["array", "null"],
        "description": "[first, last] line, 1-based, or null.",
    }
    assert hit["description"] == "One ranked passage of ``workspace_search``."
    assert hit["required"][:3] == ["id", "source_id", "score"]


def test_property_names_are_kept_and_titles_dropped() -> None:
    schema = outputs.DocsListOutput.model_json_schema()
    page = schema["properties"]["results"]["items"]
    assert list(page["properties"]) == ["path", "title", "description"]
    assert page["properties"]["title"] == {"type": "string"}
    assert page["properties"]["description"] == {"type": ["string", "null"], "default": None}


def test_only_safe_unions_become_type_lists() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]},
            "both": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "cut": {
                "anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}],
                "default": None,
            },
            "ref": {"anyOf": [{"$ref": "#/$defs/Leaf"}, {"type": "null"}]},
            "kept": {"additionalProperties": False, "type": "object"},
        },
        "$defs": {"Leaf": {"title": "Leaf", "type": "object", "additionalProperties": True}},
    }
    props = compact_schema(schema)["properties"]
    assert props["mode"] == schema["properties"]["mode"]  # enum also constrains null
    assert props["both"] == schema["properties"]["both"]
    assert props["cut"] == {"type": ["string", "null"], "maxLength": 3, "default": None}
    assert props["ref"] == {"type": ["object", "null"]}
    assert props["kept"] == {"additionalProperties": False, "type": "object"}
    assert "$defs" not in compact_schema(schema)


def test_recursive_definitions_stay_referenced() -> None:
    class Node(BaseModel):
        name: str
        children: list[Node]

    schema = compact_schema(model_json_schema(Node))
    assert schema["$ref"] == "#/$defs/Node"
    node = schema["$defs"]["Node"]
    assert node["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert "title" not in node
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"name": "a", "children": [{"name": "b", "children": []}]})
    assert not validator.is_valid({"name": "a", "children": [{"name": 1, "children": []}]})


def test_a_ref_with_constraining_siblings_is_not_inlined() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/Leaf", "maxProperties": 1}},
        "$defs": {"Leaf": {"type": "object"}},
    }
    compact = compact_schema(schema)
    assert compact["properties"]["x"] == {"$ref": "#/$defs/Leaf", "maxProperties": 1}
    assert compact["$defs"] == {"Leaf": {"type": "object"}}
