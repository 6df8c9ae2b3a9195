"""What ``workspace-tools mcp`` says at start: what it serves, where it listens, and no noise."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

from tests.unit.mcp.conftest import free_port, server_env

CLI = [sys.executable, "-m", "workspace_tools.cli"]


def _start_and_stop(*args: str, cwd: Path, input: str = "") -> subprocess.CompletedProcess[str]:
    """The server with stdin closed: it starts, answers ``input``, finds end of input and stops."""
    return subprocess.run(
        [*CLI, *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=300,
        env=server_env(),
        cwd=cwd,
        check=False,
    )


def test_a_root_whose_workspace_is_not_served_is_named(project: Path) -> None:
    done = _start_and_stop("--root", str(project), "mcp", "--docs", "docs", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert (
        f"The workspace at --root {project} is not served: with --docs or --skills (or an mcp "
        f"section in workspace-tools.yaml) only what they name is. Add --workspace {project} to "
        "serve it too."
    ) in done.stderr
    assert f"serving: docs {project.resolve() / 'docs'}\n" in done.stderr
    quiet = _start_and_stop("-q", "--root", str(project), "mcp", "--docs", "docs", cwd=project)
    assert "is not served" in quiet.stderr  # a warning: -q keeps it
    plain = _start_and_stop("mcp", "--docs", "docs", cwd=project)  # no --root: nothing dropped
    assert "is not served" not in plain.stderr


def test_the_start_up_line_counts_the_tools_listed(project: Path) -> None:
    """A docs-only server said 'serving 4 tools' and listed 5 (workspace_status left out)."""
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ]
    text = "".join(json.dumps(m) + "\n" for m in messages)
    done = _start_and_stop("mcp", "--docs", "docs", cwd=project, input=text)
    assert done.returncode == 0, done.stderr
    answer = next(a for a in map(json.loads, done.stdout.splitlines()) if a.get("id") == 1)
    listed = [tool["name"] for tool in answer["result"]["tools"]]
    assert "workspace_status" in listed
    assert f"serving {len(listed)} tools: {', '.join(listed)}\n" in done.stderr


def test_no_library_debug_lines_at_start(project: Path) -> None:
    for quiet in ((), ("-q",)):
        done = _start_and_stop(
            *quiet, "--embedder", "none", "mcp", "--docs", "docs", "--workspace", ".", cwd=project
        )
        assert done.returncode == 0, done.stderr
        assert "bm25s" not in done.stderr  # "Building index from tokens", four times a start
    assert done.stderr == ""  # -q: nothing but errors


def test_http_under_quiet_says_where_it_listens(project: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [*CLI, "-q", "mcp", "--docs", "docs", "--http", f"127.0.0.1:{port}"],
        cwd=project,
        env=server_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        first = lines.get(timeout=120)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=15)
    assert first == f"MCP server at http://127.0.0.1:{port}/mcp\n"
    rest: list[str] = []
    with contextlib.suppress(queue.Empty):
        while True:
            rest.append(lines.get_nowait())
    assert [line for line in rest if "Traceback" in line or "bm25s" in line] == []
