"""Untrusted documents: reference cycles, decompression bombs and huge structures stay bounded.

Conversions of rich documents run in worker processes with a wall-clock and a memory budget
(``ConversionLimits``); a file over a budget is skipped with a reason naming the limit, and the
caller (holding the index write lock) goes on. The budgets here are small so the tests are fast;
one test uses the defaults (10 s and 512 MB per file).
"""

from __future__ import annotations

import io
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.support import hostile_files as hf
from workspace_tools.core.convert import ConversionLimits, convert_bytes
from workspace_tools.core.errors import ConversionError, InvalidInputError
from workspace_tools.core.workspace import Workspace

pytest.importorskip("pdfminer")
pytest.importorskip("docx")
pytestmark = pytest.mark.timeout(120)

MB = 1 << 20
LIMITS = ConversionLimits(seconds=3.0, memory_bytes=256 * MB, unpacked_bytes=64 * MB)
"""Small budgets for fast tests."""


@cache
def _bomb(name: str) -> bytes:
    builders: dict[str, Any] = {
        "flate.pdf": lambda: hf.pdf_flate_bomb(320 * MB),
        "book.epub": lambda: hf.epub_bomb(100 * MB),
        "letter.odt": lambda: hf.odt_bomb(2_000_000),
        "report.docx": lambda: hf.docx_bomb(100 * MB),
        "list.html": lambda: hf.unclosed_li_html(400_000),
        "mail.eml": lambda: hf.many_attachments_eml(60_000),
        "length.pdf": hf.pdf_length_cycle,
        "resources.pdf": hf.pdf_resources_cycle,
    }
    data: bytes = builders[name]()
    return data


def _reason_word(reason: str) -> str:
    return reason.split(":", 1)[0]


# -- PDF reference cycles -----------------------------------------------------------------


@pytest.mark.parametrize("two", [False, True], ids=["self", "two-cycle"])
def test_pdf_title_cycle_converts_without_a_title(two: bool) -> None:
    from workspace_tools.core.convert._documents import convert_document

    data = hf.pdf_title_cycle(two=two)
    converted = convert_document(Path("cycle.pdf"), data)  # in process: our own lookup
    assert "Hello cycle" in converted.text
    assert "title" not in converted.metadata
    pooled = convert_bytes(Path("cycle.pdf"), data, limits=LIMITS)
    assert pooled == converted


@pytest.mark.slow  # waits for the time limit
@pytest.mark.parametrize("name", ["length.pdf", "resources.pdf"])
def test_pdf_cycles_inside_pdfminer_hit_the_time_limit_and_free_the_lock(
    tmp_path: Path, name: str
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / name).write_bytes(_bomb(name))
    (root / "good.md").write_text("# Good\n\nreadable words\n")
    ws = Workspace(root, embedder=None, conversion_limits=LIMITS)
    report = ws.sync()
    reasons = {s.path: s.reason for s in report.skipped}
    assert _reason_word(reasons[name]) == "time limit", reasons
    assert "3 s" in reasons[name]
    assert "good.md" in ws.source_ids()
    ws.index("later.md", "a later write is not blocked")  # the write lock was released
    assert "later.md" in ws.source_ids()


# -- bombs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words"),
    [
        # one stream over a quarter of 256 MB
        pytest.param("flate.pdf", {"unpacked size limit"}, marks=pytest.mark.slow),
        ("book.epub", {"unpacked size limit"}),
        ("report.docx", {"unpacked size limit"}),
        # seconds until the memory or time limit stops the worker:
        pytest.param("letter.odt", {"memory limit", "time limit"}, marks=pytest.mark.slow),
        pytest.param("list.html", {"memory limit", "time limit"}, marks=pytest.mark.slow),
        pytest.param("mail.eml", {"memory limit", "time limit"}, marks=pytest.mark.slow),
    ],
)
def test_bomb_is_skipped_with_a_reason_naming_the_limit(
    tmp_path: Path, name: str, words: set[str]
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / name).write_bytes(_bomb(name))
    (root / "good.md").write_text("# Good\n\nreadable words\n")
    ws = Workspace(root, embedder=None, conversion_limits=LIMITS)
    report = ws.sync()
    reasons = {s.path: s.reason for s in report.skipped}
    assert name in reasons, report
    assert _reason_word(reasons[name]) in words, reasons[name]
    assert "ConversionLimits" in reasons[name]  # says which setting to raise
    assert ws.source_ids() == ["good.md"]
    with pytest.raises(ConversionError) as error:
        convert_bytes(Path(name), _bomb(name), limits=LIMITS)
    assert _reason_word(str(error.value)) in words


