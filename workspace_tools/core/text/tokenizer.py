r"""Unicode-aware tokenizer shared by every index.

Rules, applied to each word-like run of the text:

* Words are runs of Unicode letters and digits, so accents, Cyrillic, Greek and CJK text are all
  searchable (Mastra's ASCII-only ``\\w`` drops them).
* Code identifiers are split (``parseHttpRequest`` -> ``parse``, ``http``, ``request``;
  ``snake_case``; ``foo.bar``; ``foo-bar``) while the whole identifier is kept as a token too.
* CJK runs (Han, Hiragana, Katakana) have no spaces, so they become overlapping character bigrams
  plus single characters.
* Case folding, accent folding (``café`` == ``cafe``), English stop words and Snowball stemming
  (PyStemmer) are on by default and configurable.

Each distinct surface word is analysed once and cached (its terms, and its term ids), so
tokenizing a large corpus costs the regular expression that finds the words and one dictionary
lookup per word, both in C: the words are looked up by ``map`` over the cache's ``__getitem__``
(a miss is analysed by ``__missing__``), and a text's whitespace-separated tokens stand for its
words (each distinct token cached too). On the id path the ASCII characters that are never part
of a word (:data:`NEVER_IN_WORDS`) are first made spaces, in one ``bytes.translate`` of the
text's UTF-8: the same words, fewer distinct tokens (``cells,``, ``(cells`` and ``cells)`` are all
``cells``), so fewer cache misses (SciFact: 70k distinct tokens instead of 96k).
"""

from __future__ import annotations

import re
import struct
import sys
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import TYPE_CHECKING, Any, Final, TypeVar

from workspace_tools.core.text._stopwords import DEFAULT_STOPWORDS

if TYPE_CHECKING:  # numpy is imported when ids are first made arrays (the worker never does)
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_STOPWORDS",
    "NEVER_IN_WORDS",
    "WORD_PATTERN",
    "Tokenizer",
    "TokenizerConfig",
    "spaced_utf8",
]

