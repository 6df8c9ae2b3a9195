"""Build step: ship the top-level ``skills_examples/`` folder inside the wheel.

The examples live at the top of the repository (the design's layout); wheels carry a copy at
``workspace_tools/skills_examples`` so ``example_skills_path()`` finds them once installed. Every
other setting is in ``pyproject.toml``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

EXAMPLES = Path(__file__).resolve().parent / "skills_examples"


class BuildWithExamples(build_py):  # type: ignore[misc]
    """``build_py`` that also copies ``skills_examples/`` into the built package."""

    def run(self) -> None:
        super().run()
        if EXAMPLES.is_dir() and not getattr(self, "editable_mode", False):
            target = Path(self.build_lib, "workspace_tools", "skills_examples")
            shutil.copytree(
                EXAMPLES, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
            )


setup(cmdclass={"build_py": BuildWithExamples})
