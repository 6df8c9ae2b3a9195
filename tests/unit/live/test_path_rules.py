"""PathRules: the watcher's question "would a full scan reach this path?"."""

from __future__ import annotations

from pathlib import Path

from workspace_tools.core.text.scan import PathRules, ScanConfig, scan


def test_rules_agree_with_a_full_scan(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build-out/\n*.log\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("secret.md\n", encoding="utf-8")
    paths = [
        "a.md",
        "x.log",
        "build-out/b.md",
        "node_modules/c.md",
        ".hidden/d.md",
        ".e.md",
        "sub/secret.md",
        "sub/kept.md",
        "deep/" + "/".join(f"l{i}" for i in range(12)) + "/f.md",
    ]
    for rel in paths:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n", encoding="utf-8")
    found = set(scan(tmp_path).files)
    rules = PathRules(tmp_path)
    for rel in paths:
        assert rules.admits(rel) == (rel in found), rel
    assert rules.admits("sub", is_dir=True)
    assert not rules.admits("build-out", is_dir=True)
    assert not rules.admits("node_modules", is_dir=True)


def test_rules_follow_the_scan_config(tmp_path: Path) -> None:
    rules = PathRules(tmp_path, ScanConfig(include_hidden=True, respect_gitignore=False))
    (tmp_path / ".gitignore").write_text("*.md\n", encoding="utf-8")
    assert rules.admits(".hidden/a.md")
    assert rules.admits("a.md")
    assert not rules.admits(".git/config")  # excluded folders stay excluded
