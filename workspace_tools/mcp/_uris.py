"""Skill resource URIs: ``skills://NAME`` with the name percent-encoded, so any name lists.

A skill whose name breaks the spec (``bad skill``, ``Ünï``, ``a/b``) is still served with a
diagnostic; before this, one such name made ``AnyUrl`` raise and ``resources/list`` fail for
every skill. Names are encoded with :func:`urllib.parse.quote` (nothing kept but unreserved
characters) and decoded when a resource is read, so each URI reads back the skill it names.
"""

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
