"""Hybrid DocsIndex: vectors over sections fused with the weighted lexical ranking (issue 29)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.docs.index import DocsIndex, HybridConfig
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.tools.docs import make_docs_tools

SYNONYMS = {"canine": "dog", "canines": "dogs", "automobile": "car"}


class SynonymEmbedder(FakeEmbedder):
    """Bag-of-words vectors in which a few synonyms share a word: meaning without the word."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        mapped = [" ".join(SYNONYMS.get(w, w) for w in t.lower().split()) for t in texts]
        return super().embed(mapped)


@pytest.fixture
def pets(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "guides").mkdir(parents=True)
    (root / "guides" / "dogs.md").write_text(
        "---\ntitle: Dogs\n---\n# Dogs\n\nwalk the dog daily and feed the dog twice\n",
        encoding="utf-8",
    )
    (root / "guides" / "cars.md").write_text(
        "---\ntitle: Cars\n---\n# Cars\n\nwash the car and check the car tyres\n", encoding="utf-8"
    )
    (root / "other.md").write_text(
        "---\ntitle: Other\n---\n# Other\n\nnothing about pets here, only care in general\n",
        encoding="utf-8",
    )
    return root


def test_vectors_find_a_page_the_words_miss(pets: Path) -> None:
    lexical = DocsIndex(pets)
    hybrid = DocsIndex(pets, embedder=SynonymEmbedder())
    assert (lexical.mode, hybrid.mode) == ("lexical", "hybrid")
    assert [h.path for h in lexical.search("canine walk")] == ["guides/dogs.md"]
    assert lexical.search("automobile") == []
    assert [h.path for h in hybrid.search("automobile")][:1] == ["guides/cars.md"]
    assert hybrid.search("automobile", mode="lexical") == []
    assert hybrid.status() == "hybrid ranking (keywords + vectors of fake-bow)"
    assert lexical.status() == "keyword ranking (lexical; no embedder)"
    with pytest.raises(InvalidInputError, match=r"^Hybrid docs search needs an embedder"):
        lexical.search("x", mode="hybrid")


def test_folder_limits_the_vector_side_too(pets: Path) -> None:
    hybrid = DocsIndex(pets, embedder=SynonymEmbedder())
    assert [h.path for h in hybrid.search("automobile care", folder="guides")] == ["guides/cars.md"]


def test_weight_zero_is_the_lexical_order(pets: Path) -> None:
    lexical = DocsIndex(pets)
    hybrid = DocsIndex(pets, embedder=SynonymEmbedder(), hybrid=HybridConfig(vector_weight=0))
    query = "dog car care"
    assert [h.path for h in hybrid.search(query)][: len(lexical.search(query))] == [
        h.path for h in lexical.search(query)
    ]
    with pytest.raises(ValueError, match="Unknown fusion rule 'best'"):
        HybridConfig(fusion="best")


def test_refresh_embeds_only_changed_sections_and_the_cache_file_is_reused(
    pets: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "cache" / "vectors.npz"
    embedder = SynonymEmbedder()
    index = DocsIndex(pets, embedder=embedder, vector_cache=cache)
    first = embedder.texts_embedded
    assert first == index.stats.sections and cache.is_file()  # no page vectors by default
    index.refresh()
    assert embedder.texts_embedded == first  # nothing changed
    (pets / "guides" / "cars.md").write_text("# Cars\n\nan automobile guide\n", encoding="utf-8")
    index.refresh()
    assert embedder.texts_embedded == first + 1
    again = SynonymEmbedder()
    reopened = DocsIndex(pets, embedder=again, vector_cache=cache)
    assert again.texts_embedded == 0  # a new process reads the vectors from the cache file
    assert [h.path for h in reopened.search("car")][:1] == ["guides/cars.md"]
    cache.write_bytes(b"not a cache")
    fresh = SynonymEmbedder()
    with caplog.at_level(logging.WARNING):
        damaged = DocsIndex(pets, embedder=fresh, vector_cache=cache)
    assert "Ignoring the docs vector cache" in caplog.text
    assert fresh.texts_embedded == damaged.stats.sections  # rebuilt, not trusted
    other_model = SynonymEmbedder(model_id="another-model")
    DocsIndex(pets, embedder=other_model, vector_cache=cache)
    assert other_model.texts_embedded == damaged.stats.sections


def test_background_embedding_answers_lexically_first(pets: Path) -> None:
    index = DocsIndex(pets, embedder=SynonymEmbedder(), embed_in_background=True)
    deadline = time.monotonic() + 60  # hang guard only
    while not index.vectors_ready:
        assert [h.path for h in index.search("automobile")][:1] in ([], ["guides/cars.md"])
        assert time.monotonic() < deadline, "vectors never became ready"
        time.sleep(0.01)
    assert [h.path for h in index.search("automobile")][:1] == ["guides/cars.md"]


def test_docs_tools_offer_hybrid_search(pets: Path) -> None:
    search, _, _, refresh = make_docs_tools(pets, embedder=SynonymEmbedder(), vector_cache=False)
    assert "fuses keywords with meaning" in search.description
    assert "guides/cars.md" in search.invoke({"query": "automobile"})
    assert refresh.invoke({}).endswith("hybrid ranking (keywords + vectors of fake-bow).")
    plain_search, _, _, plain_refresh = make_docs_tools(pets)
    assert "fuses keywords" not in plain_search.description
    assert plain_refresh.invoke({}).endswith("keyword ranking (lexical; no embedder).")


def test_the_page_vector_lends_its_meaning_to_every_section(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "pets.md").write_text(
        "---\ntitle: Pets\ndescription: all about the dog\n---\n# Walks\n\ngo out twice daily\n",
        encoding="utf-8",
    )
    (root / "plain.md").write_text("# Other\n\nnothing to see\n", encoding="utf-8")
    query = "canine"  # shares a word (dog) with the description only, not with any section
    words = SynonymEmbedder(dimension=4096)  # no two of these words share a dimension
    alone = DocsIndex(root, embedder=words)  # the default: the sections' vectors alone
    assert alone.search(query) == []
    embedder = SynonymEmbedder(dimension=4096)
    shared = DocsIndex(root, embedder=embedder, hybrid=HybridConfig(page_weight=0.5))
    assert embedder.texts_embedded == shared.stats.sections + shared.stats.pages
    assert [(h.path, h.heading) for h in shared.search(query)] == [("pets.md", "Walks")]
    with pytest.raises(ValueError, match=r"^page_weight must be between 0 and 1, got 1.5\.$"):
        HybridConfig(page_weight=1.5)
