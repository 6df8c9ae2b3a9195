"""Page types and query intent in docs search: the guide answers "how do I", unless asked otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from workspace_tools.core.docs.index import DocsIndex, PagePrior
from workspace_tools.core.docs.page_types import page_factor, page_type, query_intent

GUIDE = """---
title: Suspend and resume
description: Pause a workflow and continue it later.
---

# Suspend and resume

A workflow can stop at a step and wait. Call suspend inside the step; later, resume the run with
the data the step was waiting for. The state is kept in storage meanwhile.
"""

EXAMPLE = """---
title: Suspend and resume
description: A workflow that suspends and resumes.
---

# Example

This workflow suspends at its second step, then resumes when the data arrives.
"""

REFERENCE = """---
title: suspend()
description: Options of suspend.
---

# suspend()

Suspends the workflow step. Resume the workflow with resume().

## Options

payload: data kept while the workflow is suspended. Returns a promise.
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel, text in {
        "docs/workflows/suspend-and-resume.md": GUIDE,
        "examples/workflows/suspend-and-resume.md": EXAMPLE,
        "reference/workflows/suspend.md": REFERENCE,
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_page_type_comes_from_the_folders() -> None:
    assert page_type("docs/workflows/suspend.mdx") == "guide"
    assert page_type("reference/workflows/suspend.mdx") == "reference"
    assert page_type("en/API/agents.md") == "reference"
    assert page_type("examples/rag/basic.mdx") == "example"
    assert page_type("cookbook/rag.md") == "example"
    assert page_type("reference.md") == "guide"  # a file name is not a folder


def test_query_intent_from_the_wording() -> None:
    assert query_intent("How do I suspend a workflow?") == "guide"
    assert query_intent("what is working memory") == "guide"
    assert query_intent("what options does createTool accept") == "reference"
    assert query_intent("parameters of the Agent constructor") == "reference"
    assert query_intent("example of a human in the loop workflow") == "example"
    assert query_intent("suspend resume") is None


def test_page_factor_multiplies_guide_and_match() -> None:
    prior = PagePrior(guide=1.3, match=1.5)
    assert page_factor("guide", "guide", prior) == pytest.approx(1.95)
    assert page_factor("guide", None, prior) == pytest.approx(1.3)
    assert page_factor("reference", "reference", prior) == pytest.approx(1.5)
    assert page_factor("example", "guide", prior) == 1.0


def test_page_prior_refuses_non_positive_factors() -> None:
    with pytest.raises(ValueError, match=r"Page prior factors must be > 0, got guide=0, match=1"):
        PagePrior(guide=0, match=1)


def top(index: DocsIndex, query: str) -> str:
    return index.search(query, top_k=3)[0].path


def test_the_guide_answers_how_do_i_where_the_example_repeats_the_words(tree: Path) -> None:
    query = "how do I suspend and resume a workflow"
    assert top(DocsIndex(tree), query) == "docs/workflows/suspend-and-resume.md"
    off = DocsIndex(tree, page_prior=PagePrior(guide=1.0, match=1.0))
    assert top(off, query) == "examples/workflows/suspend-and-resume.md"


def test_asking_for_an_example_or_the_options_finds_that_kind(tree: Path) -> None:
    index = DocsIndex(tree)
    assert top(index, "example of suspend and resume workflow") == (
        "examples/workflows/suspend-and-resume.md"
    )
    assert top(index, "what options does suspend accept") == "reference/workflows/suspend.md"