@pytest.mark.slow  # inflates up to 64 MB
@pytest.mark.parametrize("isolate", [True, False], ids=["worker", "in-process"])
def test_a_pdf_stream_inflates_at_most_a_quarter_of_the_memory_budget(
    tmp_path: Path, isolate: bool
) -> None:
    # Issue 39: pdfminer inflated a Flate stream in full; in-process (no address-space limit)
    # a 510 KB bomb of 512 MB peaked at 1,085 MB and took 12 minutes.
    limits = ConversionLimits(memory_bytes=64 * MB, isolate=isolate)
    bomb = hf.pdf_flate_bomb(40 * MB)  # over 16 MB, a quarter of 64 MB
    root = tmp_path / "ws"
    root.mkdir()
    (root / "bomb.pdf").write_bytes(bomb)
    (root / "good.md").write_text("# Good\n\nreadable words\n")
    ws = Workspace(root, embedder=None, conversion_limits=limits)
    reasons = {s.path: s.reason for s in ws.sync().skipped}
    assert reasons["bomb.pdf"] == (
        "unpacked size limit: bomb.pdf has a compressed stream that inflates to more than "
        "16 MB, the limit for one stream (a quarter of the conversion's 64 MB memory budget); "
        "it may be a decompression bomb. Raise ConversionLimits(memory_bytes=...) or "
        "per_format={'pdf': {'memory_bytes': ...}} if the file is trusted."
    )
    assert ws.source_ids() == ["good.md"]  # nothing else lost
    small = hf.pdf_flate_bomb(MB)  # under the bound: converted (pdfminer reads ~1 MB/s of it)
    converted = convert_bytes(Path("small.pdf"), small, limits=limits)
    assert converted.metadata["pages"] == 1


@pytest.mark.slow  # seconds of a worker converting a bomb
def test_default_budgets_bound_a_bomb() -> None:
    limits = ConversionLimits()
    assert (limits.seconds, limits.memory_bytes) == (10.0, 512 * MB)
    with pytest.raises(ConversionError) as error:
        convert_bytes(Path("letter.odt"), hf.odt_bomb(6_000_000))
    message = str(error.value)
    assert _reason_word(message) in {"memory limit", "time limit"}
    assert "512 MB" in message or "10 s" in message


def test_unpacked_size_limit_counts_every_member() -> None:
    with pytest.raises(ConversionError) as error:
        convert_bytes(
            Path("book.epub"), _bomb("book.epub"), limits=ConversionLimits(unpacked_bytes=MB)
        )
    message = str(error.value)
    assert message.startswith("unpacked size limit: book.epub unpacks to ")
    assert "over the 1 MB limit" in message


def test_per_format_budgets_override_the_default() -> None:
    limits = ConversionLimits(seconds=2.0, per_format={"epub": {"unpacked_bytes": 512 * MB}})
    assert limits.budget("epub").unpacked_bytes == 512 * MB
    assert limits.budget("epub").seconds == 2.0
    assert limits.budget("pdf").unpacked_bytes == limits.unpacked_bytes
    with pytest.raises(InvalidInputError, match="unknown format 'pfd'"):
        ConversionLimits(per_format={"pfd": {"seconds": 1}})
    with pytest.raises(InvalidInputError, match="unknown budget 'secs'"):
        ConversionLimits(per_format={"pdf": {"secs": 1}})
    with pytest.raises(InvalidInputError, match="seconds must be a number above 0"):
        ConversionLimits(seconds=0)
    with pytest.raises(InvalidInputError, match="memory_bytes must be"):
        ConversionLimits(memory_bytes=1000)


