"""``workspace-tools`` as the docs' shell examples run it: the real CLI, the fake embedder.

The fake (``tests.support.fakes.FakeEmbedder``) stands in for the packaged default model, so a
documented command runs in a fraction of a second; ``$WORKSPACE_TOOLS_DOCTEST_MODEL=1`` (a block
marked ``<!-- doctest: model -->``) keeps the real model. Other embedders (``--embedder NAME``,
``none``) are used as given.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from unittest import mock

from tests.support.doc_sandbox import MODEL_ENV

DEFAULT_MODEL = "workspace_tools.core.workspace._workspace.SentenceTransformerEmbedder"
"""Where ``Workspace`` finds the class of its default embedder (the tests' one patch point)."""


def fake_default_model() -> ExitStack:
    """A context in which ``Workspace(root)`` embeds with the fake instead of the real model."""
    from tests.support.fakes import FakeEmbedder

    stack = ExitStack()
    stack.enter_context(mock.patch(DEFAULT_MODEL, FakeEmbedder))
    return stack


def main() -> int:
    """Run ``workspace_tools.cli.main`` on ``sys.argv``, with the fake unless asked otherwise."""
    from workspace_tools.cli import main as cli_main

    if os.environ.get(MODEL_ENV):
        return cli_main()
    with fake_default_model():
        return cli_main()
