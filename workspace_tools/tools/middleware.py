"""SkillsMiddleware: append the skills catalogue to the system message of every model call."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.types import Command

from workspace_tools.core.skills import (
    DEFAULT_BUDGET,
    CatalogueBudget,
    CatalogueFormat,
    SkillCatalog,
    SkillRegistry,
    render_catalog_prompt,
)
from workspace_tools.tools.skills import SkillTool, skill_tools, use_skill_context

__all__ = ["SkillsMiddleware"]


class SkillsMiddleware(AgentMiddleware):
    """Tell the model which skills exist, and give it the tools to load them.

    Each model call appends the fresh catalogue (sorted, for prompt caching) and loading
    instructions to the system message; past ``budget`` only the most relevant skills are listed.

    Args:
        registry: The skills to advertise.
        fmt: Catalogue format: ``xml``, ``markdown`` or ``json``.
        instructions: Add the intro and the instructions on loading skills.
        include_tools: Expose ``skill``, ``skill_read`` and ``skill_search`` through :attr:`tools`.
        budget: Most skills (and characters) the catalogue lists; ``None`` lists every skill.
        enforce_allowed_tools: Refuse tools outside the last loaded skill's ``allowed-tools``.
    """

    def __init__(
        self,
        registry: SkillRegistry,
        *,
        fmt: CatalogueFormat = "xml",
        instructions: bool = True,
        include_tools: bool = True,
        budget: CatalogueBudget | None = DEFAULT_BUDGET,
        enforce_allowed_tools: bool = False,
    ) -> None:
        super().__init__()
        self.registry = registry
        self.fmt: CatalogueFormat = fmt
        self.instructions = instructions
        self.budget = budget
        self.enforce_allowed_tools = enforce_allowed_tools
        self.tools = skill_tools(registry) if include_tools else []
        self._tool_names = {t.name for t in self.tools} | _SKILL_TOOL_NAMES

    def skills_prompt(self, context: Any = None, *, query: str | None = None) -> str:
        """The text appended to the system message for ``context`` (``""`` with no skills)."""
        return self._prompt(self.registry.catalog(context=context), query)

    def _prompt(self, catalog: SkillCatalog, query: str | None) -> str:
        return render_catalog_prompt(
            catalog,
            fmt=self.fmt,
            instructions=self.instructions,
            budget=self.budget,
            query=query,
        )

    def modify_request(self, request: ModelRequest) -> ModelRequest:
        """A copy of ``request`` whose system message ends with the skills section."""
        context = getattr(request.runtime, "context", None) if request.runtime else None
        return self._with_text(request, self.skills_prompt(context, query=_query(request)))

    async def amodify_request(self, request: ModelRequest) -> ModelRequest:
        """Async twin of :meth:`modify_request` (``async`` dynamic paths awaited on this loop)."""
        context = getattr(request.runtime, "context", None) if request.runtime else None
        catalog = await self.registry.acatalog(context=context)
        text = await asyncio.to_thread(self._prompt, catalog, _query(request))
        return self._with_text(request, text)

    @staticmethod
    def _with_text(request: ModelRequest, text: str) -> ModelRequest:
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
        return await handler(await self.amodify_request(request))

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run skill tools with the run's context (for dynamic skills paths)."""
        if request.tool_call.get("name") not in self._tool_names:
            refused = self._refusal(request)
            return refused if refused is not None else handler(request)
        with use_skill_context(_context(request)):
            return handler(request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async twin of :meth:`wrap_tool_call`."""
        if request.tool_call.get("name") not in self._tool_names:
            refused = self._refusal(request)
            return refused if refused is not None else await handler(request)
        with use_skill_context(_context(request)):
            return await handler(request)

    def _refusal(self, request: ToolCallRequest) -> ToolMessage | None:
        """The error message refusing this call, or ``None`` when it may run."""
        if not self.enforce_allowed_tools:
            return None
        state = getattr(request, "state", None)
        messages = state.get("messages", []) if isinstance(state, dict) else []
        active = _active_skill(messages)
        if active is None:
            return None
        skill, allowed = active
        name = str(request.tool_call.get("name", ""))
        if name.lower() in {_tool_name(a).lower() for a in allowed}:
            return None
        text = (
            f"Tool {name!r} is not allowed while skill {skill!r} is active: its allowed-tools "
            f"are {', '.join(allowed)}. Use one of those tools, or load another skill with "
            "`skill` first."
        )
        return ToolMessage(
            content=text,
            name=name,
            tool_call_id=str(request.tool_call.get("id", "")),
            status="error",
        )


_SKILL_TOOL_NAMES: Final = frozenset({"skill", "skill_read", "skill_search"})
"""The skill tools, never refused (the model must be able to switch skills)."""


def _tool_name(allowed: str) -> str:
    """The tool of an ``allowed-tools`` entry: ``Bash(git:*)`` -> ``Bash``."""
    return allowed.split("(", 1)[0].strip()


def _active_skill(messages: list[Any]) -> tuple[str, list[str]] | None:
    """The skill loaded last through the ``skill`` tool and its ``allowed-tools`` (if any)."""
    for message in reversed(messages):
        if (
            isinstance(message, ToolMessage)
            and message.name == SkillTool.model_fields["name"].default
            and message.status == "success"
            and isinstance(message.artifact, dict)
        ):
            allowed = [str(t) for t in message.artifact.get("allowed_tools") or []]
            return (str(message.artifact.get("name")), allowed) if allowed else None
    return None


def _query(request: ModelRequest) -> str:
    """The latest user messages (the newest last), which rank skills past the budget."""
    texts: list[str] = []
    for message in reversed(list(request.messages or [])):
        if isinstance(message, HumanMessage):
            texts.append(_text(message))
            if len(texts) == 3:
                break
    return "\n".join(reversed(texts))


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content)


def _context(request: ToolCallRequest) -> Any:
    runtime = getattr(request, "runtime", None)
    return getattr(runtime, "context", None) if runtime is not None else None
