"""Code-aware chunking: source files cut at functions, classes and methods (tree-sitter).

Each chunk's metadata names its ``symbol`` (``"SparseIndex.search"``) and ``symbol_kind``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import re
from collections.abc import Mapping
from typing import Any, Final

from workspace_tools.core.text.chunking import ChunkingConfig, chunk_text
from workspace_tools.core.types import Chunk

__all__ = ["GRAMMARS", "code_available", "code_chunks", "language_of"]

_PYTHON, _JS = ("tree_sitter_python", "language"), ("tree_sitter_javascript", "language")
_TS = ("tree_sitter_typescript", "language_typescript")
GRAMMARS: Final[Mapping[str, tuple[str, str]]] = {
    **dict.fromkeys((".py", ".pyi"), _PYTHON),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), _JS),
    **dict.fromkeys((".ts", ".mts", ".cts"), _TS),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
    ".go": ("tree_sitter_go", "language"),
    ".rs": ("tree_sitter_rust", "language"),
    ".java": ("tree_sitter_java", "language"),
}
"""File suffix -> (grammar module, function returning its language)."""

_KINDS: Final[Mapping[str, str]] = {
    "class_definition": "class",
    "function_definition": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "method_definition": "method",
    "method_declaration": "method",
    "constructor_declaration": "constructor",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "type_alias_declaration": "type",
    "type_spec": "type",
    "function_item": "function",
    "struct_item": "struct",
    "enum_item": "enum",
    "union_item": "union",
    "trait_item": "trait",
    "impl_item": "impl",
    "mod_item": "module",
    "macro_definition": "macro",
}
"""Definition node type -> ``symbol_kind``."""
_CONTAINERS: Final = frozenset({"class", "interface", "enum", "record", "trait", "impl", "module"})
"""Kinds whose body is searched for nested definitions (methods, inner classes)."""
_WRAPPERS: Final = frozenset(
    {
        "decorated_definition",
        "export_statement",
        "type_declaration",
        "lexical_declaration",
        "variable_declaration",
    }
)
"""Nodes around one definition (decorators, ``export``, Go's ``type``, ``const f = () =>``)."""
_ATTACHED: Final = ("comment", "attribute_item", "decorator", "annotation")
"""Siblings kept with the definition right below them (doc comments, Rust attributes)."""
_FUNCTION_VALUES: Final = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_MAX_DEPTH: Final = 16
_WORD: Final = re.compile(r"\w")


@functools.cache
def code_available() -> bool:
    """Whether tree-sitter and every grammar of :data:`GRAMMARS` are installed."""
    names = {"tree_sitter", *(module for module, _ in GRAMMARS.values())}
    return all(importlib.util.find_spec(name) is not None for name in names)


def language_of(source_id: str) -> str | None:
    """The grammar suffix of ``source_id`` (``".py"``), or ``None`` for another language."""
    name = source_id.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    suffix = name[dot:].lower() if dot > 0 else ""
    return suffix if suffix in GRAMMARS else None


@functools.cache
def _language(suffix: str) -> Any:
    import tree_sitter

    module, function = GRAMMARS[suffix]
    return tree_sitter.Language(getattr(importlib.import_module(module), function)())


@dataclasses.dataclass(slots=True)
class _Unit:
    first: int
    last: int
    label: tuple[str, str] | None
    """``(symbol, kind)`` of the definition these lines belong to."""


def code_chunks(
    text: str,
    *,
    source_id: str,
    config: ChunkingConfig,
    metadata: Mapping[str, Any] | None = None,
) -> list[Chunk] | None:
    """Cut a source file at its definitions (ids as :func:`chunk_text`); ``None`` if it cannot."""
    suffix = language_of(source_id)
    if suffix is None or not code_available() or not text.strip():
        return None
    import tree_sitter

    try:
        tree = tree_sitter.Parser(_language(suffix)).parse(text.encode("utf-8", "replace"))
    except (ValueError, RuntimeError):  # pragma: no cover - a grammar of another ABI
        return None
    if tree.root_node.has_error:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    units = _cover(tree.root_node.named_children, 0, len(lines) - 1, None, "", 0)
    if all(unit.label is None for unit in units):
        return None
    spans = _pack(units, lines, config)
    meta = dict(metadata or {})
    chunks: list[Chunk] = []
    for first, last, labels in spans:
        own = dict(meta)
        if labels:
            symbols, kinds = [s for s, _ in labels], [k for _, k in labels]
            own["symbol"] = symbols[0] if len(symbols) == 1 else symbols
            own["symbol_kind"] = kinds[0] if len(kinds) == 1 else kinds
        body = "\n".join(lines[first : last + 1])
        if len(body) <= config.max_chars:
            chunks.append(Chunk(source_id, source_id, body, first + 1, last + 1, metadata=own))
            continue
        for piece in chunk_text(body, source_id=source_id, config=config, metadata=own):
            start, end = piece.start_line + first, piece.end_line + first
            chunks.append(dataclasses.replace(piece, start_line=start, end_line=end))
    if len(chunks) == 1:
        return chunks
    return [dataclasses.replace(c, id=f"{source_id}#chunk-{n}") for n, c in enumerate(chunks)]


def _cover(
    nodes: list[Any], first: int, last: int, label: tuple[str, str] | None, prefix: str, depth: int
) -> list[_Unit]:
    """Lines ``first..last`` as units: the definitions among ``nodes``, ``label`` between them."""
    units: list[_Unit] = []
    row = first
    above, above_end = -1, -2  # comments/attributes right above the next definition
    for node in nodes:
        start, end = node.start_point.row, _last_row(node)
        if node.type.endswith(_ATTACHED):
            above = above if start <= above_end + 1 and above >= 0 else start
            above_end = end
            continue
        found = _definition(node, prefix, label)
        top = above if above >= 0 and above_end + 1 >= start else start
        above = -1
        if found is None or end < row:
            continue
        top = max(row, top)
        if top > row:
            units.append(_Unit(row, top - 1, label))
        symbol, kind, body = found
        inner = body.named_children if body is not None else []
        if kind in _CONTAINERS and inner and depth < _MAX_DEPTH:
            units.extend(_cover(inner, top, end, (symbol, kind), f"{symbol}.", depth + 1))
        else:
            units.append(_Unit(top, end, (symbol, kind)))
        row = end + 1
    if row <= last:
        units.append(_Unit(row, last, label))
    return units


def _definition(
    node: Any, prefix: str, owner: tuple[str, str] | None
) -> tuple[str, str, Any] | None:
    """``(symbol, kind, body)`` of a definition (or of the one a wrapper holds) in ``owner``."""
    if node.type in _WRAPPERS:
        inner = node.child_by_field_name("definition") or node.child_by_field_name("declaration")
        if inner is None:
            inner = next((c for c in node.named_children if c.type in _KINDS), None)
        if inner is None and node.type.endswith("l_declaration"):
            return _function_variable(node, prefix)
        return _definition(inner, prefix, owner) if inner is not None else None
    kind = _KINDS.get(node.type)
    if kind is None:
        return None
    if node.type == "impl_item":
        name_node = node.child_by_field_name("type")
    else:
        name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = _text(name_node).split("<", 1)[0].strip()
    if node.type == "method_declaration" and (receiver := node.child_by_field_name("receiver")):
        prefix = prefix or f"{_first_type(receiver) or ''}."  # Go: func (s *T) M
    elif kind == "function" and owner is not None and owner[1] != "module":
        kind = "method"
    if node.type == "type_spec":
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(
            getattr(node.child_by_field_name("type"), "type", ""), "type"
        )
    return f"{prefix.lstrip('.')}{name}", kind, node.child_by_field_name("body")


def _function_variable(node: Any, prefix: str) -> tuple[str, str, Any] | None:
    """``const name = (...) => ...`` / ``= function ...`` as a function named ``name``."""
    for declarator in node.named_children:
        value = declarator.child_by_field_name("value")
        name = declarator.child_by_field_name("name")
        if value is not None and name is not None and value.type in _FUNCTION_VALUES:
            return f"{prefix}{_text(name)}", "function", None
    return None


def _first_type(node: Any) -> str | None:
    for child in node.named_children:
        if child.type == "type_identifier":
            return _text(child)
        found = _first_type(child)
        if found is not None:
            return found
    return None


def _text(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", "replace")


def _last_row(node: Any) -> int:
    """The node's last line (a node ending at column 0 ends on the line before)."""
    row, column = node.end_point
    return int(row) - 1 if column == 0 and row > node.start_point.row else int(row)


def _pack(
    units: list[_Unit], lines: list[str], config: ChunkingConfig
) -> list[tuple[int, int, list[tuple[str, str]]]]:
    """Chunks as ``(first, last, labels)``: units packed until ``min_section_chars``."""
    spans: list[tuple[int, int, list[tuple[str, str]]]] = []
    first, last, size, labels = -1, -1, 0, list[tuple[str, str]]()
    for unit in units:
        own = lines[unit.first : unit.last + 1]
        length = sum(map(len, own)) + len(own) - 1
        filler = not any(map(_WORD.search, own))
        if first >= 0 and size + 1 + length <= config.max_chars:
            if not filler and size >= config.min_section_chars:
                spans.append((first, last, labels))
                first, size, labels = unit.first, -1, []
        elif filler:
            continue
        else:
            if first >= 0:
                spans.append((first, last, labels))
            first, size, labels = unit.first, -1, []
        last, size = unit.last, size + 1 + length
        if unit.label is not None and unit.label not in labels and not filler:
            labels.append(unit.label)
    if first >= 0:
        spans.append((first, last, labels))
    return [_trim(span, lines) for span in spans]


def _trim(
    span: tuple[int, int, list[tuple[str, str]]], lines: list[str]
) -> tuple[int, int, list[tuple[str, str]]]:
    first, last, labels = span
    while first < last and not lines[first].strip():
        first += 1
    while last > first and not lines[last].strip():
        last -= 1
    return first, last, labels
