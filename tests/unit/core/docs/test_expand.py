from __future__ import annotations

import pytest

from workspace_tools.core.docs.expand import ExpansionConfig, QueryExpander, surface_map
from workspace_tools.core.text.tokenizer import Tokenizer

WORDS = ["sky", "skyscraper", "deployment", "deployer", "memory", "caching", "parseHttpRequest"]


@pytest.fixture
def expander() -> QueryExpander:
    tokenizer = Tokenizer()
    return QueryExpander(surface_map(WORDS, tokenizer), tokenizer)


def test_surface_map_links_unstemmed_words_to_index_terms() -> None:
    mapping = surface_map(["memory", "parseHttpRequest"], Tokenizer())
    assert mapping["memory"] == "memori"
    assert mapping["parsehttprequest"] == "parsehttprequest"
    assert mapping["request"] == "request"


def test_exact_term_first_then_prefix_matches_at_lower_weight(expander: QueryExpander) -> None:
    assert expander.expand("sky") == [[("sky", 1.0), ("skyscrap", 0.5)]]


def test_prefix_of_a_longer_word(expander: QueryExpander) -> None:
    [group] = expander.expand("deplo")
    assert group[0] == ("deplo", 1.0)
    assert ("deploy", 0.5) in group


def test_typo_maps_to_the_stemmed_index_term(expander: QueryExpander) -> None:
    # 'memroy' swaps two letters: one edit on the surface word, far from the stem 'memori'.
    assert expander.expand("memroy") == [[("memroy", 1.0), ("memori", 0.5)]]


def test_short_and_known_words_are_not_typo_expanded(expander: QueryExpander) -> None:
    assert expander.expand("skz") == [[("skz", 1.0)]]  # 3 letters: no typo, no prefix match
    # 'caching' is a corpus word: not treated as a typo of anything.
    assert expander.expand("caching") == [[("cach", 1.0)]]


def test_repeated_words_give_one_group(expander: QueryExpander) -> None:
    assert len(expander.expand("memory memory Memory")) == 1


def test_switches_and_weights() -> None:
    tokenizer = Tokenizer()
    surfaces = surface_map(WORDS, tokenizer)
    off = QueryExpander(surfaces, tokenizer, config=ExpansionConfig(prefix=False, typo=False))
    assert off.expand("sky memroy") == [[("sky", 1.0)], [("memroy", 1.0)]]
    custom = ExpansionConfig(prefix_weight=0.3, typo_weight=0.2)
    assert QueryExpander(surfaces, tokenizer, config=custom).expand("memroy") == [
        [("memroy", 1.0), ("memori", 0.2)]
    ]
    with pytest.raises(ValueError, match="prefix_weight must be in"):
        ExpansionConfig(prefix_weight=1.5)


def test_neighbouring_query_words_match_an_identifier_the_docs_write_as_one() -> None:
    tokenizer = Tokenizer()
    surfaces = surface_map(["createThread", "Text-to-Speech", "thread", "speech"], tokenizer)
    expander = QueryExpander(surfaces, tokenizer)
    create = expander.expand("create a thread")  # no run: 'a' sits between the words
    assert [g[0][0] for g in create] == ["creat", "thread"]
    joined = expander.expand("create thread")
    assert joined[-1] == [("createthread", 1.0)]
    assert expander.expand("convert text to speech")[-1] == [("text-to-speech", 1.0)]
    # a run the docs do not write as one word adds nothing; the switch turns it off
    assert expander.expand("thread speech") == [[("thread", 1.0)], [("speech", 1.0)]]
    off = QueryExpander(surfaces, tokenizer, config=ExpansionConfig(join_words=1))
    assert [g[0][0] for g in off.expand("create thread")] == ["creat", "thread"]
    with pytest.raises(ValueError, match="join_words must be"):
        ExpansionConfig(join_words=-1)
