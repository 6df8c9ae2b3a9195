"""Entry point (group ``workspace_tools.skills``) that offers the example skills.

The wheel holds a copy of ``skills_examples/``; a checkout uses the top-level folder. Entry-point
skills load only with ``entry_points=True``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["example_skills_path"]


def example_skills_path() -> str:
    """Absolute path of the example skills folder (the wheel's copy, else the repository's)."""
    here = Path(__file__).resolve().parent
    shipped = here / "skills_examples"
    return str(shipped if shipped.is_dir() else here.parent / "skills_examples")
