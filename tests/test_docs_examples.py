"""The docs are tested like code: every example in README.md and docs/*.md runs here.

One test per runnable block (``python``, ``sh``/``bash``, ``console``, ``mcp-config`` JSON), named
``page:line``; the blocks of a page run in order in one namespace and one sandbox folder
(``tests/support/doc_sandbox.py``), so a later block sees what an earlier one made. A block
marked ``<!-- doctest: skip (reason) -->`` is reported as skipped with its reason; an output
block marked ``<!-- doctest: output -->`` must match what its block printed. The rules are in
``tests/support/doc_blocks.py``; a page that breaks them fails ``test_page_follows_the_rules``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.support.doc_blocks import (
    EXTRA_MODULES,
    Block,
    DocSyntaxError,
    page_blocks,
    parse_blocks,
)
from tests.support.doc_runner import PageRun
from tests.support.doc_sandbox import npm_clients_missing
from tests.support.paths import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _blocks() -> list[Block]:
    found: list[Block] = []
    for page in PAGES:
        try:
            found.extend(b for b in page_blocks(page, REPO) if b.runnable)
        except DocSyntaxError:
            continue  # reported by test_page_follows_the_rules
    return found


BLOCKS = _blocks()


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, PageRun]:
    from tests.support.doc_mcp import run_mcp_config

    runs: dict[str, PageRun] = {}
    for page in PAGES:
        name = page.relative_to(REPO).as_posix()
        try:
            blocks = page_blocks(page, REPO)
        except DocSyntaxError:
            continue
        folder = tmp_path_factory.mktemp(page.stem) / "sandbox"
        runs[name] = PageRun(
            blocks, folder, extra_runners={"mcp-config": run_mcp_config}, skip=missing_here
        )
    return runs


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_page_follows_the_rules(page: Path) -> None:
    page_blocks(page, REPO)  # raises DocSyntaxError saying where and what


def extra_missing(extra: str) -> str | None:
    """Why a block needing ``extra`` cannot run here, or ``None``."""
    modules = EXTRA_MODULES.get(extra)
    assert modules is not None, f"unknown extra {extra!r} (known: {', '.join(EXTRA_MODULES)})"
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        return f'needs the {extra} extra (pip install "workspace-tools[{extra}]"), not installed'
    return None


def missing_here(block: Block) -> str | None:
    """Why ``block`` cannot run here (npm clients or an extra not installed), or ``None``."""
    if "npm" in block.directives and (why := npm_clients_missing()):
        return why
    if "extra" in block.directives and (why := extra_missing(block.directives["extra"])):
        return why
    return None


SHELL = ("sh", "bash", "console")


def _marks(block: Block) -> list[pytest.MarkDecorator]:
    """``requires_model`` when running ``block`` loads the real model, ``slow`` when it starts a
    process (a shell command, an MCP client config) or is marked ``slow``; a block runs the blocks
    above it first, so they count too. The fast default run leaves both out (tests/support/tiers.py)."""
    if block.skip_reason:
        return []  # never runs
    run = [b for b in BLOCKS if b.page == block.page and b.line <= block.line and not b.skip_reason]
    marks = []
    if any("model" in b.directives for b in run):
        marks.append(pytest.mark.requires_model)
    if any(b.lang in SHELL or "mcp-config" in b.directives or "slow" in b.directives for b in run):
        marks.append(pytest.mark.slow)
    return marks


@pytest.mark.parametrize("block", [pytest.param(b, id=b.where, marks=_marks(b)) for b in BLOCKS])
def test_doc_block(block: Block, page_runs: dict[str, PageRun]) -> None:
    run = page_runs[block.page]
    if (why := run.skip_reason(block)) is not None:
        pytest.skip(f"{block.where} ({block.lang}): {why}")
    run.run(block)


def test_a_block_skipped_here_is_a_skip_and_the_blocks_below_it_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39: an npm block skipped (no npm clients) was run anyway as the block above the
    next one, failed, and failed that next block ("not run: the block ... above it failed")."""
    reason = "npm clients not installed: run `npm ci --prefix tests/npm`"
    monkeypatch.setattr(sys.modules[__name__], "npm_clients_missing", lambda: reason)
    text = (
        "<!-- doctest: npm -->\n```sh\ntouch npm-block-ran\nexit 3\n```\n\n"
        "```sh\necho after\n```\n\n<!-- doctest: output -->\n```text\nafter\n```\n"
    )
    blocks = [b for b in parse_blocks(text, "page.md") if b.runnable]
    run = PageRun(blocks, tmp_path / "sandbox", skip=missing_here)
    with pytest.raises(pytest.skip.Exception, match=r"page\.md:2 \(sh\): npm clients not"):
        test_doc_block(blocks[0], {"page.md": run})
    test_doc_block(blocks[1], {"page.md": run})  # runs, and prints what the docs show
    assert not (tmp_path / "sandbox" / "npm-block-ran").exists()
    assert run.skip_reason(blocks[1]) is None
