from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workspace_tools import Workspace
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.index.sparse import BM25Config


def write_config(root: Path, text: str) -> None:
    (root / "workspace-tools.yaml").write_text(text, encoding="utf-8")


def test_project_settings_configure_the_workspace(tree: Path) -> None:
    write_config(
        tree,
        "skills: [skills]\nworkspace:\n  embedder: none\n  index_dir: .idx\n  paths: [docs]\n"
        "  bm25: {k1: 1.5, b: 0.75}\n  chunking: {max_chars: 500}\n  fusion: weighted\n",
    )
    ws = Workspace.from_project(tree)
    assert ws.modes == ("bm25",)
    assert ws.index_dir == (tree / ".idx").resolve()
    assert (ws.bm25_config.k1, ws.bm25_config.b) == (1.5, 0.75)
    assert ws.chunking.max_chars == 500 and ws.fusion == "weighted"
    report = ws.sync()
    assert sorted(report.added) == ["docs/faq.md", "docs/guide.md"]


def test_conversion_budgets_from_the_project_file(tree: Path) -> None:
    write_config(
        tree,
        "workspace:\n  embedder: none\n  conversion:\n    seconds: 4\n"
        "    per_format: {pdf: {seconds: 8, memory_bytes: 268435456}}\n",
    )  # lower than the defaults: the file may not raise them (test_project_trust.py)
    ws = Workspace.from_project(tree)
    assert ws.conversion_limits.seconds == 4
    assert ws.conversion_limits.budget("pdf").seconds == 8
    assert ws.conversion_limits.budget("pdf").memory_bytes == 1 << 28
    assert ws.conversion_limits.budget("docx").seconds == 4
    assert ws.conversion_cache.limits is ws.conversion_limits


def test_keyword_overrides_win(tree: Path) -> None:
    write_config(tree, "workspace:\n  embedder: none\n  read_only: true\n")
    ws = Workspace.from_project(tree, read_only=False)
    assert ws.read_only is False


@pytest.mark.parametrize(
    "bm25", [{"k1": 1.2, "b": 0.75}, {"bm25": {"k1": 1.2, "b": 0.75}}, BM25Config(k1=1.2, b=0.75)]
)
def test_bm25_takes_its_parameters_in_mastras_spelling(tree: Path, bm25: object) -> None:
    ws = Workspace(tree, embedder=None, bm25=bm25)  # was taken as True, the parameters dropped
    assert (ws.bm25_config.k1, ws.bm25_config.b, ws.bm25_enabled) == (1.2, 0.75, True)


_FORMS = "Use True, False, a BM25Config or a mapping of its fields (k1, b, method, query_tf)."


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bm25": "yes"}, "bm25 must be True, False, a BM25Config or a mapping of its fields"),
        ({"bm25": {"k": 1.2}}, f"bm25 has unknown field(s) k: got {{'k': 1.2}}. {_FORMS}"),
        ({"bm25": {"b": 2}}, "Invalid bm25 {'b': 2}: BM25 needs k1 >= 0 and 0 <= b <= 1, got "),
        (
            {"bm25": {"b": 0.5}, "bm25_config": BM25Config()},
            "BM25 parameters were given twice: bm25=BM25Config(k1=1.35, b=0.5, method='lucene', "
            "query_tf='saturated') and bm25_config=BM25Config(k1=1.35, b=0.6, method='lucene', "
            "query_tf='saturated'). Pass one of them.",
        ),
    ],
)
def test_a_bad_bm25_argument_names_the_accepted_forms(
    tree: Path, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        Workspace(tree, embedder=None, **kwargs)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("workspace:\n  embeder: none\n", "Unknown setting\\(s\\) embeder"),
        ("workspace: [1]\n", "must be a mapping of settings"),
        ("workspace:\n  bm25: {k1: -1}\n", "Invalid 'bm25' settings"),
        ("workspace:\n  chunking: {size: 3}\n", "Invalid 'chunking' settings"),
        ("workspace:\n  paths: 3\n", "'paths' under"),
        ("workspace:\n  conversion: {seconds: 0}\n", "Invalid 'conversion'.*seconds must be"),
        ("workspace:\n  conversion: {per_format: {doc: {}}}\n", "unknown format 'doc'"),
    ],
)
def test_bad_settings_name_the_key(tree: Path, text: str, message: str) -> None:
    write_config(tree, text)
    with pytest.raises(InvalidInputError, match=message):
        Workspace.from_project(tree)


def test_alias_bomb_in_the_project_file_is_refused(tree: Path) -> None:
    bomb = "a: &a [x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(12)
    )
    write_config(tree, bomb)
    with pytest.raises(InvalidInputError, match="uses 24 YAML aliases; the limit is 20"):
        Workspace.from_project(tree)
