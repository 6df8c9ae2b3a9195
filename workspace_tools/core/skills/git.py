"""Skills from git repositories, copied into the managed skills folder at a pinned commit.

Pins live under ``skill_git`` in ``workspace-tools.yaml``. Nothing from the repository runs: no
hooks, submodules or checkout, links skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.errors import InvalidInputError, SkillFormatError, SkillSourceError
from workspace_tools.core.skills.model import MANAGED_DIR
from workspace_tools.core.skills.parse import parse_skill_file, validate_name
from workspace_tools.core.skills.store import is_plain_path, managed_folder

__all__ = ["GIT_KEY", "GitSkillPin", "GitSkills", "is_git_source"]

GIT_KEY: Final = "skill_git"
"""Setting of ``workspace-tools.yaml`` that pins each git skill: ``{url, ref, subdir, commit}``."""
MAX_SKILL_BYTES: Final = 50_000_000
_SCHEMES: Final = ("https://", "http://", "ssh://", "git://", "file://")
_SCP: Final = re.compile(r"^[\w.-]+@[\w.-]+:[^/\\]")
_REF: Final = re.compile(r"^[\w][\w./+-]*$")
_COMMIT: Final = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_GIT: Final = ("git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
_FIELDS: Final = ("url", "ref", "subdir", "commit")


def is_git_source(text: str) -> bool:
    """Whether ``text`` names a git repository (``https://``, ``ssh://``, ``git@host:``...)."""
    return text.startswith(_SCHEMES) or bool(_SCP.match(text))


@dataclass(frozen=True, slots=True, kw_only=True)
class GitSkillPin:
    """Where a managed skill comes from: a repository, a ref, a folder and the pinned commit."""

    name: str
    url: str
    ref: str | None
    """Branch, tag or commit given when adding (``None``: the remote's HEAD)."""
    subdir: str
    """Folder of the skill in the repository (``""``: its root)."""
    commit: str

    @property
    def source(self) -> str:
        """``url[@ref][#subdir]`` as given to :meth:`GitSkills.add`."""
        ref = f"@{self.ref}" if self.ref else ""
        return f"{self.url}{ref}{'#' + self.subdir if self.subdir else ''}"


class GitSkills:
    """Add, update and sync the git skills of a project (``workspace-tools skills add URL``).

    Args:
        root: Project root.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()

    def pins(self) -> dict[str, GitSkillPin]:
        """The git skills recorded in ``workspace-tools.yaml``, by name.

        Raises:
            InvalidInputError: an entry is not ``{url, commit[, ref, subdir]}`` of valid values.
        """
        out = {}
        for name, raw in ProjectConfig.load(self.root).by_skill(GIT_KEY).items():
            get = (raw if isinstance(raw, dict) else {}).get
            url, ref, sub, commit = (str(get(k) or "") for k in _FIELDS)
            _check(url, ref or None, sub, name=name, commit=commit or "-")
            out[name] = GitSkillPin(name=name, url=url, ref=ref or None, subdir=sub, commit=commit)
        return out

    def add(self, source: str) -> GitSkillPin:
        """Fetch ``url[@ref][#subdir]``, copy the skill at its commit and pin it.

        Raises:
            InvalidInputError: Not a git URL, or a managed skill of that name not from git.
            SkillSourceError: git failed (the message quotes it).
            SkillFormatError: the folder holds no valid skill.
        """
        url, _, subdir = source.strip().partition("#")
        cut = max(url.rfind("/"), url.rfind(":")) + 1
        base, at, ref = url[cut:].partition("@")
        url, subdir = url[:cut] + base, subdir.strip("/")
        _check(url, ref if at else None, subdir)
        return self._install(url, ref if at else None, subdir, commit=None, new=True)

    def update(self, names: Collection[str] = ()) -> list[tuple[GitSkillPin, GitSkillPin]]:
        """Move the pins of ``names`` (all when empty) to what their refs name now.

        Returns:
            ``(before, after)`` for each skill; equal commits mean it was up to date.
        """
        return [(p, self._install(p.url, p.ref, p.subdir, commit=None)) for p in self._of(names)]

    def sync(self, names: Collection[str] = ()) -> list[GitSkillPin]:
        """Install the pinned commit of ``names`` (all when empty), pins unchanged."""
        return [self._install(p.url, p.ref, p.subdir, commit=p.commit) for p in self._of(names)]

    def remove(self, name: str) -> GitSkillPin:
        """Delete a git skill's folder and its pin."""
        pin = self._of([name])[0]
        shutil.rmtree(managed_folder(self.root) / name, ignore_errors=True)
        config = ProjectConfig.load(self.root)
        rest = {k: v for k, v in config.by_skill(GIT_KEY).items() if k != name}
        config.with_setting(GIT_KEY, rest).save()
        return pin

    def _of(self, names: Collection[str]) -> list[GitSkillPin]:
        pins = self.pins()
        unknown = [n for n in names if n not in pins]
        if unknown:
            msg = (
                f"No git skill named {', '.join(map(repr, unknown))} in this project (git "
                f"skills: {', '.join(pins) or 'none'}). Add one with `workspace-tools skills "
                "add URL[@REF][#SUBDIR]`."
            )
            raise InvalidInputError(msg)
        return [pins[n] for n in names] if names else list(pins.values())

    def _install(
        self, url: str, ref: str | None, subdir: str, *, commit: str | None, new: bool = False
    ) -> GitSkillPin:
        (self.root / MANAGED_DIR).mkdir(parents=True, exist_ok=True)
        managed = managed_folder(self.root)
        work = Path(tempfile.mkdtemp(prefix=".git-skill-", dir=managed.parent))
        try:
            repo = work / "repo.git"
            _git("clone", "--bare", "--quiet", "--no-recurse-submodules", "--", url, str(repo))
            want = commit or ref or "HEAD"
            try:
                found = _git("rev-parse", "--verify", f"{want}^{{commit}}", repo=repo)
            except SkillSourceError as exc:
                msg = f"{url} has no branch, tag or commit {want!r}; give one it has after '@'."
                raise SkillSourceError(msg) from exc
            commit = found.decode().strip()
            stage = work / "skill"
            _export(repo, commit, subdir, stage, where=f"{url} at {commit[:12]}")
            parsed = parse_skill_file(stage / "SKILL.md", source="managed")
            errors = [d.message for d in parsed.diagnostics if d.severity == "error"]
            if parsed.skill is None or validate_name(parsed.skill.name):
                why = "; ".join(errors or validate_name(parsed.skill.name if parsed.skill else ""))
                msg = f"{url}#{subdir} at {commit[:12]} is not a valid skill: {why}."
                raise SkillFormatError(msg)
            name = parsed.skill.name
            dest = managed / name
            if new and dest.exists() and name not in self.pins():
                msg = (
                    f"A managed skill {name!r} already exists at {dest} and was not added from "
                    "git; nothing changed. Delete that folder first to replace it."
                )
                raise InvalidInputError(msg)
            if dest.exists() or dest.is_symlink():
                os.replace(dest, work / "old")
            os.replace(stage, dest)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        pin = GitSkillPin(name=name, url=url, ref=ref, subdir=subdir, commit=commit)
        config = ProjectConfig.load(self.root)
        entry = {"url": url, "ref": ref, "subdir": subdir or None, "commit": commit}
        entry = {k: v for k, v in entry.items() if v}
        config.with_setting(GIT_KEY, {**config.by_skill(GIT_KEY), name: entry}).save()
        return pin


def _check(url: str, ref: str | None, subdir: str, *, name: str = "x", commit: str = "") -> None:
    """Refuse a URL git could take for an option or a command transport, a bad ref or folder."""
    problem = None
    if validate_name(name) or (commit and not _COMMIT.match(commit)):
        problem = f"{GIT_KEY} entry {name!r} needs a valid skill name and a full commit hash"
    elif not is_git_source(url):
        kinds = "https://, http://, ssh://, git://, file:// or user@host:path"
        problem = f"{url!r} is not a git URL ({kinds})"
    elif ref is not None and not _REF.match(ref):
        problem = f"ref {ref!r} must be a branch, tag or commit name"
    elif subdir and not is_plain_path(subdir):
        problem = f"#{subdir!r} must be a plain relative folder (no '..')"
    if problem:
        msg = f"Bad git skill source: {problem}. Fix it, or add it as URL[@REF][#SUBDIR] again."
        raise InvalidInputError(msg)


def _git(*args: str, repo: Path | None = None, data: bytes | None = None) -> bytes:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_LFS_SKIP_SMUDGE": "1"}
    env["GIT_ALLOW_PROTOCOL"] = "file:git:http:https:ssh"  # never ext:: (runs a command)
    command = [*_GIT, *(["--git-dir", str(repo)] if repo else []), *args]
    try:
        done = subprocess.run(
            command, input=data, capture_output=True, env=env, timeout=600, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        msg = f"Cannot run git ({exc}). Install git, or check the repository is reachable."
        raise SkillSourceError(msg) from exc
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip()[-500:]
        msg = f"git {args[0]} failed ({detail or done.returncode}). Check the URL and the ref."
        raise SkillSourceError(msg)
    return done.stdout


def _export(repo: Path, commit: str, subdir: str, stage: Path, *, where: str) -> None:
    """Write the regular files of ``commit:subdir`` to ``stage`` (no links, no submodules)."""
    tree = f"{commit}:{subdir}" if subdir else commit
    listing = _git("ls-tree", "-r", "-z", "-l", tree, repo=repo)
    entries = []
    for row in filter(None, listing.split(b"\0")):
        meta, _, raw = row.partition(b"\t")
        mode, kind, oid, length = meta.decode().split()
        rel = raw.decode("utf-8", "replace")
        if kind == "blob" and mode != "120000" and is_plain_path(rel):
            entries.append((rel, oid, int(length), mode))
    if "SKILL.md" not in {e[0] for e in entries}:
        inner = sorted(e[0][: -len("/SKILL.md")] for e in entries if e[0].endswith("/SKILL.md"))
        hint = f" Skills inside it: {', '.join(inner[:10])}; add one with #FOLDER." if inner else ""
        msg = f"No SKILL.md in {subdir or 'the root'!r} of {where}.{hint}"
        raise SkillFormatError(msg)
    if sum(e[2] for e in entries) > MAX_SKILL_BYTES:
        msg = f"The skill at {where} is larger than {MAX_SKILL_BYTES} bytes; it is not copied."
        raise SkillSourceError(msg)
    oids = "\n".join(e[1] for e in entries).encode()
    out = _git("cat-file", "--batch", repo=repo, data=oids)
    pos = 0
    for rel, _, size, mode in entries:
        start = out.index(b"\n", pos) + 1
        target = stage / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(out[start : start + size])
        if mode == "100755":
            target.chmod(0o755)
        pos = start + size + 1
