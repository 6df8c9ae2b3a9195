"""``workspace-tools`` as the docs' shell examples run it: the real CLI, the fake embedder.

The fake (``tests.support.fakes.FakeEmbedder``) stands in for the packaged default model, so a
documented command runs in a fraction of a second; a block marked ``<!-- doctest: model -->``
keeps the real model. Other embedders (``--embedder NAME``, ``none``) are used as given.
In-process Python blocks use :func:`fake_default_model`; processes started by shell blocks get
the same patch from ``tests/support/doc_site/sitecustomize.py`` (:func:`install_fake_hook`).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from types import ModuleType
from typing import Any
from unittest import mock

DEFAULT_MODEL_MODULE = "workspace_tools.core.workspace._workspace"
DEFAULT_MODEL = f"{DEFAULT_MODEL_MODULE}.SentenceTransformerEmbedder"
"""Where ``Workspace`` finds the class of its default embedder (the tests' one patch point)."""


def fake_default_model() -> ExitStack:
    """A context in which ``Workspace(root)`` embeds with the fake instead of the real model."""
    from tests.support.fakes import FakeEmbedder

    stack = ExitStack()
    stack.enter_context(mock.patch(DEFAULT_MODEL, FakeEmbedder))
    return stack


class _FakeAfterImport(importlib.abc.MetaPathFinder):
    """Patches the default model's class right after its module is imported."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != DEFAULT_MODEL_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:  # pragma: no cover - the package moved
            return spec
        loader: Any = spec.loader
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            from tests.support.fakes import FakeEmbedder

            run(module)
            module.SentenceTransformerEmbedder = FakeEmbedder  # type: ignore[attr-defined]

        loader.exec_module = exec_module
        return spec


def install_fake_hook() -> None:
    """From now on, importing the workspace module gives it the fake default model."""
    if DEFAULT_MODEL_MODULE in sys.modules:
        sys.modules[DEFAULT_MODEL_MODULE].SentenceTransformerEmbedder = _fake_class()
        return
    sys.meta_path.insert(0, _FakeAfterImport())


def _fake_class() -> Any:
    from tests.support.fakes import FakeEmbedder

    return FakeEmbedder


def main() -> int:
    """Run ``workspace_tools.cli.main`` on ``sys.argv``, with the fake default model.

    Unless ``$WORKSPACE_TOOLS_DOCTEST_MODEL`` is set: MCP clients start their servers with
    only a few environment variables (``PATH``, ``HOME``...), so the fake is this command's
    default, not something the environment must ask for.
    """
    from workspace_tools.cli import main as cli_main

    if not os.environ.get("WORKSPACE_TOOLS_DOCTEST_MODEL"):
        install_fake_hook()
    return cli_main()
