"""Run the blocks of one docs page in order, in one namespace and one sandbox folder.

Python blocks run in-process (``exec``, top-level ``await`` allowed) with the page's namespace,
which starts with ``model``: a fake chat model standing in for the reader's own. Shell blocks run
through ``bash`` (``set -euo pipefail``) in the sandbox; ``console`` blocks run each ``$ ``
command and compare what it printed with the lines below it. Blocks marked ``mcp-config`` start
every stdio server of the configuration with its exact command and arguments.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import os
import re
import subprocess
import sys
import textwrap
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.doc_blocks import Block, console_commands, output_matches
from tests.support.doc_cli import fake_default_model
from tests.support.doc_sandbox import build_sandbox, sandbox_env

__all__ = ["BlockFailed", "PageRun"]

with contextlib.suppress(ImportError):
    # The SDK binds stdio_client's default errlog to sys.stderr when it is first imported: import
    # it here, not first inside a block, where sys.stderr is the block's StringIO.
    import mcp.client.stdio  # noqa: F401

COMMAND_TIMEOUT = 300
"""A hang guard per shell block, not a speed check."""


class BlockFailed(AssertionError):
    """A documented block errored, or printed something other than its shown output."""


def _fake_chat_model() -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    class ToolAwareFake(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    return ToolAwareFake(messages=iter([AIMessage(content="It is in src/http.py.")] * 20))


class PageRun:
    """The blocks of one page, run in order on demand (a block runs those above it first)."""

    def __init__(
        self,
        blocks: list[Block],
        folder: Path,
        *,
        extra_runners: dict[str, Callable[[Block, Path, dict[str, str]], str]] | None = None,
        skip: Callable[[Block], str | None] | None = None,
    ) -> None:
        """``skip`` says why a block cannot run here (npm clients, an extra absent), or ``None``."""
        self.blocks = [b for b in blocks if b.runnable]
        self.folder = folder
        # a real module, so that what the blocks define (dataclasses...) can find it
        self.module = types.ModuleType("docs_example_" + re.sub(r"\W", "_", folder.parent.name))
        self.namespace: dict[str, Any] = self.module.__dict__
        self._done: dict[int, BaseException | None] = {}
        self._extra = extra_runners or {}
        self._skip = skip
        self._built = False

    def skip_reason(self, block: Block) -> str | None:
        """Why ``block`` is not run: its ``skip`` directive, or what ``skip`` finds missing here.

        A skipped block is neither run nor a failure: the blocks below it run as usual.
        """
        if block.skip_reason is not None:
            return block.skip_reason
        return self._skip(block) if self._skip is not None else None

    def run(self, block: Block) -> None:
        """Run ``block`` (and, first, every runnable block above it not run yet).

        Blocks with a :meth:`skip_reason` are passed over (``block`` itself too: check first).

        Raises:
            BlockFailed: this block, or one above it, failed.
        """
        index = self.blocks.index(block)
        for earlier in range(index):
            self._run_once(earlier)
            failure = self._done[earlier]
            if failure is not None:
                where = self.blocks[earlier].where
                msg = f"{block.where} not run: the block at {where} above it failed"
                raise BlockFailed(msg) from None
        self._run_once(index)
        failure = self._done[index]
        if failure is not None:
            raise failure

    def _run_once(self, index: int) -> None:
        if index in self._done:
            return
        block = self.blocks[index]
        if self.skip_reason(block) is not None:
            self._done[index] = None
            return
        if not self._built:
            build_sandbox(self.folder)
            self.namespace["model"] = _fake_chat_model()
            self._built = True
        try:
            self._execute(block)
        except BlockFailed as exc:
            self._done[index] = exc
        else:
            self._done[index] = None

    def _execute(self, block: Block) -> None:
        model = "model" in block.directives
        if "mcp-config" in block.directives:
            printed = self._extra["mcp-config"](
                block, self.folder, sandbox_env(self.folder, model=model)
            )
        elif block.lang == "python":
            printed = self._python(block, model=model)
        elif block.lang == "console":
            for command, want in console_commands(block.code):
                got = self._shell(block, command, model=model)
                if want.strip() and not output_matches(want, got):
                    raise BlockFailed(_mismatch(block, want, got, command=command))
            printed = None
        else:
            printed = self._shell(block, block.code, model=model)
        if printed is None:
            return
        for expected in block.expected:
            numbers = expected.directives.get("output", "") == "numbers vary"
            if not output_matches(expected.code, printed, numbers_vary=numbers):
                raise BlockFailed(_mismatch(block, expected.code, printed, shown_at=expected.where))

    def _python(self, block: Block, *, model: bool) -> str:
        source = "\n" * (block.line) + block.code  # tracebacks point at the page's lines
        try:
            code = compile(source, block.page, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError as exc:
            raise BlockFailed(f"{block.where}: not valid Python: {exc}") from exc
        out, err = io.StringIO(), io.StringIO()
        cwd = Path.cwd()
        os.chdir(self.folder)
        sys.modules[self.module.__name__] = self.module
        try:
            with contextlib.ExitStack() as stack:
                if not model:
                    stack.enter_context(fake_default_model())
                stack.enter_context(contextlib.redirect_stdout(out))
                stack.enter_context(contextlib.redirect_stderr(err))
                result = eval(code, self.namespace)  # the docs' own code
                if asyncio.iscoroutine(result):
                    asyncio.run(result)
        except Exception as exc:
            import traceback

            trace = "".join(traceback.format_exception(exc)[-6:])
            msg = (
                f"{block.where}: the Python block raised {type(exc).__name__}: {exc}\n"
                f"{_show(block.code)}\n--- printed\n{out.getvalue()}{err.getvalue()}\n{trace}"
            )
            raise BlockFailed(msg) from exc
        finally:
            os.chdir(cwd)
            sys.modules.pop(self.module.__name__, None)
        return out.getvalue()

    def _shell(self, block: Block, script: str, *, model: bool) -> str:
        prelude = "set -euo pipefail\ntrap 'echo \"doctest: failed: $BASH_COMMAND\" >&2' ERR\n"
        try:
            done = subprocess.run(
                ["bash", "-c", prelude + script],
                cwd=self.folder,
                env=sandbox_env(self.folder, model=model),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=COMMAND_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            msg = f"{block.where}: still running after {COMMAND_TIMEOUT} s:\n{_show(script)}"
            raise BlockFailed(msg) from exc
        if done.returncode != 0:
            msg = (
                f"{block.where}: the shell block exited with status {done.returncode}\n"
                f"{_show(script)}\n--- printed\n{done.stdout}"
            )
            raise BlockFailed(msg)
        return done.stdout


def _show(code: str) -> str:
    return "--- block\n" + textwrap.indent(code.rstrip("\n"), "    ")


def _mismatch(
    block: Block, want: str, got: str, *, command: str | None = None, shown_at: str | None = None
) -> str:
    what = f"`{command}`" if command else "the block"
    where = f" (output shown at {shown_at})" if shown_at else ""
    return (
        f"{block.where}: {what} printed something other than the docs show{where}.\n"
        f"--- the docs show\n{want.rstrip()}\n--- it printed\n{got.rstrip()}"
    )
