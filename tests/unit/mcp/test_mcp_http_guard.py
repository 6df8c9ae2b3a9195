"""The HTTP server's bind policy, through real requests to a ``workspace-tools mcp`` process.

Before: the Host/Origin checks applied only to binds spelled exactly ``127.0.0.1``,
``localhost`` or ``::1``; on ``0.0.0.0``, ``::``, ``127.0.0.2`` or ``LOCALHOST`` an
``initialize`` with ``Origin: http://attacker.example`` got 200, and there was no authentication.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.unit.mcp.conftest import server_env
from workspace_tools.mcp.http_guard import TOKEN_ENV, is_loopback

pytestmark = pytest.mark.timeout(240)

TOKEN = "s3cret-token-for-the-tests-0123456789"
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "guard-test", "version": "0"},
        },
    }
).encode()
EVIL = "http://attacker.example"


def _port(family: socket.AddressFamily, host: str) -> int:
    with socket.socket(family) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _cli(root: Path, address: str, *flags: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "workspace_tools.cli",
        "--root",
        str(root),
        "--embedder",
        "none",
        "-q",
        "mcp",
        "--no-sync",
        "--http",
        address,
        *flags,
    ]


@contextlib.contextmanager
def _serve(root: Path, bind: str, *flags: str, **env: str) -> Iterator[tuple[str, int]]:
    """The real CLI serving HTTP on ``bind``; yields the address to connect to and the port."""
    connect = {"0.0.0.0": "127.0.0.1", "::": "::1", "LOCALHOST": "127.0.0.1"}.get(bind, bind)
    connect = connect.strip("[]")
    family = socket.AF_INET6 if ":" in connect else socket.AF_INET
    port = _port(family, connect)
    address = f"[{bind.strip('[]')}]:{port}" if ":" in bind else f"{bind}:{port}"
    process = subprocess.Popen(
        _cli(root, address, *flags),
        env=server_env(**env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                err = process.stderr.read().decode() if process.stderr else ""
                pytest.fail(f"server exited with {process.returncode}:\n{err[-3000:]}")
            with contextlib.suppress(OSError), socket.create_connection((connect, port), 0.2):
                break
            if time.monotonic() > deadline:
                pytest.fail("HTTP server did not start listening within 180 s")
            time.sleep(0.1)
        yield connect, port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


def _post(
    connect: str, port: int, *, host: str | None = None, **headers: str
) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection(connect, port, timeout=30)
    try:
        sent = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Host": host or (f"[{connect}]:{port}" if ":" in connect else f"{connect}:{port}"),
            **{k.replace("_", "-"): v for k, v in headers.items()},
        }
        conn.request("POST", "/mcp", body=INITIALIZE, headers=sent)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        conn.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "notes.md").write_text("# Notes\n\ninstall the search tools\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.2", "LOCALHOST", "::1", "[::1]", "localhost."]
)
def test_every_loopback_spelling_is_loopback(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.com", "localhost.evil"])
def test_other_hosts_are_not(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize("bind", ["127.0.0.2", "LOCALHOST", "[::1]"])
def test_loopback_binds_refuse_foreign_origin_and_host(root: Path, bind: str) -> None:
    with _serve(root, bind) as (connect, port):
        status, _, _ = _post(connect, port)
        assert status == 200
        status, _, body = _post(connect, port, Origin=EVIL)
        assert status == 403
        assert "Origin 'http://attacker.example' is not allowed" in body
        status, _, body = _post(connect, port, host=f"attacker.example:{port}")
        assert status == 421
        assert "is not a loopback host" in body
        # another spelling of loopback, and a loopback origin, are the same server
        status, _, _ = _post(
            connect, port, host=f"localhost:{port}", Origin="http://127.0.0.9:3000"
        )
        assert status == 200


@pytest.mark.parametrize("bind", ["0.0.0.0", "::"])
def test_a_wildcard_bind_without_a_token_is_refused_before_it_starts(root: Path, bind: str) -> None:
    address = f"[{bind}]:0" if ":" in bind else f"{bind}:0"
    done = subprocess.run(
        _cli(root, address), env=server_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert f"Refusing to serve MCP over HTTP on {bind!r} without authentication" in done.stderr
    assert TOKEN_ENV in done.stderr and "Traceback" not in done.stderr


def test_a_short_token_is_refused(root: Path) -> None:
    done = subprocess.run(
        _cli(root, "127.0.0.1:0", "--auth-token", "abc"),
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "at least 16 characters" in done.stderr


@pytest.mark.parametrize(
    ("bind", "flags", "env"),
    [
        ("0.0.0.0", (), {TOKEN_ENV: TOKEN}),
        ("::", ("--auth-token", TOKEN, "--allow-origin", "https://app.example"), {}),
    ],
    ids=["ipv4-any-token-from-env", "ipv6-any-token-flag"],
)
def test_a_wildcard_bind_needs_the_token_and_checks_origin(
    root: Path, bind: str, flags: tuple[str, ...], env: dict[str, str]
) -> None:
    bearer = f"Bearer {TOKEN}"
    with _serve(root, bind, *flags, **env) as (connect, port):
        status, headers, body = _post(connect, port)
        assert status == 401
        assert headers.get("www-authenticate", "").startswith("Bearer")
        assert "bearer token" in body
        assert _post(connect, port, Authorization="Bearer wrong-token-wrong-token")[0] == 401
        assert _post(connect, port, Authorization=TOKEN)[0] == 401  # no scheme
        assert _post(connect, port, Authorization=bearer)[0] == 200
        # a foreign Origin is refused even with the token, on every bind
        status, _, body = _post(connect, port, Authorization=bearer, Origin=EVIL)
        assert status == 403
        assert _post(connect, port, Authorization=bearer, Origin="http://localhost:5173")[0] == 200
        if "--allow-origin" in flags:
            allowed = _post(connect, port, Authorization=bearer, Origin="https://app.example")
            assert allowed[0] == 200


async def test_the_sdk_client_works_with_the_token(root: Path) -> None:
    with _serve(root, "0.0.0.0", **{TOKEN_ENV: TOKEN}) as (connect, port):
        url = f"http://{connect}:{port}/mcp"
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
        async with (
            client,
            streamable_http_client(url, http_client=client) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            result = await session.call_tool(
                "search_documents", {"query": "install", "mode": "grep"}
            )
    assert "workspace_search" in tools
    assert not result.isError
