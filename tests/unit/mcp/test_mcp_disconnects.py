"""A client going away ends its session: no traceback, exit status 0; odd skill names list.

Before: a stdio client killed with 50 calls in flight made the server print an
``ExceptionGroup``/``BrokenPipeError`` traceback; a client closing the server's stdout before its
stdin made it exit 1; over HTTP each disconnect logged an ``anyio.ClosedResourceError``
traceback and SIGTERM exited 143; a skill named ``bad skill`` made ``resources/list`` fail.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from pydantic import AnyUrl

from tests.unit.mcp.conftest import SERVER, free_port, server_env, stdio_params

pytestmark = pytest.mark.timeout(240)

NOISE = ("Traceback", "ExceptionGroup", "BrokenPipeError", "ClosedResourceError")
HTTP_CLIENT = """
import asyncio, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

async def main(url: str, mode: str) -> None:
    async with streamable_http_client(url) as (r, w, _), ClientSession(r, w) as s:
        await s.initialize()
        calls = [s.call_tool("workspace_search", {"query": "install"}) for _ in range(20)]
        if mode == "wait":
            await asyncio.gather(*calls)
            return
        print("calling", flush=True)
        await asyncio.gather(*calls)
        await asyncio.sleep(300)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def _message(i: int | None, method: str, params: dict[str, object] | None = None) -> bytes:
    body: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if i is not None:
        body["id"] = i
    if params is not None:
        body["params"] = params
    return (json.dumps(body) + "\n").encode()


INIT = _message(
    0,
    "initialize",
    {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "disconnect-test", "version": "0"},
    },
) + _message(None, "notifications/initialized")


@contextlib.contextmanager
def _stdio_server(root: Path) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(),
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(INIT)
        process.stdin.flush()
        assert b'"id":0' in process.stdout.readline()
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def _stderr(process: subprocess.Popen[bytes]) -> str:
    assert process.stderr is not None
    text = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    return text


def test_a_stdio_client_killed_with_calls_in_flight(project: Path) -> None:
    with _stdio_server(project) as server:
        assert server.stdin is not None and server.stdout is not None
        for i in range(50):
            args = {"name": "workspace_search", "arguments": {"query": "install search"}}
            server.stdin.write(_message(i + 1, "tools/call", args))
        server.stdin.flush()
        # what the kernel does to the pipes of a client that is killed: both ends close
        server.stdin.close()
        server.stdout.close()
        assert server.wait(timeout=120) == 0
        err = _stderr(server)
    assert not [word for word in NOISE if word in err], err[-3000:]


def test_requests_pending_when_stdin_closes_are_each_answered(project: Path) -> None:
    """Before: the server answered the first and exited, the others got nothing."""
    calls = [
        ("tools/call", {"name": "workspace_search", "arguments": {"query": "install search"}}),
        ("tools/call", {"name": "search_documents", "arguments": {"query": "parse"}}),
        ("tools/call", {"name": "workspace_read", "arguments": {"path": "notes.txt"}}),
        ("tools/list", None),
        ("ping", None),
    ]
    with _stdio_server(project) as server:
        assert server.stdin is not None and server.stdout is not None
        for i, (method, params) in enumerate(calls, start=1):
            server.stdin.write(_message(i, method, params))
        server.stdin.close()
        answers = [json.loads(line) for line in server.stdout.read().splitlines()]
        assert server.wait(timeout=120) == 0
    answered = {a["id"]: a for a in answers if "id" in a and "method" not in a}
    assert sorted(answered) == [1, 2, 3, 4, 5]
    assert all("result" in a for a in answered.values())  # each finished, none cancelled


