"""Published skill versions: a content-addressable blob store, and the source serving the pins.

A version is the hash of its files; ``skill_versions`` pins them. The store is not trusted:
every read is checked and no link out of the managed folder is followed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Final

from workspace_tools.core.config import CONFIG_FILE, ProjectConfig
from workspace_tools.core.errors import (
    InvalidInputError,
    SkillFormatError,
    SkillSourceError,
    WorkspaceError,
)
from workspace_tools.core.skills.files import MAX_READ_BYTES, read_skill_bytes
from workspace_tools.core.skills.model import (
    MANAGED_DIR,
    RESOURCE_DIRS,
    Skill,
    SkillDiagnostic,
    SourceListing,
)
from workspace_tools.core.skills.parse import parse_skill_file, parse_skill_text, validate_name
from workspace_tools.core.text.safe_read import is_inside
from workspace_tools.core.text.scan import SKILL_FOLDER_WALK, read_inside, scan

__all__ = [
    "PINS_KEY",
    "SkillStore",
    "SkillVersion",
    "VersionedSkillSource",
    "is_plain_path",
    "managed_folder",
]

PINS_KEY: Final = "skill_versions"
"""Setting of ``workspace-tools.yaml`` that pins a version per skill name."""
_HASH: Final = re.compile(r"[0-9a-f]{64}")


def is_plain_path(rel: str) -> bool:
    """Whether ``rel`` is a plain relative POSIX path (no ``..``, ``.``, empty part or NUL)."""
    parts = rel.split("/")
    return "\\" not in rel and "\x00" not in rel and all(p not in ("", ".", "..") for p in parts)


def managed_folder(root: Path) -> Path:
    """The real path of ``<root>/.workspace_tools/skills``.

    Raises:
        SkillSourceError: it is a link that leads out of the project.
    """
    folder = root / MANAGED_DIR
    real = Path(os.path.realpath(folder))
    if not is_inside(Path(os.path.realpath(root)), real):
        msg = (
            f"The managed skills folder {str(folder)!r} leads out of the project (to {real}); "
            "nothing is written or read there. Make it a plain folder inside the project."
        )
        raise SkillSourceError(msg)
    return real


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillVersion:
    """One published, immutable version of a skill."""

    name: str
    version: str
    """SHA-256 of the sorted ``files`` mapping (64 hex digits)."""
    published: str
    """When it was first published (ISO 8601, UTC)."""
    files: Mapping[str, str]
    """Path relative to the skill root -> SHA-256 of the file's bytes."""


