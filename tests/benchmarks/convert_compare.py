"""Compare our document converters with markitdown (and pypdf for PDFs) over mixed-docs.

Run: ``.venv/bin/python tests/benchmarks/convert_compare.py [--repeat 3]``. Needs the documents
extra plus ``markitdown[pdf,docx,pptx,xlsx,outlook]`` and ``pypdf`` installed by hand.

``ours (in process)`` calls the converters directly, as before worker isolation;
``ours (isolated)`` goes through ``convert_bytes``, which converts rich documents in the warm
worker pool within the default ``ConversionLimits`` (10 s, 512 MB): the price of isolation is
their ratio, measured in the same run. ``--ours-only`` skips markitdown and pypdf.

For every file of ``MANIFEST.tsv`` (Markdown excluded) it prints, per converter: median time,
characters, Markdown headings, recall of the manifest's first-text words, and errors; then
totals per format, and whether the five all2md files give the same headings.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import statistics
import time
import unicodedata
import warnings
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from workspace_tools.core.convert._documents import SUPPORTED_SUFFIXES, convert_document
from workspace_tools.core.convert.dispatch import convert_bytes

MIXED = Path(__file__).resolve().parents[2].parent / "shared" / "benchmarks" / "mixed-docs"
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*$", re.MULTILINE)


def ours(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix.lower() in SUPPORTED_SUFFIXES:
        return convert_document(path, data).text
    return convert_bytes(path, data).text


def ours_isolated(path: Path) -> str:
    return convert_bytes(path, path.read_bytes()).text


def markitdown_converter() -> Callable[[Path], str]:
    from markitdown import MarkItDown

    engine = MarkItDown(enable_plugins=False)

    def run(path: Path) -> str:
        return str(engine.convert(str(path)).text_content)

    return run


def pypdf_text(path: Path) -> str:
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(path.read_bytes()))
    return "\n".join(page.extract_text() or "" for page in reader.pages)


def words(text: str) -> list[str]:
    return re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower())


def recall(first_text: str, text: str) -> float:
    expected = words(first_text.split("\ufffd")[0])[:-1]
    have = set(words(text))
    return sum(word in have for word in expected) / max(len(expected), 1)


def measure(func: Callable[[Path], str], path: Path, repeat: int) -> tuple[float, str, str]:
    times: list[float] = []
    text, error = "", ""
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            text = func(path)
        except Exception as exc:
            error = f"{type(exc).__name__}: {str(exc)[:60]}"
        times.append(time.perf_counter() - start)
    return statistics.median(times), text, error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mixed", type=Path, default=MIXED, help="the mixed-docs folder")
    parser.add_argument("--ours-only", action="store_true", help="skip markitdown and pypdf")
    args = parser.parse_args()
    mixed: Path = args.mixed
    warnings.simplefilter("ignore")
    rows = list(csv.DictReader((mixed / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t"))
    rows = [row for row in rows if row["format"] != "md"]
    converters: dict[str, Callable[[Path], str]] = {
        "ours (in process)": ours,
        "ours (isolated)": ours_isolated,
    }
    if not args.ours_only:
        try:
            converters["markitdown"] = markitdown_converter()
        except ImportError:
            print("markitdown not installed: comparing ours only")
    for func in converters.values():  # warm imports so first-file timings are fair
        func(mixed / "all2md" / "basic.html")
    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0, 0, 0.0, 0])
    print("| file | converter | ms | chars | headings | first-text recall | error |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for row in rows:
        path = mixed / row["file"]
        candidates = dict(converters)
        if row["format"] == "pdf" and not args.ours_only:
            candidates["pypdf (text only)"] = pypdf_text
        for name, func in candidates.items():
            seconds, text, error = measure(func, path, args.repeat)
            heads = len(HEADING.findall(text))
            share = recall(row["text_start"], text) if text else 0.0
            print(
                f"| {row['file']} | {name} | {seconds * 1000:.1f} | {len(text)} | {heads} "
                f"| {share:.2f} | {error} |"
            )
            for key in ((name, row["format"]), (name, "ALL")):
                total = totals[key]
                total[0] += seconds
                total[1] += heads
                total[2] += 1
                total[3] += share
                total[4] += bool(error)
    print("\n| converter | format | files | total ms | headings | mean recall | errors |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for (name, fmt), (seconds, heads, count, share, errors) in sorted(totals.items()):
        print(
            f"| {name} | {fmt} | {int(count)} | {seconds * 1000:.0f} | {int(heads)} "
            f"| {share / count:.2f} | {int(errors)} |"
        )
    print("\nall2md headings (same text in five formats):")
    for name, func in converters.items():
        for fmt in ("md", "html", "docx", "odt", "pdf"):
            try:
                heads = [h[1] for h in HEADING.findall(func(mixed / "all2md" / f"basic.{fmt}"))]
            except Exception as exc:
                heads = [f"error {type(exc).__name__}"]
            print(f"  {name:10s} {fmt:5s} {heads}")


if __name__ == "__main__":
    main()
