"""Section vectors: one embedding at a time, and texts another call embedded are not embedded again."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from workspace_tools.core.docs.vectors import SectionVectors


class _Slow:
    """An embedder that counts the texts it embeds and how many calls run at once."""

    model_id = "slow"
    dimension = 4
    max_batch_size = 64

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.running = self.most = 0
        self._count = threading.Lock()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with self._count:
            self.running += 1
            self.most = max(self.most, self.running)
            self.texts.extend(texts)
        time.sleep(0.05)  # long enough for the other thread to arrive meanwhile
        with self._count:
            self.running -= 1
        return np.asarray([[len(t), 1.0, 0.0, 0.0] for t in texts], dtype=np.float32)


def test_calls_at_once_embed_one_at_a_time_and_each_text_once() -> None:
    embedder = _Slow()
    vectors = SectionVectors(embedder)  # type: ignore[arg-type]
    texts = [f"section {n} about installing" for n in range(10)]
    results: list[npt.NDArray[np.float32]] = []
    threads = [threading.Thread(target=lambda: results.append(vectors.embed_sections(texts)))]
    threads.append(threading.Thread(target=lambda: results.append(vectors.embed_sections(texts))))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert embedder.most == 1  # the second call waited for the first
    assert sorted(embedder.texts) == sorted(texts)  # ...and found its texts cached
    assert len(results) == 2 and np.array_equal(results[0], results[1])
