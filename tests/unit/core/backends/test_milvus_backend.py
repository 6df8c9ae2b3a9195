"""The Milvus backend's own contract on Milvus Lite: what it trusts, rebuilds, and reports."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import FakeEmbedder
from tests.unit.core.backends.conftest import MILVUS_MISSING
from workspace_tools.core.errors import InvalidInputError, StorageError
from workspace_tools.core.workspace import Workspace

pytestmark = [
    pytest.mark.skipif(
        bool(MILVUS_MISSING),
        reason=f"the milvus extra is not installed (missing {', '.join(MILVUS_MISSING)})",
    ),
    pytest.mark.slow,  # Milvus Lite starts a server process: --full runs these
]


def _open(root: Path, **options: Any) -> Workspace:
    options.setdefault("backend", "milvus")
    return Workspace(root, embedder=FakeEmbedder(), config=False, **options)


def _count_rebuilds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from workspace_tools.core.backends.milvus import MilvusBackend

    calls: list[int] = []
    real = MilvusBackend._rebuild

    def counted(self: MilvusBackend) -> None:
        calls.append(1)
        real(self)

    monkeypatch.setattr(MilvusBackend, "_rebuild", counted)
    return calls


def test_a_reopen_catches_up_incrementally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _open(tmp_path)
    ws.index_many([("a", "apples and pears", {}), ("b", "bananas", {})])
    ws._state.close()
    Workspace(tmp_path, embedder=FakeEmbedder(), config=False).remove("a")  # embedded writer
    rebuilds = _count_rebuilds(monkeypatch)
    again = _open(tmp_path)
    assert [r.source_id for r in again.search("apples bananas", mode="bm25")] == ["b"]
    assert rebuilds == []
    assert (tmp_path / ".workspace_tools" / "index" / "milvus.db").exists()


def test_a_collection_of_another_database_is_rebuilt_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _open(tmp_path)
    ws.index_many([("a", "apples and pears", {}), ("b", "bananas", {})])
    ws._state.close()
    index = tmp_path / ".workspace_tools" / "index"
    kept = tmp_path / "milvus.db"
    shutil.copytree(index / "milvus.db", kept)
    shutil.rmtree(tmp_path / ".workspace_tools")
    index.mkdir(parents=True)
    shutil.copytree(kept, index / "milvus.db")
    rebuilds = _count_rebuilds(monkeypatch)
    fresh = _open(tmp_path)
    fresh.index_many([("c", "cherries", {}), ("d", "dates", {})])  # the same keys 1 and 2
    assert rebuilds == [1]
    assert fresh.search("apples bananas", mode="bm25") == []
    assert fresh.search("cherries", mode="hybrid")[0].source_id == "c"


def test_other_settings_rebuild_the_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _open(tmp_path)
    ws.index("a", "Running runners run")
    ws._state.close()
    rebuilds = _count_rebuilds(monkeypatch)
    standard = _open(tmp_path, backend={"type": "milvus", "analyzer": "standard"})
    assert [r.source_id for r in standard.search("runners", mode="bm25")] == ["a"]
    assert rebuilds == [1]
    # Our tokenizer stems ("running" -> "run"); the standard analyzer keeps words whole.
    assert standard.search("running", mode="bm25")[0].source_id == "a"
    assert _open(tmp_path).search("run", mode="bm25")[0].source_id == "a"
    assert rebuilds == [1, 1]


def test_a_filter_milvus_cannot_express_is_refused(tmp_path: Path) -> None:
    ws = _open(tmp_path)
    ws.index("a", "apples", metadata={"tags": ["x"]})
    with pytest.raises(InvalidInputError, match=r"cannot express the filter condition \$eq on"):
        ws.search("apples", filter={"tags": ["x"]})


def test_a_milvus_failure_is_a_storage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pymilvus.exceptions import MilvusException

    from workspace_tools.core.backends import milvus

    class Down:
        def __getattr__(self, name: str) -> Any:
            def fail(*args: Any, **kwargs: Any) -> Any:
                raise MilvusException(message="server unavailable")

            return fail

    monkeypatch.setattr(milvus, "connect", lambda uri, token: Down())
    ws = _open(tmp_path, backend={"type": "milvus", "uri": "http://milvus.invalid:19530"})
    with pytest.raises(StorageError) as caught:
        ws.index("a", "apples")
    message = str(caught.value)
    assert "Milvus could not open the collection on collection 'workspace_tools_" in message
    assert "at 'http://milvus.invalid:19530': server unavailable." in message
    assert "Check that the server is reachable and the token is right" in message


@pytest.mark.parametrize(
    ("conditions", "message"),
    [
        ({"tag": "a\x00b"}, r"holds the control character \\u0000 at position 1"),
        ({"tag": {"$in": ["ok", "half \ud83d"]}}, r"lone surrogate \\ud83d at position 5"),
        ({"ta\x01g": 1}, r"a metadata key .* control character \\u0001"),
        ({"tag": {"$in": [f"v{i}" for i in range(1_001)]}}, "takes at most 1000"),
        ({"source_id": {"$nin": [f"v{i}" for i in range(200_000)]}}, "lists 200000 values"),
    ],
)
def test_values_milvus_cannot_carry_are_input_errors(
    tmp_path: Path, conditions: dict[str, Any], message: str
) -> None:
    ws = _open(tmp_path)
    ws.index("a", "apples", metadata={"tag": "x"})
    with pytest.raises(InvalidInputError, match=message) as caught:
        ws.search("apples", filter=conditions)
    assert not isinstance(caught.value, StorageError)
    assert "rebuild" not in str(caught.value)
    assert [h.source_id for h in ws.search("apples", filter={"tag": "x\ty"})] == []


def test_deep_filters_are_refused_and_the_limit_works_on_milvus(tmp_path: Path) -> None:
    ws = _open(tmp_path)
    ws.index("a", "apples", metadata={"tag": 'line\nbreak\t"quoted"\\'})

    def nested(depth: int) -> dict[str, Any]:
        node: dict[str, Any] = {"tag": 'line\nbreak\t"quoted"\\'}
        for _ in range(depth - 1):
            node = {"$and": [node]}
        return node

    for depth in (200, 400):
        with pytest.raises(InvalidInputError, match="more than 32 levels deep"):
            ws.search("apples", filter=nested(depth))
    assert [h.source_id for h in ws.search("apples", filter=nested(32))] == ["a"]
