"""Shared base of every tool: error translation and the content-and-artifact contract."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForToolRun
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, ValidationError

from workspace_tools.core.errors import WorkspaceError
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.outputs import RESULTS_KEY

__all__ = ["ThreadedTool", "WorkspaceBaseTool", "as_tool_errors", "format_validation_error"]


@contextlib.contextmanager
def as_tool_errors() -> Iterator[None]:
    """Turn :class:`WorkspaceError` into :class:`ToolException` so the model reads the message.

    Any other exception is a bug and propagates.
    """
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


class WorkspaceBaseTool(BaseTool):
    """Base class: errors become tool messages, results are ``(content, artifact)``."""

    response_format: str = "content_and_artifact"  # type: ignore[assignment]
    handle_tool_error: Any = True
    handle_validation_error: Any = format_validation_error
    output_model: ClassVar[type[BaseModel] | None] = None
    """The declared shape of the artifact (see :mod:`workspace_tools.tools.outputs`)."""

    @classmethod
    def structured_output(cls, artifact: Any) -> dict[str, Any]:
        """The artifact as a JSON object matching :attr:`output_model`.

        A list artifact is given as ``{"results": [...]}``.

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

    async def _arun(
        self,
        *args: Any,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        return await asyncio.to_thread(self._run, *args, **kwargs)
