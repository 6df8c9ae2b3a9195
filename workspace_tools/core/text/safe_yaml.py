"""YAML loading for untrusted text: ``yaml.safe_load`` behind an alias-bomb guard."""

from __future__ import annotations

from typing import Any, Final

import yaml

__all__ = ["MAX_YAML_ALIASES", "UnsafeYamlError", "load_yaml"]

MAX_YAML_ALIASES: Final = 20
"""Documents with more aliases than this are refused as alias bombs (billion laughs)."""


class UnsafeYamlError(ValueError):
    """YAML refused before loading (too many aliases); the message says why."""


def load_yaml(text: str, *, max_aliases: int = MAX_YAML_ALIASES) -> Any:
    """Parse ``text`` with the safe loader after counting its aliases in one event pass.

    Raises:
        UnsafeYamlError: more than ``max_aliases`` aliases.
        yaml.YAMLError: the text is not valid YAML.
    """
    aliases = sum(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, Loader=yaml.SafeLoader))
    if aliases > max_aliases:
        msg = f"uses {aliases} YAML aliases; the limit is {max_aliases}"
        raise UnsafeYamlError(msg)
    return yaml.safe_load(text)
