"""``quality_collections.py`` with the index's vectors quantised to int8, to weigh int8 at rest.

Run: ``.venv/bin/python tests/benchmarks/quality_int8.py [quality_collections.py's options]``

Every vector ``DenseIndex.add`` receives is first quantised to int8 with one symmetric scale per
vector (``max |x| / 127``) and dequantised, so searches score what an int8 cache (388 bytes a
384-d vector: 384 codes and a float32 scale) would give back. Nothing is changed on disk; compare
the figures with a plain ``quality_collections.py`` run (docs/benchmarks.md, "Vectors at rest").
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

import numpy as np

from workspace_tools.core.backends.embedded import dense

_add = dense.DenseIndex.add


def _int8_add(self: dense.DenseIndex, ids: Any, vectors: Any) -> None:
    values = np.asarray(vectors, dtype=np.float32)
    scale = np.abs(values).max(axis=1, keepdims=True) / 127.0
    scale[scale == 0] = 1.0
    codes = np.clip(np.rint(values / scale), -127, 127).astype(np.int8)
    _add(self, ids, codes.astype(np.float32) * scale)


if __name__ == "__main__":
    dense.DenseIndex.add = _int8_add  # type: ignore[method-assign]
    script = Path(__file__).resolve().parent / "quality_collections.py"
    sys.argv = [str(script), *sys.argv[1:]]
    runpy.run_path(str(script), run_name="__main__")
