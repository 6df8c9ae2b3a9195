"""Every tool call the shipped example skills recommend runs on a real workspace.

A skill's advice is parsed from its SKILL.md code spans: a call such as
``workspace_search(query="x", mode="bm25")``, or a tool name span followed by argument spans
(`` `workspace_search` with `mode="bm25"` ``). Each is invoked as an agent would.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.tools import call
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools import WorkspaceToolkit

SKILLS = Path(__file__).resolve().parents[3] / "skills_examples"
_CALL = re.compile(r"`([a-z_]+)\(([^`]*)\)`")
_WITH = re.compile(r"`([a-z_]+)`\s+with\s+((?:`[a-z_]+=[^`]+`(?:,?\s*(?:and\s+)?)?)+)")
_ARG = re.compile(r"`([a-z_]+)=([^`]+)`")


def _args(text: str) -> dict[str, Any]:
    node = ast.parse(f"f({text})", mode="eval").body
    assert isinstance(node, ast.Call)
    return {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}


def advice(markdown: str, tool_names: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The ``(tool, arguments)`` calls a SKILL.md recommends, for tools in ``tool_names``."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for name, text in _CALL.findall(markdown):
        if name in tool_names:
            calls.append((name, _args(text.replace("...", '"install"'))))
    for name, spans in _WITH.findall(markdown):
        if name in tool_names:
            calls.append((name, {k: ast.literal_eval(v) for k, v in _ARG.findall(spans)}))
    return calls


def _skill_calls() -> list[tuple[str, str, dict[str, Any]]]:
    names = {"workspace_search", "search_documents", "grep", "docs_search", "skill_search"}
    return [
        (skill.parent.name, tool, args)
        for skill in sorted(SKILLS.glob("*/SKILL.md"))
        for tool, args in advice(skill.read_text(encoding="utf-8"), names)
    ]


def test_the_parser_finds_the_search_skill_advice() -> None:
    found = [(t, a) for s, t, a in _skill_calls() if s == "workspace-search"]
    assert ("workspace_search", {"mode": "hybrid"}) in found
    assert len([t for t, _ in found if t == "workspace_search"]) >= 2


@pytest.mark.parametrize(("skill", "tool", "args"), _skill_calls())
def test_example_skill_advice_runs(
    skill: str, tool: str, args: dict[str, Any], hybrid_ws: Workspace
) -> None:
    tools = {t.name: t for t in WorkspaceToolkit(workspace=hybrid_ws).get_tools()}
    assert tool in tools, f"{skill} recommends {tool}, which the toolkit does not have"
    message = call(tools[tool], **{"query": "install", **args})
    assert message.status == "success", f"{skill}: {tool}({args}) -> {message.content}"


@pytest.mark.parametrize(
    ("tool", "alias", "canonical"),
    [
        ("workspace_search", "keyword", "bm25"),
        ("workspace_search", "semantic", "vector"),
        ("search_documents", "keyword", "bm25"),
    ],
)
def test_mode_aliases_are_accepted_and_documented(
    tool: str, alias: str, canonical: str, hybrid_ws: Workspace
) -> None:
    tools = {t.name: t for t in WorkspaceToolkit(workspace=hybrid_ws).get_tools()}
    message = call(tools[tool], query="install", mode=alias)
    assert message.status == "success", message.content
    schema = tools[tool].tool_call_schema.model_json_schema()  # type: ignore[union-attr]
    description = schema["properties"]["mode"]["description"]
    assert f"{canonical} (alias '{alias}')" in description or (
        f"'{canonical}' (alias '{alias}')" in description
    )
