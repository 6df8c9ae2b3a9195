"""The README's agent snippet, run as written with a fake chat model."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import Field

from tests.support.fakes import FakeEmbedder

REPO = Path(__file__).resolve().parents[1]


class RecordingFake(GenericFakeChatModel):
    """Fake chat model that accepts tools and records the messages it was given."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> RecordingFake:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def _snippet() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Add the toolkit to an agent", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_readme_agent_snippet_shows_only_the_registered_skills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # this checkout's own entry point offers three example skills: they must stay out
    group = importlib.metadata.entry_points(group="workspace_tools.skills")
    assert "workspace-tools-examples" in {ep.name for ep in group}
    project = tmp_path / "path" / "to" / "project"
    skill = project / "skills" / "http-parsing"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: http-parsing\ndescription: How this project parses HTTP requests.\n---\n"
        "Read src/http.py.\n",
        encoding="utf-8",
    )
    (project / "docs").mkdir()
    (project / "docs" / "http.md").write_text("# HTTP\n\nRequests are parsed in src/http.py.\n")
    monkeypatch.chdir(tmp_path)
    # the default embedder would load the real model: a fake keeps this test fast and offline
    monkeypatch.setattr(
        "workspace_tools.core.workspace._workspace.SentenceTransformerEmbedder",
        lambda: FakeEmbedder(),
    )
    model = RecordingFake(messages=iter([AIMessage(content="It is in src/http.py.")]))
    namespace: dict[str, Any] = {"model": model}
    exec(compile(_snippet(), "README.md", "exec"), namespace)

    system = str(model.seen[0][0].content)
    names = re.findall(r"<name>(.*?)</name>", system)
    assert names == ["http-parsing"]
    assert "workspace-search" not in system
    assert str(REPO) not in system
    tools = sorted(t.name for t in namespace["toolkit"].get_tools())
    assert "docs_search" in tools
    assert "skill" in tools
