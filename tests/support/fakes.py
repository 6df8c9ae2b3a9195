"""Fakes shared by every test: a deterministic embedder."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

__all__ = ["FakeEmbedder"]


class FakeEmbedder:
    """Hashed bag-of-words vectors: texts sharing words are close. Counts every call."""

    def __init__(
        self, dimension: int = 64, *, max_batch_size: int = 8, model_id: str = "fake-bow"
    ) -> None:
        self._dimension = dimension
        self._max_batch_size = max_batch_size
        self._model_id = model_id
        self.calls: list[int] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def max_batch_size(self) -> int:
        return self._max_batch_size

    @property
    def texts_embedded(self) -> int:
        return sum(self.calls)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.md5(word.encode()).digest()
                out[row, digest[0] % self._dimension] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
            else:
                out[row, 0] = 1.0
        return out
