"""A query vector without torch or sentence-transformers: the cached OpenVINO model, directly.

For ``Transformer`` + ``Pooling`` (+ ``Normalize``) models; others get ``None``.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.embedding.openvino_model import (
    compile_cached,
    compile_options,
    model_cache_dir,
    openvino_available,
    verified_model,
)
from workspace_tools.core.extras import missing_packages

__all__ = ["LeanQueryEncoder", "ModelLayout", "open_lean_encoder", "read_layout"]

logger = logging.getLogger(__name__)

_POOLING_MODES: Final = ("cls", "mean", "max")
_SENTENCE_BERT_KEYS: Final = frozenset({"max_seq_length", "do_lower_case"})
"""Keys of ``sentence_bert_config.json`` this path reproduces (others change tokenisation)."""
_MODULE_TYPES: Final = ("Transformer", "Pooling", "Normalize")


@dataclass(frozen=True, slots=True)
class ModelLayout:
    """What the lean path needs to know of a sentence-transformers model folder."""

    tokenizer_file: Path
    """The transformer's ``tokenizer.json``."""
    max_length: int
    """Tokens kept per text (``max_seq_length``), special tokens included."""
    pooling: str
    """``"mean"``, ``"cls"`` or ``"max"``."""
    query_prompt: str
    """Text put before every query (often empty)."""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _module_kinds(folder: Path) -> list[tuple[str, str]] | None:
    """``(kind, path)`` of each module in ``modules.json``; ``None`` for other modules."""
    modules = _read_json(folder / "modules.json")
    if not isinstance(modules, list) or not modules:
        return None
    kinds: list[tuple[str, str]] = []
    for module in modules:
        if not isinstance(module, dict):
            return None
        kind = str(module.get("type", "")).rsplit(".", 1)[-1]
        if kind not in _MODULE_TYPES:
            return None
        kinds.append((kind, str(module.get("path", ""))))
    names = [kind for kind, _ in kinds]
    if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return None
    return kinds


def _pooling_mode(config: Any) -> str | None:
    """The one pooling mode of a ``Pooling`` config, if this path reproduces it."""
    if not isinstance(config, dict):
        return None
    mode = config.get("pooling_mode")
    if isinstance(mode, str):
        return mode if mode in _POOLING_MODES else None
    flags = {key: bool(value) for key, value in config.items() if key.startswith("pooling_mode_")}
    chosen = [key for key, on in flags.items() if on]
    names = {
        f"pooling_mode_{m}_token" if m == "cls" else f"pooling_mode_{m}_tokens": m
        for m in _POOLING_MODES
    }
    if len(chosen) != 1 or chosen[0] not in names:
        return None
    return names[chosen[0]]


def _query_prompt(folder: Path) -> str | None:
    """The query prompt sentence-transformers applies, when it can be told from the config."""
    config = _read_json(folder / "config_sentence_transformers.json")
    if config is None:
        return ""
    if not isinstance(config, dict):
        return None
    prompts = config.get("prompts") or {}
    if not isinstance(prompts, dict):
        return None
    if "query" in prompts:
        return str(prompts["query"])
    if prompts or config.get("default_prompt_name"):
        return None  # a default prompt without a query one: leave it to sentence-transformers
    return ""


def read_layout(folder: Path) -> ModelLayout | None:
    """The layout of the sentence-transformers model in ``folder``, if this path can run it.

    Returns:
        ``None`` unless the model's modules, tokenizer, pooling and prompt are reproducible.
    """
    kinds = _module_kinds(folder)
    if kinds is None:
        return None
    transformer = folder / kinds[0][1] if kinds[0][1] else folder
    tokenizer_file = transformer / "tokenizer.json"
    settings = _read_json(transformer / "sentence_bert_config.json")
    if not tokenizer_file.is_file() or not isinstance(settings, dict):
        return None
    if set(settings) - _SENTENCE_BERT_KEYS or settings.get("do_lower_case"):
        return None
    max_length = settings.get("max_seq_length")
    if not isinstance(max_length, int) or max_length <= 0:
        return None
    pooling_config = _read_json(folder / kinds[1][1] / "config.json")
    pooling = _pooling_mode(pooling_config)
    prompt = _query_prompt(folder)
    if pooling is None or prompt is None:
        return None
    if (
        prompt
        and isinstance(pooling_config, dict)
        and pooling_config.get("include_prompt") is False
    ):
        return None
    return ModelLayout(
        tokenizer_file=tokenizer_file, max_length=max_length, pooling=pooling, query_prompt=prompt
    )


class LeanQueryEncoder:
    """Embeds queries with a compiled OpenVINO model and a ``tokenizers`` tokenizer.

    Args:
        layout: The model's layout (:func:`read_layout`).
        compiled: The compiled OpenVINO model of its transformer.
    """

    def __init__(self, layout: ModelLayout, compiled: Any) -> None:
        from tokenizers import Tokenizer

        self.layout = layout
        tokenizer = Tokenizer.from_file(str(layout.tokenizer_file))
        # as sentence-transformers calls it; one text needs no padding
        tokenizer.enable_truncation(layout.max_length, strategy="longest_first")
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self._compiled = compiled
        self._inputs = [port.get_any_name() for port in compiled.inputs]
        self._output = compiled.output(0)
        self._lock = threading.Lock()

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """The L2-normalised vector of one query (with the model's query prompt)."""
        encoding = self._tokenizer.encode(self.layout.query_prompt + text)
        features = {
            "input_ids": encoding.ids,
            "attention_mask": encoding.attention_mask,
            "token_type_ids": encoding.type_ids,
        }
        inputs = {name: np.asarray([features[name]], dtype=np.int64) for name in self._inputs}
        with self._lock:  # one infer request at a time on the compiled model
            hidden = self._compiled(inputs)[self._output]
        tokens = np.asarray(hidden, dtype=np.float32)[0]
        mask = np.asarray(encoding.attention_mask, dtype=np.float32)[:, None]
        if self.layout.pooling == "cls":
            vector = tokens[0]
        elif self.layout.pooling == "max":
            vector = np.where(mask > 0, tokens, np.float32(-1e9)).max(axis=0)
        else:
            vector = (tokens * mask).sum(axis=0) / max(float(mask.sum()), 1e-9)
        norm = float(np.linalg.norm(vector))
        return np.asarray(vector / norm if norm > 0 else vector, dtype=np.float32)


def open_lean_encoder(
    model_path: Path, *, precision: str, threads: int | None
) -> LeanQueryEncoder | None:
    """The lean query encoder of the model in ``model_path``, or ``None`` to take the full path."""
    if not openvino_available() or not _tokenizers_available():
        return None
    layout = read_layout(model_path)
    if layout is None:
        return None
    cache_dir = model_cache_dir(model_path, precision)
    xml = verified_model(cache_dir)
    if xml is None:
        return None
    import openvino

    core = openvino.Core()
    try:
        compiled = compile_cached(core, xml, compile_options(precision, threads))
    except RuntimeError as exc:
        logger.info("Lean query path off: cached model %s does not compile (%s)", xml, exc)
        return None
    return LeanQueryEncoder(layout, compiled)


def _tokenizers_available() -> bool:
    return not missing_packages("vector", "tokenizers")
