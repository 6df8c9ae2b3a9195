"""Code search on a real repository: does the definition that answers come first?

Run: ``.venv/bin/python tests/benchmarks/code_search.py [--modes bm25 vector hybrid] [--json out.json]``

The corpus is the source of ``langchain_core`` as installed in this venv (its ``site-packages``
folder, ``*.py`` files copied to a temporary root), so the run needs no download. The questions
were written from the docstrings' descriptions of behaviour, not from the names: each names the
definitions that answer it (``path::Class.method``; several when two implementations say the
same; an async twin ``Class.amethod`` counts too). The same two rules with code chunking off and
on: a hit is **a chunk of the definition** when its line span overlaps the definition's lines
(decorators to end), and **holds its signature** when it holds the ``def``/``class`` line. Per
mode and setting: success@1 and @5 over ``top_k=5`` chunks, and MRR@5; for the questions, and for the same answers
looked up by name (``VectorStore max_marginal_relevance_search``: the qualified name, its dots
as spaces). Vectors come from the
packaged default model behind the on-disk cache of ``_testsets.CachedEmbedder``.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import langchain_core

from workspace_tools import ChunkingConfig, Workspace
from workspace_tools.core.convert import Converted
from workspace_tools.core.workspace.chunks import chunk_converted

PACKAGE = Path(langchain_core.__file__).parent

QUESTIONS: list[tuple[str, list[str]]] = [
    (
        "remove null characters that a Postgres text column rejects",
        ["utils/strings.py::sanitize_for_postgres"],
    ),
    (
        "parse JSON that was cut off before its closing brackets",
        ["utils/json.py::parse_partial_json"],
    ),
    (
        "read JSON out of a fenced code block in Markdown",
        ["utils/json.py::parse_json_markdown", "utils/json.py::parse_and_check_json_markdown"],
    ),
    ("inline the $ref references of a JSON schema", ["utils/json_schema.py::dereference_refs"]),
    ("split an iterable into lists of a fixed size", ["utils/iter.py::batch_iterate"]),
    (
        "several independent iterators over one asynchronous iterable",
        ["utils/aiter.py::Tee", "utils/iter.py::Tee"],
    ),
    ("check that keyword arguments are mutually exclusive", ["utils/utils.py::xor_args"]),
    (
        "import an optional module and tell which pip package to install when it is missing",
        ["utils/utils.py::guard_import"],
    ),
    ("freeze the current date and time in unit tests", ["utils/utils.py::mock_now"]),
    (
        "time-ordered UUID made from a nanosecond timestamp and random bits",
        ["utils/uuid.py::uuid7"],
    ),
    (
        "are we running inside a Jupyter notebook or IPython",
        ["utils/interactive_env.py::is_interactive_env"],
    ),
    (
        "collect the links of an HTML page as absolute URLs under a base URL",
        ["utils/html.py::extract_sub_links"],
    ),
    ("fill the tags of a mustache template with data", ["utils/mustache.py::render"]),
    (
        "string formatter that accepts only keyword arguments",
        ["utils/formatting.py::StrictFormatter", "utils/formatting.py::StrictFormatter.vformat"],
    ),
    (
        "describe a Python callable as a schema the OpenAI API can call",
        ["utils/function_calling.py::convert_to_openai_function"],
    ),
    (
        "turn an input and the tool calls expected for it into chat messages for few-shot prompts",
        ["utils/function_calling.py::tool_example_to_messages"],
    ),
    (
        "take a value from a dict, else from an environment variable, else a default",
        ["utils/env.py::get_from_dict_or_env"],
    ),
    ("recursively merge two dictionaries", ["utils/_merge.py::merge_dicts"]),
    ("shorten the chat history to fit a token budget", ["messages/utils.py::trim_messages"]),
    (
        "combine consecutive messages of the same type into one",
        ["messages/utils.py::merge_message_runs"],
    ),
    (
        "estimate how many tokens messages use without a tokenizer",
        ["messages/utils.py::count_tokens_approximately"],
    ),
    (
        "keep only the messages of given names, types or ids",
        ["messages/utils.py::filter_messages"],
    ),
    (
        "one transcript string from a list of messages with Human: and AI: prefixes",
        ["messages/utils.py::get_buffer_string"],
    ),
    ("add up the token usage of two model responses", ["messages/ai.py::add_usage"]),
    ("drop the last n elements of an iterator", ["output_parsers/list.py::droplastn"]),
    (
        "parse a numbered list from the model's output",
        [
            "output_parsers/list.py::NumberedListOutputParser",
            "output_parsers/list.py::NumberedListOutputParser.parse",
        ],
    ),
    (
        "instructions asking the model to answer in XML tags",
        ["output_parsers/xml.py::XMLOutputParser.get_format_instructions"],
    ),
    (
        "try a runnable again when it raises, waiting longer each time",
        ["runnables/retry.py::RunnableRetry"],
    ),
    (
        "use other runnables when the first one fails",
        ["runnables/fallbacks.py::RunnableWithFallbacks"],
    ),
    ("draw the graph of a chain as ASCII art", ["runnables/graph.py::Graph.draw_ascii"]),
    (
        "run a mapping of runnables at the same time on one input and return a dict",
        ["runnables/base.py::RunnableParallel"],
    ),
    (
        "call functions when a run starts, ends or fails",
        ["runnables/base.py::Runnable.with_listeners"],
    ),
    (
        "run a blocking function in a thread pool from async code, keeping the context",
        ["runnables/config.py::run_in_executor"],
    ),
    (
        "indent every line of a text except the first one",
        ["runnables/utils.py::indent_lines_after_first"],
    ),
    (
        "diversify similar documents: pick results close to the query and far from each other",
        [
            "vectorstores/base.py::VectorStore.max_marginal_relevance_search",
            "vectorstores/base.py::VectorStore.max_marginal_relevance_search_by_vector",
        ],
    ),
    (
        "similarity search returning relevance scores normalised between 0 and 1",
        ["vectorstores/base.py::VectorStore.similarity_search_with_relevance_scores"],
    ),
    (
        "iterate over the keys of a key-value store that start with a prefix",
        ["stores.py::BaseStore.yield_keys", "stores.py::InMemoryBaseStore.yield_keys"],
    ),
    (
        "load documents into a vector store, skipping unchanged ones and deleting old versions",
        ["indexing/api.py::index"],
    ),
    (
        "print the versions of installed packages and the platform for a bug report",
        ["sys_info.py::print_sys_info"],
    ),
    (
        "let an agent query a document retriever as one of its tools",
        ["tools/retriever.py::create_retriever_tool"],
    ),
]
"""(question, definitions that answer it as ``path::qualified name``)."""


def definition_lines(root: Path) -> dict[str, list[tuple[str, int, int, int]]]:
    """``path::name`` -> (path, first line, ``def`` line, last line) of it and its async twin."""
    wanted = {gold for _, golds in QUESTIONS for gold in golds}
    found: dict[str, tuple[str, int, int, int]] = {}
    for path in sorted({gold.split("::")[0] for gold in wanted}):

        def walk(node: ast.AST, prefix: str, path: str = path) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                    span = (path, first, child.lineno, child.end_lineno or child.lineno)
                    found.setdefault(f"{path}::{prefix}{child.name}", span)
                    if isinstance(child, ast.ClassDef):
                        walk(child, f"{prefix}{child.name}.")

        walk(ast.parse((root / path).read_text(encoding="utf-8")), "")
    missing = sorted(wanted - set(found))
    if missing:
        raise SystemExit(f"answers not in langchain_core {version('langchain-core')}: {missing}")
    out = {}
    for gold in wanted:
        path, _, name = gold.partition("::")
        owner, dot, last = name.rpartition(".")
        twin = f"{path}::{owner}{dot}a{last}"
        out[gold] = [found[gold]] + ([found[twin]] if twin in found else [])
    return out


def by_name() -> list[tuple[str, list[str]]]:
    """The same answers looked up by name: ``VectorStore max_marginal_relevance_search``."""
    return [(golds[0].split("::")[1].replace(".", " "), golds) for _, golds in QUESTIONS]


def ranks(
    ws: Workspace,
    mode: str,
    spans: dict[str, list[tuple[str, int, int, int]]],
    questions: list[tuple[str, list[str]]],
) -> dict[str, list[int]]:
    """Per rule, per question: rank (1-5) of the first chunk that meets it, else 0."""
    out: dict[str, list[int]] = {"chunk": [], "signature": []}
    for question, golds in questions:
        targets = [span for gold in golds for span in spans[gold]]
        chunk = signature = 0
        for number, hit in enumerate(ws.search(question, top_k=5, mode=mode), start=1):
            start, end = hit.metadata["chunk_start_line"], hit.metadata["chunk_end_line"]
            mine = [t for t in targets if t[0] == hit.source_id]
            if not chunk and any(start <= last and first <= end for _, first, _, last in mine):
                chunk = number
            if not signature and any(start <= line <= end for _, _, line, _ in mine):
                signature = number
        out["chunk"].append(chunk)
        out["signature"].append(signature)
    return out


SETS = {"described": QUESTIONS, "by name": by_name()}


def chunking_seconds(root: Path, chunking: ChunkingConfig) -> float:
    """Time to chunk every file once, as a sync does (best of 3)."""
    texts = {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.py"))}
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for name, text in texts.items():
            converted = Converted(text=text, format="code", markdown=False)
            chunk_converted(name, converted, {}, config=chunking)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--modes", nargs="+", default=["bm25", "vector", "hybrid"])
    parser.add_argument("--work", type=Path, default=None, help="keep indexes here (reruns)")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--show", action="store_true", help="print each question's rank")
    parser.add_argument(
        "--min-section-chars", type=int, default=None, help="packing bound (default: the default)"
    )
    parser.add_argument("--only-on", action="store_true", help="skip the run with code off")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="code-search-"))
    root = work / "langchain_core"
    if not root.exists():
        shutil.copytree(PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    lines = definition_lines(root)
    embedder: Any = None
    if any(m != "bm25" for m in args.modes):
        from _testsets import default_cached_embedder

        embedder = default_cached_embedder()
    print(f"langchain_core {version('langchain-core')}, {len(QUESTIONS)} questions")
    report: dict[str, Any] = {}
    sizes = {} if args.min_section_chars is None else {"min_section_chars": args.min_section_chars}
    for code in (True,) if args.only_on else (False, True):
        chunking = ChunkingConfig(code=code, **sizes)
        started = time.perf_counter()
        ws = Workspace(
            root,
            index_dir=work / f"index-code-{code}",
            embedder=embedder,
            chunking=chunking,
            config=False,
            rebuild=True,
        )
        ws.sync()
        built = time.perf_counter() - started
        chunks = ws.stats()["chunks"]
        cut = chunking_seconds(root, chunking)
        print(
            f"code chunking {'on ' if code else 'off'}: {chunks} chunks, chunked in {cut:.2f} s "
            f"(index built in {built:.1f} s, vectors from the cache)"
        )
        for (label, questions), mode in itertools.product(SETS.items(), args.modes):
            found = ranks(ws, mode, lines, questions)
            n = len(questions)
            line = f"  {label:9} {mode:6}"
            for rule, got in found.items():
                figures = {
                    "s1": sum(1 for r in got if r == 1) / n,
                    "s5": sum(1 for r in got if r) / n,
                    "mrr5": sum(1 / r for r in got if r) / n,
                }
                report[f"{label}|{mode}|code={'on' if code else 'off'}|{rule}"] = {
                    **figures,
                    "chunks": chunks,
                    "chunk_seconds": cut,
                    "ranks": got,
                }
                line += (
                    f"  {rule}: top-1 {sum(1 for r in got if r == 1):2}/{n} "
                    f"top-5 {sum(1 for r in got if r):2}/{n} MRR@5 {figures['mrr5']:.3f}"
                )
            print(line, flush=True)
            if args.show:
                for (question, golds), rank in zip(questions, found["chunk"], strict=True):
                    print(f"    {rank}  {question[:70]:70}  {golds[0]}")
        ws.close()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