@pytest.mark.slow  # waits for a worker's limits
def test_a_file_over_budget_is_not_converted_again_by_the_next_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workspace_tools.core.convert import cache

    calls: list[str] = []
    real = cache.convert_bytes

    def counting(path: Path, data: bytes, **kwargs: Any) -> Any:
        calls.append(path.name)
        return real(path, data, **kwargs)

    monkeypatch.setattr(cache, "convert_bytes", counting)
    root = tmp_path / "ws"
    root.mkdir()
    (root / "length.pdf").write_bytes(_bomb("length.pdf"))
    ws = Workspace(root, embedder=None, conversion_limits=ConversionLimits(seconds=1.0))
    first = {s.path: s.reason for s in ws.sync().skipped}
    (root / "copy.pdf").write_bytes(_bomb("length.pdf"))  # same bytes, another name
    second = {s.path: s.reason for s in ws.sync().skipped}
    assert calls == ["length.pdf"]
    assert second["length.pdf"] == first["length.pdf"]
    assert second["copy.pdf"].startswith("time limit: copy.pdf took longer than 1 s")
    other = Workspace(root, embedder=None, conversion_limits=ConversionLimits(seconds=2.0))
    other.sync(["copy.pdf"])  # other budgets: tried again
    assert calls == ["length.pdf", "copy.pdf"]


@pytest.mark.slow  # starts a worker twice
def test_a_killed_worker_is_replaced() -> None:
    data = hf.pdf_length_cycle()
    for _ in range(2):
        with pytest.raises(ConversionError, match="time limit"):
            convert_bytes(Path("a.pdf"), data, limits=ConversionLimits(seconds=1.0))
    good = convert_bytes(Path("b.pdf"), hf.pdf_title_cycle(), limits=LIMITS)
    assert "Hello cycle" in good.text


# -- converter costs ------------------------------------------------------------------------


def test_docx_paragraph_styles_are_resolved_once_per_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from docx.text.paragraph import Paragraph

    from workspace_tools.core.convert._office import convert_docx

    def no_style(self: object) -> object:
        msg = "Paragraph.style looks the style up in every style of the document"
        raise AssertionError(msg)

    monkeypatch.setattr(Paragraph, "style", property(no_style))
    paragraphs: list[tuple[str, str | None]] = [("Intro", "Heading1")]
    paragraphs += [(f"body {n}", f"S{n % 200}") for n in range(3000)]
    paragraphs += [("first item", "ListBullet"), ("second item", "ListBullet"), ("end", None)]
    text, meta = convert_docx(hf.docx(paragraphs, styles=203), name="many.docx")
    lines = text.splitlines()
    assert lines[0] == "# Intro"
    assert "body 2999" in lines
    assert "- first item" in lines
    assert "- second item" in lines
    assert meta["headings"] == 1


def test_pptx_shape_without_geometry_keeps_the_deck() -> None:
    pptx = pytest.importorskip("pptx")
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Quarterly plan"
    odd = slide.shapes.add_shape(1, Inches(1), Inches(2), Inches(3), Inches(1))
    odd.text_frame.text = "shape without geometry"
    box = slide.shapes.add_textbox(Inches(1), Inches(4), Inches(3), Inches(1))
    box.text_frame.text = "ordinary text box"
    geometry = odd._element.spPr.find(
        "{http://schemas.openxmlformats.org/drawingml/2006/main}prstGeom"
    )
    odd._element.spPr.remove(geometry)
    with pytest.raises(NotImplementedError):
        _ = odd.shape_type  # what python-pptx does with such a shape
    out = io.BytesIO()
    deck.save(out)
    converted = convert_bytes(Path("plan.pptx"), out.getvalue(), limits=LIMITS)
    assert "## Slide 1: Quarterly plan" in converted.text
    assert "ordinary text box" in converted.text
    assert "shape without geometry" in converted.text


def test_a_pdf_bomb_is_counted_piece_by_piece_not_inflated_to_its_bound() -> None:
    # zlib's growing output buffer peaked near twice the 16 MB bound (32 MB traced here), which
    # with pdfminer's own use ran a 64 MB worker out of address space first ('memory limit').
    import importlib
    import tracemalloc

    importlib.import_module("pdfminer.high_level")  # imported outside the measurement

    limits = ConversionLimits(memory_bytes=64 * MB, isolate=False)
    bomb = hf.pdf_flate_bomb(40 * MB)
    tracemalloc.start()
    try:
        with pytest.raises(ConversionError, match="^unpacked size limit: bomb.pdf"):
            convert_bytes(Path("bomb.pdf"), bomb, limits=limits)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * MB, f"traced peak {peak / MB:.1f} MB"
