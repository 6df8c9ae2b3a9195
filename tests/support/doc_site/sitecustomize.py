"""Loaded by every Python the docs' shell examples start (``PYTHONPATH`` of the sandbox).

With ``$WORKSPACE_TOOLS_DOCTEST_FAKE=1`` the packaged default model is replaced by the fake
embedder in that process too, also in processes the CLI starts itself (``mcp smoke``'s server).
"""

import os

if os.environ.get("WORKSPACE_TOOLS_DOCTEST_FAKE") == "1":
    from tests.support.doc_cli import install_fake_hook

    install_fake_hook()
