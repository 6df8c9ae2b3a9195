"""Entry point (group ``workspace_tools.skills``) that offers the example skills.

The examples ship inside the package (``workspace_tools/skills_examples``), in wheels and editable
installs alike. Entry-point skills are opt-in: a registry loads them only with
``entry_points=True`` (``skills_entry_points=True`` on the toolkit, ``--entry-points`` on the
CLI), so installing a package never changes an agent's prompt by itself.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["example_skills_path"]


def example_skills_path() -> str:
    """Absolute path of the example skills folder inside the installed package."""
    return str(Path(__file__).resolve().parent / "skills_examples")
