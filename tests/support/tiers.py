"""The two test tiers: the fast default run (``pytest -q``) and the full one (``pytest --full``).

The fast run leaves a test out (``--full`` and CI run it) when

- it is marked ``requires_model`` (it loads the real packaged model) or ``slow`` (a notebook
  run, the docs site build, the wheel install, Milvus Lite's server, or a test measured at
  about 1 s or more on two cores); or
- it starts a Python process: its code, a fixture it uses, or a function of this test package
  it calls (followed through) names ``sys.executable`` (the MCP test server, the CLI, a child
  script) or a list holding it, or opens an MCP SDK client that starts its server
  (``stdio_client``). A new interpreter importing the package costs seconds on two cores.

The rule reads code objects, so a new test that starts a process is classified without a mark.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable

import pytest

__all__ = ["FULL_ONLY_MARKS", "ProcessFinder", "full_only"]

FULL_ONLY_MARKS = ("requires_model", "slow")
PROCESS_NAMES = frozenset({"stdio_client", "create_subprocess_exec", "create_subprocess_shell"})
"""Names whose call starts a process (besides ``sys.executable``, found as its own case)."""


def _code_names(code: types.CodeType) -> set[str]:
    """Every global and attribute name ``code`` uses, nested functions and lambdas included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


class ProcessFinder:
    """Whether a function starts a Python process, itself or through the test helpers it calls."""

    def __init__(self) -> None:
        self._seen: dict[types.CodeType, bool] = {}

    def starts_process(self, func: Callable[..., object]) -> bool:
        func = inspect.unwrap(func)
        if isinstance(func, types.MethodType):
            func = func.__func__
        if not isinstance(func, types.FunctionType):
            return False
        code = func.__code__
        if code in self._seen:
            return self._seen[code]
        self._seen[code] = False  # a cycle of helpers adds nothing
        names = _code_names(code)
        found = bool(names & PROCESS_NAMES) or {"sys", "executable"} <= names
        for name in sorted(names - {"sys", "executable"}):
            if found:
                break
            value = func.__globals__.get(name)
            if isinstance(value, list | tuple):
                found = sys.executable in value
            elif isinstance(value, types.FunctionType) and value.__module__.startswith("tests."):
                found = self.starts_process(value)
        self._seen[code] = found
        return found


def full_only(item: pytest.Item, finder: ProcessFinder) -> bool:
    """Whether the fast run leaves ``item`` out."""
    if any(item.get_closest_marker(mark) for mark in FULL_ONLY_MARKS):
        return True
    function = getattr(item, "function", None)
    if function is not None and finder.starts_process(function):
        return True
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        defs = info.name2fixturedefs.get(name) if info is not None else None
        if defs and finder.starts_process(defs[-1].func):
            return True
    return False
