"""The converted-model cache is verified, and an unusable one never fails a sync (issue 28).

Item 4: a few zeroed blocks in the cached ``model.bin`` gave vectors with cosine ~0 to the right
ones, silently; checksums written at conversion now catch it and the model is converted again.
Item 12: a cache folder that is a file, read-only (empty or already holding the model, as in a
container image) or holds symlinks is a warning and a fallback, never a raw ``OSError``.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest

from workspace_tools.core.embedding import openvino_model
from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder
from workspace_tools.core.embedding.openvino_model import CACHE_ENV, verified_model

pytestmark = [
    # looked up, not imported: importing torch at collection costs seconds in every run
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch"),
    pytest.mark.skipif(
        not openvino_model.openvino_available(), reason="openvino/nncf not installed"
    ),
    pytest.mark.requires_model,
    pytest.mark.slow,
]

TEXTS = ["How do I tune my guitar?", "The quarterly tax filing deadline is in April."]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def expected() -> np.ndarray:
    embedder = SentenceTransformerEmbedder(precision="fp32", backend="torch")
    return embedder.embed(TEXTS)


def _openvino() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(backend="openvino", precision="fp32")


def _entry(cache: Path) -> Path:
    (folder,) = [p for p in (cache / "openvino").iterdir() if p.is_dir()]
    return folder


def test_zeroed_blocks_in_the_cached_weights_are_caught_and_converted_again(
    cache: Path, expected: np.ndarray
) -> None:
    np.testing.assert_allclose(_openvino().embed(TEXTS), expected, atol=1e-4)
    entry = _entry(cache)
    sums = json.loads((entry / "checksums.json").read_text(encoding="utf-8"))
    assert set(sums) == {"model.xml", "model.bin"}
    weights = entry / "model.bin"
    data = bytearray(weights.read_bytes())
    for start in range(len(data) // 7, len(data), len(data) // 5):  # a few 64 KB blocks zeroed
        data[start : start + 65536] = bytes(min(65536, len(data) - start))
    weights.write_bytes(bytes(data))  # same size; OpenVINO's compiled cache left in place
    assert verified_model(entry) is None
    vectors = _openvino().embed(TEXTS)
    np.testing.assert_allclose(vectors, expected, atol=1e-4)
    assert verified_model(entry) == entry / "model.xml"  # converted again, checksums match


def test_a_read_only_cache_holding_the_model_compiles_without_writing(
    cache: Path, expected: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only mount (a container image), simulated: nothing is written into the cache."""
    _openvino().load()
    entry = _entry(cache)
    before = sorted(str(p) for p in cache.rglob("*"))
    real_access = os.access
    monkeypatch.setattr(
        openvino_model.os,
        "access",
        lambda path, mode: False if str(path).startswith(str(cache)) else real_access(path, mode),
    )
    monkeypatch.setattr(openvino_model.Path, "mkdir", _refuse_mkdir(cache))
    monkeypatch.setattr(openvino_model.tempfile, "mkdtemp", _refuse_write)
    np.testing.assert_allclose(_openvino().embed(TEXTS), expected, atol=1e-4)
    assert sorted(str(p) for p in cache.rglob("*")) == before
    assert verified_model(entry) is not None


def _refuse_write(*_: object, **__: object) -> str:
    raise OSError(30, "Read-only file system")


def _refuse_mkdir(cache: Path) -> object:
    real = Path.mkdir

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        if str(self).startswith(str(cache)):
            raise OSError(30, "Read-only file system", str(self))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    return mkdir


@pytest.mark.parametrize("how", ["a file", "read-only filesystem"])
def test_an_unusable_cache_folder_warns_and_converts_in_memory(
    cache: Path,
    expected: np.ndarray,
    how: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    if how == "a file":
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text("not a folder", encoding="utf-8")
    else:
        monkeypatch.setattr(openvino_model.Path, "mkdir", _refuse_mkdir(cache))
    with caplog.at_level(logging.WARNING, logger=openvino_model.__name__):
        vectors = _openvino().embed(TEXTS)
    np.testing.assert_allclose(vectors, expected, atol=1e-4)
    assert f"Set {CACHE_ENV} to a writable folder" in caplog.text
    assert "converted in memory" in caplog.text


def test_symlinked_cache_entries_are_not_trusted(
    cache: Path, expected: np.ndarray, tmp_path: Path
) -> None:
    _openvino().load()
    entry = _entry(cache)
    elsewhere = tmp_path / "planted.bin"
    (entry / "model.bin").rename(elsewhere)
    (entry / "model.bin").symlink_to(elsewhere)
    assert verified_model(entry) is None
    np.testing.assert_allclose(_openvino().embed(TEXTS), expected, atol=1e-4)
    assert not (entry / "model.bin").is_symlink()


def test_a_workspace_sync_with_an_unusable_cache_succeeds(
    cache: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from workspace_tools import Workspace

    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("not a folder", encoding="utf-8")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.md").write_text("# Tuning\n\nHow to tune a guitar.\n", encoding="utf-8")
    ws = Workspace(root, embedder=SentenceTransformerEmbedder(backend="openvino", precision="fp32"))
    with caplog.at_level(logging.WARNING):
        report = ws.sync()
    assert report.added == ["a.md"]
    assert ws.search("guitar tuning", mode="vector")[0].source_id == "a.md"
