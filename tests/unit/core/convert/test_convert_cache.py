"""ConversionCache: JSON entries keyed by content hash, so unchanged files convert once."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.support.paths import BENCHMARKS, missing
from workspace_tools.core.convert import Converted
from workspace_tools.core.convert import _documents as documents
from workspace_tools.core.convert.cache import CONVERTER_VERSION, ConversionCache
from workspace_tools.core.errors import InvalidInputError

MIXED = BENCHMARKS / "mixed-docs"

SAMPLE = Converted(
    text="<!-- page 1 -->\n\n# Title\n\nbody é\n",
    format="pdf",
    markdown=True,
    metadata={"pages": 1, "title": "Title", "sheet_names": ["a", "b"]},
)


def test_round_trip(tmp_path: Path) -> None:
    cache = ConversionCache(tmp_path / "cache")
    digest = "ab" * 32
    assert cache.get(digest) is None
    assert cache.put(digest, SAMPLE) is SAMPLE
    assert cache.get(digest) == SAMPLE
    entry = tmp_path / "cache" / "ab" / f"{digest}.json"
    record = json.loads(entry.read_text(encoding="utf-8"))
    assert record["version"] == CONVERTER_VERSION
    assert record["text"] == SAMPLE.text
    assert not list(entry.parent.glob(".tmp-*"))
    assert ConversionCache(tmp_path / "cache").get(digest) == SAMPLE  # a fresh instance reads it


def test_version_change_and_damaged_entries_are_misses(tmp_path: Path) -> None:
    digest = "cd" * 32
    ConversionCache(tmp_path).put(digest, SAMPLE)
    assert ConversionCache(tmp_path, version="documents-0").get(digest) is None
    entry = tmp_path / "cd" / f"{digest}.json"
    entry.write_text("{not json", encoding="utf-8")
    assert ConversionCache(tmp_path).get(digest) is None
    entry.write_text(json.dumps({"version": CONVERTER_VERSION, "text": 3}), encoding="utf-8")
    assert ConversionCache(tmp_path).get(digest) is None


@pytest.mark.parametrize("bad", ["", "short", "../../etc/passwd", "a/b" * 5, "x" * 200])
def test_bad_keys_are_rejected(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidInputError):
        ConversionCache(tmp_path).get(bad)


def test_prune_keeps_only_live_hashes(tmp_path: Path) -> None:
    cache = ConversionCache(tmp_path)
    keys = [f"{n:02d}" * 10 for n in range(4)]
    for key in keys:
        cache.put(key, SAMPLE)
    assert cache.prune(keys[:2]) == 2
    assert [cache.get(key) is not None for key in keys] == [True, True, False, False]
    assert ConversionCache(tmp_path / "nowhere").prune([]) == 0


@pytest.mark.skipif(not MIXED.is_dir(), reason=missing(MIXED))
def test_unchanged_pdf_is_converted_once_even_renamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pdfminer")
    from workspace_tools.core.convert import _pdf as pdf

    calls: list[str] = []
    real = pdf.convert_pdf

    def counting(data: bytes, *, name: str) -> object:
        calls.append(name)
        return real(data, name=name)

    monkeypatch.setattr(pdf, "convert_pdf", counting)
    cache = ConversionCache(tmp_path / "cache")

    def cached_convert(path: Path) -> Converted:
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        hit = cache.get(digest)
        return hit if hit is not None else cache.put(digest, documents.convert_document(path, data))

    original = tmp_path / "memo.pdf"
    original.write_bytes((MIXED / "unstructured" / "fake-memo.pdf").read_bytes())
    first = cached_convert(original)
    renamed = original.rename(tmp_path / "renamed-memo.pdf")
    renamed.touch()  # a new mtime changes nothing: the key is the content
    second = cached_convert(renamed)
    assert calls == ["memo.pdf"]
    assert second == first
    assert second.metadata["pages"] == 1


# --- convert(): the one path through the cache, for sync (store) and grep (read only) ---------

HTML = b"<html><body><h1>Guide</h1><p>original words</p></body></html>"


def test_convert_stores_rich_documents_and_reads_them_back(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(HTML)
    cache = ConversionCache(tmp_path / "cache")
    digest = hashlib.blake2b(HTML, digest_size=16).hexdigest()
    first = cache.convert(page, HTML, digest)
    assert "original words" in first.text
    assert cache.get(digest) == first
    cache.put(digest, SAMPLE)  # a stored entry wins over converting again
    assert cache.convert(page, HTML, digest) == SAMPLE


def test_convert_without_store_reads_but_never_writes(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(HTML)
    cache = ConversionCache(tmp_path / "cache")
    digest = hashlib.blake2b(HTML, digest_size=16).hexdigest()
    assert "original words" in cache.convert(page, HTML, digest, store=False).text
    assert not (tmp_path / "cache").exists()
    cache.put(digest, SAMPLE)
    assert cache.convert(page, HTML, digest, store=False) == SAMPLE


def test_plain_text_bypasses_the_cache(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_bytes(b"# Note\n\nplain words\n")
    cache = ConversionCache(tmp_path / "cache")
    digest = "cd" * 16
    cache.put(digest, SAMPLE)
    assert cache.convert(note, note.read_bytes(), digest).text == "# Note\n\nplain words\n"
    assert [p.name for p in (tmp_path / "cache").glob("*/*.json")] == [f"{digest}.json"]
