"""Validate one skill folder in strict mode: python validate_skill.py path/to/skill."""

from __future__ import annotations

import sys
from pathlib import Path

from workspace_tools.core.errors import SkillFormatError
from workspace_tools.core.skills import list_resources, parse_skill_file


def main(argv: list[str]) -> int:
    """Print the problems of each skill folder given; return 1 if any."""
    status = 0
    for arg in argv or ["."]:
        folder = Path(arg)
        skill_md = folder if folder.name == "SKILL.md" else folder / "SKILL.md"
        try:
            result = parse_skill_file(
                skill_md, resources=list_resources(skill_md.parent), strict=True
            )
        except SkillFormatError as exc:
            sys.stdout.write(f"{exc}\n")
            status = 1
            continue
        skill = result.skill
        assert skill is not None
        sys.stdout.write(f"ok: {skill.name} ({len(skill.resources)} resource files)\n")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
