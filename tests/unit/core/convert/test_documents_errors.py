"""Failures carry a reason word before a colon: corrupt, encrypted, unsupported, missing extra."""

from __future__ import annotations

import importlib
import io
import random
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import BENCHMARKS, missing
from workspace_tools.core.convert._documents import convert_document
from workspace_tools.core.convert.dispatch import convert_bytes
from workspace_tools.core.errors import ConversionError, WorkspaceError

MIXED = BENCHMARKS / "mixed-docs"
needs_mixed = pytest.mark.skipif(not MIXED.is_dir(), reason=missing(MIXED))


def reason(error: pytest.ExceptionInfo[ConversionError]) -> str:
    return str(error.value).split(":", 1)[0]


@needs_mixed
def test_truncated_pdf_is_corrupt(tmp_path: Path) -> None:
    pytest.importorskip("pdfminer")
    data = (MIXED / "unstructured" / "layout-parser-paper-fast.pdf").read_bytes()
    broken = tmp_path / "half.pdf"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(ConversionError) as error:
        convert_bytes(broken, broken.read_bytes())
    assert reason(error) == "corrupt"
    assert "half.pdf" in str(error.value)
    assert isinstance(error.value, WorkspaceError)


@pytest.mark.parametrize("suffix", [".docx", ".pptx", ".xlsx", ".epub", ".odt", ".pdf"])
def test_renamed_random_bytes_are_corrupt(tmp_path: Path, suffix: str) -> None:
    rng = random.Random(7)
    path = tmp_path / f"binary{suffix}"
    path.write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    with pytest.raises(ConversionError) as error:
        convert_document(path, path.read_bytes())
    assert reason(error) == "corrupt"
    assert path.name in str(error.value)


def test_zip_without_the_expected_parts_is_corrupt(tmp_path: Path) -> None:
    pytest.importorskip("docx")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "not a word document")
    for suffix in (".docx", ".pptx", ".xlsx", ".epub", ".odt"):
        with pytest.raises(ConversionError) as error:
            convert_document(Path(f"fake{suffix}"), buffer.getvalue())
        assert reason(error) == "corrupt", suffix


def test_truncated_zip_is_corrupt() -> None:
    pytest.importorskip("docx")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("word/document.xml", "x" * 5000)
    data = buffer.getvalue()
    with pytest.raises(ConversionError) as error:
        convert_document(Path("cut.docx"), data[: len(data) // 2])
    assert reason(error) == "corrupt"


def test_password_protected_office_file_is_encrypted() -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100 + "EncryptionInfo".encode("utf-16-le")
    with pytest.raises(ConversionError) as error:
        convert_document(Path("secret.xlsx"), ole + b"\x00" * 100)
    assert reason(error) == "encrypted"


def test_legacy_office_file_is_unsupported() -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 500
    with pytest.raises(ConversionError) as error:
        convert_document(Path("old.docx"), ole)
    assert reason(error) == "unsupported"


def test_encrypted_pdf_is_encrypted(tmp_path: Path) -> None:
    pypdf = pytest.importorskip("pypdf", reason="pypdf writes the encrypted fixture")
    pytest.importorskip("pdfminer")
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    with pytest.raises(ConversionError) as error:
        convert_document(tmp_path / "locked.pdf", buffer.getvalue())
    assert reason(error) == "encrypted"


def test_unknown_suffix_and_empty_file() -> None:
    with pytest.raises(ConversionError) as error:
        convert_document(Path("slides.key"), b"data")
    assert reason(error) == "unsupported"
    with pytest.raises(ConversionError) as error:
        convert_document(Path("empty.pdf"), b"")
    assert reason(error) == "corrupt"


def test_missing_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def fake_import(name: str, package: str | None = None) -> object:
        if name.split(".")[0] in {"pdfminer", "docx", "bs4"}:
            msg = f"No module named {name!r}"
            raise ModuleNotFoundError(msg)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    pdf = b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"
    for path, data in [(Path("a.pdf"), pdf), (Path("b.html"), b"<p>hi</p>")]:
        with pytest.raises(ConversionError) as error:
            convert_document(path, data)
        message = str(error.value)
        assert reason(error) == "missing extra"
        assert 'pip install "workspace-tools[documents]"' in message


def test_importing_the_layer_loads_no_converter_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys, workspace_tools.core.convert._documents, workspace_tools.core.convert.cache\n"
        "heavy = {'pdfminer', 'docx', 'pptx', 'openpyxl', 'bs4', 'markdownify', 'lxml'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
