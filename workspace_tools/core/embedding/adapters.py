"""Adapters that make other embedding objects into an :class:`~.embedder.Embedder`.

:func:`as_embedder` picks the adapter for a value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.embedding.embedder import Embedder, SentenceTransformerEmbedder, normalise

__all__ = [
    "BATCH_FORM",
    "DEFAULT_BATCH_LIMIT",
    "DEFAULT_CONCURRENCY",
    "BatchAdapter",
    "EmbeddingsAdapter",
    "FunctionEmbedder",
    "as_embedder",
]


class EmbeddingsAdapter:
    """Wraps any object with LangChain's ``embed_documents``/``embed_query`` interface."""

    def __init__(
        self,
        embeddings: Any,
        *,
        model_id: str | None = None,
        max_batch_size: int = 256,
        max_concurrency: int | None = None,
    ) -> None:
        self._embeddings = embeddings
        self._model_id = model_id or _describe(embeddings)
        self._max_batch_size = max_batch_size
        self._dimension: int | None = None
        self.max_concurrency = _concurrency(embeddings, max_concurrency)
        """``embed`` calls run at once during indexing."""

    @property
    def model_id(self) -> str:
        """Name derived from the wrapped object (class and model name)."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """Vector length, found by embedding a probe text once."""
        if self._dimension is None:
            self._dimension = int(
                np.asarray(self._embeddings.embed_query("dimension probe")).shape[-1]
            )
        return self._dimension

    @property
    def max_batch_size(self) -> int:
        """Most texts per :meth:`embed` call."""
        return self._max_batch_size

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of ``texts``, L2-normalised."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        array = np.asarray(self._embeddings.embed_documents(list(texts)), dtype=np.float32)
        _check_batch(array, len(texts))
        self._dimension = int(array.shape[1])
        return normalise(array)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Vector of one search query, through the wrapped object's ``embed_query``."""
        vector = np.asarray(self._embeddings.embed_query(text), dtype=np.float32)
        return _one_vector(vector, self._model_id)


DEFAULT_BATCH_LIMIT: Final = 256
"""Texts per call for an embedder that does not say its ``max_batch_size`` (Mastra's default)."""
DEFAULT_CONCURRENCY: Final = 4
"""Concurrent ``embed`` calls for ``Embeddings`` and functions (override: ``max_concurrency``)."""
BATCH_FORM: Final = (
    "a function that embeds many texts at once: mark it f.batch = True; it is then called "
    "with a list of texts and must return one vector (a list of numbers) per text, in order"
)
"""The supported batch form of an embedding function (Mastra's), named in shape errors."""


class FunctionEmbedder:
    """An embedding function ``f(text)``, or ``f(texts)`` when marked ``f.batch = True``.

    Args:
        function: The embedding function.
        model_id: Name stored with the index (default: the function's qualified name).
    """

    def __init__(self, function: Callable[..., Any], *, model_id: str | None = None) -> None:
        self._function = function
        self._model_id = model_id or _function_name(function)
        self._dimension: int | None = None
        self.batch = getattr(function, "batch", False) is True
        """Whether the function takes a list of texts (``f.batch = True``)."""
        limit: Any = getattr(function, "max_batch_size", None)
        usable = isinstance(limit, int) and not isinstance(limit, bool) and limit > 0
        self._max_batch_size: int = limit if usable else DEFAULT_BATCH_LIMIT
        self.max_concurrency = _concurrency(function, None)
        """``embed`` calls run at once during indexing."""

    @property
    def model_id(self) -> str:
        """Name of the function (or the one given)."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """Vector length, found by embedding a probe text once."""
        if self._dimension is None:
            self._dimension = int(self.embed_query("dimension probe").shape[0])
        return self._dimension

    @property
    def max_batch_size(self) -> int:
        """Texts per :meth:`embed` call: the function's ``max_batch_size``, else 256."""
        return self._max_batch_size

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of ``texts`` (one call, or one call per text), L2-normalised.

        Raises:
            ValueError: the function returned something else than one vector per text.
        """
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if not self.batch:
            return normalise(np.stack([self.embed_query(text) for text in texts]))
        try:
            array = np.asarray(self._function(list(texts)), dtype=np.float32)
        except ValueError as exc:  # ragged rows
            msg = (
                f"Embedding function {self._model_id} returned rows of different lengths "
                f"({exc}). Expected {BATCH_FORM}."
            )
            raise ValueError(msg) from exc
        if array.ndim != 2 or array.shape[0] != len(texts) or array.shape[1] == 0:
            msg = (
                f"Embedding function {self._model_id} (f.batch = True) returned an array of "
                f"shape {array.shape} for {len(texts)} texts; expected {BATCH_FORM}."
            )
            raise ValueError(msg)
        self._dimension = int(array.shape[1])
        return normalise(array)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Vector of one text."""
        if self.batch:
            return np.asarray(self.embed([text])[0], dtype=np.float32)
        try:
            vector = np.asarray(self._function(text), dtype=np.float32)
        except ValueError as exc:  # ragged rows: probably a batch function given one text
            msg = (
                f"Embedding function {self._model_id} returned rows of different lengths for "
                f"one text ({exc}); a single-text function returns one flat list of numbers, "
                f"or use {BATCH_FORM}."
            )
            raise ValueError(msg) from exc
        if vector.ndim != 1 or vector.shape[0] == 0:
            msg = (
                f"Embedding function {self._model_id} returned an array of shape "
                f"{vector.shape} for one text; a single-text function returns one flat list "
                f"of numbers. For {BATCH_FORM}."
            )
            raise ValueError(msg)
        vector = _one_vector(vector, self._model_id)
        self._dimension = int(vector.shape[0])
        return vector


