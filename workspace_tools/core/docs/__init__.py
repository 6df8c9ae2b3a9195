"""Docs search: a documentation tree of ``.md``/``.mdx`` pages searched by weighted fields."""

from workspace_tools.core.docs.index import DocsIndex

__all__ = ["DocsIndex"]
