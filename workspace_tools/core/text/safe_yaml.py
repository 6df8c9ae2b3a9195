"""YAML loading for untrusted text: ``yaml.SafeLoader`` with alias, depth and size limits."""

from __future__ import annotations

from typing import Any, Final

import yaml

from workspace_tools.core.errors import InvalidInputError

__all__ = [
    "MAX_YAML_ALIASES",
    "MAX_YAML_CHARS",
    "MAX_YAML_DEPTH",
    "UnsafeYamlError",
    "load_yaml",
]

MAX_YAML_ALIASES: Final = 20
"""Documents with more aliases than this are refused as alias bombs (billion laughs)."""

MAX_YAML_DEPTH: Final = 64
"""Deepest nesting of lists and mappings accepted."""

MAX_YAML_CHARS: Final = 1_000_000
"""Longest YAML text accepted, in characters."""


class UnsafeYamlError(InvalidInputError):
    """YAML refused by a limit (aliases, depth, size); the message names the limit."""


class _GuardedLoader(yaml.SafeLoader):
    """The safe loader, counting aliases and nesting while it composes the node tree."""

    def __init__(self, text: str, *, max_aliases: int, max_depth: int) -> None:
        super().__init__(text)
        self._max_aliases = max_aliases
        self._max_depth = max_depth
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1  # checked after composing
        if not self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > self._max_depth:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                msg = (
                    f"nests lists or mappings more than {self._max_depth} levels deep (line "
                    f"{mark.line + 1}); the limit is {self._max_depth}"
                )
                raise UnsafeYamlError(msg)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def load_checked(self) -> Any:
        """Compose the one document, check the alias count, then construct it."""
        node = self.get_single_node()
        if self._aliases > self._max_aliases:
            msg = f"uses {self._aliases} YAML aliases; the limit is {self._max_aliases}"
            raise UnsafeYamlError(msg)
        return None if node is None else self.construct_document(node)


def load_yaml(
    text: str,
    *,
    max_aliases: int = MAX_YAML_ALIASES,
    max_depth: int = MAX_YAML_DEPTH,
    max_chars: int = MAX_YAML_CHARS,
) -> Any:
    """Parse one YAML document with the safe loader, within the alias, depth and size limits.

    Args:
        text: the YAML text.
        max_aliases: most aliases (``*name``) accepted.
        max_depth: deepest nesting of lists and mappings accepted.
        max_chars: longest text accepted.

    Raises:
        UnsafeYamlError: a limit was crossed (an ``InvalidInputError``; the message names it).
        yaml.YAMLError: the text is not valid YAML (or holds a value that cannot be built).
    """
    if len(text) > max_chars:
        msg = f"is {len(text)} characters of YAML; the limit is {max_chars}"
        raise UnsafeYamlError(msg)
    loader = _GuardedLoader(text, max_aliases=max_aliases, max_depth=max_depth)
    try:
        return loader.load_checked()
    except UnsafeYamlError:
        raise
    except (ValueError, TypeError, AttributeError, OverflowError) as exc:
        # a value PyYAML cannot build (2001-13-45, !!float x): invalid YAML, not a crash
        msg = f"a value cannot be read: {exc}"
        raise yaml.YAMLError(msg) from exc
    finally:
        loader.dispose()
