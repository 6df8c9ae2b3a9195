"""Sweep of the workspace's ``bm25`` mode settings across the tuning collections.

Run: ``.venv/bin/python tests/benchmarks/bm25_sweep.py [--grid NAME ...] [--json out.json]``

Each variant builds a ``Workspace(embedder=None)`` over the collection with one tokenizer and
BM25 setting and searches every judged query in ``bm25`` mode (chunk hits folded to documents,
``top_k=10``), exactly as ``quality_collections.py`` does; nDCG@10 per collection and the mean
over the four tuning collections (SciFact **train**, CISI, Cranfield, NPL) are printed beside
raw bm25s's defaults (``k1 1.2, b 0.75``: the targets). SciFact **test** is left out unless
``--collections`` names it: settings are chosen without it.

Grids (``--grid``), in the order they were run for issue 16 (docs/benchmarks.md, "Closing the
SciFact test gap"): ``k3``, ``tokenizer``, ``method``, ``compound``, ``abbrev``, ``k1b-stop``,
``k1b-stop-hyphen``, ``k3-chosen`` (round 1), then ``greek``, ``numbers``, ``round2`` (round 2);
``report`` runs the candidates of both rounds, and is the one run with ``scifact-test``.

The saturated query-tf rule's constant (k3 = distinct query terms / c) is read by
:func:`workspace_tools.core.index.sparse.query_tf_weights` from a module constant, so the sweep
sets it per variant on one built index. Tokenizer variants that are not settings (dropping the
whole-word token of apostrophe compounds, say) are patched in here to be measured before any of
them becomes code.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _testsets import load, ndcg_at_10
from quality_collections import raw_bm25s

from workspace_tools import Workspace
from workspace_tools.core.index import sparse
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.text import tokenizer as tok
from workspace_tools.core.text.tokenizer import TokenizerConfig

TUNING = ["scifact-train", "cisi", "cranfield", "npl"]


@dataclasses.dataclass(frozen=True)
class Variant:
    """One point of the sweep."""

    label: str
    k1: float = 1.35
    b: float = 0.6
    method: str = "lucene"
    query_tf: str = "saturated"
    k3_unit: float = 4.0
    tokenizer: dict[str, Any] = dataclasses.field(default_factory=dict)
    patch: str = ""

    def build_key(self) -> tuple[Any, ...]:
        """What a built workspace depends on (k3 is read at query time)."""
        options = tuple(sorted(self.tokenizer.items()))
        return (self.k1, self.b, self.method, self.query_tf, options, self.patch)


# -- tokenizer patches (measured here before any becomes code) -----------------------------------

_ORIGINAL_PARTS = tok._identifier_parts
_ORIGINAL_SPLIT = tok.Tokenizer._split_terms


def _split_without_compound(self: tok.Tokenizer, word: str) -> list[str]:
    # Keep only the parts of a split word, not the whole word beside them.
    terms = _ORIGINAL_SPLIT(self, word)
    if len(terms) > 1 and self.config.split_identifiers:
        whole = word.lower()
        terms = [t for t in terms if t != whole]
    return terms


def _split_possessive(self: tok.Tokenizer, word: str) -> list[str]:
    # ``Alzheimer's`` -> ``alzheimer`` only (English possessive), other splits unchanged.
    if word.endswith(("'s", "'S")) and "'" not in word[:-2]:
        word = word[:-2]
    return _ORIGINAL_SPLIT(self, word)


def _split_no_apostrophe_compound(self: tok.Tokenizer, word: str) -> list[str]:
    # Words joined by an apostrophe give their parts only; other compounds keep the whole word.
    terms = _ORIGINAL_SPLIT(self, word)
    if "'" in word and len(terms) > 1:
        whole = word.lower()
        terms = [t for t in terms if t != whole]
    return terms


def _split_hyphen_digits(self: tok.Tokenizer, word: str) -> list[str]:
    # Compounds with a digit part keep the whole word; others give their parts only.
    terms = _ORIGINAL_SPLIT(self, word)
    if len(terms) > 1 and not any(ch.isdigit() for ch in word):
        whole = word.lower()
        terms = [t for t in terms if t != whole]
    return terms


def _keeps_whole(word: str, keep: str, seps: str) -> bool:
    """Whether a split word keeps its whole-word term under a sweep rule."""
    has_sep = any(ch in seps for ch in word)
    camel = "camel" in seps and any(ch.isupper() for ch in word[1:]) and not word.isupper()
    if not (has_sep or camel):
        return True  # not a compound this rule touches
    parts = [p for p in tok._identifier_parts(word) if p]
    if keep == "digit":
        return any(ch.isdigit() for ch in word)
    if keep == "short":
        return any(len(p) <= 2 for p in parts)
    if keep == "digit-or-short":
        return any(ch.isdigit() for ch in word) or any(len(p) <= 2 for p in parts)
    if keep == "never":
        return False
    raise ValueError(keep)


def _rule(keep: str, seps: str) -> Callable[..., list[str]]:
    def split(self: tok.Tokenizer, word: str) -> list[str]:
        terms = _ORIGINAL_SPLIT(self, word)
        if len(terms) > 1 and not _keeps_whole(word, keep, seps):
            whole = self._normalise(word)
            terms = [t for t in terms if t != whole]
        return terms

    return split


_GREEK = dict(
    zip(
        "αβγδεζηθικλμνξοπρστυφχψω",
        [
            "alpha",
            "beta",
            "gamma",
            "delta",
            "epsilon",
            "zeta",
            "eta",
            "theta",
            "iota",
            "kappa",
            "lambda",
            "mu",
            "nu",
            "xi",
            "omicron",
            "pi",
            "rho",
            "sigma",
            "tau",
            "upsilon",
            "phi",
            "chi",
            "psi",
            "omega",
        ],
        strict=True,
    )
)


def _split_greek_names(self: tok.Tokenizer, word: str) -> list[str]:
    # Greek letters inside a Latin-script or numeric word become their names (NF-κB == NF-kappaB).
    lower = word.lower()
    if any(ch in _GREEK for ch in lower) and any(ch.isascii() and ch.isalnum() for ch in word):
        word = "".join(_GREEK.get(ch, ch) for ch in lower)
    return _ORIGINAL_SPLIT(self, word)


def _split_decimal_whole(self: tok.Tokenizer, word: str) -> list[str]:
    # A decimal number (0.05, 1.2.3) is one term: its digit runs alone match any number.
    if all(part.isdigit() for part in word.split(".")) and "." in word:
        return [word]
    return _ORIGINAL_SPLIT(self, word)


PATCHES: dict[str, Callable[..., list[str]]] = {
    "decimal-whole": _split_decimal_whole,
    "greek-names": _split_greek_names,
    **{
        f"whole if {keep} [{label}]": _rule(keep, seps)
        for keep in ("digit", "short", "digit-or-short", "never")
        for label, seps in (("-", "-"), ("-'", "-'"), ("-'.", "-'."), ("all", "-'._:camel"))
    },
    "no-compound": _split_without_compound,
    "possessive": _split_possessive,
    "no-apostrophe-compound": _split_no_apostrophe_compound,
    "compound-only-with-digits": _split_hyphen_digits,
}


@contextmanager
def patched(name: str, k3_unit: float) -> Iterator[None]:
    """Apply a tokenizer patch and the k3 constant for the duration of the block."""
    old_k3 = sparse._K3_TERMS_PER_UNIT
    sparse._K3_TERMS_PER_UNIT = k3_unit  # type: ignore[misc]
    if name:
        tok.Tokenizer._split_terms = PATCHES[name]  # type: ignore[method-assign]
    try:
        yield
    finally:
        sparse._K3_TERMS_PER_UNIT = old_k3  # type: ignore[misc]
        tok.Tokenizer._split_terms = _ORIGINAL_SPLIT  # type: ignore[method-assign]


def _tokenizer_config(options: dict[str, Any]) -> TokenizerConfig:
    values = dict(options)
    if values.get("stopwords") == "bm25s-en":
        from bm25s.stopwords import STOPWORDS_EN

        values["stopwords"] = frozenset(STOPWORDS_EN)
    elif str(values.get("stopwords", "")).startswith("nltk+"):
        extra = str(values["stopwords"]).removeprefix("nltk+").split(",")
        values["stopwords"] = tok.DEFAULT_STOPWORDS | frozenset(extra)
    elif values.get("stopwords") == "none":
        values["stopwords"] = frozenset()
    return TokenizerConfig(**values)


def _build(name: str, v: Variant) -> Workspace:
    corpus, _, _ = load(name)
    config = BM25Config(k1=v.k1, b=v.b, method=v.method, query_tf=v.query_tf)
    with patched(v.patch, v.k3_unit):
        ws = Workspace(
            tempfile.mkdtemp(),
            embedder=None,
            autosave=False,
            bm25_config=config,
            tokenizer=_tokenizer_config(v.tokenizer),
        )
        ws.index_many(corpus.items())
    return ws


def _score(ws: Workspace, name: str, v: Variant) -> float:
    _, queries, qrels = load(name)
    with patched(v.patch, v.k3_unit):
        ranked = {
            qid: list(dict.fromkeys(h.source_id for h in ws.search(text, top_k=10, mode="bm25")))
            for qid, text in queries.items()
        }
    return ndcg_at_10(ranked, qrels)


def grid(name: str) -> list[Variant]:
    """Named grids of variants."""
    base = Variant("default")
    if name == "k3-chosen":
        chosen = dataclasses.replace(
            base, tokenizer={"stopwords": "nltk+e.g,i.e"}, patch="whole if digit [-]"
        )
        return [
            dataclasses.replace(
                chosen, label=f"stop e.g i.e, whole if digit [-], k3 terms/{c}", k3_unit=c
            )
            for c in (2.0, 3.0, 4.0, 5.0, 6.0)
        ]
    if name == "k3":
        return [base] + [
            dataclasses.replace(base, label=f"k3 = terms/{c}", k3_unit=c)
            for c in (2.0, 3.0, 5.0, 6.0, 8.0)
        ]
    if name.startswith("k1b"):
        label, options, patch = "", {}, ""
        if "stop" in name:
            label, options = "stop e.g i.e, ", {"stopwords": "nltk+e.g,i.e"}
        if "hyphen" in name:
            label, patch = label + "whole if digit [-], ", "whole if digit [-]"
        return [
            dataclasses.replace(
                base, label=f"{label}k1 {k1} b {b}", k1=k1, b=b, tokenizer=options, patch=patch
            )
            for k1 in (1.2, 1.3, 1.35, 1.4, 1.5, 1.6)
            for b in (0.55, 0.6, 0.65, 0.7)
        ]
    if name == "tokenizer":
        return [
            base,
            dataclasses.replace(base, label="stemmer porter", tokenizer={"stemmer": "porter"}),
            dataclasses.replace(base, label="no stemmer", tokenizer={"stemmer": None}),
            dataclasses.replace(
                base, label="bm25s stop words", tokenizer={"stopwords": "bm25s-en"}
            ),
            dataclasses.replace(
                base, label="no identifier split", tokenizer={"split_identifiers": False}
            ),
            *[dataclasses.replace(base, label=f"patch {p}", patch=p) for p in PATCHES],
        ]
    if name == "compound":
        return [base] + [
            dataclasses.replace(base, label=f"patch {p}", patch=p) for p in PATCHES if "[" in p
        ]
    if name == "abbrev":
        short = {"stopwords": "nltk+e.g,i.e"}
        latin = {"stopwords": "nltk+e.g,i.e,etc,cf,viz,et,al"}
        letters = {"stopwords": "nltk+e.g,i.e,e,g"}
        return [
            base,
            dataclasses.replace(base, label="stop e.g i.e", tokenizer=short),
            dataclasses.replace(base, label="stop e.g i.e etc cf viz et al", tokenizer=latin),
            dataclasses.replace(base, label="stop e.g i.e e g", tokenizer=letters),
            dataclasses.replace(
                base,
                label="stop e.g i.e + whole if digit [-]",
                tokenizer=short,
                patch="whole if digit [-]",
            ),
            dataclasses.replace(
                base,
                label="stop e.g i.e + whole if digit [-'.]",
                tokenizer=short,
                patch="whole if digit [-'.]",
            ),
        ]
    if name == "report":
        # The candidates of the tuning sweeps, to report on SciFact test once chosen.
        stop = {"stopwords": "nltk+e.g,i.e"}
        hyphen = "whole if digit [-]"
        return [
            base,
            dataclasses.replace(base, label="stop e.g i.e", tokenizer=stop),
            dataclasses.replace(base, label="whole if digit [-]", patch=hyphen),
            dataclasses.replace(
                base,
                label="stop e.g i.e, whole if digit [-] (chosen)",
                tokenizer=stop,
                patch=hyphen,
            ),
            dataclasses.replace(
                base,
                label="stop e.g i.e, whole if digit [-], k1 1.4",
                tokenizer=stop,
                patch=hyphen,
                k1=1.4,
            ),
            dataclasses.replace(base, label="decimals whole", patch="decimal-whole"),
            dataclasses.replace(
                base,
                label="stop e.g i.e, decimals whole (chosen, round 2)",
                tokenizer=stop,
                patch="decimal-whole",
            ),
        ]
    if name == "round2":
        stop = {"stopwords": "nltk+e.g,i.e"}
        return [base] + [
            dataclasses.replace(
                base,
                label=f"stop e.g i.e, decimals whole, k1 {k1} b {b}",
                tokenizer=stop,
                patch="decimal-whole",
                k1=k1,
                b=b,
            )
            for k1 in (1.2, 1.3, 1.35, 1.4, 1.5)
            for b in (0.55, 0.6, 0.65)
        ]
    if name == "numbers":
        stop = {"stopwords": "nltk+e.g,i.e"}
        return [
            base,
            dataclasses.replace(base, label="decimal numbers whole", patch="decimal-whole"),
            dataclasses.replace(base, label="stop e.g i.e, atire", tokenizer=stop, method="atire"),
        ]
    if name == "greek":
        return [base, dataclasses.replace(base, label="greek names", patch="greek-names")]
    if name == "method":
        return [base] + [
            dataclasses.replace(base, label=f"method {m}", method=m) for m in ("robertson", "atire")
        ]
    msg = f"unknown grid {name!r}"
    raise SystemExit(msg)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", nargs="*", default=["k3"], help="grid names (see above)")
    parser.add_argument("--collections", nargs="*", default=TUNING)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    variants = [v for g in args.grid for v in grid(g)]
    variants = list({v.label: v for v in variants}.values())
    results: dict[str, dict[str, float]] = {"raw bm25s k1 1.2 b 0.75": {}}
    for name in args.collections:
        results["raw bm25s k1 1.2 b 0.75"][name] = raw_bm25s(name, k1=1.2)["ndcg10"]
    for name in args.collections:
        start = time.perf_counter()
        built: dict[tuple[Any, ...], Workspace] = {}
        order = list(dict.fromkeys(v.build_key() for v in variants))
        for v in sorted(variants, key=lambda v: order.index(v.build_key())):
            key = v.build_key()
            if key not in built:
                built.clear()
                built[key] = _build(name, v)
            results.setdefault(v.label, {})[name] = _score(built[key], name, v)
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    head = " | ".join(args.collections)
    print(f"| variant | {head} | mean (tuning) | worst margin over raw |")
    raw = results["raw bm25s k1 1.2 b 0.75"]
    for label, row in results.items():
        tuning = [row[c] for c in args.collections if c in TUNING]
        mean = sum(tuning) / len(tuning) if tuning else float("nan")
        margin = min(row[c] - raw[c] for c in args.collections)
        cells = " | ".join(f"{row[c]:.4f}" for c in args.collections)
        print(f"| {label} | {cells} | {mean:.4f} | {margin:+.4f} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
