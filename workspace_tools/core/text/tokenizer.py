r"""Unicode-aware tokenizer shared by every index.

Unicode words; identifiers split (``parseHttpRequest`` -> ``parse``, ``http``, ``request``) and
kept whole; CJK runs as bigrams plus characters; folding, stop words and stemming by default.
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

if TYPE_CHECKING:  # numpy is imported on first use (the worker never does)
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
    # the same pattern, with possessive quantifiers where Python has them (3.11+)
    r"\w++(?:[.\-:']\w++)*+" if sys.version_info >= (3, 11) else r"\w+(?:[.\-:']\w+)*"
)
_PART_SPLIT: Final = re.compile(r"[._\-:']+")
_CAMEL: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_a-zA-Z]+")
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u31f0-\u31ff]+")
_CACHE_LIMIT: Final = 1_000_000
_PUNCTUATION: Final = "!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~“”‘’«»–—…±×·•°§"
"""Characters that are never part of a word (stripped around a one-word token)."""
NEVER_IN_WORDS: Final = '!"#$%&()*+,/;<=>?@[\\]^`{|}~'
"""ASCII characters that are never part of a word: made spaces, a text keeps the same words."""
_AS_SPACES: Final = bytes.maketrans(NEVER_IN_WORDS.encode("ascii"), b" " * len(NEVER_IN_WORDS))
_INT32: Final = struct.Struct("=i")
"""One term id as native int32 bytes."""
_K = TypeVar("_K")
_V = TypeVar("_V")
TOKENIZER_RULES: Final = 1
"""Version of the tokenizer's rules, part of :meth:`Tokenizer.fingerprint`.

Bump it with any change that gives other terms for the same text and settings.
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


LAZY_VOCABULARY_CHARS: Final = 1 << 18
"""A restored vocabulary this long (about 35,000 terms) is made a dict when first needed."""
VOCABULARY_FINDS: Final = 64
"""Query terms looked up in a restored vocabulary's text before it is made a dict."""


