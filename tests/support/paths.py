"""Where things are: the repository, the shared benchmark data beside it, the example skills."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("WORKSPACE_TOOLS_SHARED") or REPO.parent / "shared")
"""The shared data sets: ``shared/`` beside the repository, or ``$WORKSPACE_TOOLS_SHARED``."""
BENCHMARKS = SHARED / "benchmarks"
MIXED = BENCHMARKS / "mixed-docs"
BENCHMARK_SKILLS = BENCHMARKS / "agent-skills" / "skills"
EXAMPLES = REPO / "skills_examples"


def missing(path: Path) -> str:
    """Skip reason for a test that needs the shared data at ``path``."""
    return (
        f"needs {path}: the shared benchmark data set ('shared/' beside the repository, present "
        "on the project machines, absent from a plain clone; set WORKSPACE_TOOLS_SHARED to "
        "its folder to run these tests)"
    )
