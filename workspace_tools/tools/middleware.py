"""SkillsMiddleware: append the skills catalogue to the system message of every model call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import SystemMessage, ToolMessage
from langgraph.types import Command

from workspace_tools.core.skills import CatalogueFormat, SkillRegistry, render_skills_prompt
from workspace_tools.tools.skills import skill_tools, use_skill_context

__all__ = ["SkillsMiddleware"]


class SkillsMiddleware(AgentMiddleware):
    """Tell the model which skills exist, and give it the tools to load them.

    On every model call the catalogue (``<available_skills>`` by default) and short loading
    instructions are **appended** to the system message; the user's own prompt is kept. The text
    is sorted by name so it stays byte-stable across turns (prompt caching). With no skills,
    nothing is added. The registry is checked for changes on every call, so skills edited,
    added or removed on disk show up on the next turn.

    With dynamic skills paths, the run's context (``runtime.context``) is passed to the paths
    callable, both for the catalogue and for the skill tools, so one request never sees
    another's skills.

    Args:
        registry: The skills to advertise.
        fmt: Catalogue format: ``xml``, ``markdown`` or ``json``.
        instructions: Add the intro and the instructions on loading skills.
        include_tools: Expose ``skill``, ``skill_read`` and ``skill_search`` through
            :attr:`tools`, so ``create_agent`` adds them automatically.
    """

    def __init__(
        self,
        registry: SkillRegistry,
        *,
        fmt: CatalogueFormat = "xml",
        instructions: bool = True,
        include_tools: bool = True,
    ) -> None:
        super().__init__()
        self.registry = registry
        self.fmt: CatalogueFormat = fmt
        self.instructions = instructions
        self.tools = skill_tools(registry) if include_tools else []
        self._tool_names = {t.name for t in self.tools}

    def skills_prompt(self, context: Any = None) -> str:
        """The text appended to the system message for ``context`` (``""`` with no skills)."""
        return render_skills_prompt(
            self.registry, fmt=self.fmt, context=context, instructions=self.instructions
        )

    def modify_request(self, request: ModelRequest) -> ModelRequest:
        """A copy of ``request`` whose system message ends with the skills section."""
        context = getattr(request.runtime, "context", None) if request.runtime else None
        text = self.skills_prompt(context)
        if not text:
            return request
        current = request.system_message
        blocks: list[Any] = list(current.content_blocks) if current is not None else []
        blocks.append({"type": "text", "text": text})
        return request.override(system_message=SystemMessage(content_blocks=blocks))

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelResponse:
        """Append the catalogue, then call the model."""
        return handler(self.modify_request(request))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        """Async twin of :meth:`wrap_model_call` (file checks run in a worker thread)."""
        modified = await asyncio.to_thread(self.modify_request, request)
        return await handler(modified)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run skill tools with the run's context (for dynamic skills paths)."""
        if request.tool_call.get("name") not in self._tool_names:
            return handler(request)
        with use_skill_context(_context(request)):
            return handler(request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async twin of :meth:`wrap_tool_call`."""
        if request.tool_call.get("name") not in self._tool_names:
            return await handler(request)
        with use_skill_context(_context(request)):
            return await handler(request)


def _context(request: ToolCallRequest) -> Any:
    runtime = getattr(request, "runtime", None)
    return getattr(runtime, "context", None) if runtime is not None else None
