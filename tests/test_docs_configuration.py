"""docs/configuration.md's defaults are the code's, and its complete example is safe to copy."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.doc_blocks import page_blocks
from tests.support.doc_cli import fake_default_model
from tests.support.paths import REPO
from workspace_tools.core.convert.limits import ConversionLimits
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.ranking.fusion import DEFAULT_FUSION
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.scan import ScanConfig
from workspace_tools.core.workspace import Workspace
from workspace_tools.core.workspace.settings import _KEYS

PAGE = REPO / "docs" / "configuration.md"
SECTIONS: dict[str, Any] = {
    "bm25": BM25Config,
    "chunking": ChunkingConfig,
    "scan": ScanConfig,
    "conversion": ConversionLimits,
}


def _workspace_section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split("## `workspace`", 1)[1].split("\n## ", 1)[0]


def _table() -> dict[str, str]:
    """Key -> default cell of the ``workspace`` table."""
    rows = {}
    for line in _workspace_section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells[2]
    return rows


def _defaults(cls: Any) -> dict[str, Any]:
    out = {}
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            out[field.name] = field.default
        elif field.default_factory is not dataclasses.MISSING:
            out[field.name] = field.default_factory()
    return out


def test_every_workspace_key_has_a_row() -> None:
    assert set(_table()) == set(_KEYS)


@pytest.mark.parametrize("key", ["bm25", "chunking", "conversion"])
def test_mapping_defaults_in_the_table_are_the_code_defaults(key: str) -> None:
    shown = yaml.safe_load(_table()[key].strip("`"))
    assert isinstance(shown, dict), f"the default of {key!r} should be a YAML mapping"
    defaults = _defaults(SECTIONS[key])
    assert {k: defaults[k] for k in shown} == shown


@pytest.mark.parametrize("key", sorted(SECTIONS))
def test_every_setting_of_a_mapping_is_documented(key: str) -> None:
    section = _workspace_section()
    missing = [name for name in _defaults(SECTIONS[key]) if f"`{name}`" not in section]
    assert not missing, f"docs/configuration.md does not describe {key} settings {missing}"


def test_scan_defaults_in_the_prose_are_the_code_defaults() -> None:
    section = _workspace_section()
    scan = _defaults(ScanConfig)
    assert scan["max_depth"] == 10 and "`max_depth` (10 folder levels)" in section
    assert scan["max_file_bytes"] == 20 * 2**20 and "`max_file_bytes` (20 MiB)" in section
    assert scan["respect_gitignore"] is True and "`respect_gitignore`\n(`true`)" in section
    assert scan["include_hidden"] is False and "`include_hidden` (`false`" in section
    assert scan["refuse_hard_links"] is False and "`refuse_hard_links` (`false`" in section


def test_scalar_defaults_in_the_table_are_what_a_workspace_opens_with(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    table = _table()
    assert table["fusion"] == f"`{DEFAULT_FUSION}`" == f"`{ws.fusion}`"
    assert table["vector_weight"] == f"`{ws.vector_weight}`"
    assert table["ranking_prior"] == f"`{str(ws.ranking_prior).lower()}`"
    assert table["read_only"] == f"`{str(ws.read_only).lower()}`"
    assert ws.index_dir == tmp_path.resolve() / table["index_dir"].strip("`")
    assert table["embedder"] == "`default`"
    assert table["backend"] == "`embedded`"


def _example() -> str:
    blocks = page_blocks(PAGE, REPO)
    return next(b.code for b in blocks if b.lang == "yaml" and "workspace:" in b.code)


def test_the_complete_example_copied_into_an_indexed_project_opens_and_searches(
    tmp_path: Path,
) -> None:
    """The issue this guards: an example with non-default BM25 settings made every search of
    an existing index fail ("BM25 parameters differ")."""
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "docs" / "guide.md").write_text("# Guide\n\nThe atomic save keeps the index.\n")
    (root / "src" / "app.py").write_text("def save():\n    return 'atomic'\n")
    with fake_default_model():
        ws = Workspace(root)
        ws.sync()
        del ws
        (root / "workspace-tools.yaml").write_text(_example(), encoding="utf-8")
        reopened = Workspace(root)
        assert reopened.bm25_config == BM25Config()
        hits = reopened.search("atomic save")
        assert "docs/guide.md" in {h.source_id for h in hits}


def test_the_example_sets_bm25_query_tf_and_the_docs_explain_it() -> None:
    example = yaml.safe_load(_example())["workspace"]
    assert example["bm25"] == dataclasses.asdict(BM25Config())
    assert re.search(r"`query_tf`.*`saturated`.*`count`.*`distinct`", _workspace_section())
