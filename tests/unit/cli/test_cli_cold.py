"""A cold `workspace-tools search` loads only what its query needs (checked in a new process).

A bm25 search of an index that also holds vectors loads no FAISS, OpenVINO, tokenizer, torch or
sentence-transformers; a hybrid one embeds its query on the lean path (OpenVINO and
`tokenizers`), without torch or sentence-transformers.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.embedding.embedder import DEFAULT_MODEL_ID, accelerator_possible

VECTOR_STACK = ("faiss", "openvino", "tokenizers", "nncf")
TORCH_STACK = ("torch", "sentence_transformers", "transformers")

needs_vector_extra = pytest.mark.skipif(
    any(importlib.util.find_spec(name) is None for name in ("faiss", "sentence_transformers")),
    reason="the vector extra is not installed (the search would be bm25-only anyway)",
)

PROBE = """
import json, sys
from workspace_tools.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
raise SystemExit(code)
"""


def cold_search(root: Path, *args: str, full: bool = False) -> tuple[str, set[str]]:
    """Run `workspace-tools --root ROOT -q search ...` in a new process: output, modules.

    The modules are the top-level packages imported, or with ``full`` every module's full name.
    """
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "--root", str(root), "-q", "search", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out, _, modules = done.stdout.rpartition("\nMODULES ")
    names = set(json.loads(modules))
    return out, names if full else {name.split(".")[0] for name in names}


@pytest.fixture
def vector_index(tree: Path) -> Path:
    """The tree indexed with vectors that pass for the default model's (same id and size)."""
    ws = Workspace(tree, embedder=FakeEmbedder(384, model_id=DEFAULT_MODEL_ID))
    ws.sync()
    assert "hybrid" in ws.modes
    return tree


CLI_EXTRAS = (
    "workspace_tools.core.skills",  # registered for `skills ...`: imported when one runs
    "workspace_tools.core.grep",  # `grep` shows its limits in --help from core.grep_limits
    "yaml",  # read only when the project has a workspace-tools.yaml
    "rich",  # only to quiet nncf's progress bars while a model is converted
)


def test_a_cold_bm25_search_skips_the_other_commands_stacks(tree: Path) -> None:
    Workspace(tree, embedder=None).sync()
    out, modules = cold_search(tree, "install package", "--mode", "bm25", full=True)
    assert "docs/guide.md:5-7" in out
    assert "workspace_tools.cli.skills" in modules  # its parser is registered...
    assert modules.isdisjoint(CLI_EXTRAS), sorted(modules & set(CLI_EXTRAS))  # ...lazily


@needs_vector_extra
def test_a_cold_bm25_search_loads_nothing_it_does_not_use(vector_index: Path) -> None:
    out, modules = cold_search(vector_index, "install package", "--mode", "bm25")
    assert "docs/guide.md:5-7" in out and "(bm25 search" in out
    assert {"bm25s", "numpy"} <= modules  # it did search
    assert modules.isdisjoint(VECTOR_STACK)
    assert modules.isdisjoint(TORCH_STACK)


@needs_vector_extra
def test_next_to_a_gpu_driver_the_device_is_asked_only_when_needed(vector_index: Path) -> None:
    code = f"""
import sys
from workspace_tools.core.embedding import embedder
embedder.accelerator_possible = lambda: True  # as on a machine with an NVIDIA driver
from workspace_tools import Workspace
ws = Workspace({str(vector_index)!r})
assert ws.search("install package", mode="bm25")
assert "torch" not in sys.modules, "imported to resolve the device"
assert ws.embedder.device in ("cpu", "cuda", "mps") and "torch" in sys.modules
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.stdout.strip() == "ok", done.stderr


@needs_vector_extra
@pytest.mark.requires_model
def test_a_cold_hybrid_search_embeds_its_query_without_torch(vector_index: Path) -> None:
    from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder

    if accelerator_possible():
        pytest.skip("a GPU driver is present: the default model runs on torch there")
    SentenceTransformerEmbedder().load()  # converts and caches the model once, if not yet done
    out, modules = cold_search(vector_index, "install package", "--mode", "hybrid")
    assert "docs/guide.md:" in out and "(hybrid search" in out
    assert {"faiss", "openvino", "tokenizers"} <= modules  # the lean query path
    assert modules.isdisjoint(TORCH_STACK)