class Tokenizer:
    """Turns text into index terms following a :class:`TokenizerConfig`."""

    def __init__(self, config: TokenizerConfig | None = None) -> None:
        self.config = config or TokenizerConfig()
        self._cache: _WordCache[str, tuple[str, ...]] = _WordCache(self._token_terms)
        """Token (or word) -> the terms of its words."""
        self._id_cache: _WordCache[str, bytes] = _WordCache(self._token_ids)
        """Token (or word) -> the ids of its terms, as native int32 bytes."""
        stem_word = _make_stemmer(self.config.stemmer)
        self._stem: Callable[[str], str] = (
            _identity if stem_word is None else _StemCache(stem_word).__getitem__
        )
        """Term -> its stem."""
        self._vocab: dict[str, int] = {}
        self._saved = ""
        """A restored vocabulary's terms, ``"\n"`` around each, until :attr:`vocab` is made."""
        self._finds = 0
        self.vocab_generation = 0
        """Bumped by :meth:`set_vocabulary` (ids change only then)."""

    def tokenize(self, text: str) -> list[str]:
        """Terms of one text, in order, with repeats (words never hold whitespace)."""
        return list(chain.from_iterable(map(self._cache.__getitem__, text.split())))

    def terms_text(self, text: str) -> str:
        """:meth:`tokenize`'s terms joined by single spaces."""
        return " ".join(self.tokenize(text))

    def tokenize_ids(self, text: str) -> list[int]:
        """Term ids of one text, adding new terms to :attr:`vocab` (as :meth:`term_ids`)."""
        ids: list[int] = self.term_ids(text).tolist()
        return ids

    def term_ids(self, text: str) -> npt.NDArray[np.int32]:
        """The :attr:`vocab` id of each term of :meth:`tokenize`, adding new terms in order."""
        import numpy as np

        return np.frombuffer(self.term_id_bytes(text), dtype=np.int32)

    def term_id_bytes(self, text: str, *, spaced: bool = False) -> bytes:
        """:meth:`term_ids` as native int32 bytes (what the tokenizing worker sends back).

        Args:
            text: The text.
            spaced: Its :data:`NEVER_IN_WORDS` characters are spaces already.
        """
        if not spaced:  # the same words, fewer distinct tokens
            data = text.encode("utf-8", "surrogatepass").translate(_AS_SPACES)
            text = data.decode("utf-8", "surrogatepass")
        return b"".join(map(self._id_cache.__getitem__, text.split()))

    def term_ids_many(self, texts: Iterable[str]) -> list[npt.NDArray[np.int32]]:
        """:meth:`term_ids` of each text, one after the other (new terms numbered in that order)."""
        return [self.term_ids(text) for text in texts]

    def _token_terms(self, token: str) -> tuple[str, ...]:
        # Once per distinct token; a token of several words is its words' terms.
        if not token.isalnum():
            word = _one_word(token)
            if word is None:
                words = WORD_PATTERN.findall(token)
                return tuple(chain.from_iterable(map(self._cache.__getitem__, words)))
            if word is not token:  # one word in punctuation (``cells,``): that word's terms
                return self._cache[word]
        return self._analyse(token)

    def _token_ids(self, token: str) -> bytes:
        # As _token_terms; a single term (most words) is numbered right here.
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
        word = token.strip(_PUNCTUATION)  # _one_word, inline
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
        if terms is None:
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

    @property
    def vocab(self) -> dict[str, int]:
        """Term -> integer id, grown as documents are tokenized (ids are never reused).

        A vocabulary restored from text (:meth:`restore_vocabulary`) is made on first use.
        """
        if self._saved:
            terms = self._saved[1:-1].split("\n")
            self._vocab, self._saved = dict(zip(terms, range(len(terms)), strict=True)), ""
        return self._vocab

    def set_vocabulary(self, terms: Sequence[str]) -> None:
        """Restore a saved vocabulary (term ``i`` gets id ``i``); clears the word caches.

        Raises:
            ValueError: a term is there twice.
        """
        vocab = dict(zip(terms, range(len(terms)), strict=True))
        if len(vocab) != len(terms):
            msg = "the vocabulary repeats a term"
            raise ValueError(msg)
        self._vocab, self._saved = vocab, ""
        self._restored()

    def restore_vocabulary(self, text: str) -> None:
        """:meth:`set_vocabulary` from the terms' text, one a line.

        A long one is not made a dict yet: a query's lookups search the text (a repeated term
        keeps its last id there too) until :data:`VOCABULARY_FINDS` of them, or a write, make it.

        Raises:
            ValueError: a short one repeats a term.
        """
        if len(text) < LAZY_VOCABULARY_CHARS:
            self.set_vocabulary(text.split("\n") if text else [])
            return
        self._vocab, self._saved, self._finds = {}, f"\n{text}\n", 0
        self._restored()

    def _restored(self) -> None:
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
        """Term counts keyed by vocabulary id; terms not in :attr:`vocab` are left out."""
        lookup = self._lookup
        out: dict[int, int] = {}
        for term, count in counts.items():
            found = lookup(term)
            if found is not None:
                out[found] = out.get(found, 0) + count
        return out

    def _lookup(self, term: str) -> int | None:
        """``vocab.get(term)``, from a restored vocabulary's text while it is not made."""
        saved = self._saved
        if not saved or self._finds >= VOCABULARY_FINDS:
            return self.vocab.get(term)
        self._finds += 1
        at = saved.rfind(f"\n{term}\n")
        return None if at < 0 else saved.count("\n", 0, at)

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
            if low == word or word.isupper():  # no case change to split at
                parts = (  # the pieces between _PART_SPLIT's separators
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
    """UTF-8 text with each :data:`NEVER_IN_WORDS` character made a space (still valid UTF-8)."""
    return data.translate(_AS_SPACES)


class _WordCache(dict[_K, _V]):
    """Word -> its terms or ids, made on a miss; cleared past :data:`_CACHE_LIMIT` entries."""

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
    """The one word of a token, found without the scan; ``None``: ask ``WORD_PATTERN``."""
    word = token.strip(_PUNCTUATION)
    if word.isalnum():
        return word
    if WORD_PATTERN.fullmatch(word) is None:
        return None
    return token if len(word) == len(token) else word


def _is_single_term(word: str) -> bool:
    """Whether an ASCII word is one term as it stands (``Cells``, ``DNA``; not ``mRNA``)."""
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
    stemmer.maxCacheSize = 0  # _StemCache keeps every stem
    stem_word: Callable[[str], Any] = stemmer.stemWord
    return stem_word


class _StemCache(dict[str, str]):
    """Term -> its stem, made on a miss (alphabetic terms of 3+ characters only)."""

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
