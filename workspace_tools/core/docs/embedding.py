"""Which embedder hybrid docs search uses for an embedder name (``--embedder``)."""

from __future__ import annotations

from workspace_tools.core.embedding.embedder import Embedder
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.extras import VECTOR_INSTALL, missing_vector_packages, require_vector

__all__ = ["docs_embedder", "require_docs_embedder"]


def docs_embedder(name: str | None = None) -> tuple[Embedder | None, str]:
    """The embedder for ``name`` and what it is, or ``None`` and why docs rank by keywords.

    Args:
        name: ``None``/``"default"`` (the packaged model, if installed), ``"none"``, or a model.

    Returns:
        ``(embedder, "the packaged model")``-like pairs, or ``(None, reason)``.

    Raises:
        InvalidInputError: A named model is not on disk.
        MissingDependencyError: A named model is asked for without the vector extra.
    """
    if name == "none":
        return None, "--embedder none"
    if name in (None, "default"):
        missing = missing_vector_packages()
        if missing:
            return None, f"the vector extra is not installed ({', '.join(missing)})"
        from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(), "the packaged model"
    from workspace_tools.core.embedding.adapters import as_embedder

    require_vector(f"the embedding model {name!r}", "sentence_transformers")
    return as_embedder(name), f"the model {name}"


def require_docs_embedder(name: str | None = None) -> Embedder:
    """The embedder of :func:`docs_embedder`, or an error saying how to get hybrid ranking.

    Raises:
        InvalidInputError: ``name`` is ``"none"``, or the vector extra is not installed.
    """
    embedder, why = docs_embedder(name)
    if embedder is None:
        fix = (
            "leave --embedder out (or pass 'default')"
            if name == "none"
            else f"install it: {VECTOR_INSTALL}"
        )
        msg = (
            f"Hybrid docs search needs an embedding model, but {why}: {fix}. "
            "Keyword ranking works without one: --mode lexical."
        )
        raise InvalidInputError(msg)
    return embedder
