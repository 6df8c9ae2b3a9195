"""Skill resource URIs: ``skills://NAME`` with the name percent-encoded, so any name lists."""

from __future__ import annotations

from typing import Final
from urllib.parse import quote, unquote

from pydantic import AnyUrl

__all__ = ["SKILL_SCHEME", "decode_skill_uri", "skill_uri"]

SKILL_SCHEME: Final = "skills://"


def skill_uri(name: str) -> AnyUrl:
    """``skills://NAME`` with ``NAME`` percent-encoded (only unreserved characters stay)."""
    return AnyUrl(SKILL_SCHEME + quote(name, safe=""))


def decode_skill_uri(uri: object) -> str:
    """The URI as text, with the skill name of a ``skills://`` URI percent-decoded."""
    text = str(uri)
    if not text.startswith(SKILL_SCHEME):
        return text
    return SKILL_SCHEME + unquote(text.removeprefix(SKILL_SCHEME))
