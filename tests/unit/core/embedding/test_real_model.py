"""Tests on the real packaged all-MiniLM-L6-v2 model (loaded once per session, offline)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from workspace_tools import Workspace
from workspace_tools.core.embedding.embedder import DEFAULT_MODEL_ID, SentenceTransformerEmbedder
from workspace_tools.core.embedding.openvino_model import openvino_available

pytestmark = pytest.mark.requires_model

GUITAR = "How do I tune my guitar?"
GUITAR_PARAPHRASE = "What is the way to tune a guitar's strings?"
PASSWORD = "I forgot my password and cannot log in."
PASSWORD_PARAPHRASE = "How can I reset a lost password for my account?"
TAXES = "The quarterly tax filing deadline is in April."


@pytest.fixture(scope="session")
def real_embedder() -> Iterator[SentenceTransformerEmbedder]:
    """The packaged default model, loaded offline once for the whole session."""
    previous = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    embedder = SentenceTransformerEmbedder()
    embedder.embed(["load the model"])
    yield embedder
    if previous is None:
        os.environ.pop("HF_HUB_OFFLINE", None)
    else:
        os.environ["HF_HUB_OFFLINE"] = previous


def test_shape_dtype_and_unit_norm(real_embedder: SentenceTransformerEmbedder) -> None:
    vectors = real_embedder.embed([GUITAR, PASSWORD, TAXES])
    assert real_embedder.model_id == DEFAULT_MODEL_ID
    if openvino_available():
        assert (real_embedder.backend, real_embedder.precision) == ("openvino", "int8")
    assert real_embedder.dimension == 384
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert real_embedder.embed([]).shape == (0, 384)


def test_paraphrases_score_above_unrelated_text(real_embedder: SentenceTransformerEmbedder) -> None:
    g, gp, p, pp, t = real_embedder.embed(
        [GUITAR, GUITAR_PARAPHRASE, PASSWORD, PASSWORD_PARAPHRASE, TAXES]
    )
    assert g @ gp > 0.5
    assert p @ pp > 0.5
    for paraphrase_score in (g @ gp, p @ pp):
        assert paraphrase_score > max(g @ t, p @ t, g @ pp, p @ gp) + 0.3


def test_batching_does_not_change_vectors(real_embedder: SentenceTransformerEmbedder) -> None:
    texts = [GUITAR, PASSWORD, TAXES, GUITAR_PARAPHRASE]
    together = real_embedder.embed(texts)
    one_by_one = np.vstack([real_embedder.embed([t]) for t in texts])
    assert np.min(np.sum(together * one_by_one, axis=1)) > 0.99


def test_workspace_vector_mode_finds_a_paraphrase(
    tmp_path: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "music.md").write_text(
        "# Music\n\nSteps to tune the strings of a six-string guitar by ear.\n"
    )
    (root / "account.md").write_text(
        "# Account\n\nResetting a forgotten password sends an e-mail link.\n"
    )
    (root / "finance.md").write_text("# Finance\n\nQuarterly tax returns are filed every April.\n")
    (root / "cooking.md").write_text(
        "# Cooking\n\nBake the bread at 220 degrees for thirty minutes.\n"
    )
    ws = Workspace(root, embedder=real_embedder)
    report = ws.sync()
    assert report.chunks_embedded == 4
    # No word of the query appears in the target file: only meaning can find it.
    hits = ws.search("I can't remember my login credentials", mode="vector", top_k=2)
    assert hits[0].source_id == "account.md"
    assert hits[0].score > hits[1].score
    assert (
        ws.search("adjusting instrument pitch", mode="hybrid", top_k=1)[0].source_id == "music.md"
    )
    reopened = Workspace(root, embedder=real_embedder)
    assert reopened.sync().chunks_embedded == 0
    assert (
        reopened.search("when are taxes due", mode="vector", top_k=1)[0].source_id == "finance.md"
    )


def test_query_runs_on_one_thread_and_restores_the_count() -> None:
    import torch

    real_embedder = SentenceTransformerEmbedder(backend="torch")  # query_threads is torch's
    seen: list[int] = []
    model = real_embedder.model
    encode = model.encode

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(torch.get_num_threads())
        return encode(*args, **kwargs)

    torch.set_num_threads(2)
    model.encode = spy
    real_embedder.query_threads = 1  # opt-in: torch's thread count is process-wide
    try:
        real_embedder.embed([GUITAR])  # a query-sized input runs on one torch thread
        real_embedder.embed([GUITAR] * 20)  # a batch keeps every thread
        real_embedder.query_threads = None
        real_embedder.embed([GUITAR])  # by default torch is left alone
    finally:
        real_embedder.query_threads = None
        del model.encode
    assert seen == [1, 2, 2]
    assert torch.get_num_threads() == 2
