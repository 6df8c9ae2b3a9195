"""Compare the settings an index was built with to the settings of the workspace opening it."""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import Any

from workspace_tools.core.errors import IndexMismatchError
from workspace_tools.core.extras import install_hint
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.code_chunks import code_available

__all__ = ["check_root", "check_settings", "code_as_built", "root_record"]

logger = logging.getLogger(__name__)


def code_as_built(chunking: ChunkingConfig, saved: dict[str, Any] | None) -> ChunkingConfig:
    """``chunking`` with an unset ``code`` decided, and a warning if it is on without the extra.

    As the ``saved`` index was built; a new index (``None``) is cut at definitions when the
    ``code`` extra is installed.
    """
    code = chunking.code
    if code is None:
        recorded = saved.get("chunking") if saved else None
        code = "code" in recorded if isinstance(recorded, dict) else code_available()
    if code and not code_available():
        logger.warning(
            "This index cuts source files at their definitions, which needs the code extra: "
            "files synced here are cut by lines until it is installed (%s).",
            install_hint("code"),
        )
    return dataclasses.replace(chunking, code=code)


def check_settings(
    saved: dict[str, Any],
    current: dict[str, Any],
    *,
    embedder: tuple[str, int] | None,
    bm25_enabled: bool,
    index_dir: Path,
) -> None:
    """Raise :class:`IndexMismatchError` listing every difference that makes the index unusable.

    ``embedder`` is the current ``(model_id, dimension)``; an index built without vectors is not
    a mismatch (vectors are backfilled), nor is opening a vector index without an embedder.
    """
    problems = []
    saved_rules, saved_tokenizer = _rules(saved.get("tokenizer"))
    rules, tokenizer = _rules(current["tokenizer"])
    if saved_rules != rules:
        problems.append(
            f"tokenizer rules differ (index: version {saved_rules}, now: version {rules}: this "
            "release turns text into other terms)"
        )
    if saved_tokenizer != tokenizer:
        problems.append(f"tokenizer settings differ (index: {saved_tokenizer}, now: {tokenizer})")
    if saved.get("chunking") != current["chunking"]:
        problems.append(
            f"chunking settings differ (index: {saved.get('chunking')}, now: {current['chunking']})"
        )
    if bm25_enabled and saved.get("bm25") not in (None, current["bm25"]):
        problems.append(
            f"BM25 parameters differ (index: {saved.get('bm25')}, now: {current['bm25']})"
        )
    saved_embedder = saved.get("embedder")
    if saved_embedder and embedder is not None:
        model_id, dimension = embedder
        if saved_embedder["model_id"] != model_id:
            problems.append(
                f"embedding model differs (index: {saved_embedder['model_id']!r}, "
                f"now: {model_id!r})"
            )
        elif int(saved_embedder["dimension"]) != dimension:
            problems.append(
                f"embedding dimension differs (index: {saved_embedder['dimension']}, "
                f"now: {dimension})"
            )
    if problems:
        msg = (
            f"The index in {index_dir} was built with other settings: "
            + "; ".join(problems)
            + ". Open the workspace with the same settings, or pass rebuild=True "
            "(CLI: --rebuild) to rebuild the index."
        )
        raise IndexMismatchError(msg)


def _rules(fingerprint: Any) -> tuple[Any, Any]:
    """``(rules version, settings)`` of a tokenizer fingerprint; no version recorded means 1."""
    if not isinstance(fingerprint, dict):
        return 1, fingerprint
    settings = dict(fingerprint)
    return settings.pop("rules", 1), settings


def root_record(root: Path, index_dir: Path) -> str:
    """How the index records its root: relative to the index folder when inside the root.

    Relative, a project moved or copied with its index keeps matching; absolute for an index
    kept outside the root.
    """
    if root in index_dir.parents:
        return os.path.relpath(root, index_dir)
    return str(root)


def check_root(recorded: str | None, *, root: Path, index_dir: Path) -> None:
    """Refuse an index recorded for another root (its sync would delete the other's files).

    Raises:
        IndexMismatchError: the recorded root is not ``root`` (the message names both).
    """
    if recorded is None:
        return  # an index written before roots were recorded: the next commit records it
    other = Path(os.path.normpath(index_dir / recorded))
    if other == root:
        return
    msg = (
        f"The index in {index_dir} belongs to the workspace root {other}, not {root}: two roots "
        "cannot share one index (syncing this one would remove the other's files). Give this "
        "root its own index_dir, or pass rebuild=True (CLI: --rebuild) to replace that index."
    )
    raise IndexMismatchError(msg)
