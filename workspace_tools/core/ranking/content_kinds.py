"""A document prior: what kind of file a source is, and how much that kind counts in ranking.

:func:`content_kind` (navigation, lockfile, minified, sitemap, generated...) is stored under
:data:`KIND_KEY` at index time; :func:`reweigh` applies :data:`PRIORS` at query time.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Final

__all__ = ["KINDS", "KIND_KEY", "PRIORS", "content_kind", "prior_of", "reweigh", "shape"]

KIND_KEY: Final = "content_kind"
"""Chunk metadata key holding the kind of its source."""

PRIORS: Final[Mapping[str, float]] = {
    "prose": 1.0,
    "code": 1.0,
    "data": 1.0,
    "navigation": 0.35,
    "generated": 0.5,
    "sitemap": 0.25,
    "minified": 0.2,
    "lockfile": 0.15,
}
"""Score multiplier of each kind (1.0: no change). Unknown kinds count 1.0."""

KINDS: Final[tuple[str, ...]] = tuple(PRIORS)
"""Every kind :func:`content_kind` returns."""

_LOCKFILES: Final = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "bun.lock",
        "cargo.lock",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "gemfile.lock",
        "composer.lock",
        "go.sum",
        "flake.lock",
        "podfile.lock",
        "mix.lock",
        "pubspec.lock",
        "packages.lock.json",
        "gradle.lockfile",
    }
)
_NAV_STEMS: Final = frozenset(
    {
        "_meta",
        "meta",
        "_sidebar",
        "sidebar",
        "sidebars",
        "summary",
        "toc",
        "_toc",
        "nav",
        "navigation",
        "menu",
        "mint",
    }
)
_MINIFIED_SUFFIXES: Final = (".min.js", ".min.css", ".min.mjs", ".js.map", ".css.map", ".map")
_DATA_SUFFIXES: Final = frozenset(
    {".json", ".jsonl", ".yaml", ".yml", ".toml", ".csv", ".tsv", ".xml", ".ini", ".cfg", ".lock"}
)
_GENERATED = re.compile(
    r"^\s*(?://|#|/?\*|<!--|--|;|\{?\s*\"_comment\").*"
    r"(?:@generated|do not (?:edit|modify)|auto-?generated|generated (?:by|from|with)|"
    r"this file (?:is|was) generated)",
    re.IGNORECASE | re.MULTILINE,
)
_HASH = re.compile(r"(?:sha\d+-[A-Za-z0-9+/=]{20,}|\b[0-9a-f]{32,}\b|h1:[A-Za-z0-9+/=]{20,})")
_PROSE_WORD = re.compile(r"^[(\"'“‘]?[^\W\d_]+(?:['’][^\W\d_]+)?[.,;:!?)\"'”’]*$")
_URL = re.compile(r"^\s*(?:<loc>)?\s*https?://\S+\s*(?:</loc>)?\s*$")
_LINK = re.compile(
    r"^\s*(?:[-*+]|\d+\.)?\s*(?:\[[^\]]*\]\([^)]*\)|<a\s[^>]*>[^<]*</a>|https?://\S+)\s*[,;]?\s*$"
)
_ENTRY = re.compile(
    r"""^\s*(?:
        [-*+]\s*\[[^\]]*\]\([^)]*\)\s*          # - [Title](path)
      | [-*+]?\s*["']?[\w./@#-]+["']?\s*[:=]\s*  # key: or "slug": / slug =
        (?:["'][^"']{0,80}["']|[{\[(<]|[\w.-]+)?\s*[,;]?\s*
        (?://.*)?                                 # trailing comment
      | ["']?[\w./@#-]+["']?\s*,?                 # a bare slug or path
      | https?://\S+                              # a bare URL
      | [{}\[\]()<>/;,]+                          # brackets only
      | (?:export\s+default|const|let|var|import|module\.exports)\b.*  # the module frame
    )\s*$""",
    re.VERBOSE,
)
_ESCAPE = re.compile(r'\\n(?![a-z])|\\"')
"""A JSON line break or quote escape (not LaTeX's ``\\nu``)."""
_SHAPE_CHARS: Final = 200_000
"""Characters of a text looked at (the first ones)."""


def shape(text: str) -> dict[str, float]:
    """Shape measures of a text's first 200,000 characters, as :func:`content_kind` reads them.

    Returns:
        Shares of whitespace, escapes, prose lines, entries, URLs and links; line count, mean
        line length, longest line's share, hash-like tokens per line.
    """
    sample = text[:_SHAPE_CHARS]
    lines = [line for line in sample.splitlines() if line.strip()]
    if not lines:
        return dict.fromkeys(
            (
                "spaces",
                "escapes",
                "lines",
                "mean_line",
                "longest_share",
                "prose",
                "entries",
                "urls",
                "links",
                "hashes",
            ),
            0.0,
        )
    lengths = [len(line) for line in lines]
    total = sum(lengths)
    prose = entries = urls = links = 0
    for line in lines:
        stripped = line.strip()
        if _ENTRY.match(stripped):
            entries += 1
        if _URL.match(stripped):
            urls += 1
        if _LINK.match(stripped):
            links += 1
        tokens = stripped.split()
        words = sum(1 for token in tokens if _PROSE_WORD.match(token))
        if words >= 5 and words >= 0.6 * len(tokens):
            prose += 1
    n = len(lines)
    return {
        "spaces": (len(sample) - sum(map(len, sample.split()))) / len(sample),
        "escapes": len(_ESCAPE.findall(sample)) / len(sample),
        "lines": float(n),
        "mean_line": total / n,
        "longest_share": max(lengths) / total,
        "prose": prose / n,
        "entries": entries / n,
        "urls": urls / n,
        "links": links / n,
        "hashes": len(_HASH.findall(sample)) / n,
    }


def content_kind(source_id: str, text: str, *, fmt: str = "text") -> str:
    """The kind of a source, from its shape (:func:`shape`, measured lazily) and its path.

    Args:
        source_id: The source's id (a path inside the workspace, or any id).
        text: Its converted text.
        fmt: Its format name (``markdown``, ``text``, ``code``, ``pdf``...).

    Returns:
        One of :data:`KINDS`.
    """
    name, suffix = _name_and_suffix(source_id.lower())
    stem = name.split(".", 1)[0]
    m = _Measures(text[:_SHAPE_CHARS])
    if not m.n:
        return "prose" if fmt not in {"code"} else "code"
    head = _Head(text)
    if name in _LOCKFILES or head.has("lockfileVersion") or m.hashes() >= 0.5:
        return "lockfile"
    if (
        head.has("<urlset")
        or head.has("<sitemapindex")
        or (stem.startswith("sitemap") and m.urls() >= 0.5)
    ):
        return "sitemap"
    long_lines = m.mean_line >= 200 or (m.longest_share >= 0.5 and len(text) >= 2000)
    if name.endswith(_MINIFIED_SUFFIXES) or (
        long_lines and ((m.spaces_below(0.1) and not m.prose_at_least(0.5)) or m.escapes() >= 0.005)
    ):
        return "minified"
    if _may_be_generated(head.lowered()) and _GENERATED.search(head.text()):
        return "generated"
    if not m.prose_at_least(0.2) and (
        m.links() >= 0.5 or (stem in _NAV_STEMS and m.entries() >= 0.4)
    ):
        return "navigation"
    if fmt not in {"code"} and m.prose_at_least(0.2):
        return "prose"
    if fmt in {"markdown", "pdf", "docx", "pptx", "odt", "html", "epub", "rtf"}:
        return "prose"
    return "data" if suffix in _DATA_SUFFIXES else "code"


class _Head:
    """The first 8 lines within a text's first 2,000 characters, made when needed."""

    __slots__ = ("_first", "_lowered", "_text")

    def __init__(self, text: str) -> None:
        self._first = text[:2000]
        self._text: str | None = None
        self._lowered: str | None = None

    def text(self) -> str:
        if self._text is None:
            self._text = "\n".join(self._first.splitlines()[:8])
        return self._text

    def has(self, phrase: str) -> bool:
        """Whether ``phrase`` (no line break in it) is in the head."""
        return phrase in self._first and phrase in self.text()

    def lowered(self) -> str:
        """The first 2,000 characters lower-cased."""
        if self._lowered is None:
            self._lowered = self._first.lower()
        return self._lowered


def _name_and_suffix(path: str) -> tuple[str, str]:
    """``PurePosixPath(path).name`` and that name's ``suffix``, without making path objects."""
    name = path.rsplit("/", 1)[-1]
    if not name or name == ".":
        name = PurePosixPath(path).name
    dot = name.rfind(".")
    return name, name[dot:] if 0 < dot < len(name) - 1 else ""


def _is_prose_line(stripped: str) -> bool:
    """Whether a line reads as a sentence: five or more plain words, 60% of its tokens."""
    if stripped.isascii():
        total, others = _ascii_counts(stripped)
        if total < 5:
            return False
        words = total - others
        if words >= 5 and words >= 0.6 * total:
            return True
        tokens = stripped.split()
    else:
        tokens = stripped.split()
        total = len(tokens)
        if total < 5:
            return False
        words = sum(map(str.isalpha, tokens))
        if words >= 5 and words >= 0.6 * total:
            return True
    others_matching = filter(_PROSE_WORD.match, itertools.filterfalse(str.isalpha, tokens))
    words += len(list(others_matching))
    return words >= 5 and words >= 0.6 * total


_SPACE_CODES: Final = frozenset(code for code in range(128) if chr(code).isspace())
_ASCII_LETTERS: Final = bytes(code for code in range(128) if chr(code).isalpha())
_TOKEN_MARKS: Final = bytes(ord(" ") if code in _SPACE_CODES else ord("a") for code in range(256))
_OTHER_MARKS: Final = bytes(ord(" ") if code in _SPACE_CODES else ord("x") for code in range(256))


def _ascii_counts(line: str) -> tuple[int, int]:
    """Tokens of an ASCII line (``len(line.split())``) and those not all letters, on bytes."""
    raw = line.encode("ascii")
    marks = raw.translate(_TOKEN_MARKS)
    total = marks.count(b" a") + marks.startswith(b"a")
    other = raw.translate(_OTHER_MARKS, _ASCII_LETTERS)
    return total, other.count(b" x") + other.startswith(b"x")


def _may_be_generated(lowered: str) -> bool:
    """Whether :data:`_GENERATED` can match a head whose lower-cased text is ``lowered``."""
    return "generated" in lowered or "do not " in lowered


_HEX_MARKS: Final = bytes(
    ord("x") if chr(code) in "0123456789abcdef" else ord(" ") for code in range(256)
)
_HEX_RUN: Final = b"x" * 32
_SHA = re.compile(r"sha\d")


def _may_hold_a_hash(sample: str) -> bool:
    """Whether :data:`_HASH` can match: ``sha<digit>``, ``h1:`` or 32 lowercase hex digits."""
    if "h1:" in sample or ("sha" in sample and _SHA.search(sample)):
        return True
    return _HEX_RUN in sample.encode("utf-8", "surrogatepass").translate(_HEX_MARKS)


class _Measures:
    """The measures of :func:`shape` for :func:`content_kind`, each taken when first asked."""

    def __init__(self, sample: str) -> None:
        self.sample = sample
        self.lines = [line for line in sample.splitlines() if line and not line.isspace()]
        self.n = len(self.lines)
        if self.n:
            lengths = [len(line) for line in self.lines]
            total = sum(lengths)
            self.mean_line = total / self.n
            self.longest_share = max(lengths) / total
        self._stripped: list[str] | None = None
        self._prose: list[bool] = []

    def stripped(self) -> list[str]:
        if self._stripped is None:
            self._stripped = [line.strip() for line in self.lines]
        return self._stripped

    def _share(self, pattern: re.Pattern[str]) -> float:
        return sum(1 for line in self.stripped() if pattern.match(line)) / self.n

    def hashes(self) -> float:
        if not _may_hold_a_hash(self.sample):
            return 0.0
        return len(_HASH.findall(self.sample)) / self.n

    def urls(self) -> float:
        return self._share(_URL)

    def links(self) -> float:
        return self._share(_LINK)

    def entries(self) -> float:
        return self._share(_ENTRY)

    def spaces(self) -> float:
        sample = self.sample
        return (len(sample) - sum(map(len, sample.split()))) / len(sample)

    def spaces_below(self, limit: float) -> bool:
        """``spaces() < limit``, told from the spaces alone when they already reach it."""
        sample = self.sample
        if sample.count(" ") / len(sample) >= limit:  # whitespace is at least the spaces
            return False
        return self.spaces() < limit

    def escapes(self) -> float:
        if "\\" not in self.sample:  # every escape starts with a backslash
            return 0.0
        return len(_ESCAPE.findall(self.sample)) / len(self.sample)

    def prose_at_least(self, share: float) -> bool:
        """Whether ``prose lines / lines >= share``, reading lines only until that is known."""
        done, n = self._prose, self.n
        lines = self.lines
        count = sum(done)
        while True:
            if count / n >= share:
                return True
            if (count + n - len(done)) / n < share:
                return False
            verdict = _is_prose_line(lines[len(done)])
            done.append(verdict)
            count += verdict


def prior_of(kind: object) -> float:
    """The multiplier of a kind (1.0 for an unknown or missing one)."""
    return PRIORS.get(kind, 1.0) if isinstance(kind, str) else 1.0


def reweigh(
    hits: Sequence[tuple[int, float]], kinds: Callable[[int], object]
) -> list[tuple[int, float]]:
    """``hits`` with each score weighed by its kind's prior (a lower prior moves a hit down)."""
    out: list[tuple[int, float]] = []
    for key, score in hits:
        p = prior_of(kinds(key))
        out.append((key, score if p == 1.0 else (score * p if score >= 0 else score / p)))
    out.sort(key=lambda hit: -hit[1])
    return out
