"""The built wheel, installed into a fresh venv with the base install only, works without torch.

Slow (it builds the wheel and installs its base dependencies from the package index, ~40 s with
a cold pip cache), so it is marked ``slow``. The ``[vector]`` half does not install torch again:
it adds the dev venv's site-packages (which hold the ``vector`` extra) *after* the fresh venv's
own through a ``.pth`` file, so the wheel's ``workspace_tools`` is still the one imported, and
checks that hybrid search appears.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PROBE = textwrap.dedent(
    """
    import importlib.util, json, logging, sys
    from pathlib import Path

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    import workspace_tools
    from workspace_tools import Workspace
    from workspace_tools.skills_entry import example_skills_path
    from workspace_tools.tools import WorkspaceToolkit

    root = Path(sys.argv[1])
    ws = Workspace(root)
    ws.sync()
    toolkit = WorkspaceToolkit(workspace=ws, skills_paths=["skills"], docs_root="docs")
    tools = {t.name: t for t in toolkit.get_tools()}
    out = {
        "file": workspace_tools.__file__,
        "version": workspace_tools.__version__,
        "modes": list(ws.modes),
        "bm25": [h.source_id for h in ws.search("incremental sync", mode="bm25")],
        "tools": sorted(tools),
        "workspace_search": tools["workspace_search"].invoke({"query": "incremental sync"}),
        "keyword": tools["search_documents"].invoke({"query": "incremental", "mode": "keyword"}),
        "grep": tools["search_documents"].invoke(
            {"query": "incremental", "mode": "grep", "ignore_case": True}
        ),
        "docs_search": tools["docs_search"].invoke({"query": "sync"}),
        "skill": tools["skill"].invoke({"name": "demo"}),
        "examples": sorted(p.name for p in Path(example_skills_path()).iterdir()),
        "examples_path": example_skills_path(),
    }
    if "hybrid" in ws.modes:
        out["hybrid"] = [h.source_id for h in ws.search("keeping files fresh", mode="hybrid")]
    heavy = {"torch", "faiss", "sentence_transformers", "transformers"}
    out["heavy_imported"] = sorted({m.split(".")[0] for m in sys.modules} & heavy)
    out["torch_installed"] = importlib.util.find_spec("torch") is not None
    print("PROBE " + json.dumps(out))
    """
)


def _project(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "sync.md").write_text(
        "# Sync\n\nIncremental sync re-indexes only new and changed files.\n", encoding="utf-8"
    )
    (root / "notes.txt").write_text("Nothing about that here.\n", encoding="utf-8")
    skill = root / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: demo\ndescription: A demo skill for the install test.\n---\nSay hi.\n",
        encoding="utf-8",
    )
    return root


def _run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(
        [str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _probe(python: Path, project: Path) -> tuple[dict[str, object], str]:
    done = _run(python, "-c", PROBE, str(project), cwd=project)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("PROBE "))
    return json.loads(line.removeprefix("PROBE ")), done.stderr


@pytest.mark.slow
def test_wheel_base_install_searches_without_torch_and_vector_extra_adds_hybrid(
    tmp_path: Path,
) -> None:
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("workspace_tools-*.whl")

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    installed = _run(python, "-m", "pip", "install", "-q", str(wheel), cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr

    listed = _run(python, "-m", "pip", "list", "--format=json", cwd=tmp_path)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert {"torch", "faiss-cpu", "sentence-transformers", "langchain"}.isdisjoint(names)
    assert {"langchain-core", "bm25s", "workspace-tools"} <= names

    project = _project(tmp_path / "project")
    out, stderr = _probe(python, project)
    assert str(out["file"]).startswith(str(env_dir))  # the wheel, not the checkout
    assert out["modes"] == ["bm25"]
    assert 'pip install "workspace-tools[vector]"' in stderr  # says which extra adds vectors
    assert out["bm25"] == ["docs/sync.md"]
    assert "docs/sync.md" in str(out["workspace_search"])
    assert "docs/sync.md" in str(out["keyword"])
    assert "docs/sync.md" in str(out["grep"])
    assert "sync.md" in str(out["docs_search"])
    assert "Say hi." in str(out["skill"])
    assert {"skill", "docs_get_page", "workspace_index"} <= set(out["tools"])  # type: ignore[call-overload]
    assert out["examples"] == ["grounded-answers", "skill-authoring", "workspace-search"]
    # the wheel's copy, built from the top-level skills_examples/ folder (setup.py)
    assert str(out["examples_path"]).startswith(str(env_dir)), out["examples_path"]
    assert out["heavy_imported"] == []
    assert out["torch_installed"] is False

    cli = env_dir / ("Scripts/workspace-tools.exe" if os.name == "nt" else "bin/workspace-tools")
    searched = _run(cli, "--root", str(project), "search", "incremental sync", cwd=tmp_path)
    assert searched.returncode == 0, searched.stderr
    assert "docs/sync.md" in searched.stdout
    assert "bm25 search" in searched.stdout

    # [vector]: the dev venv's packages (torch, sentence-transformers, FAISS, the model) after
    # the fresh venv's own, instead of a second multi-GB install.
    site = Path(
        _run(
            python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path
        ).stdout.strip()
    )
    (site / "zz_vector_extra.pth").write_text(sysconfig.get_path("purelib") + "\n")
    (project / ".workspace_tools").rename(tmp_path / "bm25-only-index")
    out, _ = _probe(python, project)
    assert str(out["file"]).startswith(str(env_dir))
    assert out["modes"] == ["bm25", "vector", "hybrid"]
    assert out["hybrid"][0] == "docs/sync.md"  # type: ignore[index]
    assert out["torch_installed"] is True
