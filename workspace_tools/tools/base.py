"""Shared base of every tool: error translation and the content-and-artifact contract."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForToolRun
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, ValidationError

from workspace_tools.core.errors import WorkspaceError
from workspace_tools.core.workspace import Workspace, progress_listener
from workspace_tools.tools.outputs import RESULTS_KEY

__all__ = [
    "PROGRESS_EVENT",
    "ThreadedTool",
    "ToolFacts",
    "WorkspaceBaseTool",
    "as_tool_errors",
    "format_validation_error",
    "sync_with_progress",
    "tool_facts",
    "tool_title",
    "tool_writes",
]


@contextlib.contextmanager
def as_tool_errors() -> Iterator[None]:
    """Turn :class:`WorkspaceError` into :class:`ToolException` (other exceptions propagate)."""
    try:
        yield
    except WorkspaceError as exc:
        raise ToolException(str(exc)) from exc


def format_validation_error(error: ValidationError) -> str:
    """A readable message for a schema validation error."""
    problems = []
    for item in error.errors():
        where = ".".join(str(p) for p in item.get("loc", ())) or "input"
        value = item.get("input")
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        problems.append(f"'{where}': {item.get('msg', 'invalid')} (got {shown})")
    return "Invalid tool input: " + "; ".join(problems) + ". Fix the arguments and call again."


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFacts:
    """What a tool does to its environment, declared on its class (read-only builds, MCP hints)."""

    title: str | None = None
    """Human-readable name (MCP ``title``)."""
    writes: bool | None = None
    """Changes stored state (the index) on every call; ``None``: not known."""
    syncs: bool = False
    """May index new files first (with ``auto_sync``, unless read-only)."""
    idempotent: bool | None = None
    """Calling it again with the same arguments changes nothing more."""
    destructive: bool | None = None
    """May delete or overwrite data that cannot be rebuilt (only meaningful when it writes)."""


def tool_facts(tool: BaseTool) -> ToolFacts:
    """The facts ``tool`` declares (nothing known for a tool that is not one of ours)."""
    facts = getattr(type(tool), "facts", None)
    return facts if isinstance(facts, ToolFacts) else ToolFacts()


def tool_title(tool: BaseTool) -> str | None:
    """The declared title; a renamed tool (scoped, prefixed) adds its name to tell them apart."""
    title = tool_facts(tool).title
    if title is None:
        return None
    field = type(tool).model_fields.get("name")
    default = field.default if field is not None else None
    return title if tool.name == default else f"{title} ({tool.name})"


def tool_writes(tool: BaseTool) -> bool | None:
    """Whether calling ``tool`` as built may write (``None``: unknown, so assume it may)."""
    facts = tool_facts(tool)
    if facts.writes:
        return True
    if facts.syncs:
        workspace = getattr(tool, "workspace", None)
        read_only = bool(getattr(tool, "read_only", False))
        read_only = read_only or bool(getattr(workspace, "read_only", False))
        return bool(getattr(tool, "auto_sync", True)) and not read_only
    return facts.writes


class WorkspaceBaseTool(BaseTool):
    """Base class: errors become tool messages, results are ``(content, artifact)``."""

    response_format: str = "content_and_artifact"  # type: ignore[assignment]
    handle_tool_error: Any = True
    handle_validation_error: Any = format_validation_error
    output_model: ClassVar[type[BaseModel] | None] = None
    """The declared shape of the artifact (see :mod:`workspace_tools.tools.outputs`)."""
    facts: ClassVar[ToolFacts] = ToolFacts()
    """Title and whether the tool writes, syncs, is idempotent or destructive."""

    @classmethod
    def structured_output(cls, artifact: Any) -> dict[str, Any]:
        """The artifact as a JSON object matching :attr:`output_model` (a list under ``results``).

        Raises:
            pydantic.ValidationError: the artifact does not match the declared model.
        """
        data = artifact if isinstance(artifact, dict) else {RESULTS_KEY: artifact}
        if cls.output_model is not None:
            cls.output_model.model_validate(data)
        return data


class ThreadedTool(WorkspaceBaseTool):
    """Base of the workspace tools: holds the workspace, runs ``_run`` off the event loop."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    workspace: Workspace
    """The shared workspace."""
    within: tuple[str, ...] | None = None
    """Only results in these folders (relative to the root; ``None``: all), set per MCP call."""

    async def _arun(
        self,
        *args: Any,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        return await asyncio.to_thread(self._run, *args, **kwargs)


PROGRESS_EVENT = "workspace_tools_progress"
"""Name of the LangChain custom event (``astream_events``) that carries sync progress."""
_PROGRESS_INTERVAL = 0.5
"""Seconds between two progress messages of one stage (the first and last always go out)."""


def sync_with_progress(workspace: Workspace, paths: list[str] | None) -> Any:
    """``workspace.sync(paths)``, streaming its progress to the LangGraph run calling the tool.

    Messages are ``{"event": "workspace_tools_progress", "stage", "done", "total"}``, sent to the
    stream writer and as a custom event; outside a graph run nothing is sent.
    """
    emit = _progress_emitter()
    if emit is None:
        return workspace.sync(paths)
    last: dict[str, float] = {}

    def listener(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done not in (0, total) and now - last.get(stage, 0.0) < _PROGRESS_INTERVAL:
            return
        last[stage] = now
        emit({"event": PROGRESS_EVENT, "stage": stage, "done": done, "total": total})

    with progress_listener(listener):
        return workspace.sync(paths)


def _progress_emitter() -> Callable[[dict[str, Any]], None] | None:
    """A function sending one progress message to the current run, or ``None`` outside one."""
    from langchain_core.callbacks.manager import dispatch_custom_event
    from langchain_core.runnables.config import var_child_runnable_config

    config = var_child_runnable_config.get()
    if config is None:
        return None
    writer: Callable[[Any], None] | None = None
    try:
        from langgraph.config import get_stream_writer
    except ImportError:  # pragma: no cover - langgraph comes with langchain (agents extra)
        pass
    else:
        with contextlib.suppress(RuntimeError, KeyError):  # not inside a graph node
            writer = get_stream_writer()

    def emit(data: dict[str, Any]) -> None:
        if writer is not None:
            writer(data)
        with contextlib.suppress(RuntimeError):  # no parent run to attach the event to
            dispatch_custom_event(PROGRESS_EVENT, data, config=config)

    return emit
