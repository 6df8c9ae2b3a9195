"""Execute every notebook in ``notebooks/`` and store it with its outputs.

Run ``.venv/bin/python -m tests.support.run_notebooks`` after editing a notebook; the notebooks
are committed with outputs so readers (and the docs) see what each cell prints, and
``tests/test_notebooks.py`` checks they still run and are stored executed.
"""

from __future__ import annotations

import os

import nbclient
import nbformat

from tests.support.paths import REPO

NOTEBOOKS = REPO / "notebooks"


def main() -> None:
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", MPLBACKEND="agg")
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        book = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(
            book,
            kernel_name="python3",
            timeout=300,
            resources={"metadata": {"path": str(NOTEBOOKS)}},
        ).execute()
        book.metadata.pop("widgets", None)  # widget state is machine noise
        nbformat.write(book, path)
        print(f"executed {path.name}")


if __name__ == "__main__":
    main()
