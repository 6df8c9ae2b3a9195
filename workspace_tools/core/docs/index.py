"""DocsIndex: search a documentation tree (``.md``/``.mdx`` pages) section by section.

BM25F-style: one BM25 index per field, summed with field weights; query words expand
(:mod:`.expand`), page types weigh (:mod:`.page_types`), vectors fuse in (:mod:`.vectors`).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

import numpy as np
import numpy.typing as npt
from rapidfuzz import process

from workspace_tools.core.background import BackgroundWorker
from workspace_tools.core.docs._mdx import DocsPage, parse_page
from workspace_tools.core.docs.build import (
    DOC_SUFFIXES,
    FIELDS,
    MAX_PAGE_BYTES,
    Section,
    Snapshot,
    build_snapshot,
)
from workspace_tools.core.docs.expand import ExpansionConfig
from workspace_tools.core.docs.page_types import PagePrior, page_factor, query_intent
from workspace_tools.core.docs.results import DocsHit, DocsStats, FieldWeights
from workspace_tools.core.docs.vectors import (
    HybridConfig,
    SectionVectors,
    default_cache_file,
    fuse_scores,
)
from workspace_tools.core.embedding.embedder import Embedder
from workspace_tools.core.errors import InvalidInputError, PathOutsideWorkspaceError
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.text.snippets import best_snippet, mark_hits
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.text.validate import check_unicode

__all__ = [
    "DOC_SUFFIXES",
    "MAX_PAGE_BYTES",
    "DocsHit",
    "DocsIndex",
    "DocsPage",
    "DocsStats",
    "FieldWeights",
    "HybridConfig",
    "PagePrior",
    "parse_page",
]

logger = logging.getLogger(__name__)


@dataclass
class _Flight:
    future: Future[DocsStats] = field(default_factory=Future)


class DocsIndex:
    """Weighted-field search over the ``.md``/``.mdx`` pages under a folder."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        scope: str | None = None,
        weights: FieldWeights | None = None,
        tokenizer: Tokenizer | None = None,
        expansion: ExpansionConfig | None = None,
        bm25: BM25Config | None = None,
        suffixes: tuple[str, ...] = DOC_SUFFIXES,
        page_prior: PagePrior | None = None,
        embedder: Embedder | None = None,
        hybrid: HybridConfig | None = None,
        vector_cache: bool | str | os.PathLike[str] = False,
        embed_in_background: bool = False,
    ) -> None:
        """Index the pages under ``root`` (or under ``root/scope``).

        Args:
            root: The docs root; every path in and out is relative to it.
            scope: A subfolder of ``root`` (a "domain"): only its pages are indexed and readable.
            weights: Field weights (title 5, description 3, heading 2, content 1 by default).
            tokenizer: Tokenizer for pages and queries.
            expansion: Prefix and typo settings for query words.
            bm25: BM25 parameters of every field index.
            suffixes: File name endings indexed as pages.
            page_prior: Multipliers by page type (``PagePrior(guide=1, match=1)``: off).
            embedder: Embed each section too for hybrid search; ``None`` ranks lexically.
            hybrid: Vector weight, fusion rule and candidate pool of hybrid search.
            vector_cache: Keep section vectors on disk (``True``: user cache; or a file path).
            embed_in_background: Answer lexically at once and embed in a thread.

        Raises:
            InvalidInputError: ``root`` or ``scope`` is not a folder.
            PathOutsideWorkspaceError: ``scope`` leaves ``root``.
        """
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            msg = f"Docs root {str(root)!r} is not a folder. Pass the folder that holds the pages."
            raise InvalidInputError(msg)
        self.scope = ""
        if scope:
            self.scope = self._relative(scope, what="Docs scope")
            if not (self.root / self.scope).is_dir():
                msg = f"Docs scope {scope!r} is not a folder under the docs root {str(root)!r}."
                raise InvalidInputError(msg)
        self.weights = weights or FieldWeights()
        self.tokenizer = tokenizer or Tokenizer()
        self.expansion = expansion or ExpansionConfig()
        self.bm25 = bm25 or BM25Config()
        self.suffixes = suffixes
        self.page_prior = page_prior or PagePrior()
        self.hybrid = hybrid or HybridConfig()
        self._vectors: SectionVectors | None = None
        self.embed_in_background = embed_in_background
        if embedder is not None:
            cache = None
            if vector_cache is True:
                model = str(getattr(embedder, "model_id", type(embedder).__name__))
                cache = default_cache_file(self.root, self.scope, model)
            elif vector_cache is not False:
                cache = Path(vector_cache)
            self._vectors = SectionVectors(embedder, cache_file=cache)
        self._builds = 0
        self._embedding = BackgroundWorker("workspace-tools-docs-vectors")
        """Embeds a refresh's section vectors while searches rank lexically."""
        self._lock = threading.Lock()
        self._flight: _Flight | None = None
        self._snapshot: Snapshot | None = None
        self.refresh()

    @property
    def mode(self) -> Literal["hybrid", "lexical"]:
        """``hybrid`` with an embedder, else ``lexical``."""
        return "lexical" if self._vectors is None else "hybrid"

    @property
    def vectors_ready(self) -> bool:
        """Whether searches rank hybrid now (``False`` while background embedding runs)."""
        return self._snap().vectors is not None

    def status(self) -> str:
        """One line on how searches rank: hybrid (model), pending vectors, or lexical."""
        if self._vectors is None:
            return "keyword ranking (lexical; no embedder)"
        model = self._vectors.model_id
        if not self.vectors_ready:
            return f"keyword ranking until the section vectors are ready ({model} embedding)"
        return f"hybrid ranking (keywords + vectors of {model})"

    @property
    def stats(self) -> DocsStats:
        """What the current index holds."""
        return self._snap().stats

    def refresh(self) -> DocsStats:
        """Rebuild the index from disk (a call during a build waits for that build's result)."""
        with self._lock:
            flight, leader = self._flight, False
            if flight is None:
                flight, leader = _Flight(), True
                self._flight = flight
        if not leader:
            return flight.future.result()
        try:
            snapshot = self._build()
        except BaseException as exc:
            flight.future.set_exception(exc)
            raise
        finally:
            with self._lock:
                self._flight = None
        self._snapshot = snapshot
        flight.future.set_result(snapshot.stats)
        if snapshot.embed_texts:
            self._embedding.submit(lambda: self._embed_later(snapshot))
        return snapshot.stats

    def _embed_later(self, snapshot: Snapshot) -> None:
        assert self._vectors is not None
        try:
            vectors = self._vectors.embed_sections(snapshot.embed_texts)
        except Exception:  # the index keeps answering lexically
            logger.exception("Embedding the docs sections failed; searches stay lexical")
            return
        with self._lock:
            if self._snapshot is snapshot:
                self._snapshot = snapshot.with_vectors(vectors)

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        folder: str | None = None,
        max_per_page: int | None = 1,
        mode: Literal["hybrid", "lexical"] | None = None,
    ) -> list[DocsHit]:
        """Rank sections for ``query``.

        Args:
            query: Words to look for; prefixes and small typos also match.
            top_k: Most hits returned.
            folder: Only pages under this folder (relative to the docs root).
            max_per_page: Most sections of one page in the results; ``None`` for no limit.
            mode: ``lexical`` ranks without vectors; ``None`` uses :attr:`mode`.

        Returns:
            Hits, best first; an empty list when nothing matches.

        Raises:
            InvalidInputError: bad ``top_k``, empty ``folder``, or hybrid without an embedder.
        """
        if top_k < 1:
            msg = f"top_k must be at least 1, got {top_k}."
            raise InvalidInputError(msg)
        if mode == "hybrid" and self._vectors is None:
            msg = "Hybrid docs search needs an embedder: DocsIndex(root, embedder=...)."
            raise InvalidInputError(msg)
        snap = self._snap()
        hybrid = snap.vectors is not None and mode != "lexical" and bool(query.strip())
        groups = snap.expander.expand(query)
        if (not groups and not hybrid) or not snap.sections:
            return []
        total = np.zeros(len(snap.sections), dtype=np.float32)
        for group in groups:
            best = np.zeros_like(total)
            for term, weight in group:
                np.maximum(best, weight * self._term_scores(snap, term), out=best)
            total += best
        intent = query_intent(query)
        factors = np.array(
            [page_factor(kind, intent, self.page_prior) for kind in snap.page_types],
            dtype=np.float32,
        )
        if len(factors) and not np.all(factors == 1.0):
            total *= factors[snap.section_page]
        if hybrid:
            assert snap.vectors is not None
            assert self._vectors is not None
            vector = self._vectors.query(query)
            cosine = snap.vectors @ vector
            share = self.hybrid.page_weight
            if share and snap.page_vectors is not None and len(snap.page_vectors):
                page_cosine = snap.page_vectors @ vector
                cosine = (1 - share) * cosine + share * page_cosine[snap.section_page]
            if len(factors) and not np.all(factors == 1.0):
                cosine *= factors[snap.section_page]
        if folder is not None:
            pages = {snap.by_path[p.path] for p in self._pages_in(snap, folder)}
            outside = ~np.isin(snap.section_page, list(pages))
            total[outside] = 0.0
            if hybrid:
                cosine[outside] = 0.0
        if hybrid:
            total = fuse_scores(total, cosine.astype(np.float32), self.hybrid)
        terms = {term for group in groups for term, _ in group}
        hits: list[DocsHit] = []
        per_page: dict[int, int] = {}
        for row in np.argsort(-total, kind="stable"):
            if total[row] <= 0 or len(hits) >= top_k:
                break
            section = snap.sections[row]
            if max_per_page is not None and per_page.get(section.page, 0) >= max_per_page:
                continue
            per_page[section.page] = per_page.get(section.page, 0) + 1
            hits.append(self._hit(snap, section, terms, float(total[row])))
        return hits

    def list_pages(self, folder: str | None = None) -> list[DocsPage]:
        """Every indexed page (optionally only under ``folder``), sorted by path."""
        snap = self._snap()
        return list(snap.pages) if folder is None else self._pages_in(snap, folder)

    def get_page(self, path: str) -> DocsPage:
        """The page at ``path`` (relative to the docs root; the extension may be left out).

        Raises:
            PathOutsideWorkspaceError: The path leaves the docs root or scope.
            InvalidInputError: No page has that path.
        """
        rel = self._relative(path, what="Page path")
        snap = self._snap()
        for candidate in (rel, *(rel + suffix for suffix in self.suffixes)):
            if candidate in snap.by_path:
                return snap.pages[snap.by_path[candidate]]
        close = process.extract(rel, list(snap.by_path), limit=3, score_cutoff=60)
        hint = f" Did you mean: {', '.join(str(m[0]) for m in close)}?" if close else ""
        msg = f"No docs page {path!r}.{hint} Call docs_list to see every page path."
        raise InvalidInputError(msg)

    def _snap(self) -> Snapshot:
        snapshot = self._snapshot
        if snapshot is None:  # only during the first build
            self.refresh()
            snapshot = self._snapshot
        assert snapshot is not None
        return snapshot

    def _relative(self, path: str, *, what: str) -> str:
        """``path`` as a clean root-relative POSIX path inside the root and scope."""
        if "\x00" in path:
            msg = f"{what} {path[:80]!r} contains a NUL byte. Use a path as docs_list shows it."
            raise InvalidInputError(msg)
        check_unicode(path, what=f"{what} {path[:80]!r}")
        text = path.strip().replace("\\", "/")
        pure = PurePosixPath(text)
        if pure.is_absolute() or re.match(r"^[A-Za-z]:", text) or ".." in pure.parts:
            msg = (
                f"{what} {path!r} is outside the docs root: absolute paths and '..' are not "
                "allowed. Use a path relative to the docs root, as docs_list shows it."
            )
            raise PathOutsideWorkspaceError(msg)
        rel = "/".join(part for part in pure.parts if part not in ("", "."))
        resolved = (self.root / rel).resolve()
        if not resolved.is_relative_to(self.root):
            msg = (
                f"{what} {path!r} resolves outside the docs root through a symbolic link. "
                "Only pages inside the docs root can be read."
            )
            raise PathOutsideWorkspaceError(msg)
        scope = self.scope
        if scope and rel != scope and not rel.startswith(scope + "/"):
            msg = f"{what} {path!r} is outside the docs scope {scope!r}. Use a path under {scope}/."
            raise PathOutsideWorkspaceError(msg)
        return rel

    def _pages_in(self, snap: Snapshot, folder: str) -> list[DocsPage]:
        rel = self._relative(folder, what="Folder")
        if not rel:
            return list(snap.pages)
        pages = [p for p in snap.pages if p.path.startswith(rel + "/")]
        if not pages:
            tops = sorted({p.path.split("/")[0] for p in snap.pages if "/" in p.path})[:20]
            msg = f"No docs page under folder {folder!r}. " + (
                f"Top-level folders: {', '.join(tops)}."
                if tops
                else "The pages have no subfolders: search without a folder."
            )
            raise InvalidInputError(msg)
        return pages

    def _term_scores(self, snap: Snapshot, term: str) -> npt.NDArray[np.float32]:
        out = np.zeros(len(snap.sections), dtype=np.float32)
        for name, per_page in FIELDS:
            weight = float(getattr(self.weights, name))
            index = snap.fields[name]
            if index is None or weight == 0:
                continue
            scores = index.scores([term])
            out += weight * (scores[snap.section_page] if per_page else scores)
        return out

    def _hit(self, snap: Snapshot, section: Section, terms: set[str], score: float) -> DocsHit:
        page = snap.pages[section.page]
        snippet = best_snippet(section.text, terms, self.tokenizer, window_lines=3, max_chars=300)
        text, line = snippet.text, section.line + snippet.first_line
        if not text.strip():
            text, line = mark_hits(page.description, terms, self.tokenizer), section.line
        return DocsHit(
            path=page.path,
            title=page.title,
            heading=section.heading,
            snippet=text,
            score=score,
            line=line,
        )

    def _build(self) -> Snapshot:
        def next_build() -> int:
            with self._lock:
                self._builds += 1
                return self._builds

        return build_snapshot(
            self.root,
            scope=self.scope,
            suffixes=self.suffixes,
            tokenizer=self.tokenizer,
            bm25=self.bm25,
            expansion=self.expansion,
            vectors=self._vectors,
            embed_in_background=self.embed_in_background,
            embed_pages=self.hybrid.page_weight > 0,
            next_build=next_build,
        )