def test_a_request_still_running_after_the_grace_is_cancelled(project: Path) -> None:
    """A call waiting for the client's roots, which can no longer come, gets an error."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}}
    hello["clientInfo"] = {"name": "roots-never-answered", "version": "0"}
    search = {"name": "workspace_search", "arguments": {"query": "install"}}
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--root", str(project), "--grace", "0.5"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(),
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(_message(0, "initialize", hello))
        process.stdin.write(_message(None, "notifications/initialized"))
        process.stdin.write(_message(1, "tools/call", search) + _message(2, "ping"))
        process.stdin.close()
        messages = [json.loads(line) for line in process.stdout.read().splitlines()]
        assert process.wait(timeout=120) == 0
    finally:
        if process.poll() is None:
            process.kill()
    asked = [m["method"] for m in messages if "method" in m and "id" in m]
    assert asked == ["roots/list"]  # never answered: the call waits for it
    answers = {m["id"]: m for m in messages if "method" not in m and "id" in m}
    assert sorted(answers) == [0, 1, 2] and "result" in answers[2]
    assert answers[1]["error"] == {
        "code": 0,
        "message": "Request cancelled: the client closed stdin.",
    }
    assert "stdin closed: 1 request(s) not answered within 0.5 s cancelled." in _stderr(process)


def test_a_client_closing_stdout_before_stdin(project: Path) -> None:
    with _stdio_server(project) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdout.close()
        server.stdin.write(_message(1, "tools/list"))
        server.stdin.write(_message(2, "tools/list"))
        server.stdin.flush()
        time.sleep(1)
        with contextlib.suppress(BrokenPipeError):
            server.stdin.close()
        assert server.wait(timeout=120) == 0
        err = _stderr(server)
    assert not [word for word in NOISE if word in err], err[-3000:]
    assert "The client closed its end of the protocol" in err


def test_stdio_sigterm_exits_zero(project: Path) -> None:
    with _stdio_server(project) as server:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
        err = _stderr(server)
    assert "Traceback" not in err


def test_http_disconnects_are_quiet_and_sigterm_exits_zero(project: Path, tmp_path: Path) -> None:
    client = tmp_path / "client.py"
    client.write_text(HTTP_CLIENT, encoding="utf-8")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--root", str(project), "--http", f"127.0.0.1:{port}"],
        env=server_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 120
        while subprocess.run(
            [
                sys.executable,
                "-c",
                f"import socket; socket.create_connection(('127.0.0.1', {port}))",
            ],
            capture_output=True,
            check=False,
        ).returncode:
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        for _ in range(2):  # clients that finish and close their session
            subprocess.run([sys.executable, str(client), url, "wait"], timeout=120, check=True)
        killed = subprocess.Popen(
            [sys.executable, str(client), url, "kill"], stdout=subprocess.PIPE, text=True
        )
        assert killed.stdout is not None and killed.stdout.readline().strip() == "calling"
        time.sleep(0.5)
        killed.kill()  # gone with 20 calls and its event stream open
        killed.wait()
        killed.stdout.close()
        time.sleep(2)
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    err = _stderr(server)
    assert not [word for word in NOISE if word in err], err[-3000:]
    assert "Received SIGTERM: shutting down." in err


async def test_a_skill_name_with_a_space_lists_and_reads_back(project: Path) -> None:
    odd = project / "skills" / "bad skill"
    odd.mkdir()
    (odd / "SKILL.md").write_text(
        "---\nname: bad skill\ndescription: A skill whose name breaks the spec.\n---\n"
        "# Odd\n\nOdd instructions.\n",
        encoding="utf-8",
    )
    async with (
        stdio_client(stdio_params(project)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = {r.name: str(r.uri) for r in (await session.list_resources()).resources}
        assert listed["bad skill"] == "skills://bad%20skill"
        assert listed["hello"] == "skills://hello"
        odd_text = await session.read_resource(AnyUrl(listed["bad skill"]))
        hello_text = await session.read_resource(AnyUrl(listed["hello"]))
    assert "Odd instructions." in odd_text.contents[0].text  # type: ignore[union-attr]
    assert "Greet the user by name." in hello_text.contents[0].text  # type: ignore[union-attr]