class SkillStore:
    """The published versions of a project's skills, and the pins of ``workspace-tools.yaml``.

    Args:
        root: Project root; the store lives in ``<root>/.workspace_tools/skills/.store``.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()

    def publish(self, folder: str | os.PathLike[str]) -> SkillVersion:
        """Store the files of a skill folder as a version (links out of the folder left out).

        Raises:
            SkillFormatError: the folder holds no valid skill (the message says why).
        """
        path = Path(folder).expanduser()
        path = path if path.is_absolute() else self.root / path
        parsed = parse_skill_file(path / "SKILL.md", source="managed")
        problems = [d.message for d in parsed.diagnostics if d.severity == "error"]
        if parsed.skill is not None:
            problems += validate_name(parsed.skill.name)
        if problems or parsed.skill is None:
            msg = f"Cannot publish {str(path)!r}: {'; '.join(problems)}. Fix the skill first."
            raise SkillFormatError(msg)
        real = Path(os.path.realpath(path))
        files: dict[str, str] = {}
        for rel in sorted(scan(real, config=SKILL_FOLDER_WALK).files):
            data, _ = read_inside(real, rel, max_bytes=MAX_READ_BYTES)
            files[rel] = hashlib.sha256(data).hexdigest()
            self._write(f"blobs/{files[rel]}", data)
        name, version = parsed.skill.name, _version_of(files)
        try:
            return self.version(name, version)
        except WorkspaceError:  # new (or damaged): write the manifest
            stamp = datetime.now(timezone.utc).isoformat(timespec="microseconds")
            record = {"name": name, "published": stamp, "files": files}
            self._write(f"versions/{name}/{version}.json", json.dumps(record, indent=1).encode())
            return self.version(name, version)

    def versions(self, name: str) -> list[SkillVersion]:
        """The valid published versions of ``name``, oldest first (damaged ones left out)."""
        folder = self.root / MANAGED_DIR / ".store" / "versions" / name
        found = []
        for entry in sorted(folder.glob("*.json")) if not validate_name(name) else []:
            try:
                found.append(self._load(name, entry.stem))
            except WorkspaceError:
                continue
        return sorted(found, key=lambda v: (v.published, v.version))

    def version(self, name: str, version: str) -> SkillVersion:
        """The version of ``name`` that ``version`` (a hash or a unique prefix of one) names.

        Raises:
            InvalidInputError: no version or several start with ``version``.
            SkillSourceError: its manifest is damaged.
        """
        if _HASH.fullmatch(version):
            return self._load(name, version)
        known = self.versions(name)
        found = [v for v in known if v.version.startswith(version.strip().lower() or "-")]
        if len(found) != 1:
            shown = ", ".join(v.version[:12] for v in known) or "none"
            why = "matches several versions" if found else "matches no published version"
            msg = (
                f"Version {version!r} of skill {name!r} {why}. Published: {shown}. Give more "
                f"digits, or publish the skill with `workspace-tools skills publish FOLDER`."
            )
            raise InvalidInputError(msg)
        return found[0]

    def pins(self) -> dict[str, str]:
        """The pinned version of each skill name (``skill_versions`` of the project file)."""
        pins = ProjectConfig.load(self.root).by_skill(PINS_KEY)
        return {k: str(v) for k, v in pins.items()}

    def pin(self, name: str, version: str) -> SkillVersion:
        """Serve ``version`` (a hash or unique prefix) of ``name`` from now on."""
        found = self.version(name, version)
        config = ProjectConfig.load(self.root)
        config.with_setting(PINS_KEY, {**self.pins(), name: found.version}).save()
        return found

    def unpin(self, name: str) -> None:
        """Stop serving a version of ``name`` (no error when none is pinned)."""
        pins = self.pins()
        if pins.pop(name, None) is not None:
            ProjectConfig.load(self.root).with_setting(PINS_KEY, pins).save()

    def rollback(self, name: str) -> SkillVersion:
        """Pin the version published before the one pinned now.

        Raises:
            InvalidInputError: nothing is pinned, or the pinned version is the oldest.
        """
        pinned = self.pins().get(name)
        history = [v.version for v in self.versions(name)]
        if pinned not in history or history.index(pinned) == 0:
            state = "is not pinned" if pinned is None else "is pinned at its oldest version"
            msg = (
                f"Cannot roll back skill {name!r}: it {state} ({len(history)} published). "
                f"Pin a version with `workspace-tools skills pin {name} VERSION`."
            )
            raise InvalidInputError(msg)
        return self.pin(name, history[history.index(pinned) - 1])

    def read_blob(self, digest: str) -> bytes:
        """The bytes stored under ``digest``, checked against it.

        Raises:
            SkillSourceError: the blob is missing, unreadable or does not match its hash.
        """
        try:  # '..' is refused, and a name that is no hash matches no content
            data, _ = read_inside(
                managed_folder(self.root), f".store/blobs/{digest}", max_bytes=MAX_READ_BYTES
            )
        except (OSError, InvalidInputError) as exc:
            msg = f"Stored file {digest[:12]} cannot be read ({exc}); publish the skill again."
            raise SkillSourceError(msg) from exc
        if hashlib.sha256(data).hexdigest() != digest:
            msg = (
                f"Stored file {digest[:12]} does not match its hash (damaged or edited); "
                "publish the skill again."
            )
            raise SkillSourceError(msg)
        return data

    def _load(self, name: str, version: str) -> SkillVersion:
        where = f"version {version[:12]} of skill {name!r}"
        if validate_name(name) or not _HASH.fullmatch(version):
            msg = f"No {where}: a valid skill name and a 64-digit SHA-256 version are required."
            raise InvalidInputError(msg)
        rel = f".store/versions/{name}/{version}.json"
        try:
            data = json.loads(
                read_inside(managed_folder(self.root), rel, max_bytes=MAX_READ_BYTES)[0]
            )
            files = data["files"]
            ok = isinstance(files, dict) and "SKILL.md" in files and data.get("name") == name
            ok = ok and all(is_plain_path(k) and _HASH.fullmatch(str(v)) for k, v in files.items())
        except (OSError, ValueError, KeyError, TypeError, InvalidInputError) as exc:
            msg = f"The manifest of {where} cannot be read ({exc}); publish the skill again."
            raise SkillSourceError(msg) from exc
        if not ok or _version_of(files) != version:
            msg = f"The manifest of {where} is damaged or edited (it does not match its hash)."
            raise SkillSourceError(msg)
        return SkillVersion(
            name=name, version=version, published=str(data.get("published", "")), files=files
        )

    def _write(self, rel: str, data: bytes) -> None:
        """Write ``.store/<rel>`` atomically, never through a link out of the managed folder."""
        (self.root / MANAGED_DIR).mkdir(parents=True, exist_ok=True)
        base = managed_folder(self.root)
        target = base / ".store" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if not is_inside(base, Path(os.path.realpath(target.parent))):
            msg = f"The skill store folder {target.parent} leads out of {base}; nothing written."
            raise SkillSourceError(msg)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)


class VersionedSkillSource:
    """The :class:`~workspace_tools.core.skills.SkillSource` of pinned versions (managed skills).

    Args:
        store: The store.
        pins: Skill name -> version (hash or unique prefix); ``None`` follows the project file.
    """

    def __init__(self, store: SkillStore, *, pins: Mapping[str, str] | None = None) -> None:
        self.store = store
        self.pins = None if pins is None else dict(pins)

    def list(self) -> SourceListing:
        """The pinned versions; a pin that cannot be served is an error diagnostic."""
        out = SourceListing(watched=[self.store.root / CONFIG_FILE])
        try:
            pins = self.store.pins() if self.pins is None else self.pins
        except InvalidInputError as exc:
            pins, out.diagnostics = {}, [SkillDiagnostic(path=CONFIG_FILE, message=str(exc))]
        for name, version in sorted(pins.items()):
            folder = self.store.root / MANAGED_DIR / ".store" / "versions" / name
            out.watched += [folder, folder / f"{version}.json"]
            try:
                found = self.store.version(name, version)
                text = self.store.read_blob(found.files["SKILL.md"]).decode("utf-8-sig")
            except (WorkspaceError, UnicodeDecodeError) as exc:
                msg = (
                    f"pinned version {version[:12]!r} of skill {name!r} cannot be served: {exc} "
                    f"Run `workspace-tools skills versions {name}` and pin a listed version."
                )
                diag = SkillDiagnostic(path=CONFIG_FILE, skill=name, message=msg, severity="error")
                out.diagnostics.append(diag)
                continue
            mount = self.store.root / MANAGED_DIR / f"{name}@{found.version[:12]}"
            parsed = parse_skill_text(
                text, folder=mount.parent / name, source="managed", where=str(mount / "SKILL.md")
            )
            out.diagnostics.extend(parsed.diagnostics)
            if parsed.skill is not None:
                res = tuple(r for r in sorted(found.files) if r.split("/")[0] in RESOURCE_DIRS)
                files = _StoredFiles(self.store, found.files)
                out.skills.append(replace(parsed.skill, path=mount, files=files, resources=res))
        return out

    def read(self, skill: Skill, path: str) -> bytes:
        """The bytes of a file of a served version, checked against its hash."""
        return read_skill_bytes(skill, path)


class _StoredFiles(Mapping[str, bytes]):
    """The files of a version, read from the blobs (and checked) on each access."""

    def __init__(self, store: SkillStore, files: Mapping[str, str]) -> None:
        self.store = store
        self.files = files

    def __getitem__(self, rel: str) -> bytes:
        return self.store.read_blob(self.files[rel])

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def __eq__(self, other: object) -> bool:  # compare hashes, never read the blobs
        return isinstance(other, _StoredFiles) and dict(other.files) == dict(self.files)


def _version_of(files: Mapping[str, str]) -> str:
    canonical = json.dumps(dict(sorted(files.items())), separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
