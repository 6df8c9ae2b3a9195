from __future__ import annotations

import random
import re

import numpy as np
import pytest

from workspace_tools.core.text import tokenizer as tokenizer_module
from workspace_tools.core.text.tokenizer import (
    DEFAULT_STOPWORDS,
    WORD_PATTERN,
    Tokenizer,
    TokenizerConfig,
    _is_single_term,
)


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


# --- The fast paths give exactly the terms of the full analysis ------------------------------

_TRICKY = (
    "parseHttpRequest snake_case_name foo.bar foo-bar _ __init__ a_b IT It DNA mRNA Il6 p53 GAS5 "
    "2014 1.5 0.05 x:y don't O'Brien HTTPServer XMLHttpRequest getX a1B2 1a2B ..a.. -x- it's ___ "
    "café RÉSUMÉ Ωmega Привет 東京都 日本語のテキスト ＡＢＣ ﬁle Straße İstanbul ǅemal 7α TGF-β1 ²³"
)


def _random_texts(count: int) -> list[str]:
    rng = random.Random(7)
    alphabet = "aAbBzZ09_.-:' éÉßαΩж東京ﾃ\u0301\n²ǅİ"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(count)]


@pytest.mark.parametrize(
    ("word", "single"),
    [
        ("cells", True),
        ("Cells", True),
        ("DNA", True),
        ("p53", True),
        ("GAS5", True),
        ("2014", True),
        ("A", True),
        ("mRNA", False),
        ("Il6", False),
        ("well-known", False),
        ("snake_case", False),
        ("_", False),
        ("café", False),
    ],
)
def test_single_term_fast_path_agrees_with_the_full_analysis(
    tok: Tokenizer, word: str, single: bool
) -> None:
    assert _is_single_term(word) is single
    # The fast path must give what the full analysis gives for the same word.
    full = tuple(tok._stem(t) for t in tok._split_terms(word))
    assert tok._analyse(word) == full
    ids = tok.tokenize_ids(word)
    inverse = {i: t for t, i in tok.vocab.items()}
    assert tuple(inverse[i] for i in ids) == full


@pytest.mark.parametrize(
    "config",
    [
        TokenizerConfig(),
        TokenizerConfig(lowercase=False),
        TokenizerConfig(fold_accents=False, cjk_bigrams=False),
        TokenizerConfig(stemmer=None, split_identifiers=False),
        TokenizerConfig(stopwords=frozenset({"dna", "DNA", "2014", "p53", "a_b", "it"})),
    ],
)
def test_id_path_gives_the_terms_of_the_string_path(config: TokenizerConfig) -> None:
    ids_tok, terms_tok = Tokenizer(config), Tokenizer(config)
    for text in [_TRICKY, *_random_texts(400)]:
        ids = ids_tok.tokenize_ids(text)
        inverse = {i: t for t, i in ids_tok.vocab.items()}
        assert [inverse[i] for i in ids] == terms_tok.tokenize(text), text


def test_word_pattern_matches_the_classic_pattern() -> None:
    # On Python 3.11+ WORD_PATTERN uses possessive quantifiers; it must find the same words.
    classic = re.compile(r"\w+(?:[.\-:']\w+)*")
    for text in [_TRICKY, *_random_texts(1000)]:
        assert WORD_PATTERN.findall(text) == classic.findall(text)


def test_restored_vocabulary_gives_the_saved_ids() -> None:
    first = Tokenizer()
    ids = first.tokenize_ids("Cells cell-type CELLS mRNA")
    restored = Tokenizer()
    restored.set_vocabulary(list(first.vocab))
    assert restored.tokenize_ids("Cells cell-type CELLS mRNA") == ids
    # Restoring another order on a warm tokenizer must not reuse stale term ids.
    reordered = list(reversed(list(first.vocab)))
    first.set_vocabulary(reordered)
    assert [reordered[i] for i in first.tokenize_ids("Cells cell-type")] == first.tokenize(
        "Cells cell-type"
    )


TERMS_TEXT_SAMPLES = [
    "",
    "the of and",
    "Parse parseHttpRequest, snake_case and foo.bar-baz: it's well-known (p53, GAS5, mRNA).",
    "Dots... and--dashes :: colons' 'quotes' x.y.z a_b_c __init__ 2024-01-02 v1.2.3",
    "Café résumé naïve Ünïcödé ΑΒΓ δέλτα Москва",
    "東京都の天気は晴れです。日本語テキスト and English",
    "tabs\tand\nnewlines\r\nand\u00a0no-break\u2003spaces",
    "CamelCaseXMLParser HTTPServer getURLFor2Parts ABCdef",
]


