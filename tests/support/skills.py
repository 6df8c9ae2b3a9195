"""Writing skills for tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["MakeSkill", "git_repo", "skill_md", "write_skill"]

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


def git_repo(path: Path, files: dict[str, str], *, message: str = "commit") -> str:
    """Create (or add a commit to) a git repository at ``path`` on branch ``main``; the commit.

    Runs the system ``git`` with a fixed identity; a ``str`` value ``"->target"`` makes a link.
    """
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@e", *args],
            cwd=path,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    if not (path / ".git").is_dir():
        path.mkdir(parents=True, exist_ok=True)
        git("init", "-q", "-b", "main")
    for rel, text in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("->"):
            target.symlink_to(text[2:])
        else:
            target.write_text(text, encoding="utf-8")
    git("add", "-A")
    git("commit", "-q", "-m", message)
    return git("rev-parse", "HEAD")


def skill_md(name: str, description: str, body: str = "Body.", *, extra: str = "") -> str:
    """The text of a SKILL.md."""
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}\n"
