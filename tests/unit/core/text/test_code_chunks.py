"""Code-aware chunking: definitions as chunks, their symbols, packing, splitting, fallbacks."""

from __future__ import annotations

import pytest

from tests.support.code_repo import FILES
from workspace_tools.core.convert import Converted
from workspace_tools.core.text import code_chunks as code_module
from workspace_tools.core.text.chunking import CODE_RULES, ChunkingConfig
from workspace_tools.core.text.code_chunks import code_available, code_chunks
from workspace_tools.core.text.indexed import bm25_text
from workspace_tools.core.workspace.chunks import chunk_converted

pytestmark = pytest.mark.skipif(not code_available(), reason="needs the code extra")

EACH = ChunkingConfig(min_section_chars=0)
"""Every definition its own chunk (no packing)."""


def _cut(name: str, config: ChunkingConfig = EACH) -> list[tuple[int, int, object, object]]:
    chunks = code_chunks(FILES[name], source_id=name, config=config)
    assert chunks is not None
    return [
        (c.start_line, c.end_line, c.metadata.get("symbol"), c.metadata.get("symbol_kind"))
        for c in chunks
    ]


def test_python_is_cut_at_classes_methods_and_functions() -> None:
    assert _cut("src/index.py") == [
        (1, 3, None, None),  # the module docstring and imports
        (6, 7, "SparseIndex", "class"),
        (9, 10, "SparseIndex.__init__", "method"),
        (12, 14, "SparseIndex.add", "method"),
        (16, 19, "SparseIndex.search", "method"),
        (22, 25, "idf", "function"),  # its decorator included
    ]


def test_typescript_go_rust_and_java_are_cut_at_their_definitions() -> None:
    assert _cut("web/settings.ts")[1:] == [
        (3, 6, "loadSettings", "function"),  # its doc comment and `export` included
        (8, 10, "Settings", "interface"),
        (12, 12, "RetryPolicy", "class"),
        (13, 13, "RetryPolicy.constructor", "method"),
        (15, 18, "RetryPolicy.delay", "method"),  # the class's closing brace joins it
        (20, 21, "clamp", "function"),  # const clamp = (...) => ...
    ]
    assert _cut("server/server.go")[1:] == [
        (5, 8, "Server", "struct"),
        (10, 13, "Server.Start", "method"),  # func (s *Server) Start()
        (15, 17, "NewServer", "function"),
    ]
    assert _cut("geo/point.rs")[1:] == [
        (3, 8, "Point", "struct"),  # doc comment and #[derive] included
        (10, 10, "Point", "impl"),
        (11, 14, "Point.fmt", "method"),
        (16, 18, "origin", "function"),
    ]
    assert _cut("shop/Cart.java")[1:] == [
        (3, 5, "Cart", "class"),
        (7, 9, "Cart.Cart", "constructor"),
        (11, 14, "Cart.addItem", "method"),
    ]


def test_javascript_functions_and_methods() -> None:
    text = "function add(a, b) {\n  return a + b\n}\n\nclass Calc {\n  sum(xs) { return 0 }\n}\n"
    chunks = code_chunks(text, source_id="calc.mjs", config=EACH)
    assert chunks is not None
    assert [c.metadata.get("symbol") for c in chunks] == ["add", "Calc", "Calc.sum"]


def test_small_neighbours_are_packed_up_to_min_section_chars() -> None:
    packed = _cut("src/index.py", ChunkingConfig(min_section_chars=120))
    assert [(first, last) for first, last, _, _ in packed] == [
        (1, 10),  # imports (40 characters), the class line and docstring, then __init__
        (12, 14),
        (16, 19),
        (22, 25),
    ]
    assert packed[0][2:] == (["SparseIndex", "SparseIndex.__init__"], ["class", "method"])
    default = code_chunks(FILES["src/index.py"], source_id="a.py", config=ChunkingConfig())
    assert default is not None  # 400 characters: the class in one chunk, every symbol named
    assert [(c.start_line, c.end_line, c.metadata["symbol"]) for c in default] == [
        (1, 19, ["SparseIndex", "SparseIndex.__init__", "SparseIndex.add", "SparseIndex.search"]),
        (22, 25, "idf"),
    ]
    assert default[0].metadata["symbol_kind"] == ["class", "method", "method", "method"]


