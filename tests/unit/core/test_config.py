"""ProjectConfig.section: the one check of a settings section's shape and keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.errors import InvalidInputError


def _config(tmp_path: Path, text: str) -> ProjectConfig:
    (tmp_path / "workspace-tools.yaml").write_text(text, encoding="utf-8")
    return ProjectConfig.load(tmp_path)


def test_a_section_gives_its_mapping_or_an_empty_one(tmp_path: Path) -> None:
    config = _config(tmp_path, "mcp:\n  read_only: true\n")
    assert config.section("mcp", known={"read_only", "docs"}) == {"read_only": True}
    assert config.section("workspace", known={"fusion"}) == {}


def test_unknown_keys_are_named_with_the_known_ones(tmp_path: Path) -> None:
    config = _config(tmp_path, "mcp:\n  read_onyl: true\n  docs: d\n")
    with pytest.raises(InvalidInputError, match=r"Unknown setting\(s\) read_onyl in 'mcp'") as info:
        config.section("mcp", known={"read_only", "docs"})
    assert "Known: docs, read_only." in str(info.value)


def test_a_section_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    config = _config(tmp_path, "mcp: [read_only]\n")
    with pytest.raises(
        InvalidInputError, match="'mcp' in .* must be a mapping of settings, got list"
    ):
        config.section("mcp", known={"read_only"})
