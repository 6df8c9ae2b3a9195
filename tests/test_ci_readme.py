"""CI (``.ci/run``) runs exactly the README's commands: its setup, its extras line, its tests.

The README shows two test commands: the fast default set (``pytest -q``) and the full set
(``pytest -q --full``). The full one is the last line of ``.ci/run``, verbatim, so CI runs every
test, the doc tests (``tests/test_docs_examples.py``) included. The install lines may differ only
by pip's and npm's quiet flags.
"""

from __future__ import annotations

import shlex

from tests.support.doc_blocks import Block, page_blocks
from tests.support.paths import REPO

QUIET = {"--no-cache-dir", "-q", "--no-audit", "--no-fund"}


def _commands(script: str) -> list[str]:
    out = []
    for line in script.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "set ", "cd ", "export ")):
            continue
        out.extend(part.strip() for part in line.split("&&"))
    return out


def _normal(command: str) -> list[str]:
    return [word for word in shlex.split(command) if word not in QUIET]


def _readme_block(needle: str) -> Block:
    blocks = page_blocks(REPO / "README.md", REPO)
    found = [b for b in blocks if b.lang == "sh" and needle in b.code]
    assert len(found) == 1, f"README.md should have one sh block with {needle!r}"
    return found[0]


def test_ci_runs_the_readme_setup_with_the_documented_extras_then_its_test_command() -> None:
    setup = _commands(_readme_block("python3 -m venv .venv").code)
    extras = _commands(_readme_block('".[all,ray,milvus]"').code)
    test = _commands(_readme_block("-m pytest -q --full").code)
    assert len(test) == 1
    ci = _commands((REPO / ".ci" / "run").read_text(encoding="utf-8"))

    readme_all = next(c for c in setup if '".[all]"' in c)
    ci_install = next(c for c in extras if "pip install" in c)
    expected = [ci_install if c == readme_all else c for c in setup]
    expected += [c for c in extras if c != ci_install] + test
    assert [_normal(c) for c in ci] == [_normal(c) for c in expected]
    assert ci[-1] == test[0]  # verbatim: CI runs the README's full-suite command itself


def test_the_readme_shows_the_fast_default_run_and_the_full_one() -> None:
    blocks = page_blocks(REPO / "README.md", REPO)
    runs = [c for b in blocks if b.lang == "sh" for c in _commands(b.code) if "-m pytest" in c]
    assert runs == [".venv/bin/python -m pytest -q", ".venv/bin/python -m pytest -q --full"]


def test_the_readme_extras_line_differs_from_its_setup_only_by_the_extras() -> None:
    setup = _commands(_readme_block("python3 -m venv .venv").code)
    extras = _commands(_readme_block('".[all,ray,milvus]"').code)
    readme_all = next(c for c in setup if '".[all]"' in c)
    ci_install = next(c for c in extras if "pip install" in c)
    assert ci_install.replace('".[all,ray,milvus]"', '".[all]"') == readme_all
