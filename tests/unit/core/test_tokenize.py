from __future__ import annotations

import pytest

from workspace_tools.core.tokenize import DEFAULT_STOPWORDS, Tokenizer, TokenizerConfig


@pytest.fixture
def tok() -> Tokenizer:
    return Tokenizer()


def test_lowercase_stopwords_and_stemming(tok: Tokenizer) -> None:
    assert tok.tokenize("The Running dogs are running quickly") == ["run", "dog", "run", "quick"]


def test_punctuation_splits_words(tok: Tokenizer) -> None:
    assert tok.tokenize("hello, world! (search)") == ["hello", "world", "search"]


def test_camel_case_identifier_is_split_and_kept_whole(tok: Tokenizer) -> None:
    terms = tok.tokenize("parseHttpRequest")
    assert terms[0] == "parsehttprequest"
    assert {"pars", "http", "request"} <= set(terms)


def test_snake_case_and_dotted_identifiers(tok: Tokenizer) -> None:
    assert tok.tokenize("snake_case_name") == ["snake_case_name", "snake", "case", "name"]
    assert tok.tokenize("foo.bar") == ["foo.bar", "foo", "bar"]
    assert tok.tokenize("HTTPServer")[:3] == ["httpserver", "http", "server"]


def test_accents_are_folded(tok: Tokenizer) -> None:
    assert tok.tokenize("Café résumé") == tok.tokenize("cafe resume")


def test_cyrillic_and_greek_are_searchable(tok: Tokenizer) -> None:
    assert tok.tokenize("Привет мир") == ["привет", "мир"]
    assert tok.tokenize("καλημέρα") == ["καλημερα"]


def test_cjk_becomes_unigrams_and_bigrams(tok: Tokenizer) -> None:
    terms = tok.tokenize("東京タワー")
    assert "東京" in terms and "タワ" in terms and "東" in terms
    assert set(tok.tokenize("東京")) <= set(terms)


def test_query_terms_are_distinct(tok: Tokenizer) -> None:
    assert tok.query_terms("search search SEARCH") == ["search"]


def test_empty_and_stopword_only_text(tok: Tokenizer) -> None:
    assert tok.tokenize("") == []
    assert tok.tokenize("the and of a") == []


def test_configurable_no_stemming_no_stopwords() -> None:
    tok = Tokenizer(TokenizerConfig(stemmer=None, stopwords=frozenset()))
    assert tok.tokenize("The running") == ["the", "running"]


def test_custom_stopwords_replace_defaults() -> None:
    tok = Tokenizer(TokenizerConfig(stopwords=frozenset({"foo"}), stemmer=None))
    assert tok.tokenize("foo the bar") == ["the", "bar"]
    assert "the" in DEFAULT_STOPWORDS


def test_unknown_stemmer_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="Unknown stemmer 'klingon'"):
        Tokenizer(TokenizerConfig(stemmer="klingon"))


def test_ids_match_terms(tok: Tokenizer) -> None:
    ids = tok.tokenize_ids("parse the HTTP request")
    inverse = {i: t for t, i in tok.vocab.items()}
    assert [inverse[i] for i in ids] == tok.tokenize("parse the HTTP request")
    assert tok.ids_of(["http", "never-seen"]) == [tok.vocab["http"]]


def test_config_round_trips_through_dict() -> None:
    cfg = TokenizerConfig(stemmer=None, cjk_bigrams=False)
    assert TokenizerConfig.from_dict(cfg.to_dict()) == cfg
