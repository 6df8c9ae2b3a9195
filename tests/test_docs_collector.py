"""The docs-as-tests collector itself: it runs what the docs show and fails when they break."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support.doc_blocks import (
    DocSyntaxError,
    console_commands,
    output_matches,
    page_blocks,
    parse_blocks,
)
from tests.support.doc_runner import BlockFailed, PageRun
from tests.support.paths import REPO
from tests.test_docs_examples import BLOCKS, PAGES


def _page(text: str) -> list:
    return parse_blocks(textwrap.dedent(text), "page.md")


def _run_all(text: str, folder: Path) -> PageRun:
    blocks = _page(text)
    run = PageRun(blocks, folder / "sandbox")
    for block in run.blocks:
        run.run(block)
    return run


# -- the rules of a page ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("```\nls\n```\n", "page.md:1: a fence without a language"),
        ("<!-- doctest: skip -->\n```sh\nls\n```\n", "page.md:1: `doctest: skip` needs a reason"),
        ("<!-- doctest: skip (x) -->\n\n```sh\nls\n```\n", "directly above a fence"),
        ("<!-- doctest: sikp (x) -->\n```sh\nls\n```\n", "unknown directive 'sikp'"),
        ("<!-- doctest skip (x) -->\n```sh\nls\n```\n", "malformed directive"),
        ("<!-- doctest: output -->\n```text\nhi\n```\n", "no runnable block above it"),
        ("```sh\nls\n", "a fence that is never closed"),
        ("```pyhton\nx = 1\n```\n", "unknown fence language 'pyhton'"),
    ],
)
def test_a_page_breaking_the_rules_is_an_error_saying_where(text: str, message: str) -> None:
    with pytest.raises(DocSyntaxError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _page(text)


def test_blocks_carry_their_line_language_directives_and_outputs() -> None:
    blocks = _page(
        """\
        # Title

        <!-- doctest: model -->
        ```python
        print("hi")
        ```

        <!-- doctest: skip (needs a cluster) -->
        ```sh
        ray start
        ```

        ```yaml
        a: 1
        ```

        <!-- doctest: output (numbers vary) -->
        ```text
        hi
        ```
        """
    )
    python, shell, yaml, output = blocks
    assert (python.line, python.lang, python.directives) == (4, "python", {"model": ""})
    assert shell.expected == [output]  # the closest runnable block above, skipped or not
    assert python.expected == []
    assert shell.skip_reason == "needs a cluster"
    assert not yaml.runnable
    assert not output.runnable
    assert output.directives == {"output": "numbers vary"}


def test_console_blocks_split_into_commands_and_their_output() -> None:
    pairs = console_commands("$ echo a\na\n$ echo b \\\n  c\nb c\n")
    assert pairs == [("echo a", "a"), ("echo b \\\n  c", "b c")]
    with pytest.raises(DocSyntaxError, match="starts with output"):
        console_commands("a\n$ echo a\n")


# -- how output is compared ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "actual", "numbers", "result"),
    [
        ("Indexed 3 files in 1.20s", "Indexed 3 files in 0.04s", False, True),
        ("--- 10 results (16.4 ms)", "--- 10 results (120.0 ms)", False, True),
        ("Indexed 3 files", "Indexed 4 files", False, False),
        ("Indexed 3 files", "Indexed 4 files", True, True),
        ("score 0.6927", "score 3.9349", True, True),
        ("score 0.6927", "score 3.9349", False, False),
        ("No index in .../index yet", "No index in /tmp/x/docs/index yet", False, True),
        ("first\n...\nlast", "first\na\nb\nlast", False, True),
        ("first\n...\nlast", "first\nlast", False, True),
        ("first\nlast", "first\nmiddle\nlast", False, False),
        ("a\n", "a\n\n\n", False, True),  # trailing blank lines and spaces do not count
        (
            "Indexed",
            "Reading:  50%|#####     | 5/10 [00:00<00:00, 9.1item/s]\rIndexed",
            False,
            True,
        ),
        (
            "No index\nIndexed",
            "No index\n\nEmbed: 10%|#  | 1/10 [00:01<?, ?item/s]\n\nIndexed",
            False,
            True,
        ),
        ("one line", "one line\nand more", False, False),
    ],
)
def test_output_comparison(expected: str, actual: str, numbers: bool, result: bool) -> None:
    assert output_matches(expected, actual, numbers_vary=numbers) is result


# -- running a page --------------------------------------------------------------------------


def test_blocks_share_one_namespace_and_folder_in_order(tmp_path: Path) -> None:
    run = _run_all(
        """\
        ```python
        from pathlib import Path
        Path("made-by-python.txt").write_text("from python\\n")
        greeting = "hello"
        ```

        ```python
        print(greeting, "again")
        ```

        <!-- doctest: output -->
        ```text
        hello again
        ```

        ```sh
        cat made-by-python.txt
        ```

        <!-- doctest: output -->
        ```text
        from python
        ```

        ```console
        $ echo one
        one
        $ workspace-tools --version
        workspace-tools ...
        ```
        """,
        tmp_path,
    )
    assert run.namespace["greeting"] == "hello"


def test_a_python_block_that_raises_fails_with_the_page_line(tmp_path: Path) -> None:
    with pytest.raises(BlockFailed, match=r"page\.md:1: the Python block raised ZeroDivisionError"):
        _run_all("```python\n1 / 0\n```\n", tmp_path)


def test_output_that_differs_from_the_docs_fails_showing_both(tmp_path: Path) -> None:
    with pytest.raises(BlockFailed) as raised:
        _run_all(
            "```python\nprint('actual')\n```\n\n<!-- doctest: output -->\n```text\nshown\n```\n",
            tmp_path,
        )
    message = str(raised.value)
    assert "page.md:1: the block printed something other than the docs show" in message
    assert "--- the docs show\nshown\n--- it printed\nactual" in message


def test_a_failing_shell_command_fails_naming_it(tmp_path: Path) -> None:
    with pytest.raises(BlockFailed, match="exited with status 2") as raised:
        _run_all("```sh\necho fine\nworkspace-tools serch x\necho never\n```\n", tmp_path)
    assert "doctest: failed: workspace-tools serch x" in str(raised.value)
    assert "never" not in str(raised.value).split("--- printed", 1)[1]


def test_a_console_command_printing_something_else_fails(tmp_path: Path) -> None:
    with pytest.raises(BlockFailed, match="`echo two` printed something other"):
        _run_all("```console\n$ echo two\none\n```\n", tmp_path)


def test_a_skipped_block_is_not_run_and_later_blocks_still_run(tmp_path: Path) -> None:
    run = _run_all(
        "<!-- doctest: skip (would fail) -->\n```sh\nexit 3\n```\n\n```python\nx = 1\n```\n",
        tmp_path,
    )
    assert run.namespace["x"] == 1


def test_a_block_after_a_failed_one_fails_too(tmp_path: Path) -> None:
    run = PageRun(_page("```python\n1 / 0\n```\n\n```python\nx = 1\n```\n"), tmp_path / "s")
    with pytest.raises(BlockFailed, match="page.md:5 not run: the block at page.md:1 above it"):
        run.run(run.blocks[1])


def test_the_cli_in_shell_blocks_is_this_checkout_with_the_fake_model(tmp_path: Path) -> None:
    _run_all(
        """\
        ```sh
        workspace-tools --root path/to/project -q index >/dev/null
        workspace-tools --root path/to/project stats
        ```

        <!-- doctest: output -->
        ```text
        ...
          "embedder": "fake-bow",
        ...
        ```
        """,
        tmp_path,
    )


def test_a_model_block_keeps_the_real_model(tmp_path: Path) -> None:
    """Only the environment flag is checked here (loading the model is the slow part)."""
    _run_all(
        """\
        <!-- doctest: model -->
        ```sh
        echo "$WORKSPACE_TOOLS_DOCTEST_MODEL"
        ```

        <!-- doctest: output -->
        ```text
        1
        ```
        """,
        tmp_path,
    )


# -- the real docs -----------------------------------------------------------------------


def test_every_page_is_collected_and_the_main_commands_are_among_the_blocks() -> None:
    names = {p.relative_to(REPO).as_posix() for p in PAGES}
    assert {"README.md", "docs/getting-started.md", "docs/mcp.md", "docs/cli.md"} <= names
    codes = [b.code for b in BLOCKS if b.skip_reason is None]
    assert any(
        'workspace-tools --root docs search "how does incremental sync work"' in c for c in codes
    )
    assert len(BLOCKS) > 40


@pytest.mark.slow  # runs a shell block
def test_a_documented_command_that_breaks_fails_its_doc_test(tmp_path: Path) -> None:
    """cli.md's examples as written pass; with one option renamed (as a CLI change would do
    to the docs) the same page fails at that block, naming the command."""
    page = REPO / "docs" / "cli.md"
    examples = next(b for b in page_blocks(page, REPO) if b.runnable and "--mode bm25" in b.code)
    broken = examples.code.replace("--mode bm25", "--mode keyword-only")
    text = f"```sh\n{broken}```\n"
    with pytest.raises(BlockFailed) as raised:
        _run_all(text, tmp_path)
    assert (
        'doctest: failed: workspace-tools search "atomic save" --mode keyword-only -k 3 --json'
        in str(raised.value)
    )


def test_a_documented_snippet_that_breaks_fails_its_doc_test(tmp_path: Path) -> None:
    """The README's agent snippet with a renamed method fails, saying what is missing."""
    blocks = page_blocks(REPO / "README.md", REPO)
    snippet = next(b for b in blocks if b.lang == "python" and "WorkspaceToolkit(" in b.code)
    broken = snippet.code.replace(".skills_middleware()", ".skill_middleware()")
    assert broken != snippet.code
    with pytest.raises(BlockFailed, match="raised AttributeError: .*skill_middleware"):
        _run_all(f"```python\n{broken}```\n", tmp_path)


def test_a_block_needing_an_absent_extra_is_skipped_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.support.doc_blocks import EXTRA_MODULES
    from tests.test_docs_examples import extra_missing

    monkeypatch.setitem(EXTRA_MODULES, "ghost", ("no_such_module_for_docs_tests",))
    assert extra_missing("ghost") == (
        'needs the ghost extra (pip install "workspace-tools[ghost]"), not installed'
    )
    assert extra_missing("agents") is None  # langchain is in the dev environment
    blocks = _page("<!-- doctest: extra (milvus) -->\n```python\nx = 1\n```\n")
    assert blocks[0].directives == {"extra": "milvus"}
