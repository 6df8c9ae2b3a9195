"""Every notebook in ``notebooks/`` runs top to bottom, offline, and is stored without outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import REPO

NOTEBOOKS = REPO / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
CELL_TIMEOUT_S = 120
"""A hang guard per cell; whole notebooks take 3-20 s (see docs/getting-started.md)."""

nbformat = pytest.importorskip("nbformat")


def test_there_are_notebooks() -> None:
    names = {p.name for p in PATHS}
    assert {
        "01_quickstart.ipynb",
        "02_skills.ipynb",
        "03_agent.ipynb",
        "04_docs_search.ipynb",
    } <= names


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    dirty = [
        i
        for i, cell in enumerate(book.cells)
        if cell.cell_type == "code"
        and (cell.get("outputs") or cell.get("execution_count") is not None)
    ]
    assert not dirty, f"{path.name}: strip the outputs of cells {dirty} before committing"


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
    errors = [
        output
        for cell in book.cells
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors
