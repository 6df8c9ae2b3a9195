"""The tokenizer's cold path (a token met for the first time) against an independent oracle.

The oracle is the tokenizer's rules written out plainly, one word of ``WORD_PATTERN`` after the
other, with no cache and none of the shortcuts the cold path takes (``str.strip`` for a word in
punctuation, ``fullmatch`` for a token that is one word, ``str.replace`` for the parts of a
word with no case change): term ids must be exactly the sequential numbering of its terms.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workspace_tools.core.text import tokenizer as module
from workspace_tools.core.text.tokenizer import (
    _CAMEL,
    _CJK,
    _PART_SPLIT,
    _PUNCTUATION,
    NEVER_IN_WORDS,
    WORD_PATTERN,
    Tokenizer,
    TokenizerConfig,
    _one_word,
    spaced_utf8,
)


class _Oracle:
    """The rules of ``tokenizer.py`` (module docstring), written out with no shortcut."""

    def __init__(self, config: TokenizerConfig) -> None:
        self.config = config
        self.stemmer = None
        if config.stemmer is not None:
            import Stemmer

            self.stemmer = Stemmer.Stemmer(config.stemmer)
        self.vocab: dict[str, int] = {}

    def terms(self, text: str) -> list[str]:
        return [term for word in WORD_PATTERN.findall(text) for term in self.word_terms(word)]

    def ids(self, text: str) -> list[int]:
        vocab = self.vocab
        return [vocab.setdefault(term, len(vocab)) for term in self.terms(text)]

    def word_terms(self, word: str) -> list[str]:
        cfg = self.config
        if cfg.cjk_bigrams and _CJK.search(word):
            surfaces = self.cjk(word)
        elif cfg.split_identifiers:
            parts = self.parts(word)
            surfaces = [word, *parts] if len(parts) > 1 else parts
        else:
            surfaces = [word]
        terms = [self.normalise(s) for s in surfaces]
        return [self.stem(t) for t in terms if t and t not in cfg.stopwords]

    def parts(self, word: str) -> list[str]:
        out: list[str] = []
        for piece in _PART_SPLIT.split(word):
            if piece and piece.isascii() and not piece.islower() and not piece.isupper():
                out.extend(_CAMEL.findall(piece) or [piece])
            elif piece:
                out.append(piece)
        return out

    def cjk(self, word: str) -> list[str]:
        out: list[str] = []
        pos = 0
        for match in _CJK.finditer(word):
            out.extend(self.parts(word[pos : match.start()]))
            run = match.group()
            out.extend(run)
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
            pos = match.end()
        out.extend(self.parts(word[pos:]))
        return out

    def normalise(self, surface: str) -> str:
        term = surface.lower() if self.config.lowercase else surface
        if self.config.fold_accents:
            decomposed = unicodedata.normalize("NFKD", term)
            term = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
            term = unicodedata.normalize("NFC", term)
        return term

    def stem(self, term: str) -> str:
        if self.stemmer is None or not (term.isalpha() and len(term) > 2):
            return term
        return str(self.stemmer.stemWord(term))


_WORDS: list[str] = str.split(
    "cells Cells CELLS cells, (cells) “cells” cells. cells.. -cells- 'cells' p53 (p53, GAS5 2014 "
    "1.5 0.05 (0.05) p<0.05 +/- = ... -- well-known (well-known), Well-Known WELL-KNOWN IL-10 "
    "IL-10, TGF-β TGF-β1 x:y a_b __init__ snake_case_name foo.bar foo..bar foo-.bar it's "
    "O'Brien don't 'quoted' mRNA mRNAs, Il6 parseHttpRequest HTTPServer getX a1B2 1a2B ABCdef "
    "ITAM-bearing non-CpG 24.7-fold 12.3-fold, café Café, RÉSUMÉ résumé. naïve Привет Ωmega "
    "東京都 日本語のテキスト (東京) ＡＢＣ ﬁle Straße İstanbul ǅemal 7α ²³ the of and The AND "
    "a an it It IT s S \ud800 a\udfffb (\ud83d) x\u0301 ·x· x·y «x» x–y x—y x…y ±1 2×3 §2 10°C"
)


def _random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = "aAbBzZ09_.-:'  ,;()[]/+<=>%“”«»–—…·§°±×éÉßαΩж東京ﾃ\u0301\n²ǅİ\ud800"
    texts = []
    for _ in range(count):
        if rng.random() < 0.5:
            texts.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 30))))
        else:
            texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))))
    return texts


_CONFIGS = [
    TokenizerConfig(),
    TokenizerConfig(lowercase=False),
    TokenizerConfig(fold_accents=False, cjk_bigrams=False),
    TokenizerConfig(stemmer=None, split_identifiers=False),
    TokenizerConfig(stemmer=None, stopwords=frozenset()),
    TokenizerConfig(stopwords=frozenset({"cell", "cells", "well", "known", "il", "10", "p53"})),
]


@pytest.mark.parametrize("config", _CONFIGS)
def test_term_ids_are_the_sequential_numbering_of_every_word_s_terms(
    config: TokenizerConfig,
) -> None:
    tok, oracle = Tokenizer(config), _Oracle(config)
    texts = [" ".join(_WORDS), *_random_texts(600, seed=11)]
    for text in texts * 2:  # cold, then from the caches
        assert tok.term_ids(text).tolist() == oracle.ids(text), text
        assert tok.tokenize(text) == oracle.terms(text), text
    assert tok.vocab == oracle.vocab and list(tok.vocab) == list(oracle.vocab)


_TOKENS = st.one_of(
    st.sampled_from(_WORDS),
    st.text(
        alphabet=st.one_of(
            st.sampled_from(_PUNCTUATION + "._-:'aA1 "),
            st.characters(blacklist_categories=()),  # surrogates, marks, CJK, anything
        ),
        max_size=12,
    ),
)


@pytest.mark.slow  # a hypothesis search over many texts
@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(st.lists(_TOKENS, max_size=12).map(" ".join), min_size=1, max_size=8))
def test_any_texts_get_the_ids_of_the_rules_one_after_the_other(texts: list[str]) -> None:
    tok, oracle = Tokenizer(), _Oracle(TokenizerConfig())
    for text in texts * 2:
        assert tok.term_ids(text).tolist() == oracle.ids(text)
    assert list(tok.vocab) == list(oracle.vocab)


def test_the_id_cache_holds_each_token_and_each_word_of_a_token_of_several() -> None:
    tok = Tokenizer()
    # The id path makes NEVER_IN_WORDS characters spaces first: "(cells)," is the token "cells",
    # "p<0.05" the tokens "p" and "0.05", "+/-" the token "-"; "≤" is not ASCII and stays.
    tok.term_ids("(cells), well-known. p<0.05 +/- Cells p≤0.05 “cells”")
    assert set(tok._id_cache) == {
        "cells",
        "well-known.",
        "well-known",
        "p",
        "0.05",
        "-",
        "Cells",
        "p≤0.05",
        "“cells”",
    }
    assert tok._id_cache["cells"] == tok._id_cache["Cells"] == tok._id_cache["“cells”"]
    assert tok._id_cache["p≤0.05"] == tok._id_cache["p"] + tok._id_cache["0.05"]
    assert tok._id_cache["-"] == b""
    # Words that are not a single term keep their terms in the terms cache, as tokenize does.
    assert set(tok._cache) == {"well-known", "0.05"}


def test_characters_never_in_words_are_spaces_to_the_id_path_with_the_same_ids() -> None:
    # Each NEVER_IN_WORDS character ends a word and starts none: around, inside and between
    # words (and beside the separators .-:' that join words) it changes no word.
    assert not re.search(r"\w|[.\-:'\s]", NEVER_IN_WORDS)
    assert all(ch.isascii() for ch in NEVER_IN_WORDS)
    assert set(NEVER_IN_WORDS) == {
        chr(c) for c in range(128) if re.fullmatch(r"[^\w.\-:'\s]", chr(c)) and chr(c).isprintable()
    }
    texts = [
        f"{a}{ch}{b}"
        for ch in NEVER_IN_WORDS
        for a, b in [
            ("x", "y"),
            ("x.", "y"),
            ("x", "-y"),
            ("x:", ":y"),
            ("", "well-known"),
            ("a'", ""),
        ]
    ]
    texts.append(NEVER_IN_WORDS.join(_WORDS))
    tok, oracle = Tokenizer(), _Oracle(TokenizerConfig())
    for text in texts:  # the oracle finds the words of the text as it is
        assert tok.term_ids(text).tolist() == oracle.ids(text), text
    assert list(tok.vocab) == list(oracle.vocab)
    for text in texts:  # what the worker decodes from spaced_utf8 bytes, told it is spaced
        spaced = spaced_utf8(text.encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass")
        assert tok.term_id_bytes(spaced, spaced=True) == tok.term_id_bytes(text), text


def test_a_word_is_found_in_its_token_as_the_word_pattern_finds_it() -> None:
    tokens = [t for text in _random_texts(3000, seed=5) for t in text.split()] + _WORDS
    for token in tokens:
        found = WORD_PATTERN.findall(token)
        word = _one_word(token)
        if word is None:  # the caller then asks WORD_PATTERN
            assert found != [token], token
        else:
            assert found == [word], token
            assert (word is token) == (found[0] == token), token
    # Punctuation around one word is seen without the pattern; other characters are not.
    assert _one_word("(“well-known”),") == "well-known"
    assert _one_word("x\u0301") is None and WORD_PATTERN.findall("x\u0301") == ["x"]


def test_punctuation_stripped_from_a_token_is_never_part_of_a_word() -> None:
    assert not re.search(r"\w|\s", _PUNCTUATION)
    for ch in _PUNCTUATION:
        assert WORD_PATTERN.findall(f"a{ch}") == ["a"] and WORD_PATTERN.findall(f"{ch}a") == ["a"]


def test_the_caches_start_again_past_their_limit_with_the_same_ids(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(module, "_CACHE_LIMIT", 5)
    tok, oracle = Tokenizer(), _Oracle(TokenizerConfig())
    for text in _random_texts(200, seed=3):
        assert tok.term_ids(text).tolist() == oracle.ids(text), text
        # (A token of several words is stored after its words: one entry past the limit.)
        assert len(tok._id_cache) <= 6 and len(tok._cache) <= 5


def test_a_restored_vocabulary_renumbers_the_cold_path_too() -> None:
    texts = _random_texts(100, seed=9)
    first, oracle = Tokenizer(), _Oracle(TokenizerConfig())
    for text in texts:
        first.term_ids(text)
    reordered = list(reversed(list(first.vocab)))
    first.set_vocabulary(reordered)
    oracle.vocab = {term: i for i, term in enumerate(reordered)}
    for text in [*texts, *_random_texts(100, seed=10)]:
        assert first.term_ids(text).tolist() == oracle.ids(text), text


def test_the_token_worker_imports_no_numpy() -> None:
    # The worker sends ids as bytes: numpy (~60 ms of its start) is imported only for arrays.
    code = (
        "import sys\n"
        "from workspace_tools.core.backends.embedded import token_worker\n"
        "from workspace_tools.core.text.tokenizer import Tokenizer\n"
        "assert Tokenizer().term_id_bytes('Cells, well-known p53')\n"
        "print('numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert Tokenizer().term_ids("cells").tolist() == [0]  # arrays still come when asked for
