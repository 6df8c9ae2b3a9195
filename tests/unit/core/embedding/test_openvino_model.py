"""The OpenVINO embedding backend: same pipeline as sentence-transformers, int8 by default,
converted once into a cache, clear errors when it cannot run."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workspace_tools.core import extras
from workspace_tools.core.embedding import embedder as embedder_module
from workspace_tools.core.embedding import openvino_model
from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder
from workspace_tools.core.embedding.openvino_model import (
    CACHE_ENV,
    OpenVinoEncoder,
    cache_root,
    calibration_texts,
)
from workspace_tools.core.errors import InvalidInputError, MissingDependencyError

needs_openvino = pytest.mark.skipif(
    not openvino_model.openvino_available(),
    reason="openvino/nncf not installed (they come with the vector extra)",
)
# Looked up, not imported: importing torch at collection costs seconds in every run.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")

LONG = " ".join(f"word{i} of a long passage about tuning guitars" for i in range(120))
TEXTS = [
    "How do I tune my guitar?",
    "What is the way to tune a guitar's strings?",
    "I forgot my password and cannot log in.",
    "The quarterly tax filing deadline is in April.",
    LONG,  # longer than the model's 256 tokens: truncated the same way
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def torch_fp32() -> SentenceTransformerEmbedder:
    embedder = SentenceTransformerEmbedder(precision="fp32", backend="torch")
    embedder.load()
    return embedder


def test_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "/somewhere/else")
    assert cache_root() == Path("/somewhere/else")
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert cache_root() == Path("/xdg/workspace-tools")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "workspace-tools"


def test_calibration_passages_ship_with_the_package() -> None:
    texts = calibration_texts()
    assert len(texts) == 64
    assert all(len(text) > 200 for text in texts)


def test_bad_backend_and_precision_are_refused() -> None:
    with pytest.raises(
        ValueError, match=r"backend must be 'auto', 'torch' or 'openvino', got 'tpu'"
    ):
        SentenceTransformerEmbedder(backend="tpu")
    with pytest.raises(ValueError, match=r"precision 'int8' needs backend 'openvino'"):
        SentenceTransformerEmbedder(backend="torch", precision="int8")
    with pytest.raises(ValueError, match=r"got 'int4'"):
        SentenceTransformerEmbedder(precision="int4")


def test_without_openvino_auto_falls_back_to_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedder_module, "openvino_available", lambda: False)
    monkeypatch.setattr(extras, "_installed", lambda module: module not in {"openvino", "nncf"})
    embedder = SentenceTransformerEmbedder(device="cpu")
    assert embedder.backend == "torch"
    assert embedder.precision in {"bf16", "fp32"}
    with pytest.raises(MissingDependencyError) as caught:
        SentenceTransformerEmbedder(backend="openvino")
    assert str(caught.value) == (
        "The 'openvino' embedding backend needs openvino, nncf, which are not installed. Install "
        'the vector extra: pip install "workspace-tools[vector]" (or pass backend="torch").'
    )


@needs_openvino
def test_auto_picks_openvino_int8_only_for_the_packaged_model_on_a_cpu() -> None:
    default = SentenceTransformerEmbedder(device="cpu")
    assert (default.backend, default.precision) == ("openvino", "int8")
    explicit = SentenceTransformerEmbedder(device="cpu", precision="fp32")
    assert explicit.backend == "torch"  # an explicit torch precision keeps torch
    with pytest.raises(InvalidInputError, match=r"runs on the CPU, not on device 'cuda'"):
        SentenceTransformerEmbedder(device="cuda", backend="openvino")


@needs_openvino
@pytest.mark.requires_model
def test_openvino_fp32_computes_the_same_vectors_as_torch(
    cache: Path, torch_fp32: SentenceTransformerEmbedder
) -> None:
    embedder = SentenceTransformerEmbedder(backend="openvino", precision="fp32")
    vectors = embedder.embed(TEXTS)
    np.testing.assert_allclose(vectors, torch_fp32.embed(TEXTS), atol=1e-4)
    query = embedder.embed_query(TEXTS[0])
    np.testing.assert_allclose(query, torch_fp32.embed_query(TEXTS[0]), atol=1e-4)
    assert (cache / "openvino").is_dir()


@needs_openvino
@pytest.mark.requires_model
@pytest.mark.slow
def test_int8_is_quantised_once_quietly_and_then_loaded_from_the_cache(
    cache: Path,
    torch_fp32: SentenceTransformerEmbedder,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = SentenceTransformerEmbedder()
    vectors = first.embed(TEXTS)
    assert capfd.readouterr().out == ""  # stdout is an MCP stdio server's message channel
    cosines = np.sum(vectors * torch_fp32.embed(TEXTS), axis=1)
    # int8 against fp32: about 0.99 on these texts; the long, repetitive one is the worst
    # (0.9735 on an AVX2-only AMD EPYC, where int8 runs without VNNI; ~0.99 with AMX).
    assert cosines.mean() > 0.985
    assert cosines.min() > 0.965
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    saved = list((cache / "openvino").glob("*/model.xml"))
    assert len(saved) == 1

    import nncf
    import openvino

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("converted again instead of loading the cache")

    monkeypatch.setattr(nncf, "quantize", refuse)
    monkeypatch.setattr(openvino, "convert_model", refuse)
    again = SentenceTransformerEmbedder()
    np.testing.assert_allclose(again.embed(TEXTS), vectors, atol=1e-6)


@needs_openvino
@pytest.mark.requires_model
def test_a_damaged_cache_entry_is_converted_again(
    cache: Path, torch_fp32: SentenceTransformerEmbedder
) -> None:
    SentenceTransformerEmbedder(backend="openvino", precision="fp32").load()
    (compiled,) = (cache / "openvino").glob("*/compiled")
    blobs = [path for path in compiled.rglob("*") if path.is_file()]
    assert blobs  # OpenVINO's cache of the compiled model
    for blob in blobs:  # a damaged compiled model is compiled again
        blob.write_bytes(blob.read_bytes()[:100])
    embedder = SentenceTransformerEmbedder(backend="openvino", precision="fp32")
    np.testing.assert_allclose(embedder.embed(TEXTS), torch_fp32.embed(TEXTS), atol=1e-4)

    (weights,) = (cache / "openvino").glob("*/model.bin")
    weights.write_bytes(weights.read_bytes()[:1000])
    shutil.rmtree(compiled)  # damaged weights, nothing compiled: converted again
    embedder = SentenceTransformerEmbedder(backend="openvino", precision="fp32")
    np.testing.assert_allclose(embedder.embed(TEXTS), torch_fp32.embed(TEXTS), atol=1e-4)
    assert weights.stat().st_size > 1000


@needs_openvino
def test_the_cache_key_follows_precision_and_model_files(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    fingerprint = openvino_model._fingerprint
    assert fingerprint(model, "fp32") != fingerprint(model, "int8")
    before = fingerprint(model, "fp32")
    (model / "config.json").write_text('{"hidden_size": 8}')
    assert fingerprint(model, "fp32") != before


def test_a_model_without_a_text_transformer_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openvino_model, "require_openvino", lambda: None)

    class ImageModule:
        auto_model = None

    with pytest.raises(InvalidInputError, match=r"ImageModule is not\. Pass backend='torch'"):
        OpenVinoEncoder([ImageModule()], model_path=Path("."))


def test_the_conversion_leaves_out_transformers_loss_type_line() -> None:
    """The tracer reads the model's loss_function, and transformers warned that `loss_type=None`
    is unrecognised on every first conversion (without -q): no training here, so no line."""
    import logging

    log = logging.getLogger("transformers.modeling_utils")
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    encoder = OpenVinoEncoder.__new__(OpenVinoEncoder)

    def convert(sample: dict[str, Any]) -> str:
        log.warning("`loss_type=None` was set in the config but it is unrecognized. Using ...")
        log.warning("another warning")
        return "converted"

    encoder._convert = convert  # type: ignore[method-assign]
    log.addHandler(handler)
    level = log.level  # an earlier test may have quieted transformers' loggers
    log.setLevel(logging.WARNING)
    try:
        assert encoder._convert_quietly({}) == "converted"
    finally:
        log.setLevel(level)
        log.removeHandler(handler)
    assert seen == ["another warning"]