WORD_PATTERN: Final = re.compile(
    # The same pattern, with possessive quantifiers where Python has them (3.11+): they match
    # exactly the same words with less backtracking bookkeeping, about 15% faster.
    r"\w++(?:[.\-:']\w++)*+" if sys.version_info >= (3, 11) else r"\w+(?:[.\-:']\w+)*"
)
_PART_SPLIT: Final = re.compile(r"[._\-:']+")
_CAMEL: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_a-zA-Z]+")
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u31f0-\u31ff]+")
_CACHE_LIMIT: Final = 1_000_000
_PUNCTUATION: Final = "!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~“”‘’«»–—…±×·•°§"
"""Characters that are never part of a word (``test_tokenizer.py`` checks): a token that is one
word with some of these around it (``cells,``, ``(p53``, ``“odds”``) has that word's terms."""
NEVER_IN_WORDS: Final = '!"#$%&()*+,/;<=>?@[\\]^`{|}~'
"""The ASCII characters that are never part of a word: neither ``\\w`` nor one of the separators
``.-:'`` that :data:`WORD_PATTERN` allows between word characters. Each of them ends a word and
starts none, as a space does, so a text with each of them replaced by a space has exactly the same
words, in the same order (``test_tokenizer_cold.py`` checks)."""
_AS_SPACES: Final = bytes.maketrans(NEVER_IN_WORDS.encode("ascii"), b" " * len(NEVER_IN_WORDS))
_INT32: Final = struct.Struct("=i")
"""One term id as the native int32 bytes numpy reads (``np.frombuffer(..., np.int32)``)."""
_K = TypeVar("_K")
_V = TypeVar("_V")
TOKENIZER_RULES: Final = 1
"""Version of the tokenizer's rules (word pattern, identifier splitting, folding, CJK, stemming).

Bump it with any change to :class:`Tokenizer` that gives other terms for the same text and
settings: it is part of :meth:`Tokenizer.fingerprint`, so an index built with other rules is
refused on open (rebuild it) instead of being searched with terms that no longer match. An
index saved before the version was recorded was built with rules 1.
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenizerConfig:
    """How text is turned into index terms. Stored in the index manifest."""

    lowercase: bool = True
    """Fold case."""
    fold_accents: bool = True
    """Strip diacritics so ``résumé`` matches ``resume``."""
    stopwords: frozenset[str] = field(default=DEFAULT_STOPWORDS)
    """Words dropped from documents and queries; an empty set keeps every word."""
    stemmer: str | None = "english"
    """A Snowball stemmer name known to PyStemmer, or ``None`` for no stemming."""
    split_identifiers: bool = True
    """Split camelCase, snake_case, dotted and hyphenated identifiers into parts."""
    cjk_bigrams: bool = True
    """Index CJK runs as character bigrams and single characters."""

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form for the manifest."""
        return {
            "lowercase": self.lowercase,
            "fold_accents": self.fold_accents,
            "stopwords": sorted(self.stopwords),
            "stemmer": self.stemmer,
            "split_identifiers": self.split_identifiers,
            "cjk_bigrams": self.cjk_bigrams,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenizerConfig:
        """Inverse of :meth:`to_dict`."""
        return cls(
            lowercase=bool(data["lowercase"]),
            fold_accents=bool(data["fold_accents"]),
            stopwords=frozenset(data["stopwords"]),
            stemmer=data["stemmer"],
            split_identifiers=bool(data["split_identifiers"]),
            cjk_bigrams=bool(data["cjk_bigrams"]),
        )


class Tokenizer:
    """Turns text into index terms following a :class:`TokenizerConfig`."""

    def __init__(self, config: TokenizerConfig | None = None) -> None:
        self.config = config or TokenizerConfig()
        self._cache: _WordCache[str, tuple[str, ...]] = _WordCache(self._token_terms)
        """Whitespace-separated token of a text (``cells``, ``cells,``, ``(p53``) -> the terms of
        its words, filled on a miss. A word is a token of one word, so words are looked up here
        too (a token of one word is stored once, whether met as a word or as a token)."""
        self._id_cache: _WordCache[str, bytes] = _WordCache(self._token_ids)
        """Token (or word) -> the vocabulary ids of its terms (new terms added), filled on a
        miss, as native int32 bytes: a text's ids are one ``bytes.join`` of its tokens' (no int
        object is read)."""
        stem_word = _make_stemmer(self.config.stemmer)
        self._stem: Callable[[str], str] = (
            _identity if stem_word is None else _StemCache(stem_word).__getitem__
        )
        """Term -> its stem (a term stemmed before costs a C lookup)."""
        self.vocab: dict[str, int] = {}
        """Term -> integer id, grown as documents are tokenized (ids are never reused)."""
        self.vocab_generation = 0
        """Bumped by :meth:`set_vocabulary` (ids change only then: a map of them is made again)."""

    def tokenize(self, text: str) -> list[str]:
        """Terms of one text, in order, with repeats.

        No word of :data:`WORD_PATTERN` holds whitespace, so the words of a text are the words
        of its whitespace-separated tokens, one token after the other: ``str.split`` finds the
        tokens (several times faster than the pattern's scan) and each distinct token's terms
        are cached (``test_tokenizer.py`` checks both against the pattern over the whole text).
        """
        return list(chain.from_iterable(map(self._cache.__getitem__, text.split())))

    def terms_text(self, text: str) -> str:
        """:meth:`tokenize`'s terms joined by single spaces."""
        return " ".join(self.tokenize(text))

    def tokenize_ids(self, text: str) -> list[int]:
        """Term ids of one text, adding new terms to :attr:`vocab` (as :meth:`term_ids`)."""
        ids: list[int] = self.term_ids(text).tolist()
        return ids

    def term_ids(self, text: str) -> npt.NDArray[np.int32]:
        """The :attr:`vocab` id of each term of :meth:`tokenize`, adding new terms in order.

        A new term gets the next id when first met, so the ids equal numbering the terms of
        :meth:`tokenize` one after the other; no term string is made for a token seen before
        (its ids are cached, and cleared with the vocabulary by :meth:`set_vocabulary`).
        """
        import numpy as np

        return np.frombuffer(self.term_id_bytes(text), dtype=np.int32)

    def term_id_bytes(self, text: str, *, spaced: bool = False) -> bytes:
        """:meth:`term_ids` as native int32 bytes (what the tokenizing worker sends back).

        Args:
            text: The text.
            spaced: Its :data:`NEVER_IN_WORDS` characters are spaces already (the worker
                decodes texts from :func:`spaced_utf8` bytes): they are not looked for again.
        """
        if not spaced:  # the same words, fewer distinct tokens (the module docstring)
            data = text.encode("utf-8", "surrogatepass").translate(_AS_SPACES)
            text = data.decode("utf-8", "surrogatepass")
        return b"".join(map(self._id_cache.__getitem__, text.split()))

    def term_ids_many(self, texts: Iterable[str]) -> list[npt.NDArray[np.int32]]:
        """:meth:`term_ids` of each text, one after the other (new terms numbered in that order)."""
        return [self.term_ids(text) for text in texts]

    def _token_terms(self, token: str) -> tuple[str, ...]:
        # The cold path of tokenize: once per distinct token. Letters and digits alone are one
        # word (``\w`` is those and ``_``); a token of several words (or of a word and
        # punctuation) is its words' terms, each word looked up in the same cache.
        if not token.isalnum():
            word = _one_word(token)
            if word is None:
                words = WORD_PATTERN.findall(token)
                return tuple(chain.from_iterable(map(self._cache.__getitem__, words)))
            if word is not token:  # one word in punctuation (``cells,``): that word's terms
                return self._cache[word]
        return self._analyse(token)

    def _token_ids(self, token: str) -> bytes:
        # The cold path of term_ids, as _token_terms; a single term (most words, as
        # _is_single_term tells) is folded, stemmed and numbered right here, another word's
        # terms come from the terms cache.
        if token.isalnum():
            if token.isascii() and (
                token.islower()
                or token.isupper()
                or token.isdigit()
                or (token.isalpha() and token[1:].islower())
            ):
                cfg = self.config
                term = token.lower() if cfg.lowercase else token
                if term in cfg.stopwords:
                    return b""
                vocab = self.vocab
                return _INT32.pack(vocab.setdefault(self._stem(term), len(vocab)))
            return self._word_ids(token)
        # _one_word, inline (this runs for most tokens of a first build).
        word = token.strip(_PUNCTUATION)
        if word.isalnum():  # one word in punctuation (``cells,``, ``(p53``)
            return self._id_cache[word]
        if WORD_PATTERN.fullmatch(word) is None:  # several words (``p<0.05``), none (``+/-``)
            return b"".join(map(self._id_cache.__getitem__, WORD_PATTERN.findall(token)))
        if len(word) == len(token):  # one word as it stands (``well-known``, ``1.5``)
            return self._word_ids(token)
        return self._id_cache[word]  # ``(well-known),``

    def _word_ids(self, word: str) -> bytes:
        """Ids of a word that is not a single term: its terms cached (as ``_cache[word]``)."""
        cache = self._cache
        terms = cache.get(word)
        if terms is None:  # _cache's miss, without its second look at the word's shape
            if len(cache) >= cache._limit:
                cache.clear()
            terms = cache[word] = tuple(map(self._stem, self._split_terms(word)))
        vocab = self.vocab
        ids = [vocab.setdefault(term, len(vocab)) for term in terms]
        return struct.pack(f"={len(ids)}i", *ids)

    def ids_of(self, terms: Sequence[str]) -> list[int]:
        """Ids of the terms already in :attr:`vocab`, distinct, in first-seen order."""
        vocab = self.vocab
        return list(dict.fromkeys(vocab[t] for t in terms if t in vocab))

    def set_vocabulary(self, terms: Sequence[str]) -> None:
        """Restore a saved vocabulary (term ``i`` gets id ``i``); clears the word caches."""
        self.vocab = {term: i for i, term in enumerate(terms)}
        self.vocab_generation += 1
        self._id_cache.clear()

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        """Terms of many texts."""
        return [self.tokenize(text) for text in texts]

    def query_terms(self, text: str) -> list[str]:
        """Distinct terms of a query, in first-seen order (repeats do not count twice)."""
        return list(dict.fromkeys(self.tokenize(text)))

    def query_term_counts(self, text: str) -> dict[str, int]:
        """Distinct terms of a query, in first-seen order, with how often each occurs."""
        counts: dict[str, int] = {}
        for term in self.tokenize(text):
            counts[term] = counts.get(term, 0) + 1
        return counts

    def id_counts(self, counts: Mapping[str, int]) -> dict[int, int]:
        """Term counts keyed by vocabulary id; terms not in :attr:`vocab` are left out.

        Terms that share an id (none do today) add up.
        """
        vocab = self.vocab
        out: dict[int, int] = {}
        for term, count in counts.items():
            found = vocab.get(term)
            if found is not None:
                out[found] = out.get(found, 0) + count
        return out

    def word_terms(self, word: str) -> tuple[str, ...]:
        """Terms of one surface word (as matched by :data:`WORD_PATTERN`)."""
        return self._cache[word]

    def fingerprint(self) -> dict[str, Any]:
        """Settings and rules version that change the terms; stored with the index."""
        return {**self.config.to_dict(), "rules": TOKENIZER_RULES}

    def _analyse(self, word: str) -> tuple[str, ...]:
        stem = self._stem
        return tuple([stem(term) for term in self._unstemmed_terms(word)])

    def _unstemmed_terms(self, word: str) -> Sequence[str]:
        """Normalised terms of one surface word, stop words dropped, before stemming."""
        cfg = self.config
        if _is_single_term(word):  # most words of prose: nothing to split or fold
            term = word.lower() if cfg.lowercase else word
            return () if term in cfg.stopwords else (term,)
        return self._split_terms(word)

    def _split_terms(self, word: str) -> list[str]:
        """The full analysis of any word: CJK and identifier splitting, case and accent folding."""
        cfg = self.config
        surfaces: list[str]
        if word.isascii() and cfg.lowercase and cfg.split_identifiers:
            low = word.lower()
            if low == word or word.isupper():  # no case change to split at (``well-known``)
                # Its parts are the pieces between _PART_SPLIT's separators (str.replace: faster).
                parts = (
                    (low.replace(".", " ").replace("-", " ").replace("_", " ").replace(":", " "))
                    .replace("'", " ")
                    .split()
                )
                terms = [low, *parts] if len(parts) > 1 else parts
                stopwords = cfg.stopwords
                return [term for term in terms if term not in stopwords]
        if cfg.cjk_bigrams and not word.isascii() and _CJK.search(word):
            surfaces = _split_cjk(word)
        elif cfg.split_identifiers:
            parts = _identifier_parts(word)
            surfaces = [word, *parts] if len(parts) > 1 else parts
        else:
            surfaces = [word]
        if word.isascii():  # no accents to fold
            terms = [s.lower() for s in surfaces] if cfg.lowercase else surfaces
        else:
            terms = [self._normalise(s) for s in surfaces]
        stopwords = cfg.stopwords
        return [term for term in terms if term and term not in stopwords]

    def _normalise(self, surface: str) -> str:
        term = surface.lower() if self.config.lowercase else surface
        if self.config.fold_accents and not term.isascii():
            decomposed = unicodedata.normalize("NFKD", term)
            term = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
            term = unicodedata.normalize("NFC", term)
        return term


def spaced_utf8(data: bytes) -> bytes:
    """UTF-8 text with each :data:`NEVER_IN_WORDS` character made a space (the same words).

    Those characters are ASCII, and no byte of a multi-byte UTF-8 sequence is, so the bytes stay
    valid UTF-8 (lone surrogates encoded with ``surrogatepass`` too).
    """
    return data.translate(_AS_SPACES)


class _WordCache(dict[_K, _V]):
    """Word -> what it gives (terms, term ids); a missing word is analysed when first looked up.

    ``dict.__getitem__`` stays the C lookup, so ``map`` over it runs no Python code for a word
    already seen. Past :data:`_CACHE_LIMIT` entries it starts again (a corpus of many rare
    words).
    """

    def __init__(self, make: Callable[[_K], _V]) -> None:
        super().__init__()
        self._make = make
        self._limit = _CACHE_LIMIT

    def __missing__(self, word: _K) -> _V:
        if len(self) >= self._limit:
            self.clear()
        made = self[word] = self._make(word)
        return made


def _one_word(token: str) -> str | None:
    """The one word of a token (``WORD_PATTERN.findall(token) == [word]``), found without the scan.

    ``token`` itself when it is that word; ``None`` when it holds several words, none, or a word
    among characters other than :data:`_PUNCTUATION` (ask ``WORD_PATTERN`` then). Those
    characters are never part of a word, so a word with them around it is the token's only word
    (a separator, such as the ``.`` of ``cells.``, joins words only between them).
    """
    word = token.strip(_PUNCTUATION)
    if word.isalnum():
        return word
    if WORD_PATTERN.fullmatch(word) is None:
        return None
    return token if len(word) == len(token) else word


def _is_single_term(word: str) -> bool:
    """Whether an ASCII word is one term as it stands: no separator, no case change inside.

    ``cells``, ``Cells``, ``DNA``, ``p53``, ``GAS5`` and ``2014`` are; ``mRNA``, ``Il6`` and
    ``well-known`` are not. This is the fast path taken by most words of prose.
    """
    return (
        word.isascii()
        and word.isalnum()
        and (
            word.islower()
            or word.isupper()
            or word.isdigit()
            or (word.isalpha() and word[1:].islower())
        )
    )


def _identifier_parts(word: str) -> list[str]:
    # No separator is the common case: skip the regex split.
    pieces = [word] if word.isalnum() else _PART_SPLIT.split(word)
    parts: list[str] = []
    for piece in pieces:
        if not piece:
            continue
        if piece.isascii() and not piece.islower() and not piece.isupper():
            parts.extend(_CAMEL.findall(piece) or [piece])
        else:
            parts.append(piece)
    return parts


def _split_cjk(word: str) -> list[str]:
    out: list[str] = []
    pos = 0
    for match in _CJK.finditer(word):
        if match.start() > pos:
            out.extend(_identifier_parts(word[pos : match.start()]))
        run = match.group()
        out.extend(run)
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
        pos = match.end()
    if pos < len(word):
        out.extend(_identifier_parts(word[pos:]))
    return out


def _make_stemmer(name: str | None) -> Callable[[str], Any] | None:
    """PyStemmer's ``stemWord`` for ``name`` (``None``: no stemming)."""
    if name is None:
        return None
    import Stemmer  # PyStemmer

    try:
        stemmer = Stemmer.Stemmer(name)
    except KeyError as exc:
        known = ", ".join(sorted(Stemmer.algorithms()))
        msg = f"Unknown stemmer {name!r}. Use one of: {known}; or None for no stemming."
        raise ValueError(msg) from exc
    # PyStemmer's own LRU cache costs more than it saves: _StemCache keeps every stem.
    stemmer.maxCacheSize = 0
    stem_word: Callable[[str], Any] = stemmer.stemWord
    return stem_word


class _StemCache(dict[str, str]):
    """Term -> its stem, stemmed when first looked up (one Python call: ``__missing__``).

    Only alphabetic terms of three or more characters are stemmed: numbers and CJK characters
    stay as they are. Past :data:`_CACHE_LIMIT` entries it starts again, as :class:`_WordCache`.
    """

    def __init__(self, stem_word: Callable[[str], Any]) -> None:
        super().__init__()
        self._stem_word = stem_word
        self._limit = _CACHE_LIMIT

    def __missing__(self, term: str) -> str:
        if len(self) >= self._limit:
            self.clear()
        stem: str = self._stem_word(term) if term.isalpha() and len(term) > 2 else term
        self[term] = stem
        return stem


def _identity(term: str) -> str:
    return term
