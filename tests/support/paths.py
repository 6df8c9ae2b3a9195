"""Where things are: the repository, the shared benchmark data beside it, the example skills."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
BENCHMARKS = SHARED / "benchmarks"
MIXED = BENCHMARKS / "mixed-docs"
BENCHMARK_SKILLS = BENCHMARKS / "agent-skills" / "skills"
EXAMPLES = REPO / "workspace_tools" / "skills_examples"
