"""langchain-tests standard suites for the three skill tools."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from workspace_tools.core.skills import SkillRegistry
from workspace_tools.tools.skills import SkillReadTool, SkillSearchTool, SkillTool


def _registry(root: Path) -> SkillRegistry:
    folder = root / "skills" / "demo"
    (folder / "references").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Demo skill for tests.\n---\n\n# Demo\n\nSteps here.\n"
    )
    (folder / "references" / "guide.md").write_text("# Guide\n\nDetails about demos.\n")
    return SkillRegistry(["skills"], root=root, entry_points=False)


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> SkillRegistry:
    return _registry(tmp_path_factory.mktemp("std"))


class _Base:
    @pytest.fixture(autouse=True)
    def _setup(self, registry: SkillRegistry) -> None:
        self._registry = registry

    @property
    def tool_constructor_params(self) -> dict:
        return {"registry": self._registry}


class TestSkillToolUnit(_Base, ToolsUnitTests):
    tool_constructor = SkillTool
    tool_invoke_params_example = {"name": "demo"}  # noqa: RUF012


class TestSkillToolIntegration(_Base, ToolsIntegrationTests):
    tool_constructor = SkillTool
    tool_invoke_params_example = {"name": "demo"}  # noqa: RUF012


class TestSkillReadUnit(_Base, ToolsUnitTests):
    tool_constructor = SkillReadTool
    tool_invoke_params_example = {"skill_name": "demo", "path": "references/guide.md"}  # noqa: RUF012


class TestSkillReadIntegration(_Base, ToolsIntegrationTests):
    tool_constructor = SkillReadTool
    tool_invoke_params_example = {"skill_name": "demo", "path": "references/guide.md"}  # noqa: RUF012


class TestSkillSearchUnit(_Base, ToolsUnitTests):
    tool_constructor = SkillSearchTool
    tool_invoke_params_example = {"query": "demo guide", "top_k": 3}  # noqa: RUF012


class TestSkillSearchIntegration(_Base, ToolsIntegrationTests):
    tool_constructor = SkillSearchTool
    tool_invoke_params_example = {"query": "demo guide", "top_k": 3}  # noqa: RUF012
