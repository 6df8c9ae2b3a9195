"""Compare the settings an index was built with to the settings of the workspace opening it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workspace_tools.core.errors import IndexMismatchError

__all__ = ["check_settings"]


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
    for key in ("tokenizer", "chunking"):
        if saved.get(key) != current[key]:
            problems.append(f"{key} settings differ (index: {saved.get(key)}, now: {current[key]})")
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
