"""Query expansion over an index vocabulary: prefix matches and typo tolerance.

Each query word becomes a *group* of weighted index terms (exact, prefix, typo, joined words),
found on unstemmed terms; callers score a group's best member.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from rapidfuzz import process
from rapidfuzz.distance import OSA

from workspace_tools.core.text.tokenizer import WORD_PATTERN, Tokenizer

__all__ = ["ExpansionConfig", "QueryExpander", "TermGroup", "surface_map"]

TermGroup = list[tuple[str, float]]
"""The weighted index terms that stand for one query word, exact term first."""

_FIRST_CJK: Final = 0x3040
"""Code points from here on (kana, Han...) are matched exactly."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpansionConfig:
    """How far a query word reaches beyond its exact term."""

    prefix: bool = True
    """Expand a query word to the corpus words it is a prefix of."""
    min_prefix_chars: int = 3
    """Shorter query words are not prefix-expanded (``a`` would match half the corpus)."""
    max_prefix_terms: int = 30
    """Most prefix expansions per query word, the shortest corpus words first."""
    prefix_weight: float = 0.5
    """Score factor of a prefix expansion."""
    typo: bool = True
    """Expand an unknown query word to the corpus words within ``max_edits`` edits."""
    min_typo_chars: int = 5
    """Shorter query words are not typo-expanded."""
    max_edits: int = 1
    """Largest edit distance (insert, delete, substitute, swap neighbours) of a typo match."""
    max_typo_terms: int = 10
    """Most typo expansions per query word."""
    typo_weight: float = 0.5
    """Score factor of a typo expansion."""
    correct_known_words: bool = False
    """Also typo-expand words the corpus contains (off: a word the docs use is not a typo)."""
    identifier_parts_weight: float = 0.5
    """Weight shared by the parts of a split query identifier (the whole one weighs 1)."""
    join_words: int = 3
    """Longest run of query words also tried as one identifier (0 or 1: off)."""
    joined_weight: float = 1.0
    """Weight of a joined form's group."""

    def __post_init__(self) -> None:
        for name in ("prefix_weight", "typo_weight", "identifier_parts_weight", "joined_weight"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                msg = f"{name} must be in (0, 1] so exact matches outrank expansions, got {value}."
                raise ValueError(msg)
        if self.join_words < 0:
            msg = f"join_words must be >= 0 (0 or 1: no joining), got {self.join_words}."
            raise ValueError(msg)
        if self.max_edits < 0 or self.min_prefix_chars < 1 or self.min_typo_chars < 1:
            msg = (
                "max_edits must be >= 0 and min_prefix_chars, min_typo_chars >= 1, got "
                f"{self.max_edits}, {self.min_prefix_chars}, {self.min_typo_chars}."
            )
            raise ValueError(msg)


def surface_tokenizer(tokenizer: Tokenizer) -> Tokenizer:
    """A tokenizer with the same settings as ``tokenizer`` but no stemming."""
    return Tokenizer(dataclasses.replace(tokenizer.config, stemmer=None))


def surface_map(
    words: Iterable[str], tokenizer: Tokenizer, *, surface: Tokenizer | None = None
) -> dict[str, str]:
    """Map every surface term of ``words`` (raw words of a corpus) to its index term."""
    plain = surface or surface_tokenizer(tokenizer)
    out: dict[str, str] = {}
    for word in words:
        surfaces = plain.word_terms(word)
        terms = tokenizer.word_terms(word)
        if len(surfaces) == len(terms):  # the same rules ran, only stemming differs
            out.update(zip(surfaces, terms, strict=True))
    return out


class QueryExpander:
    """Turns a query into groups of weighted index terms, one group per query word."""

    def __init__(
        self,
        surfaces: Mapping[str, str],
        tokenizer: Tokenizer,
        *,
        config: ExpansionConfig | None = None,
    ) -> None:
        """Prepare lookups over a corpus vocabulary.

        Args:
            surfaces: Surface term -> index term (:func:`surface_map`).
            tokenizer: The tokenizer the index was built with.
            config: Expansion settings.
        """
        self.config = config or ExpansionConfig()
        self._tokenizer = tokenizer
        self._plain = surface_tokenizer(tokenizer)
        self._surfaces = dict(surfaces)
        # plain words only: 'vector.db' already matches through its parts
        self._sorted = sorted(w for w in self._surfaces if w.isalnum())
        by_length: defaultdict[int, list[str]] = defaultdict(list)
        for word in self._sorted:
            by_length[len(word)].append(word)
        self._by_length = dict(by_length)

    def expand(self, query: str) -> list[TermGroup]:
        """Weighted term groups of ``query``; a query word already seen adds no group."""
        groups: list[TermGroup] = []
        seen: set[str] = set()
        for word in WORD_PATTERN.findall(query):
            surfaces = self._plain.word_terms(word)
            terms = self._tokenizer.word_terms(word)
            if len(surfaces) != len(terms):
                surfaces = terms
            split = len(surfaces) > 2 and all(part in surfaces[0] for part in surfaces[1:])
            part_weight = self.config.identifier_parts_weight / max(1, len(surfaces) - 1)
            for position, (surface, term) in enumerate(zip(surfaces, terms, strict=True)):
                if term in seen:
                    continue
                seen.add(term)
                base = part_weight if split and position else 1.0
                groups.append([(t, base * w) for t, w in self._group(surface, term)])
        for term in self._joined(query):
            if term not in seen:
                seen.add(term)
                groups.append([(term, self.config.joined_weight)])
        return groups

    def _joined(self, query: str) -> list[str]:
        """Index terms of runs of query words the corpus writes as one (``createThread``)."""
        words = [w.lower() for w in WORD_PATTERN.findall(query)]
        found: list[str] = []
        for size in range(2, self.config.join_words + 1):
            for start in range(len(words) - size + 1):
                run = words[start : start + size]
                if not all(w.isalnum() for w in run):
                    continue
                for joined in ("".join(run), "-".join(run)):
                    term = self._surfaces.get(joined)
                    if term is not None and term not in found:
                        found.append(term)
        return found

    def _group(self, surface: str, term: str) -> TermGroup:
        weights: dict[str, float] = {term: 1.0}
        cfg = self.config
        if not surface.isalnum() or any(ord(ch) >= _FIRST_CJK for ch in surface):
            return [(term, 1.0)]
        if cfg.prefix and len(surface) >= cfg.min_prefix_chars:
            for match in self._prefixed(surface):
                expanded = self._surfaces[match]
                weights.setdefault(expanded, cfg.prefix_weight)
        known = surface in self._surfaces
        if (
            cfg.typo
            and len(surface) >= cfg.min_typo_chars
            and (cfg.correct_known_words or not known)
        ):
            for match in self._near(surface):
                expanded = self._surfaces[match]
                if weights.get(expanded, 0.0) < cfg.typo_weight:
                    weights[expanded] = cfg.typo_weight
        return list(weights.items())

    def _prefixed(self, surface: str) -> list[str]:
        start = bisect.bisect_right(self._sorted, surface)
        found: list[str] = []
        for candidate in self._sorted[start:]:
            if not candidate.startswith(surface):
                break
            found.append(candidate)
        found.sort(key=len)
        return found[: self.config.max_prefix_terms]

    def _near(self, surface: str) -> list[str]:
        edits = self.config.max_edits
        choices = [
            word
            for size in range(len(surface) - edits, len(surface) + edits + 1)
            for word in self._by_length.get(size, ())
        ]
        if not choices:
            return []
        matches = process.extract(
            surface,
            choices,
            scorer=OSA.distance,
            score_cutoff=edits,
            limit=self.config.max_typo_terms,
        )
        return [str(match[0]) for match in matches if match[0] != surface]
