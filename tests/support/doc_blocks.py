"""The fenced blocks of a Markdown page, with the ``<!-- doctest: ... -->`` lines above them.

The docs are tested like code (``tests/test_docs_examples.py``). This module only reads them:

- Every fence needs a language. ``python``, ``sh``/``bash``/``shell`` and ``console`` blocks
  run; ``json`` blocks marked ``mcp-config`` are started as MCP servers; every other language
  (``text``, ``yaml``, ``json``, ``toml``, ``xml``, ``markdown``...) is shown, not run.
- In a ``console`` block, lines starting with ``$ `` are commands and the lines after each one
  are its expected output.
- Directives are HTML comments (invisible on the rendered page), one per line, directly above
  the fence (no blank line between):

  ``<!-- doctest: skip (reason) -->``
      the block is not run; the test run reports it as skipped with the reason.
  ``<!-- doctest: output -->``, ``<!-- doctest: output (numbers vary) -->``
      this block (any language) is the expected output of the closest runnable block above it
      on the page (stdout and stderr together). ``...`` matches any text within a line, a line
      holding only ``...`` any number of lines; durations (``9.81s``, ``16.4 ms``) always match
      each other; with ``numbers vary`` every number matches any number.
  ``<!-- doctest: model -->``
      run with the real packaged embedding model (the test is marked ``requires_model``);
      without it a deterministic fake embedder stands in for the default model.
  ``<!-- doctest: slow -->``
      the block takes seconds (the test is marked ``slow``): the fast default ``pytest`` run
      leaves it out, with the blocks below it on the page, ``pytest --full`` runs it.
  ``<!-- doctest: npm -->``
      the block runs npm clients (``npx ...``) installed by ``npm ci --prefix tests/npm``; where
      they are not installed it is skipped, saying so.
  ``<!-- doctest: extra (milvus) -->``
      the block needs that extra of the package; where it is not installed (the README's
      ``.[all]`` leaves out ``milvus`` and ``ray``) it is skipped, saying which.
  ``<!-- doctest: mcp-config -->``
      a client configuration (``mcpServers``/``servers`` JSON): parsed, and each stdio server
      started with exactly its command and arguments and asked for its tools.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "RUNNABLE",
    "Block",
    "DocSyntaxError",
    "output_matches",
    "parse_blocks",
]

RUNNABLE = frozenset({"python", "sh", "bash", "shell", "console"})
SHOWN = frozenset(
    {"text", "yaml", "json", "toml", "xml", "markdown", "md", "html", "ini", "diff", "mermaid"}
)
_DIRECTIVE = re.compile(r"^\s*<!--\s*doctest:\s*(?P<name>[a-z-]+)(?:\s*\((?P<arg>.*)\))?\s*-->\s*$")
_LOOSE = re.compile(r"^\s*<!--\s*doctest", re.I)
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,}|~{3,})(?P<info>[^`]*)$")
_KNOWN = {
    "skip": True,
    "output": False,
    "model": False,
    "slow": False,
    "mcp-config": False,
    "npm": False,
    "extra": True,
}
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "milvus": ("pymilvus", "milvus_lite"),
    "ray": ("ray",),
    "vector": ("faiss", "sentence_transformers"),
    "documents": ("pdfminer", "docx", "pptx", "openpyxl", "bs4"),
    "code": ("tree_sitter", "tree_sitter_python", "tree_sitter_go"),
    "agents": ("langchain",),
    "mcp": ("mcp", "jsonschema"),
}
"""What ``<!-- doctest: extra (NAME) -->`` checks for (import names of the extra's packages)."""
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")
_PROGRESS = re.compile(r"\d+%\|.*\|.*(?:it|item)s?/s\]|\d+%\|.*\| \d+/\d+ \[")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


class DocSyntaxError(ValueError):
    """A page's blocks or directives break the rules above (the message says where and how)."""


@dataclass
class Block:
    """One fenced block of a page."""

    page: str
    line: int
    lang: str
    code: str
    directives: dict[str, str] = field(default_factory=dict)
    expected: list[Block] = field(default_factory=list)
    """Output blocks (``<!-- doctest: output -->``) that belong to this block."""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def runnable(self) -> bool:
        if "output" in self.directives:
            return False
        return self.lang in RUNNABLE or "mcp-config" in self.directives

    @property
    def skip_reason(self) -> str | None:
        return self.directives.get("skip")


def parse_blocks(text: str, page: str) -> list[Block]:
    """Every fenced block of ``text`` (the page ``page``), in order, directives attached.

    Raises:
        DocSyntaxError: a fence without a language or never closed, an unknown or misplaced
            directive, a skip without a reason, an output block with nothing runnable above it.
    """
    lines = text.split("\n")
    blocks: list[Block] = []
    pending: dict[str, str] = {}
    pending_line = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.match(line)
        if directive:
            name, arg = directive["name"], (directive["arg"] or "").strip()
            if name not in _KNOWN:
                msg = f"{page}:{i + 1}: unknown directive {name!r} (known: {', '.join(_KNOWN)})"
                raise DocSyntaxError(msg)
            if _KNOWN[name] and not arg:
                msg = f"{page}:{i + 1}: `doctest: {name}` needs a reason in parentheses"
                raise DocSyntaxError(msg)
            pending[name] = arg
            pending_line = i + 1
            i += 1
            continue
        if _LOOSE.search(line):
            msg = f"{page}:{i + 1}: malformed directive {line.strip()!r}"
            raise DocSyntaxError(msg)
        fence = _FENCE.match(line)
        if fence is None:
            if pending and line.strip() == "":
                msg = (
                    f"{page}:{pending_line}: a doctest directive must be directly above a fence "
                    "(no blank line between)"
                )
                raise DocSyntaxError(msg)
            if pending:
                msg = f"{page}:{pending_line}: a doctest directive must be directly above a fence"
                raise DocSyntaxError(msg)
            i += 1
            continue
        start = i
        lang = fence["info"].strip().split(" ")[0].lower() if fence["info"].strip() else ""
        if not lang:
            msg = (
                f"{page}:{start + 1}: a fence without a language; say what it holds "
                "(python, sh, console, text, yaml, json, ...)"
            )
            raise DocSyntaxError(msg)
        close = re.compile(rf"^\s*{re.escape(fence['ticks'][0])}{{{len(fence['ticks'])},}}\s*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            body.append(_dedent(lines[i], len(fence["indent"])))
            i += 1
        if i >= len(lines):
            msg = f"{page}:{start + 1}: a fence that is never closed"
            raise DocSyntaxError(msg)
        block = Block(page, start + 1, lang, "\n".join(body) + "\n", dict(pending))
        pending = {}
        if "output" in block.directives:
            owner = next((b for b in reversed(blocks) if b.runnable), None)
            if owner is None:
                msg = f"{block.where}: an output block with no runnable block above it"
                raise DocSyntaxError(msg)
            owner.expected.append(block)
        elif lang not in RUNNABLE and lang not in SHOWN and "mcp-config" not in block.directives:
            msg = f"{block.where}: unknown fence language {lang!r}"
            raise DocSyntaxError(msg)
        blocks.append(block)
        i += 1
    return blocks


def _dedent(line: str, indent: int) -> str:
    return line[indent:] if line[:indent].strip() == "" else line.lstrip()


def page_blocks(path: Path, repo: Path) -> list[Block]:
    """The blocks of the page at ``path`` (named relative to ``repo``)."""
    return parse_blocks(path.read_text(encoding="utf-8"), path.relative_to(repo).as_posix())


def console_commands(code: str) -> list[tuple[str, str]]:
    """``(command, expected output)`` pairs of a ``console`` block."""
    pairs: list[tuple[str, list[str]]] = []
    for line in code.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        elif pairs and pairs[-1][0].endswith("\\") and not pairs[-1][1]:
            pairs[-1] = (pairs[-1][0] + "\n" + line, [])
        elif pairs:
            pairs[-1][1].append(line)
        elif line.strip():
            msg = f"a console block starts with output, not a '$ ' command: {line!r}"
            raise DocSyntaxError(msg)
    return [(command, "\n".join(out)) for command, out in pairs]


def _normalise(text: str, *, numbers: bool) -> str:
    lines: list[str] = []
    after_bar = False
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw.rsplit("\r", 1)[-1].rstrip()  # what a terminal shows after the \r updates
        if _PROGRESS.search(line) or (line == "" and raw.strip()):
            # a progress bar (tqdm on stderr): volatile, never compared, nor the blank lines
            # around it
            while lines and lines[-1] == "":
                lines.pop()
            after_bar = True
            continue
        if after_bar and line == "":
            continue
        after_bar = False
        lines.append(line)
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    out = _DURATION.sub("<duration>", "\n".join(lines))
    return _NUMBER.sub("<n>", out) if numbers else out


def output_matches(expected: str, actual: str, *, numbers_vary: bool = False) -> bool:
    """Whether ``actual`` reads as ``expected`` (see the module docstring for the rules)."""
    want = _normalise(expected, numbers=numbers_vary)
    got = _normalise(actual, numbers=numbers_vary) + "\n"
    pattern = ""
    for line in want.split("\n"):
        if line.strip() == "...":
            pattern += r"(?:[^\n]*\n)*?"
        else:
            pieces = [re.escape(p) for p in line.split("...")]
            pattern += r"[^\n]*?".join(pieces) + r"\n"
    return re.fullmatch(pattern, got) is not None