@pytest.mark.parametrize("text", TERMS_TEXT_SAMPLES)
def test_terms_text_is_the_joined_terms(text: str) -> None:
    tokenizer = Tokenizer()
    for _ in range(2):  # cold, then from the caches
        assert tokenizer.terms_text(text) == " ".join(tokenizer.tokenize(text))
    for config in (
        TokenizerConfig(stopwords=frozenset(), stemmer=None),
        TokenizerConfig(lowercase=False, fold_accents=False, split_identifiers=False),
        TokenizerConfig(cjk_bigrams=False),
    ):
        other = Tokenizer(config)
        assert other.terms_text(text) == " ".join(other.tokenize(text))


def test_terms_text_of_ascii_and_other_text_share_one_vocabulary_of_words() -> None:
    tokenizer = Tokenizer()
    ascii_text, other_text = "Running runners ran", "Running runners ran — café"
    assert tokenizer.terms_text(ascii_text).split() == tokenizer.terms_text(other_text).split()[:3]


def _reference_terms(tok: Tokenizer, text: str) -> list[str]:
    """Every word's full analysis, one word after the other (no cache, no bytes path)."""
    return [term for word in WORD_PATTERN.findall(text) for term in tok._analyse(word)]


@pytest.mark.parametrize(
    "config",
    [
        TokenizerConfig(),
        TokenizerConfig(lowercase=False, fold_accents=False, split_identifiers=False),
        TokenizerConfig(stemmer=None, stopwords=frozenset(), cjk_bigrams=False),
    ],
)
def test_tokenize_and_term_ids_give_every_word_s_analysis_in_order(
    config: TokenizerConfig,
) -> None:
    tok, numbered = Tokenizer(config), Tokenizer(config)
    vocab: dict[str, int] = {}
    texts = [_TRICKY, *TERMS_TEXT_SAMPLES, *_random_texts(300)]
    for text in texts * 2:  # cold, then from the caches
        terms = _reference_terms(tok, text)
        assert tok.tokenize(text) == terms, text
        ids = numbered.term_ids(text)
        assert ids.dtype == np.int32
        assert ids.tolist() == [vocab.setdefault(t, len(vocab)) for t in terms], text
    assert numbered.vocab == vocab
    many = Tokenizer(config)
    assert [a.tolist() for a in many.term_ids_many(texts)] == [
        numbered.term_ids(text).tolist() for text in texts
    ]


def test_term_ids_follow_a_restored_vocabulary() -> None:
    tok = Tokenizer()
    tok.term_ids("Cells cell-type CELLS mRNA")  # the word ids are cached for this vocabulary
    tok.set_vocabulary(["mrna", "cell"])
    ids = tok.term_ids("Cells cell-type CELLS mRNA")
    terms = tok.tokenize("Cells cell-type CELLS mRNA")
    assert [list(tok.vocab)[i] for i in ids.tolist()] == terms
    assert tok.vocab["mrna"] == 0 and tok.vocab["cell"] == 1  # the restored ids stay


def test_the_word_caches_start_again_past_their_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from workspace_tools.core.text import tokenizer as module

    monkeypatch.setattr(module, "_CACHE_LIMIT", 3)
    tok = Tokenizer()
    text = "alpha beta, gamma delta epsilon (zeta) alpha"
    assert tok.tokenize(text) == _reference_terms(tok, text)
    assert len(tok._cache) <= 3
    assert tok.term_ids(text).tolist() == [0, 1, 2, 3, 4, 5, 0]
    assert len(tok._id_cache) <= 3


def test_no_character_is_both_whitespace_and_part_of_a_word() -> None:
    """Why a text's words are its whitespace-separated tokens' words (``Tokenizer.tokenize``)."""
    import sys

    spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
    assert len(spaces.split()) == 0 and len(spaces) == 29
    assert WORD_PATTERN.findall(spaces) == [] and not re.search(r"[.\-:']", spaces)


def test_a_long_restored_vocabulary_is_searched_until_used_much(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Opening a big index makes no dict of its terms: a query's few lookups search the text."""
    monkeypatch.setattr(tokenizer_module, "LAZY_VOCABULARY_CHARS", 10)
    first = Tokenizer()
    first.tokenize_ids("Cells divide; mRNA levels of p53 rose in tumour cells over weeks")
    terms = list(first.vocab)
    restored = Tokenizer()
    restored.restore_vocabulary("\n".join([*terms, "cell"]))  # "cell" twice: the last id
    asked = {"mrna": 2, "p53": 1, "never-seen": 1, "cell": 1}
    assert restored.id_counts(asked) == {
        first.vocab["mrna"]: 2,
        first.vocab["p53"]: 1,
        len(terms): 1,
    }
    assert restored._saved, "made a dict for a query's lookups"
    for _ in range(tokenizer_module.VOCABULARY_FINDS):
        restored.id_counts({"weeks": 1})
    assert not restored._saved and restored.vocab["cell"] == len(terms)
    again = Tokenizer()
    again.restore_vocabulary("\n".join(terms))
    assert again.tokenize_ids("tumour cells and new words") == first.tokenize_ids(
        "tumour cells and new words"
    )
