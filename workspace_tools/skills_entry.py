"""Entry point (group ``workspace_tools.skills``) that registers the example skills.

The examples live in ``skills_examples/`` at the repository root. They ship with source
checkouts and editable installs only: an installed wheel does not contain them, and then the path
returned does not exist and the registry simply finds no skills there.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["example_skills_path"]


def example_skills_path() -> str:
    """Path of the repository's ``skills_examples/`` folder (it may not exist in a wheel)."""
    return str(Path(__file__).resolve().parent.parent / "skills_examples")
