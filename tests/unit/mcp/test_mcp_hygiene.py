"""Protocol hygiene over stdio: only JSON-RPC on stdout, bad input answered, clean shutdown."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import stdio_client

from tests.unit.mcp.conftest import SERVER, server_env, stdio_params, tree_digest

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw-test", "version": "0"},
    },
}


def _start(root: Path, *flags: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(SERVER), "--root", str(root), *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(),
    )


def _send(process: subprocess.Popen[bytes], message: Any) -> None:
    assert process.stdin is not None
    line = message if isinstance(message, str) else json.dumps(message)
    process.stdin.write(line.encode() + b"\n")
    process.stdin.flush()


def _read(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, "the server closed stdout"
    data: dict[str, Any] = json.loads(line)  # every stdout line must be JSON
    assert data["jsonrpc"] == "2.0", line
    return data


def _until_id(process: subprocess.Popen[bytes], wanted: int) -> tuple[dict[str, Any], list[Any]]:
    others = []
    while True:
        message = _read(process)
        if message.get("id") == wanted:
            return message, others
        others.append(message)


def test_stdout_is_only_json_rpc_even_with_prints_warnings_and_progress_bars(
    project: Path,
) -> None:
    process = _start(project, "--noisy")
    try:
        _send(process, INIT)
        first, _ = _until_id(process, 1)
        assert first["result"]["serverInfo"]["name"] == "workspace-tools"
        _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "workspace_search", "arguments": {"query": "install"}}
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        answer, _ = _until_id(process, 2)
        assert answer["result"]["isError"] is False
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=60) == 0
        assert process.stdout is not None
        rest = process.stdout.read()
        for line in rest.splitlines():  # anything left must be JSON-RPC too
            assert json.loads(line)["jsonrpc"] == "2.0"
        assert process.stderr is not None
        err = process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # The noise happened, on stderr.
    assert "stray print at start-up" in err
    assert "raw fd 1 write in a tool call" in err
    assert "UserWarning: a warning in a tool call" in err  # logged by the SDK
    assert "progress in a tool call" in err


def test_bad_requests_are_answered_and_the_server_keeps_serving(project: Path) -> None:
    process = _start(project)
    try:
        _send(process, INIT)
        _until_id(process, 1)
        _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(process, "this is not JSON at all")
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "no/such/method"})
        unknown, before = _until_id(process, 2)
        assert unknown["error"]["code"] < 0
        # The unparseable line was reported (no id to answer to) as an error log message.
        assert any(m.get("params", {}).get("level") == "error" for m in before)
        bad_args = {"name": "docs_search", "arguments": {"query": ""}}
        _send(process, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": bad_args})
        invalid, _ = _until_id(process, 3)
        assert invalid["result"]["isError"] is True
        assert invalid["result"]["content"][0]["text"].startswith("Invalid tool input: 'query'")
        _send(process, {"jsonrpc": "2.0", "id": 4, "method": "ping"})
        pong, _ = _until_id(process, 4)
        assert pong["result"] == {}
    finally:
        process.kill()
        process.wait()


def _ready(process: subprocess.Popen[bytes]) -> None:
    _send(process, INIT)
    _until_id(process, 1)
    _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def test_sigterm_and_sigint_shut_down_cleanly(project: Path) -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        process = _start(project)
        try:
            _ready(process)
            process.send_signal(signum)
            assert process.wait(timeout=30) == 0, signum
            assert process.stderr is not None
            assert "Received SIG" in process.stderr.read().decode()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_stdin_close_shuts_down_cleanly(project: Path) -> None:
    process = _start(project)
    try:
        _ready(process)
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        assert "stdin closed: shutting down." in process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_read_only_server_leaves_the_index_folder_byte_identical(project: Path) -> None:
    # Index once with a writable server, then serve read-only and use every tool.
    async with (
        stdio_client(stdio_params(project)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
    (project / "new.md").write_text("# New\n\nA file added after indexing.\n", encoding="utf-8")
    state = project / ".workspace_tools"
    before = tree_digest(state)
    assert before
    calls = [
        ("workspace_search", {"query": "install"}),
        ("search_documents", {"query": "install"}),
        ("search_documents", {"query": "install", "mode": "grep"}),
        ("search_documents", {"query": "added", "paths": ["new.md"]}),
        ("docs_refresh_index", {}),
        ("docs_search", {"query": "install"}),
        ("skill_search", {"query": "hello"}),
        ("workspace_index", {"path": "new.md"}),
    ]
    async with (
        stdio_client(stdio_params(project, "--read-only")) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        results = [await session.call_tool(name, args) for name, args in calls]
    assert all(not r.isError for r in results[:-1]), [r.content for r in results]
    assert results[-1].isError  # no such tool on a read-only server
    assert "Unknown tool 'workspace_index'" in results[-1].content[0].text
    assert tree_digest(state) == before