def test_a_large_definition_is_split_by_lines_and_every_piece_names_it() -> None:
    body = "".join(f"    total += {i}  # step {i}\n" for i in range(200))
    text = f"import os\n\n\ndef big():\n    total = 0\n{body}    return total\n\n\ndef small():\n    pass\n"
    config = ChunkingConfig(max_chars=1000, min_section_chars=0)
    chunks = code_chunks(text, source_id="big.py", config=config)
    assert chunks is not None
    big = [c for c in chunks if c.metadata.get("symbol") == "big"]
    assert len(big) > 3
    assert all(len(c.text) <= 1000 for c in chunks)
    assert big[0].start_line == 4 and big[-1].end_line == 206
    assert big[1].start_line == big[0].end_line - 2  # today's 3-line overlap inside it
    assert chunks[-1].metadata["symbol"] == "small"
    assert [c.id for c in chunks] == [f"big.py#chunk-{n}" for n in range(len(chunks))]
    lines = text.split("\n")
    for c in chunks:
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("broken.py", "def f(:\n    pass\n"),  # does not parse
        ("script.py", "import os\nprint(os.getcwd())\n"),  # no definition
        ("notes.rb", "def f\nend\n"),  # no grammar for Ruby
        ("empty.py", "  \n"),
    ],
)
def test_what_cannot_be_cut_at_definitions_gives_none(name: str, text: str) -> None:
    assert code_chunks(text, source_id=name, config=ChunkingConfig()) is None


def test_chunk_converted_falls_back_to_lines_without_the_extra_or_when_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    converted = Converted(text=FILES["src/index.py"], format="code", markdown=False)
    config = ChunkingConfig(min_section_chars=0, code=True)
    on = chunk_converted("src/index.py", converted, {}, config=config)
    assert len(on) == 6 and on[4].metadata["symbol"] == "SparseIndex.search"
    assert on[4].metadata["format"] == "code"
    off = chunk_converted("src/index.py", converted, {}, config=ChunkingConfig(code=False))
    assert [c.id for c in off] == ["src/index.py"]
    assert "symbol" not in off[0].metadata
    monkeypatch.setattr(code_module, "code_available", lambda: False)
    assert chunk_converted("src/index.py", converted, {}, config=config) == off
    one_line = Converted(
        text="def f(): return " + "1 + " * 400 + "1\n", format="code", markdown=False
    )
    minified = chunk_converted("app.min.js", one_line, {}, config=config)
    assert minified[0].metadata["content_kind"] == "minified"
    assert "symbol" not in minified[0].metadata


def test_the_symbols_are_in_the_bm25_text_of_code_only() -> None:
    meta = {"format": "code", "symbol": "SparseIndex.search"}
    assert bm25_text("def search(self):", meta) == (
        "def search(self):\nSparseIndex.search SparseIndex search"
    )
    packed = {"format": "code", "symbol": ["A", "A.f"]}
    assert bm25_text("class A:", packed) == "class A:\nA A.f A A f"
    assert bm25_text("text", {"format": "text", "symbol": "X.y"}) == "text"
    assert bm25_text("[a](b.md)", {"format": "markdown"}) == "[a]"


def test_the_setting_is_recorded_with_its_rules_version() -> None:
    assert "code" not in ChunkingConfig().to_dict()  # unset: decided by the workspace
    assert "code" not in ChunkingConfig(code=False).to_dict()  # as indexes before it
    assert ChunkingConfig(code=True).to_dict()["code"] == CODE_RULES
