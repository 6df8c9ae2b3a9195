"""Ranking prior on a real docs repository: does the page that answers come first?

Run: ``.venv/bin/python tests/benchmarks/ranking_prior.py [--modes bm25 hybrid] [--json out.json]``

A ``Workspace`` over the Mastra docs tree as a new user would make one (every file: ``.mdx``
pages and the ``_meta.ts(x)`` navigation files), and over a copy of it with the generated files a
built docs site or app repository also holds: ``package-lock.json`` (this repository's
``tests/npm`` lockfile), ``public/sitemap.xml`` (one ``<url>`` per page) and
``public/_next/search-data.js`` (every page's text packed into one JSON line, as static docs
sites ship their search data). The 45 questions of ``_mastra_questions.py`` (written from the
page list before any ranking was looked at; TUNE and HELD_OUT halves) run with the prior off and
on, on the same index (the prior is applied at query time from kinds stored at index time).

Per question, results are deduplicated to pages (``top_k=100`` chunks, first 10 pages): MRR@10,
success@1 and @5, and how often a non-page file (a kind other than prose/code/data) is first.
Quality does not depend on machine load; vectors come from the default embedder behind the
on-disk cache of ``_testsets.CachedEmbedder``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _mastra_questions import HELD_OUT, QUESTIONS, TUNE, Question

from workspace_tools import Workspace
from workspace_tools.core.ranking.content_kinds import KIND_KEY

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ROOT = Path(
    os.environ.get("WORKSPACE_TOOLS_SHARED", REPO.parent / "shared"),
    "benchmarks/mastra-docs/en",
)


def with_generated(src: Path, dest: Path) -> Path:
    """A copy of the docs tree plus a lockfile, a sitemap and a packed search-data bundle."""
    shutil.copytree(src, dest)
    shutil.copy(REPO / "tests/npm/package-lock.json", dest / "package-lock.json")
    pages = sorted(p.relative_to(src).with_suffix("").as_posix() for p in src.rglob("*.mdx"))
    public = dest / "public"
    (public / "_next").mkdir(parents=True)
    urls = "".join(
        f"<url><loc>https://mastra.ai/en/{page}</loc><changefreq>weekly</changefreq></url>\n"
        for page in pages
    )
    (public / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n'
    )
    data = {page: (src / f"{page}.mdx").read_text(encoding="utf-8") for page in pages}
    (public / "_next/search-data.js").write_text(
        "self.__SEARCH_DATA__=" + json.dumps(data, separators=(",", ":")) + ";\n"
    )
    return dest


def page_ranks(ws: Workspace, questions: list[Question], mode: str) -> list[tuple[int, str, str]]:
    """Per question: rank (1-10, 0 if absent) of the first accepted page, the top page, its kind."""
    out = []
    for query, answers in questions:
        pages: list[str] = []
        kinds: dict[str, Any] = {}
        for hit in ws.search(query, top_k=100, mode=mode):
            if hit.source_id not in kinds:
                pages.append(hit.source_id)
                kinds[hit.source_id] = hit.metadata.get(KIND_KEY)
            if len(pages) == 10:
                break
        rank = next((i + 1 for i, p in enumerate(pages) if p in answers), 0)
        top = pages[0] if pages else ""
        out.append((rank, top, str(kinds.get(top))))
    return out


def metrics(found: list[tuple[int, str, str]]) -> dict[str, float]:
    n = len(found)
    return {
        "mrr10": sum(1 / r for r, _, _ in found if r) / n,
        "s1": sum(1 for r, _, _ in found if r == 1) / n,
        "s5": sum(1 for r, _, _ in found if 0 < r <= 5) / n,
        "junk_first": sum(1 for _, _, k in found if k not in {"prose", "code", "data", "None"}) / n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--modes", nargs="+", default=["bm25", "hybrid"])
    parser.add_argument("--trees", nargs="+", default=["mastra", "mastra+generated"])
    parser.add_argument("--work", type=Path, default=None, help="keep indexes here (reruns)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--show", action="store_true", help="print each question's top page")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ranking-prior-"))
    embedder: Any = None
    if any(m != "bm25" for m in args.modes):
        from _testsets import default_cached_embedder

        embedder = default_cached_embedder()
    report: dict[str, Any] = {}
    for tree in args.trees:
        root = args.root
        if tree == "mastra+generated":
            root = work / "tree"
            if not root.exists():
                with_generated(args.root, root)
        ws = Workspace(root, index_dir=work / f"index-{tree}", embedder=embedder, config=False)
        ws.sync()
        for mode in args.modes:
            for prior in (False, True):
                ws.ranking_prior = prior
                for split, questions in (
                    ("tune", TUNE),
                    ("held-out", HELD_OUT),
                    ("all", QUESTIONS),
                ):
                    found = page_ranks(ws, questions, mode)
                    m = metrics(found)
                    report[f"{tree}|{mode}|prior={'on' if prior else 'off'}|{split}"] = m
                    print(
                        f"{tree:17} {mode:6} prior {'on ' if prior else 'off'} {split:8} "
                        f"MRR@10 {m['mrr10']:.3f}  S@1 {m['s1']:.3f}  S@5 {m['s5']:.3f}  "
                        f"non-page first {m['junk_first']:.3f}  (n={len(questions)})",
                        flush=True,
                    )
                    if args.show and split == "all":
                        for (q, answers), (r, top, kind) in zip(questions, found, strict=True):
                            print(f"    {r:2}  {q[:60]:60}  top={top} [{kind}]  want={answers[0]}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
