"""Writing skills for tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["MakeSkill", "write_skill"]

MakeSkill = Callable[..., Path]


def write_skill(
    parent: Path,
    name: str,
    description: str = "Does a thing. Use it when a thing is needed.",
    body: str = "# Title\n\nSome instructions.",
    *,
    folder: str | None = None,
    extra: str = "",
    files: dict[str, str | bytes] | None = None,
) -> Path:
    """Write ``parent/<folder or name>/SKILL.md`` (and ``files``) and return the folder."""
    skill_dir = parent / (folder or name)
    skill_dir.mkdir(parents=True, exist_ok=True)
    front = f"name: {name}\ndescription: {description}\n{extra}"
    (skill_dir / "SKILL.md").write_text(f"---\n{front}---\n\n{body}\n", encoding="utf-8")
    for rel, content in (files or {}).items():
        target = skill_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return skill_dir
