"""Small generated hostile files: PDF reference cycles, decompression bombs, huge structures.

Every builder returns bytes (a few KB to a few MB) made here, in memory, with the standard
library only, so the tests need no fixture files.
"""

from __future__ import annotations

import io
import zipfile
import zlib


def pdf(objects: dict[int, bytes], *, root: int = 1, info: int | None = None) -> bytes:
    """A PDF with these numbered objects and a correct cross-reference table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets: dict[int, int] = {}
    for number in sorted(objects):
        offsets[number] = out.tell()
        out.write(b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n")
    xref = out.tell()
    size = max(objects) + 1
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % size)
    for number in range(1, size):
        if number in offsets:
            out.write(b"%010d 00000 n \n" % offsets[number])
        else:
            out.write(b"0000000000 65535 f \n")
    trailer = b"<< /Size %d /Root %d 0 R" % (size, root)
    if info is not None:
        trailer += b" /Info %d 0 R" % info
    out.write(b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


_TEXT = b"BT /F1 12 Tf 72 720 Td (Hello cycle) Tj ET"
_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _page_pdf(
    *, resources: bytes, length: bytes, extra: dict[int, bytes], info: int | None = None
) -> bytes:
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources "
        + resources
        + b" /Contents 4 0 R >>",
        4: b"<< /Length " + length + b" >>\nstream\n" + _TEXT + b"\nendstream",
        6: _FONT,
        **extra,
    }
    return pdf(objects, info=info)


def pdf_title_cycle(*, two: bool = False) -> bytes:
    """``/Title 5 0 R`` where object 5 is ``5 0 R`` (or a 2-cycle 5 -> 7 -> 5)."""
    extra = {8: b"<< /Title 5 0 R /Producer (cycle) >>"}
    if two:
        extra |= {5: b"7 0 R", 7: b"5 0 R"}
    else:
        extra[5] = b"5 0 R"
    return _page_pdf(
        resources=b"<< /Font << /F1 6 0 R >> >>", length=b"%d" % len(_TEXT), extra=extra, info=8
    )


def pdf_length_cycle() -> bytes:
    """The content stream's ``/Length`` is ``5 0 R`` and object 5 is ``5 0 R``."""
    return _page_pdf(resources=b"<< /Font << /F1 6 0 R >> >>", length=b"5 0 R", extra={5: b"5 0 R"})


def pdf_resources_cycle() -> bytes:
    """The page's ``/Resources`` is ``5 0 R`` and object 5 is ``7 0 R`` which is ``5 0 R``."""
    return _page_pdf(
        resources=b"5 0 R", length=b"%d" % len(_TEXT), extra={5: b"7 0 R", 7: b"5 0 R"}
    )


def _deflate_zeros(size: int) -> bytes:
    compressor = zlib.compressobj(9)
    block = b"\0" * (1 << 20)
    parts = [compressor.compress(block) for _ in range(size >> 20)]
    parts.append(compressor.flush())
    return b"".join(parts)


def pdf_flate_bomb(unpacked: int) -> bytes:
    """A page whose content stream inflates to ``unpacked`` bytes (about 1,000 to 1)."""
    stream = _deflate_zeros(unpacked)
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        4: b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream)
        + stream
        + b"\nendstream",
    }
    return pdf(objects)


def _zip(members: dict[str, bytes], *, stored: tuple[str, ...] = ()) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in members.items():
            kind = zipfile.ZIP_STORED if name in stored else zipfile.ZIP_DEFLATED
            archive.writestr(name, data, compress_type=kind)
    return out.getvalue()


_CONTAINER = (
    b'<?xml version="1.0"?><container version="1.0" '
    b'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
    b'<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
    b"</rootfiles></container>"
)
_OPF = (
    b'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
    b'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Bomb</dc:title></metadata>'
    b'<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
    b'<spine><itemref idref="c1"/></spine></package>'
)


