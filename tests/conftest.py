"""Shared fixtures: a deterministic fake embedder, the shared benchmark folder, small trees."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BENCHMARKS = SHARED / "benchmarks"


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


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small workspace: Markdown with sections, code, text, a binary and an ignored file."""
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "docs" / "guide.md").write_text(
        "# Guide\n\nWelcome to the guide.\n\n## Installation\n\nRun pip install to install the package.\n"
        "Installing needs Python.\n\n## Searching\n\nCall search with a query to find chunks.\n",
        encoding="utf-8",
    )
    (root / "docs" / "faq.md").write_text(
        "# FAQ\n\n## Why BM25?\n\nBecause keyword ranking is fast and exact.\n", encoding="utf-8"
    )
    (root / "src" / "http.py").write_text(
        "def parseHttpRequest(raw):\n    return raw.split()\n\n\nclass snake_case_name:\n    pass\n",
        encoding="utf-8",
    )
    (root / "notes.txt").write_text(
        "Café au lait and crème brûlée.\nПривет мир.\n東京タワーは高い。\n", encoding="utf-8"
    )
    (root / "image.bin").write_bytes(b"\x89PNG\x00\x01\x02\x03")
    (root / ".gitignore").write_text("ignored/\n*.log\n", encoding="utf-8")
    (root / "ignored").mkdir()
    (root / "ignored" / "secret.md").write_text("do not index me", encoding="utf-8")
    (root / "debug.log").write_text("log line", encoding="utf-8")
    return root
