"""Entry point (group ``workspace_tools.skills``) that offers the example skills.

The examples live in the repository's top-level ``skills_examples/`` folder; the wheel build
(``setup.py``) copies them into the package as ``workspace_tools/skills_examples``. An installed
wheel uses that copy, a source checkout or editable install the top-level folder.

Entry-point skills are opt-in: a registry loads them only with ``entry_points=True``
(``skills_entry_points=True`` on the toolkit, ``--entry-points`` on the CLI), so installing a
package never changes an agent's prompt by itself.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["example_skills_path"]


def example_skills_path() -> str:
    """Absolute path of the example skills folder (the wheel's copy, else the repository's)."""
    here = Path(__file__).resolve().parent
    shipped = here / "skills_examples"
    return str(shipped if shipped.is_dir() else here.parent / "skills_examples")
