"""The tokenizer's rules version is saved with the index: other rules are refused, not searched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workspace_tools import Workspace
from workspace_tools.core.errors import IndexMismatchError
from workspace_tools.core.store.database import IndexDatabase
from workspace_tools.core.text import tokenizer as tokenizer_module
from workspace_tools.core.text.tokenizer import TOKENIZER_RULES, Tokenizer


def _ws(root: Path, **kw: object) -> Workspace:
    return Workspace(root, embedder=None, config=False, **kw)  # type: ignore[arg-type]


def _saved_tokenizer(root: Path) -> dict[str, object]:
    settings = IndexDatabase(root / ".workspace_tools" / "index", read_only=True).settings()
    assert settings is not None
    return dict(settings["tokenizer"])


def test_the_fingerprint_carries_the_rules_version() -> None:
    assert Tokenizer().fingerprint()["rules"] == TOKENIZER_RULES


def test_an_index_built_with_other_rules_is_refused_then_rebuilt(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _ws(tree).sync()
    assert _saved_tokenizer(tree)["rules"] == TOKENIZER_RULES
    monkeypatch.setattr(tokenizer_module, "TOKENIZER_RULES", TOKENIZER_RULES + 1)
    with pytest.raises(IndexMismatchError) as info:
        _ws(tree)
    message = str(info.value)
    assert (
        f"tokenizer rules differ (index: version {TOKENIZER_RULES}, now: version "
        f"{TOKENIZER_RULES + 1}: this release turns text into other terms)"
    ) in message
    assert "tokenizer settings differ" not in message  # only the rules changed
    assert "pass rebuild=True (CLI: --rebuild)" in message
    rebuilt = _ws(tree, rebuild=True)
    rebuilt.sync()
    assert rebuilt.search("install")
    assert _saved_tokenizer(tree)["rules"] == TOKENIZER_RULES + 1


def test_an_index_saved_before_the_version_counts_as_rules_one(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _ws(tree)
    ws.sync()
    before = [(h.id, h.score) for h in ws.search("install")]
    db = IndexDatabase(tree / ".workspace_tools" / "index", read_only=False)
    settings = db.settings()
    assert settings is not None
    del settings["tokenizer"]["rules"]
    with db.write("drop the rules version") as writer:
        writer.set_meta("settings", json.dumps(settings, sort_keys=True))
    monkeypatch.setattr(tokenizer_module, "TOKENIZER_RULES", 1)
    assert [(h.id, h.score) for h in _ws(tree).search("install")] == before
    monkeypatch.setattr(tokenizer_module, "TOKENIZER_RULES", 2)
    with pytest.raises(IndexMismatchError, match=r"tokenizer rules differ \(index: version 1, "):
        _ws(tree)
