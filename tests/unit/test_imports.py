"""Importing the package must stay light: no torch, FAISS, sentence-transformers or LangChain."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "torch",
    "faiss",
    "sentence_transformers",
    "transformers",
    "langchain",
    "langchain_core",
    "ray",
)


@pytest.mark.parametrize(
    "statement",
    [
        "import workspace_tools",
        "import workspace_tools.core",
        "from workspace_tools import Workspace, SentenceTransformerEmbedder",
        "from workspace_tools.core.distributed import index_on_ray",
    ],
)
def test_import_leaves_heavy_modules_unloaded(statement: str) -> None:
    code = (
        f"{statement}\n"
        "import json, sys\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & set(heavy))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
