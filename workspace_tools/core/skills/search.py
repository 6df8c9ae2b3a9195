"""BM25 search over skills: name and description (boosted), SKILL.md bodies and references."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from workspace_tools.core.errors import InvalidInputError, WorkspaceError
from workspace_tools.core.index.sparse import SparseIndex, top_positive
from workspace_tools.core.skills.files import read_skill_file
from workspace_tools.core.skills.model import Skill
from workspace_tools.core.text.snippets import best_snippet
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.types import LineRange

__all__ = ["MAX_SKILL_NAMES", "MAX_SKILL_QUERY_CHARS", "SkillSearchHit", "SkillSearchIndex"]

MAX_REFERENCE_CHARS: Final = 500_000
MAX_SKILL_QUERY_CHARS: Final = 1_000
"""Longest skill search query (a few keywords; the docs and workspace tools cap theirs too)."""
MAX_SKILL_NAMES: Final = 100
"""Most skill names one search may be restricted to."""
_INDEXED_SUFFIXES: Final = frozenset(
    {
        ".md",
        ".markdown",
        ".txt",
        ".rst",
        ".json",
        ".yaml",
        ".yml",
        ".toml",
        ".html",
        ".xml",
        ".csv",
        ".py",
        ".js",
        ".ts",
        ".sh",
        "",
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillSearchHit:
    """One ranked skill search result."""

    skill_name: str
    """Name of the skill."""
    location: str
    """The skill's catalogue location (path of its SKILL.md, or its name for code skills)."""
    source: str
    """``SKILL.md`` or the reference file, relative to the skill root."""
    score: float
    """BM25 score (plus the boosted name/description score for ``SKILL.md`` rows)."""
    snippet: str
    """Best-matching lines with hits marked ``<<like this>>``."""
    line_range: LineRange | None
    """Lines of the file the snippet covers (1-based, inclusive)."""


@dataclass(frozen=True, slots=True)
class _Doc:
    skill: Skill
    source: str
    text: str
    first_line: int = 1


class SkillSearchIndex:
    """An immutable BM25 index over a set of skills."""

    def __init__(
        self,
        skills: Sequence[Skill],
        *,
        tokenizer: Tokenizer | None = None,
        meta_boost: float = 2.0,
    ) -> None:
        self.tokenizer = tokenizer or Tokenizer()
        self.meta_boost = meta_boost
        self._docs: list[_Doc] = []
        self._body_row: list[int] = []
        for skill in skills:
            self._body_row.append(len(self._docs))
            self._docs.append(_Doc(skill, "SKILL.md", skill.body, skill.body_line))
            for ref in _reference_texts(skill):
                self._docs.append(ref)
        self._skills = list(skills)
        self._content = SparseIndex()
        self._content.build(self.tokenizer.tokenize_many(d.text for d in self._docs))
        self._meta = SparseIndex()
        self._meta.build(
            self.tokenizer.tokenize_many(
                f"{s.name} {s.name.replace('-', ' ')}\n{s.description}" for s in self._skills
            )
        )

    def __len__(self) -> int:
        return len(self._docs)

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        skill_names: Collection[str] | None = None,
        include_references: bool = True,
    ) -> list[SkillSearchHit]:
        """Best documents for ``query``, at most ``top_k``, optionally within ``skill_names``.

        Raises:
            InvalidInputError: ``top_k`` below 1, or a query or name list too long.
        """
        if top_k < 1:
            msg = f"top_k must be at least 1, got {top_k}."
            raise InvalidInputError(msg)
        if len(query) > MAX_SKILL_QUERY_CHARS:
            msg = (
                f"The skill search query is {len(query)} characters long; the limit is "
                f"{MAX_SKILL_QUERY_CHARS}. Search with a few key words instead."
            )
            raise InvalidInputError(msg)
        if skill_names is not None and len(skill_names) > MAX_SKILL_NAMES:
            msg = (
                f"skill_names lists {len(skill_names)} skills; the limit is {MAX_SKILL_NAMES}. "
                "Omit it to search every skill."
            )
            raise InvalidInputError(msg)
        terms = self.tokenizer.query_terms(query)
        if not terms or not self._docs:
            return []
        scores = self._content.scores(terms).astype(np.float32)
        meta = self._meta.scores(terms)
        for i, row in enumerate(self._body_row):
            scores[row] += self.meta_boost * meta[i]
        wanted = set(skill_names) if skill_names else None
        mask = np.array(
            [
                (wanted is None or d.skill.name in wanted)
                and (include_references or d.source == "SKILL.md")
                for d in self._docs
            ],
            dtype=bool,
        )
        scores = np.where(mask, scores, 0.0).astype(np.float32)
        hits = []
        for row, score in top_positive(scores, top_k):
            doc = self._docs[row]
            snip = best_snippet(doc.text, terms, self.tokenizer, window_lines=3, max_chars=300)
            line_range = (
                LineRange(snip.first_line + doc.first_line, snip.last_line + doc.first_line)
                if doc.text.strip()
                else None
            )
            hits.append(
                SkillSearchHit(
                    skill_name=doc.skill.name,
                    location=doc.skill.location,
                    source=doc.source,
                    score=round(float(score), 4),
                    snippet=snip.text if doc.text.strip() else doc.skill.description[:300],
                    line_range=line_range,
                )
            )
        return hits


def _reference_texts(skill: Skill) -> list[_Doc]:
    refs = sorted({r for r in (*skill.resources, *skill.files) if r.startswith("references/")})
    out = []
    for rel in refs:
        suffix = rel.rsplit(".", 1)[-1].lower() if "." in rel.rsplit("/", 1)[-1] else ""
        if (f".{suffix}" if suffix else "") not in _INDEXED_SUFFIXES:
            continue
        try:
            found = read_skill_file(skill, rel, max_lines=1_000_000)
        except (WorkspaceError, OSError):  # a damaged stored file too
            continue
        if found.binary or not found.text.strip():
            continue
        out.append(_Doc(skill, rel, found.text[:MAX_REFERENCE_CHARS]))
    return out
