"""The folder the docs' examples run in: the small trees the pages name, and command shims.

Each page runs in its own copy, with the current folder at its top. It holds what a reader of the
docs has in front of them: this repository's ``README.md``, ``docs/`` and example skills (the
README's commands run from a clone), and the small projects the pages use as stand-ins for the
reader's own (``my-project``, ``project``, ``path/to/project``, ``path/to/docs``, ``skills``).

``bin/workspace-tools`` and ``.venv/bin/workspace-tools`` run this checkout's CLI
(``workspace_tools.cli.main``); ``.venv/bin/python`` is the test run's Python. Every Python they
start uses the fake embedder in place of the packaged model unless the block is marked
``<!-- doctest: model -->`` (see ``tests/support/doc_cli.py``).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from tests.support.docs_tree import make_docs_tree
from tests.support.hostile_files import pdf
from tests.support.paths import EXAMPLES, REPO

__all__ = ["FAKE_ENV", "MODEL_ENV", "build_sandbox", "npm_clients_missing", "sandbox_env"]

MODEL_ENV = "WORKSPACE_TOOLS_DOCTEST_MODEL"
"""Set (to ``1``) for a block marked ``model``, which keeps the real model."""
FAKE_ENV = "WORKSPACE_TOOLS_DOCTEST_FAKE"
"""Set (to ``1``) otherwise: every Python of the block gets the fake default model
(``tests/support/doc_site/sitecustomize.py``)."""

_CLI_SHIM = """#!{python}
import sys
sys.path.insert(0, {repo!r})
from tests.support.doc_cli import main
sys.exit(main())
"""

CODE_REVIEW = """---
name: code-review
description: Review code for bugs and readability. Use when asked to review a diff or a PR.
---

# Code review

1. Read the diff. 2. Check error handling. 3. Compare with references/style-guide.md.
"""

_PROJECT_FILES = {
    "docs/guide.md": (
        "# Guide\n\nThe index lives in `.workspace_tools/index` under the project root.\n\n"
        "## Saving\n\nEvery write is an atomic save: a crash keeps the old index or the new one.\n"
    ),
    "docs/http.md": "# HTTP\n\nRequests are parsed in src/http.py.\n",
    "src/http.py": (
        "def parse_http_request(raw: bytes) -> list[bytes]:\n"
        '    """Split a raw HTTP request into its lines."""\n'
        "    return raw.split(b'\\r\\n')\n"
    ),
    "skills/code-review/SKILL.md": CODE_REVIEW,
    "skills/code-review/references/style-guide.md": "# Style\n\nShort functions, clear names.\n",
    "team-skills/release-notes/SKILL.md": (
        "---\nname: release-notes\ndescription: Write release notes from merged changes.\n---\n"
        "List what changed for users, newest first.\n"
    ),
}


_MASTRA_LIKE = {
    "docs/workflows/inngest-workflow.mdx": (
        "---\ntitle: Inngest workflow\ndescription: Run workflows on Inngest.\n---\n\n"
        "# Inngest workflow\n\nInngest runs each workflow step durably.\n"
    ),
    "docs/deployment/vercel.mdx": (
        "---\ntitle: Deploy to Vercel\n---\n\n# Deploy to Vercel\n\n"
        "The Vercel deployer bundles the server for Vercel functions.\n"
    ),
    "reference/rag/chunk.mdx": (
        "---\ntitle: chunk()\n---\n\n# chunk()\n\nSplits a document into chunks for RAG.\n"
    ),
}
"""Pages shaped like the Mastra docs the docs-search examples query."""


def report_pdf(pages: int = 3) -> bytes:
    """A small text PDF (``pages`` pages, two lines each), as the docs' ``report.pdf``."""
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    kids = []
    for page in range(pages):
        number = 4 + 2 * page
        kids.append(b"%d 0 R" % number)
        text = (
            b"BT /F1 12 Tf 72 720 Td (Quarterly report, page %d) Tj 0 -16 Td "
            b"(Revenue grew in every region.) Tj ET" % (page + 1)
        )
        objects[number] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (number + 1)
        )
        objects[number + 1] = b"<< /Length %d >>\nstream\n" % len(text) + text + b"\nendstream"
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), pages)
    return pdf(objects)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def build_sandbox(root: Path) -> Path:
    """Fill ``root`` with the trees and shims the docs' examples use; return ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "README.md", root / "README.md")
    # docs/ as a clone has it (pages and results/), without an index built in the checkout
    shutil.copytree(REPO / "docs", root / "docs", ignore=shutil.ignore_patterns(".*"))
    # the package folder and the example skills of a clone (`python -m workspace_tools.cli`, as
    # `mcp smoke` runs its server, imports the package from the current folder)
    (root / "workspace_tools").symlink_to(REPO / "workspace_tools")
    (root / "skills_examples").symlink_to(EXAMPLES)
    for project in ("my-project", "project", "path/to/project"):
        _write(root / project, _PROJECT_FILES)
    for folder in (root, root / "project"):
        (folder / "report.pdf").write_bytes(report_pdf())
    _write(root, {k: v for k, v in _PROJECT_FILES.items() if not k.startswith("docs/")})
    make_docs_tree(root / "path" / "to" / "docs")
    _write(root / "path" / "to" / "docs", _MASTRA_LIKE)
    node_modules = REPO / "tests" / "npm" / "node_modules"
    if node_modules.is_dir():  # `npx PACKAGE` finds the pinned clients here, offline
        (root / "node_modules").symlink_to(node_modules)
    _shims(root)
    return root


def npm_clients_missing() -> str | None:
    """Why ``npm`` blocks cannot run here, or ``None`` when the npm clients are installed."""
    inspector = REPO / "tests" / "npm" / "node_modules" / "@modelcontextprotocol" / "inspector"
    if shutil.which("npx") is None:
        return "needs node and npx"
    if not inspector.is_dir():
        return "npm clients not installed: run `npm ci --prefix tests/npm`"
    return None


def _shims(root: Path) -> None:
    shim = _CLI_SHIM.format(python=sys.executable, repo=str(REPO))
    for folder in (root / "bin", root / ".venv" / "bin"):
        folder.mkdir(parents=True, exist_ok=True)
        cli = folder / "workspace-tools"
        cli.write_text(shim, encoding="utf-8")
        cli.chmod(0o755)
    python = root / ".venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n', encoding="utf-8")
    python.chmod(0o755)


def sandbox_env(root: Path, *, model: bool) -> dict[str, str]:
    """The environment a shell block runs with: offline, the shims first on ``PATH``."""
    env = {
        **os.environ,
        "PATH": f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONPATH": f"{REPO / 'tests' / 'support' / 'doc_site'}{os.pathsep}{REPO}",
    }
    env.pop("WORKSPACE_TOOLS_ROOT", None)
    if model:
        env[MODEL_ENV] = "1"
        env.pop(FAKE_ENV, None)
    else:
        env.pop(MODEL_ENV, None)
        env[FAKE_ENV] = "1"
    return env
