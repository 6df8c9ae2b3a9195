"""Hybrid docs ranking variants on the Mastra docs, scored on the tuning sets only.

    .venv/bin/python tests/benchmarks/docs_hybrid_variants.py [--root DIR] [--path-text]

The variants tried for issue 29 before a default was chosen, on the TUNE half of
``_mastra_questions.py`` and the twenty keyword queries of ``docs_mastra.py`` (the held-out half
is never read here): fusion rule and vector weight; the page's own vector (title and
description) mixed into each section's cosine; fusing per page (best section of each side)
instead of per section; the page-type prior on the vector side (power 0 to 1.5) and applied after
fusion instead; the candidate pool; the question's lead words ("how do I", "what is") left out of
the embedded query; field weights of the lexical side. ``--path-text`` also embeds every section
again as "short title > heading path", the page description, then the text (about 4,000 texts:
minutes on the shared machine; cached in the user cache folder afterwards).

Scores are computed from one set of lexical and cosine arrays per query, outside
:meth:`DocsIndex.search`, with the same fusion code (:func:`fuse_scores`).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _mastra_questions import TUNE, Question
from docs_mastra import DEFAULT_ROOT, QUERIES

from workspace_tools.core.docs.index import DocsIndex, FieldWeights, HybridConfig, PagePrior
from workspace_tools.core.docs.page_types import page_factor, query_intent
from workspace_tools.core.docs.vectors import SectionVectors, default_cache_file, fuse_scores
from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder
from workspace_tools.core.text.chunking import is_markdown_heading

Array = npt.NDArray[np.float32]
KEYWORDS: list[Question] = [(query, (expected,)) for query, expected, _ in QUERIES]
LEAD = re.compile(
    r"^(?:how (?:do|can|should) (?:i|we|you)|how to|what (?:is|are|does|do)|which|can i|"
    r"example of)\s+",
    re.I,
)
WEIGHTS = {
    "5/3/2/1 (default)": FieldWeights(),
    "3/2/2/1": FieldWeights(title=3, description=2, heading=2, content=1),
    "8/4/2/1": FieldWeights(title=8, description=4, heading=2, content=1),
    "5/3/2/2": FieldWeights(title=5, description=3, heading=2, content=2),
    "5/3/1/1": FieldWeights(title=5, description=3, heading=1, content=1),
}


class Arrays:
    """Per query: lexical scores per field-weight set, cosines per section text and query form."""

    def __init__(self, index: DocsIndex, extra: dict[str, Array]) -> None:
        snap = index._snap()
        assert snap.vectors is not None and snap.page_vectors is not None
        assert index._vectors is not None
        self.section_page = snap.section_page
        self.pages = [p.path for p in snap.pages]
        self.kinds = snap.page_types
        self.rows: dict[str, dict[str, Array]] = {}
        self.intent: dict[str, str | None] = {}
        section_sets = {"section": snap.vectors, **extra}
        for query, _ in TUNE + KEYWORDS:
            row: dict[str, Array] = {}
            for name, weights in WEIGHTS.items():
                index.weights = weights
                row["lex " + name] = _lexical(index, query)
            index.weights = FieldWeights()
            for form, text in (("", query), (" stripped", LEAD.sub("", query))):
                vector = index._vectors.query(text)
                for name, vectors in section_sets.items():
                    row[name + form] = (vectors @ vector).astype(np.float32)
                row["page" + form] = (snap.page_vectors @ vector).astype(np.float32)
            self.rows[query] = row
            self.intent[query] = query_intent(query)

    def factors(self, query: str, prior: PagePrior = PagePrior()) -> Array:
        """The page-type factor of each section's page."""
        kinds = [page_factor(k, self.intent[query], prior) for k in self.kinds]
        return np.array(kinds, dtype=np.float32)[self.section_page]

    def page_best(self, scores: Array) -> Array:
        """Each page's best section score."""
        best = np.zeros(len(self.pages), dtype=np.float32)
        np.maximum.at(best, self.section_page, scores)
        return best

    def ranking(self, scores: Array, *, per_page: bool = False) -> list[str]:
        """Distinct pages, best first (``scores`` per section, or per page)."""
        best = scores if per_page else self.page_best(scores)
        order = np.argsort(-best, kind="stable")
        return [self.pages[i] for i in order[:10] if best[i] > 0]


def _lexical(index: DocsIndex, query: str) -> Array:
    """The weighted lexical section scores of ``query`` (before the page-type prior)."""
    snap = index._snap()
    total = np.zeros(len(snap.sections), dtype=np.float32)
    for group in snap.expander.expand(query):
        best = np.zeros_like(total)
        for term, weight in group:
            np.maximum(best, weight * index._term_scores(snap, term), out=best)
        total += best
    return total


