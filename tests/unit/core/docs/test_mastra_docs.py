"""The docs index over the real Mastra documentation tree (skipped when it is absent)."""

from __future__ import annotations

import pytest

from tests.support.paths import BENCHMARKS, missing
from workspace_tools.core.docs.index import DocsIndex

MASTRA = BENCHMARKS / "mastra-docs"
PAGES_ROOT = MASTRA / "en"

pytestmark = pytest.mark.skipif(not PAGES_ROOT.is_dir(), reason=missing(PAGES_ROOT))


@pytest.fixture(scope="module")
def mastra() -> DocsIndex:
    return DocsIndex(PAGES_ROOT)


def test_every_page_is_listed_with_a_title(mastra: DocsIndex) -> None:
    on_disk = sorted(p.relative_to(PAGES_ROOT).as_posix() for p in PAGES_ROOT.rglob("*.mdx"))
    pages = mastra.list_pages()
    assert len(on_disk) == 430
    assert [p.path for p in pages] == on_disk
    assert all(p.title.strip() for p in pages)
    # The 14 pages without frontmatter take their first heading.
    assert mastra.get_page("reference/memory/query.mdx").title == "query"


def test_mdx_noise_stays_out(mastra: DocsIndex) -> None:
    # 'nextra' appears only in MDX import lines and markup attributes: typo matches remain.
    assert all("nextra" not in hit.snippet for hit in mastra.search("nextra", top_k=50))
    # A prop name that lives only inside a <PropertiesTable> (and a code sample) is found.
    paths = [hit.path for hit in mastra.search("vectorSearchString", top_k=3)]
    assert "reference/memory/query.mdx" in paths


def test_scoped_index(mastra: DocsIndex) -> None:
    scoped = DocsIndex(PAGES_ROOT, scope="reference/memory")
    assert 0 < len(scoped.list_pages()) < len(mastra.list_pages())
    assert all(p.path.startswith("reference/memory/") for p in scoped.list_pages())
