"""Library manners of the embedder: no process-wide side effects, device choice, fast failure,
and an embedding progress bar that moves."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.embedding import embedder as embedder_module
from workspace_tools.core.embedding.embedder import (
    SentenceTransformerEmbedder,
    check_model_available,
    resolve_device,
)
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.workspace import _ingest

# Looked up, not imported: importing torch at collection costs seconds in every run.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")


class StubModel:
    """Stands in for a loaded SentenceTransformer; records torch's thread count per call."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        import torch

        self.threads.append(torch.get_num_threads())
        return np.ones((len(texts), 4), dtype=np.float32)


def _with_stub(**kwargs: Any) -> tuple[SentenceTransformerEmbedder, StubModel]:
    embedder = SentenceTransformerEmbedder(**kwargs)
    stub = StubModel()
    embedder._model = stub
    return embedder, stub


def test_query_embedding_leaves_torch_threads_alone() -> None:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        embedder, stub = _with_stub()
        embedder.embed(["one short query"])
        assert stub.threads == [2]
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_query_threads_is_opt_in_and_restored() -> None:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        embedder, stub = _with_stub(query_threads=1)
        embedder.embed(["one short query"])
        embedder.embed([f"text {i}" for i in range(embedder_module.SMALL_BATCH + 1)])
        assert stub.threads == [1, 2]  # small input on 1 thread, a batch on the default
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_loading_restores_transformers_progress_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers.utils import logging as hf_logging

    seen: list[bool] = []

    def loader(path: str, *, device: str) -> str:
        seen.append(hf_logging.is_progress_bar_enabled())
        return f"model at {path} on {device}"

    hf_logging.enable_progress_bar()
    assert embedder_module._load_quietly(loader, "p", "cpu") == "model at p on cpu"
    assert seen == [False]  # quiet while loading
    assert hf_logging.is_progress_bar_enabled()  # and the process setting is back
    hf_logging.disable_progress_bar()
    try:
        embedder_module._load_quietly(loader, "p", "cpu")
        assert not hf_logging.is_progress_bar_enabled()  # a user's choice is kept too
    finally:
        hf_logging.enable_progress_bar()


def test_device_auto_prefers_cuda_then_mps_and_can_be_forced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    monkeypatch.setattr(embedder_module, "accelerator_possible", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert resolve_device("auto") == "mps"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    assert resolve_device("cuda:1") == "cuda:1"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(embedder_module, "accelerator_possible", lambda: False)
    assert resolve_device("auto") == "cpu"  # no GPU driver: torch is not even asked
    assert SentenceTransformerEmbedder(device="cpu").device == "cpu"
    assert SentenceTransformerEmbedder(device="cpu", precision="fp32").precision == "fp32"


def test_unknown_model_fails_fast_without_the_network(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as info:
        SentenceTransformerEmbedder("nope-org/no-such-model-here")
    message = str(info.value)
    assert message.startswith("Embedding model 'nope-org/no-such-model-here' is neither")
    assert "'default'" in message and "'none'" in message
    check_model_available(str(tmp_path))  # a local folder is fine


def test_unknown_model_check_does_not_touch_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    def no_network(*_: Any, **__: Any) -> None:
        raise AssertionError("the hub was contacted")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_network)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_network)
    with pytest.raises(InvalidInputError):
        check_model_available("all-MiniLM-L6-v2-not-cached")


def _texts(count: int) -> dict[str, str]:
    return {f"h{i}": f"text number {i} " + "word " * (i % 7) for i in range(count)}


class RecordingBar:
    def __init__(self) -> None:
        self.updates: list[int] = []

    def update(self, n: int) -> None:
        self.updates.append(n)

    def close(self) -> None:
        pass


def test_embedding_progress_moves_in_small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    bar = RecordingBar()
    monkeypatch.setattr(_ingest, "progress_bar", lambda total, label, *, show: bar)
    fake = FakeEmbedder(max_batch_size=4096)
    out = _ingest.embed_texts(fake, _texts(1000), show_progress=True)
    assert len(out) == 1000
    assert max(fake.calls) <= _ingest.PROGRESS_STEP
    assert bar.updates == fake.calls
    assert len(bar.updates) == -(-1000 // _ingest.PROGRESS_STEP)
    # without a bar, calls stay as large as the embedder allows
    fake = FakeEmbedder(max_batch_size=4096)
    _ingest.embed_texts(fake, _texts(1000), show_progress=False)
    assert fake.calls == [1000]


def test_progress_bar_shows_rate_and_eta() -> None:
    bar = _ingest.progress_bar(10, "Embedding", show=True)
    try:
        text = str(bar)
    finally:
        bar.close()
    assert "item/s]" in text  # the rate
    assert "[00:00<" in text  # elapsed<remaining: the ETA
