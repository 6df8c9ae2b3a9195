"""File conversion: one table of formats, dispatch by suffix, the on-disk conversion cache."""

from workspace_tools.core.convert._documents import locate_unit
from workspace_tools.core.convert.cache import CachedConverter, ConversionCache
from workspace_tools.core.convert.dispatch import convert_bytes, looks_binary
from workspace_tools.core.convert.formats import (
    DOCS_PAGE_SUFFIXES,
    DOCUMENT_EXTENSIONS,
    DOCUMENT_FORMAT_NAMES,
    MARKDOWN_EXTENSIONS,
    UNIT_FORMATS,
    Converted,
)
from workspace_tools.core.convert.limits import DEFAULT_LIMITS, ConversionLimits

__all__ = [
    "DEFAULT_LIMITS",
    "DOCS_PAGE_SUFFIXES",
    "DOCUMENT_EXTENSIONS",
    "DOCUMENT_FORMAT_NAMES",
    "MARKDOWN_EXTENSIONS",
    "UNIT_FORMATS",
    "CachedConverter",
    "ConversionCache",
    "ConversionLimits",
    "Converted",
    "convert_bytes",
    "locate_unit",
    "looks_binary",
]
