"""Fixtures for the MCP tests: a small project, and the test server as a real subprocess."""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from tests.support.paths import REPO

HERE = Path(__file__).resolve().parent
SERVER = HERE / "_server.py"
NPM = REPO / "tests" / "npm"
NODE_MODULES = NPM / "node_modules"


def server_env(**extra: str) -> dict[str, str]:
    """Environment of a server process: offline, warnings shown, no inherited noise."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "PYTHONWARNINGS": "always",
        "PYTHONPATH": str(REPO),  # this checkout's package, not another one installed
    }
    env.update(extra)
    return env


def stdio_params(root: Path, *flags: str) -> StdioServerParameters:
    """How an SDK client starts the test server over stdio."""
    return StdioServerParameters(
        command=sys.executable, args=[str(SERVER), "--root", str(root), *flags], env=server_env()
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A workspace with Markdown and code, a docs tree with two domains, and one skill."""
    root = tmp_path / "project"
    (root / "docs" / "guides").mkdir(parents=True)
    (root / "docs" / "api").mkdir()
    (root / "skills" / "hello").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "docs" / "index.md").write_text(
        "---\ntitle: Home\ndescription: Start here.\n---\n# Home\n\nWelcome to the search docs.\n",
        encoding="utf-8",
    )
    (root / "docs" / "guides" / "install.md").write_text(
        "# Installing\n\nInstall the package with pip install. Then search your files.\n\n"
        "## Upgrading\n\nUpgrade with pip install -U.\n",
        encoding="utf-8",
    )
    (root / "docs" / "api" / "search.md").write_text(
        "# Search API\n\nCall search with a query; results come back ranked.\n", encoding="utf-8"
    )
    (root / "src" / "app.py").write_text(
        "def parse_request(raw):\n    return raw.split()\n\n\ndef search(query):\n"
        "    return [query]\n",
        encoding="utf-8",
    )
    (root / "notes.txt").write_text(
        "Meeting notes: install the search tools before Friday.\n", encoding="utf-8"
    )
    (root / "skills" / "hello" / "SKILL.md").write_text(
        "---\nname: hello\ndescription: Greet people when asked to say hello.\n---\n# Hello\n\n"
        "Greet the user by name.\n",
        encoding="utf-8",
    )
    (root / "workspace-tools.yaml").write_text("skills: [skills]\n", encoding="utf-8")
    return root


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def http_server(root: Path, *flags: str) -> Iterator[str]:
    """The test server over streamable HTTP on a free loopback port; yields its URL.

    Stopped by its handle (SIGTERM, then SIGKILL if it does not exit).
    """
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--root", str(root), "--http", f"127.0.0.1:{port}", *flags],
        env=server_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                err = process.stderr.read().decode() if process.stderr else ""
                pytest.fail(f"HTTP server exited with {process.returncode}:\n{err[-3000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline:
                pytest.fail("HTTP server did not start listening within 120 s")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


def tree_digest(folder: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``folder`` (with its mtime)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = hashlib.sha256(path.read_bytes()).hexdigest()
            out[path.relative_to(folder).as_posix()] = f"{data}:{path.stat().st_mtime_ns}"
    return out