def rank_variant(
    data: Arrays,
    query: str,
    *,
    lexical: str = "lex 5/3/2/1 (default)",
    cosine: str = "section",
    page_share: float = 0.0,
    config: HybridConfig = HybridConfig(),
    prior: PagePrior = PagePrior(),
    vector_prior: float = 1.0,
    after: bool = False,
    per_page: bool = False,
    mode: str = "hybrid",
) -> list[str]:
    """The distinct pages one variant ranks for ``query``."""
    row = data.rows[query]
    factor = data.factors(query, prior)
    stripped = " stripped" if cosine.endswith(" stripped") else ""
    lex = row[lexical] * (1.0 if after else factor)
    cos = (1 - page_share) * row[cosine] + page_share * row["page" + stripped][data.section_page]
    cos = cos * (1.0 if after else factor**vector_prior)
    if mode == "lexical":
        return data.ranking(lex)
    if per_page:
        fused = fuse_scores(data.page_best(lex), data.page_best(cos), config)
        return data.ranking(fused, per_page=True)
    fused = fuse_scores(lex.astype(np.float32), cos.astype(np.float32), config)
    if after:
        fused = np.where(fused > 0, fused * factor, 0).astype(np.float32)
    return data.ranking(fused)


def counts(rank: Callable[[str], list[str]], questions: list[Question]) -> tuple[int, int, float]:
    """Success@1, success@3 and MRR@10 over distinct pages."""
    found = []
    for query, answers in questions:
        pages = rank(query)
        found.append(next((i + 1 for i, p in enumerate(pages) if p in answers), 0))
    mrr = sum(1 / r for r in found if r) / len(found)
    return sum(r == 1 for r in found), sum(0 < r <= 3 for r in found), mrr


def show(data: Arrays, label: str, **options: object) -> None:
    """One line: the variant's figures on the tuning questions and the keyword queries."""
    cells = []
    for name, group in (("tune", TUNE), ("keywords", KEYWORDS)):
        s1, s3, mrr = counts(lambda q: rank_variant(data, q, **options), group)  # type: ignore[arg-type]
        cells.append(f"{name} S@1 {s1:2}/{len(group)} S@3 {s3:2} MRR {mrr:.3f}")
    print(f"{label:44} " + " | ".join(cells), flush=True)


def path_texts(index: DocsIndex, root: Path) -> list[str]:
    """Each section as "short title > heading path", the page description, then its text."""
    snap = index._snap()
    texts, stacks, lines = [], {}, {}
    for section in snap.sections:
        page = snap.pages[section.page]
        if page.path not in lines:
            lines[page.path] = (root / page.path).read_text(encoding="utf-8").split("\n")
            stacks[page.path] = []
        stack: list[tuple[int, str]] = stacks[page.path]
        heading = (
            is_markdown_heading(lines[page.path][section.line - 1]) if section.heading else None
        )
        if heading:
            while stack and stack[-1][0] >= heading[0]:
                stack.pop()
            stack.append(heading)
        trail = [text for _, text in stack if text != page.title]
        head = " > ".join([page.title.split(" | ")[0], *trail])
        body = " ".join(section.text.split())[:2000]
        texts.append(f"{head}\n{page.description}\n{body}".strip())
    return texts


def main() -> None:
    """Run the variants."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="docs folder")
    parser.add_argument("--path-text", action="store_true", help="also embed path+description")
    args = parser.parse_args()
    embedder = SentenceTransformerEmbedder()
    index = DocsIndex(
        args.root, embedder=embedder, vector_cache=True, hybrid=HybridConfig(page_weight=0.5)
    )
    extra: dict[str, Array] = {}
    if args.path_text:
        cache = default_cache_file(index.root, "path-text", embedder.model_id)
        extra["path text"] = SectionVectors(embedder, cache_file=cache).embed_sections(
            path_texts(index, index.root)
        )
    data = Arrays(index, extra)
    show(data, "lexical", mode="lexical")
    for rule in ("weighted", "rrf", "zscore", "minmax"):
        for weight in (0.3, 0.4, 0.5, 0.6):
            config = HybridConfig(fusion=rule, vector_weight=weight)
            show(data, f"{rule} {weight}", config=config)
            show(data, f"{rule} {weight} + page vector 0.5", config=config, page_share=0.5)
            show(data, f"{rule} {weight} fused per page", config=config, per_page=True)
            if args.path_text:
                show(data, f"{rule} {weight} path text", config=config, cosine="path text")
    for share in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        show(data, f"weighted 0.4 + page vector {share}", page_share=share)
    for power in (0.0, 0.5, 1.5):
        show(data, f"weighted 0.4, vector prior ^{power}", vector_prior=power)
    show(data, "weighted 0.4, prior after fusion", after=True)
    for pool in (30, 50, 200, 400):
        show(data, f"weighted 0.4, pool {pool}", config=HybridConfig(pool=pool))
    show(data, "weighted 0.4, lead words stripped", cosine="section stripped")
    for name in WEIGHTS:
        show(data, f"lexical fields {name}", mode="lexical", lexical="lex " + name)
        show(data, f"weighted 0.4, fields {name}", lexical="lex " + name)
    for guide, match in ((1.0, 1.0), (1.2, 1.5), (1.3, 1.3), (1.3, 2.0), (1.5, 1.5)):
        prior = PagePrior(guide=guide, match=match)
        show(data, f"lexical prior {guide}/{match}", mode="lexical", prior=prior)
        show(data, f"weighted 0.4, prior {guide}/{match}", prior=prior)


if __name__ == "__main__":
    main()
