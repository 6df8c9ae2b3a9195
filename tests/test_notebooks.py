"""Every notebook in ``notebooks/`` runs top to bottom, offline, and is stored with its outputs.

Refresh the stored outputs with ``.venv/bin/python -m tests.support.run_notebooks``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import REPO

NOTEBOOKS = REPO / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
CELL_TIMEOUT_S = 300
"""A hang guard per cell; whole notebooks take 3-20 s (see docs/getting-started.md), but on a
machine that has never run the default model the quickstart's first cell also converts it for
OpenVINO once (15-60 s, more under load)."""

nbformat = pytest.importorskip("nbformat")


def test_there_are_notebooks() -> None:
    names = {p.name for p in PATHS}
    assert {
        "01_quickstart.ipynb",
        "02_skills.ipynb",
        "03_agent.ipynb",
        "04_docs_search.ipynb",
    } <= names


def _noise(book: object) -> list[str]:
    """Errors and warnings a reader should never see in a stored or fresh run."""
    found = []
    for cell in book.cells:  # type: ignore[attr-defined]
        for output in cell.get("outputs", []):
            text = str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
            if output.get("output_type") == "error":
                found.append(f"error: {output.get('ename')}: {output.get('evalue')}")
            elif "TqdmWarning" in text or "IProgress not found" in text:
                found.append("TqdmWarning (ipywidgets missing)")
    return found


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_is_stored_with_outputs(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    counts = [cell.get("execution_count") for cell in code]
    assert None not in counts, (
        f"{path.name}: store it executed (python -m tests.support.run_notebooks)"
    )
    assert counts == sorted(counts), f"{path.name}: cells were run out of order"
    assert any(cell.get("outputs") for cell in code)
    assert not _noise(book)


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbclient = pytest.importorskip("nbclient")
    # The kernel inherits this environment: no model or data set may come from the network.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("MPLBACKEND", "agg")
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        book,
        kernel_name="python3",  # ipykernel's spec; "python" in its argv resolves to this interpreter
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(NOTEBOOKS)}},  # run with notebooks/ as the cwd
    )
    client.execute()
    assert not _noise(book)