def epub_bomb(unpacked: int) -> bytes:
    """An EPUB whose one chapter unpacks to ``unpacked`` bytes of paragraphs."""
    body = b"<p>lol lol lol lol lol lol lol lol</p>\n" * (unpacked // 40)
    chapter = b"<html><body>" + body + b"</body></html>"
    return _zip(
        {
            "mimetype": b"application/epub+zip",
            "META-INF/container.xml": _CONTAINER,
            "OEBPS/content.opf": _OPF,
            "OEBPS/c1.xhtml": chapter,
        },
        stored=("mimetype",),
    )


def odt_bomb(paragraphs: int) -> bytes:
    """An ODT whose ``content.xml`` holds ``paragraphs`` tiny paragraphs (a huge parse tree)."""
    body = b"<text:p>a</text:p>" * paragraphs
    content = (
        b'<?xml version="1.0"?><office:document-content '
        b'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        b'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0">'
        b"<office:body><office:text>" + body + b"</office:text></office:body>"
        b"</office:document-content>"
    )
    return _zip(
        {"mimetype": b"application/vnd.oasis.opendocument.text", "content.xml": content},
        stored=("mimetype",),
    )


_W = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def docx(paragraphs: list[tuple[str, str | None]], *, styles: int = 3) -> bytes:
    """A minimal DOCX: ``(text, style id or None)`` paragraphs and ``styles`` paragraph styles."""
    body = b"".join(
        b"<w:p>"
        + (b'<w:pPr><w:pStyle w:val="%s"/></w:pPr>' % style.encode() if style else b"")
        + b"<w:r><w:t>%s</w:t></w:r></w:p>" % text.encode()
        for text, style in paragraphs
    )
    document = b"<w:document " + _W + b"><w:body>" + body + b"</w:body></w:document>"
    style_xml = [
        b'<w:style w:type="paragraph" w:default="1" w:styleId="Normal">'
        b'<w:name w:val="Normal"/></w:style>',
        b'<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>',
        b'<w:style w:type="paragraph" w:styleId="ListBullet">'
        b'<w:name w:val="List Bullet"/></w:style>',
    ]
    style_xml += [
        b'<w:style w:type="paragraph" w:styleId="S%d"><w:name w:val="Style %d"/></w:style>' % (n, n)
        for n in range(max(0, styles - 3))
    ]
    content_types = (
        b'<?xml version="1.0"?><Types '
        b'xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        b'<Default Extension="rels" '
        b'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        b'<Default Extension="xml" ContentType="application/xml"/>'
        b'<Override PartName="/word/document.xml" ContentType="application/'
        b'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
        b'<Override PartName="/word/styles.xml" ContentType="application/'
        b'vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>'
    )
    rels = (
        b'<?xml version="1.0"?><Relationships '
        b'xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
    )
    doc_rels = (
        b'<?xml version="1.0"?><Relationships '
        b'xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/styles" Target="styles.xml"/></Relationships>'
    )
    styles_part = b"<w:styles " + _W + b">" + b"".join(style_xml) + b"</w:styles>"
    return _zip(
        {
            "[Content_Types].xml": content_types,
            "_rels/.rels": rels,
            "word/_rels/document.xml.rels": doc_rels,
            "word/document.xml": document,
            "word/styles.xml": styles_part,
        }
    )


def docx_bomb(unpacked: int) -> bytes:
    """A DOCX whose ``document.xml`` unpacks to about ``unpacked`` bytes."""
    per = b"<w:p><w:r><w:t>lol lol lol lol</w:t></w:r></w:p>"
    data = docx([("x", None)])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["word/document.xml"] = (
        b"<w:document "
        + _W
        + b"><w:body>"
        + per * (unpacked // len(per))
        + b"</w:body></w:document>"
    )
    return _zip(members)


def unclosed_li_html(items: int) -> bytes:
    """A page of ``items`` list items, none closed, each opening a nested list."""
    return b"<html><body>" + b"<ul><li>item " * items + b"</body></html>"


def many_attachments_eml(count: int) -> bytes:
    """A multipart email with ``count`` tiny attachments."""
    boundary = b"BOUNDARY42"
    parts = [
        b"From: a@example.com\r\nTo: b@example.com\r\nSubject: many parts\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=" + boundary + b"\r\n\r\n",
        b"--" + boundary + b"\r\nContent-Type: text/plain\r\n\r\nBody text.\r\n",
    ]
    part = (
        b"--" + boundary + b"\r\nContent-Type: application/octet-stream\r\n"
        b'Content-Disposition: attachment; filename="f.bin"\r\n\r\nx\r\n'
    )
    parts.append(part * count)
    parts.append(b"--" + boundary + b"--\r\n")
    return b"".join(parts)