class BatchAdapter:
    """An object with ``embed(texts)`` that lacks some of :class:`Embedder`'s properties."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        limit: Any = getattr(inner, "max_batch_size", None)
        usable = isinstance(limit, int) and not isinstance(limit, bool) and limit > 0
        self._max_batch_size: int = limit if usable else DEFAULT_BATCH_LIMIT
        name = getattr(inner, "model_id", None)
        self._model_id = name if isinstance(name, str) and name else _describe(inner)
        dimension = getattr(inner, "dimension", None)
        self._dimension = dimension if isinstance(dimension, int) else None
        declared = getattr(inner, "max_concurrency", None)
        self.max_concurrency = declared if isinstance(declared, int) and declared > 0 else 1
        """``embed`` calls run at once: the object's ``max_concurrency``, or 1."""

    @property
    def model_id(self) -> str:
        """The wrapped object's ``model_id``, or its class name."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """The wrapped object's ``dimension``, or the length of a probe vector."""
        if self._dimension is None:
            self._dimension = int(self.embed(["dimension probe"]).shape[1])
        return self._dimension

    @property
    def max_batch_size(self) -> int:
        """The wrapped object's ``max_batch_size``, or :data:`DEFAULT_BATCH_LIMIT`."""
        return self._max_batch_size

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Vectors of ``texts``, L2-normalised."""
        array = np.asarray(self._inner.embed(list(texts)), dtype=np.float32)
        _check_batch(array, len(texts))
        return normalise(array)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Vector of one query: the wrapped ``embed_query`` if there is one, else ``embed``."""
        method = getattr(self._inner, "embed_query", None)
        if callable(method):
            return _one_vector(np.asarray(method(text), dtype=np.float32), self._model_id)
        return np.asarray(self.embed([text])[0], dtype=np.float32)


def _one_vector(vector: npt.NDArray[np.float32], model_id: str) -> npt.NDArray[np.float32]:
    if vector.ndim != 1 or vector.shape[0] == 0:
        msg = (
            f"Embedder {model_id} returned an array of shape {vector.shape} for one text; "
            "expected one flat list of numbers."
        )
        raise ValueError(msg)
    return np.asarray(normalise(vector[None, :])[0], dtype=np.float32)


def _concurrency(source: Any, given: int | None) -> int:
    """``given``, else ``source.max_concurrency``, else :data:`DEFAULT_CONCURRENCY`."""
    value = given if given is not None else getattr(source, "max_concurrency", None)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return DEFAULT_CONCURRENCY
    return value


def _function_name(function: Callable[..., Any]) -> str:
    name = getattr(function, "__qualname__", None) or type(function).__name__
    module = getattr(function, "__module__", None)
    return f"{module}.{name}" if module else str(name)


def _check_batch(array: npt.NDArray[np.float32], count: int) -> None:
    """Refuse a batch result that is not one flat vector per input text."""
    if array.ndim != 2 or array.shape[0] != count:
        got = array.shape[0] if array.ndim else 0
        msg = f"Embedder returned {got} embeddings for {count} inputs."
        raise ValueError(msg)


def as_embedder(value: Any) -> Embedder:
    """Turn a model name or path, an :class:`Embedder` or LangChain ``Embeddings`` into one."""
    if isinstance(value, str):
        return SentenceTransformerEmbedder(value)
    if isinstance(value, Embedder):
        return value
    if hasattr(value, "embed_documents") and hasattr(value, "embed_query"):
        return EmbeddingsAdapter(value)
    if callable(getattr(value, "embed", None)):
        return BatchAdapter(value)
    if callable(value):
        return FunctionEmbedder(value)
    msg = (
        f"Cannot use {type(value).__name__} as an embedder. Pass a sentence-transformers model "
        "name or path, an object with embed(texts), one with embed_documents/embed_query, a "
        "function f(text) -> list[float], or a batch function f(texts) -> list[list[float]] "
        "marked f.batch = True."
    )
    raise TypeError(msg)


def _describe(embeddings: Any) -> str:
    name = getattr(embeddings, "model_name", None) or getattr(embeddings, "model", None)
    cls = type(embeddings).__name__
    return f"{cls}:{name}" if isinstance(name, str) else cls
