"""``SourceList.get_many``: many sources looked up with one check that the database exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from workspace_tools import Workspace


def test_many_ids_on_a_new_index_look_for_the_database_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace(tmp_path, embedder=None)
    catalog = ws._sources
    looked: list[int] = []
    exists = catalog.db.exists
    monkeypatch.setattr(catalog.db, "exists", lambda: looked.append(1) or exists())
    ids = [f"d{n}.txt" for n in range(50)]
    assert catalog.get_many(ids) == dict.fromkeys(ids)
    assert looked == [1]  # not a stat of the file per id
    ws.close()


def test_many_ids_give_what_get_gives_one_by_one(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    ws.index_many([("a.txt", "alpha text"), ("b.txt", "beta text")])
    catalog = ws._sources
    ids = ["a.txt", "missing.txt", "b.txt"]
    for loaded in (False, True):
        if loaded:
            catalog.all()  # the rows loaded: answered from memory
        many = catalog.get_many(ids)
        assert list(many) == ids
        assert many == {i: catalog.get(i) for i in ids}
        assert many["missing.txt"] is None and many["a.txt"] is not None
    ws.close()
