"""Parse and validate ``SKILL.md`` files (Agent Skills format, agentskills.io).

Lenient by default: a usable skill loads with warnings, one without a name, description or valid
YAML is skipped; ``strict=True`` raises :class:`SkillFormatError` on any problem.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from workspace_tools.core.errors import SkillFormatError
from workspace_tools.core.skills.model import Skill, SkillDiagnostic, SourceType
from workspace_tools.core.text.safe_yaml import UnsafeYamlError, load_yaml

__all__ = [
    "KNOWN_FIELDS",
    "MAX_FRONTMATTER_CHARS",
    "MAX_SKILL_FILE_BYTES",
    "ParsedSkill",
    "parse_skill_file",
    "parse_skill_text",
    "validate_name",
]

MAX_NAME_CHARS: Final = 64
MAX_DESCRIPTION_CHARS: Final = 1024
MAX_COMPATIBILITY_CHARS: Final = 500
MAX_BODY_LINES: Final = 500
MAX_BODY_TOKENS: Final = 5000
MAX_SKILL_FILE_BYTES: Final = 2_000_000
"""SKILL.md files larger than this are skipped."""
MAX_FRONTMATTER_CHARS: Final = 64_000
"""Frontmatter larger than this is rejected before YAML sees it."""
KNOWN_FIELDS: Final[tuple[str, ...]] = (
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
    "user-invocable",
    "disable-model-invocation",
)
_DELIMITER: Final = re.compile(r"^---[ \t]*$")
_CLOSING: Final = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
_TOP_LEVEL_PAIR: Final = re.compile(r"^([A-Za-z][\w-]*):[ \t]+(.+?)[ \t]*$")


@dataclass(slots=True)
class ParsedSkill:
    """Result of parsing one SKILL.md: the skill (or ``None`` if skipped) and what was found."""

    skill: Skill | None
    diagnostics: list[SkillDiagnostic] = field(default_factory=list)


def validate_name(name: str) -> list[str]:
    """Problems of a (NFKC-normalised) skill name against the spec; empty when valid."""
    problems: list[str] = []
    name = unicodedata.normalize("NFKC", name)
    if len(name) > MAX_NAME_CHARS:
        problems.append(
            f"name {name[:70]!r} is {len(name)} characters; the limit is {MAX_NAME_CHARS}"
        )
    if name != name.lower() or not all(c.isalnum() or c == "-" for c in name):
        problems.append(
            f"name {name!r} may contain only lowercase letters, digits and hyphens; "
            "rename it, e.g. to " + repr(_suggest_name(name))
        )
    if name.startswith("-") or name.endswith("-"):
        problems.append(f"name {name!r} must not start or end with a hyphen")
    if "--" in name:
        problems.append(f"name {name!r} must not contain consecutive hyphens")
    return problems


def parse_skill_file(
    skill_md: Path,
    *,
    source: SourceType = "local",
    resources: tuple[str, ...] = (),
    strict: bool = False,
) -> ParsedSkill:
    """Read and parse one SKILL.md file; the skill folder is its parent."""
    where = str(skill_md)
    try:
        size = skill_md.stat().st_size
        if size > MAX_SKILL_FILE_BYTES:
            msg = (
                f"file is {size} bytes; the limit is {MAX_SKILL_FILE_BYTES}. Move detail into "
                "references/ and keep SKILL.md short."
            )
            return _fail(where, msg, strict=strict)
        text = skill_md.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        return _fail(where, "file is not valid UTF-8 text; save it as UTF-8.", strict=strict)
    except OSError as exc:
        return _fail(where, f"cannot read the file ({exc.strerror or exc}).", strict=strict)
    folder = skill_md.parent.absolute()
    return parse_skill_text(
        text, folder=folder, source=source, resources=resources, strict=strict, where=where
    )


def parse_skill_text(
    text: str,
    *,
    folder: Path,
    source: SourceType = "local",
    resources: tuple[str, ...] = (),
    strict: bool = False,
    where: str | None = None,
) -> ParsedSkill:
    """Parse SKILL.md text belonging to the skill folder ``folder``."""
    where = where or str(folder / "SKILL.md")
    split = _split_frontmatter(text)
    if isinstance(split, str):
        return _fail(where, split, strict=strict)
    raw, body, body_line = split
    diags: list[SkillDiagnostic] = []
    loaded = _load_yaml(raw)
    if isinstance(loaded, str):
        repaired = _repair_colons(raw)
        again = _load_yaml(repaired) if repaired != raw else loaded
        if isinstance(again, str):
            return _fail(where, loaded, strict=strict)
        diags.append(
            _warn(
                where,
                "frontmatter is not valid YAML (an unquoted ': ' in a value?); "
                "it was read by quoting the values. Quote values that contain ': '.",
            )
        )
        loaded = again
    if not isinstance(loaded, dict):
        kind = "empty" if loaded is None else type(loaded).__name__
        msg = f"frontmatter must be a YAML mapping of fields, got {kind}."
        return _fail(where, msg, strict=strict, diags=diags)
    skill = _build(
        loaded,
        body_line,
        body,
        folder=folder,
        source=source,
        resources=resources,
        where=where,
        diags=diags,
    )
    if strict and diags:
        problems = "\n".join(f"- {d.field + ': ' if d.field else ''}{d.message}" for d in diags)
        msg = f"Invalid SKILL.md at {where}:\n{problems}"
        raise SkillFormatError(msg)
    return ParsedSkill(skill=skill, diagnostics=diags)


def _build(
    data: dict[Any, Any],
    body_line: int,
    body: str,
    *,
    folder: Path,
    source: SourceType,
    resources: tuple[str, ...],
    where: str,
    diags: list[SkillDiagnostic],
) -> Skill | None:
    name = data.get("name")
    description = data.get("description")
    if not isinstance(name, str) or not name.strip():
        got = "missing" if name is None else f"got {_kind(name)} {_short(name)}"
        diags.append(
            _error(
                where,
                f"a non-empty string is required for 'name' ({got}); the skill was "
                "skipped. Add `name: <folder name>` to the frontmatter.",
                "name",
            )
        )
        return None
    name = unicodedata.normalize("NFKC", name.strip())
    if not isinstance(description, str) or not description.strip():
        got = (
            "missing" if description is None else f"got {_kind(description)} {_short(description)}"
        )
        diags.append(
            _error(
                where,
                f"a non-empty string is required for 'description' ({got}); the skill was "
                "skipped. Say what the skill does and when to use it.",
                "description",
                skill=name,
            )
        )
        return None
    description = description.strip()
    diags.extend(_warn(where, p, "name", skill=name) for p in validate_name(name))
    if name != folder.name:
        diags.append(
            _warn(
                where,
                f"name {name!r} must equal the folder name {folder.name!r}; "
                "rename the folder or the skill.",
                "name",
                skill=name,
            )
        )
    if len(description) > MAX_DESCRIPTION_CHARS:
        diags.append(
            _warn(
                where,
                f"is {len(description)} characters; the limit is "
                f"{MAX_DESCRIPTION_CHARS}. Shorten it.",
                "description",
                skill=name,
            )
        )
    for key in data:
        if key not in KNOWN_FIELDS:
            diags.append(
                _warn(
                    where,
                    f"unknown field {str(key)!r} ignored; allowed fields: "
                    + ", ".join(KNOWN_FIELDS)
                    + ". Move it under `metadata`.",
                    str(key),
                    skill=name,
                )
            )
    optional = _optional_fields(data, where=where, name=name, diags=diags)
    lines = body.count("\n") + 1 if body else 0
    if lines > MAX_BODY_LINES:
        diags.append(
            _warn(
                where,
                f"body has {lines} lines (recommended at most "
                f"{MAX_BODY_LINES}); consider moving content to references/.",
                skill=name,
            )
        )
    tokens = int(len(body.split()) * 1.3)
    if tokens > MAX_BODY_TOKENS:
        diags.append(
            _warn(
                where,
                f"body is about {tokens} tokens (recommended at most "
                f"{MAX_BODY_TOKENS}); consider moving content to references/.",
                skill=name,
            )
        )
    return Skill(
        name=name,
        description=description,
        body=body,
        body_line=body_line,
        path=folder,
        source=source,
        resources=resources,
        **optional,
    )


def _optional_fields(
    data: dict[Any, Any], *, where: str, name: str, diags: list[SkillDiagnostic]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    lic = data.get("license")
    if isinstance(lic, str) and lic.strip():
        out["license"] = lic.strip()
    elif lic is not None:
        diags.append(
            _warn(where, f"must be a string, got {_kind(lic)}; ignored.", "license", skill=name)
        )
    compat = data.get("compatibility")
    if isinstance(compat, str) and compat.strip():
        out["compatibility"] = compat.strip()
        if len(compat.strip()) > MAX_COMPATIBILITY_CHARS:
            diags.append(
                _warn(
                    where,
                    f"is {len(compat.strip())} characters; the limit is {MAX_COMPATIBILITY_CHARS}.",
                    "compatibility",
                    skill=name,
                )
            )
    elif compat is not None:
        diags.append(
            _warn(
                where,
                f"must be a non-empty string of at most "
                f"{MAX_COMPATIBILITY_CHARS} characters, got {_kind(compat)}; ignored.",
                "compatibility",
                skill=name,
            )
        )
    meta = data.get("metadata")
    if isinstance(meta, Mapping):
        clean: dict[str, str] = {}
        for key, value in meta.items():
            if isinstance(value, str):
                clean[str(key)] = value
            elif isinstance(value, (int, float, bool)):
                clean[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)
                diags.append(
                    _warn(
                        where,
                        f"value of {str(key)!r} should be a string, got "
                        f"{_kind(value)}; converted to {clean[str(key)]!r}.",
                        "metadata",
                        skill=name,
                    )
                )
            else:
                diags.append(
                    _warn(
                        where,
                        f"value of {str(key)!r} must be a string, got {_kind(value)}; dropped.",
                        "metadata",
                        skill=name,
                    )
                )
        out["metadata"] = clean
    elif meta is not None:
        diags.append(
            _warn(
                where,
                f"must be a mapping of strings to strings, got {_kind(meta)}; ignored.",
                "metadata",
                skill=name,
            )
        )
    tools = data.get("allowed-tools")
    if isinstance(tools, str):
        out["allowed_tools"] = tuple(t for t in re.split(r"[\s,]+", tools) if t)
    elif isinstance(tools, list) and all(isinstance(t, str) for t in tools):
        out["allowed_tools"] = tuple(t.strip() for t in tools if t.strip())
    elif tools is not None:
        diags.append(
            _warn(
                where,
                "must be a space-separated string or a list of strings, got "
                f"{_kind(tools)}; ignored.",
                "allowed-tools",
                skill=name,
            )
        )
    for key in ("user-invocable", "disable-model-invocation"):
        flag = data.get(key)
        if isinstance(flag, bool):
            out[key.replace("-", "_")] = flag
        elif flag is not None:
            diags.append(
                _warn(
                    where,
                    f"must be true or false, got {_kind(flag)} {_short(flag)}; treated as false.",
                    key,
                    skill=name,
                )
            )
    return out


def _split_frontmatter(text: str) -> tuple[str, str, int] | str:
    text = text.lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or not _DELIMITER.match(lines[0].rstrip("\r")):
        return (
            "no YAML frontmatter: the file must start with a line '---', then `name:` and "
            "`description:`, then a closing '---'."
        )
    seen = 0
    for i in range(1, len(lines)):
        if _CLOSING.match(lines[i].rstrip("\r")):
            raw = "\n".join(line.rstrip("\r") for line in lines[1:i])
            if len(raw) > MAX_FRONTMATTER_CHARS:
                return (
                    f"frontmatter is {len(raw)} characters; the limit is "
                    f"{MAX_FRONTMATTER_CHARS}. Keep only the spec fields in it."
                )
            rest = lines[i + 1 :]
            blank = next((k for k, line in enumerate(rest) if line.strip()), len(rest))
            return raw, "\n".join(rest).strip(), i + 2 + blank
        seen += len(lines[i]) + 1
        if seen > MAX_FRONTMATTER_CHARS:
            return (
                f"frontmatter is over the limit of {MAX_FRONTMATTER_CHARS} characters (or its "
                "closing '---' is missing). Keep only the spec fields in it."
            )
    return "frontmatter is not closed: add a line '---' after the last field."


def _load_yaml(raw: str) -> Any:
    """The guarded YAML loader (aliases, depth, size); a string return value is an error message."""
    try:
        return load_yaml(raw)
    except UnsafeYamlError as exc:
        return f"frontmatter {exc}. Write the values out plainly, without anchors or deep nesting."
    except yaml.YAMLError as exc:
        detail = str(exc).replace("\n", " ")
        if len(detail) > 300:
            detail = detail[:297] + "..."
        return f"frontmatter is not valid YAML ({detail}). Fix the YAML; quote values with ': '."


def _repair_colons(raw: str) -> str:
    """Quote top-level ``key: value`` lines whose value contains ``': '`` (a common mistake)."""
    out = []
    for line in raw.split("\n"):
        match = _TOP_LEVEL_PAIR.match(line)
        value = match.group(2) if match else ""
        if match and ": " in value and value[0] not in "'\"[{|>&*!":
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            line = f'{match.group(1)}: "{escaped}"'
        out.append(line)
    return "\n".join(out)


def _suggest_name(name: str) -> str:
    cleaned = re.sub(r"[^a-z0-9]+", "-", name.lower())
    return re.sub(r"-{2,}", "-", cleaned).strip("-")[:MAX_NAME_CHARS] or "my-skill"


def _kind(value: object) -> str:
    return {
        dict: "mapping",
        list: "list",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _short(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _warn(
    where: str, message: str, fld: str | None = None, *, skill: str | None = None
) -> SkillDiagnostic:
    return SkillDiagnostic(path=where, message=message, severity="warning", field=fld, skill=skill)


def _error(
    where: str, message: str, fld: str | None = None, *, skill: str | None = None
) -> SkillDiagnostic:
    return SkillDiagnostic(path=where, message=message, severity="error", field=fld, skill=skill)


def _fail(
    where: str, message: str, *, strict: bool, diags: list[SkillDiagnostic] | None = None
) -> ParsedSkill:
    if strict:
        msg = f"Invalid SKILL.md at {where}: {message}"
        raise SkillFormatError(msg)
    return ParsedSkill(skill=None, diagnostics=[*(diags or []), _error(where, message)])
