"""SkillRegistry: resolution, conflicts, aliases, code skills, freshness, dynamic paths, sources."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from workspace_tools.core.errors import SkillFormatError, SkillNotFoundError
from workspace_tools.core.skills import Skill, SkillRegistry, classify_source
from workspace_tools.core.skills import registry as registry_module


def reg(tmp_path: Path, paths=("skills",), **kw) -> SkillRegistry:
    kw.setdefault("entry_points", False)
    return SkillRegistry(list(paths) if not callable(paths) else paths, root=tmp_path, **kw)


def bump(path: Path) -> None:
    """Move a file's mtime forward so a same-size edit is visible on coarse clocks too."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def test_list_get_and_resources(tmp_path, make_skill) -> None:
    make_skill("beta", files={"references/r.md": "ref"})
    make_skill("alpha")
    r = reg(tmp_path)
    assert [s.name for s in r.list_skills()] == ["alpha", "beta"]
    beta = r.get("beta")
    assert beta.source == "local"
    assert beta.resources == ("references/r.md",)
    assert beta.path == tmp_path / "skills" / "beta"
    assert r.diagnostics() == []


def test_one_broken_skill_does_not_stop_others(tmp_path, make_skill, skills_dir) -> None:
    make_skill("good")
    bad = skills_dir / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: [oops\n---\n")
    r = reg(tmp_path)
    assert [s.name for s in r.list_skills()] == ["good"]
    [diag] = r.diagnostics()
    assert diag.severity == "error"
    assert diag.path == str(bad / "SKILL.md")


def test_strict_registry_raises(tmp_path, make_skill, skills_dir) -> None:
    make_skill("good", extra="version: 1\n")
    with pytest.raises(SkillFormatError, match="unknown field 'version'"):
        reg(tmp_path, strict=True).list_skills()


def test_lookup_by_path_with_or_without_skill_md(tmp_path, make_skill) -> None:
    folder = make_skill("alpha")
    r = reg(tmp_path)
    for ident in [
        "skills/alpha",
        "skills/alpha/",
        "skills/alpha/SKILL.md",
        str(folder),
        f"{folder}/SKILL.md",
        "./skills/alpha",
    ]:
        assert r.get(ident).name == "alpha", ident


def test_not_found_suggests_names(tmp_path, make_skill) -> None:
    make_skill("web-research")
    make_skill("pdf-tools")
    with pytest.raises(SkillNotFoundError) as info:
        reg(tmp_path).get("web-reserch")
    assert str(info.value) == (
        "No skill named or located at 'web-reserch'. Did you mean: web-research? "
        "Available skills: pdf-tools, web-research. Call the skill tool with one of these names "
        "or a catalogue location."
    )


def test_not_found_without_skills(tmp_path) -> None:
    with pytest.raises(SkillNotFoundError, match="No skills are configured"):
        reg(tmp_path).get("x")


def test_two_locals_conflict(tmp_path, make_skill) -> None:
    a = make_skill("dup", parent=tmp_path / "one")
    b = make_skill("dup", parent=tmp_path / "two")
    r = reg(tmp_path, ["one", "two"])
    assert len(r.list_skills()) == 2  # both listed
    [diag] = r.diagnostics()
    assert "Cannot resolve skill 'dup': 2 local skills have this name" in diag.message
    with pytest.raises(SkillNotFoundError) as info:
        r.get("dup")
    message = str(info.value)
    assert str(a / "SKILL.md") in message
    assert str(b / "SKILL.md") in message
    assert message.endswith(
        "Rename one or move it to a different source type; lookup by path "
        "works. Call again with the location."
    )
    assert r.get("one/dup").path == a
    assert r.get(str(b / "SKILL.md")).path == b


def test_local_beats_managed_beats_external(tmp_path, make_skill) -> None:
    ext = make_skill("same", parent=tmp_path / "node_modules" / "pkg" / "skills")
    site = make_skill("other", parent=tmp_path / "venv" / "site-packages" / "x")
    managed = make_skill("same", parent=tmp_path / ".workspace_tools" / "skills")
    r = reg(tmp_path, ["node_modules/pkg/skills", "venv/site-packages/x"])
    assert r.get("same").path == managed
    assert r.get("same").source == "managed"
    assert r.get("other").source == "external"
    assert r.get("other").path == site
    assert r.get(str(ext)).source == "external"
    local = make_skill("same")
    r = reg(tmp_path, ["node_modules/pkg/skills", "skills"])
    assert r.get("same").path == local
    shadow = [d.message for d in r.diagnostics()]
    assert any("skill 'same' (local) shadows" in m for m in shadow), shadow


def test_extra_managed_paths(tmp_path, make_skill) -> None:
    make_skill("m", parent=tmp_path / "installed")
    r = reg(tmp_path, [], managed_paths=["installed"])
    assert r.get("m").source == "managed"


def test_classify_source() -> None:
    assert classify_source(Path("/p/node_modules/x/skills/a")) == "external"
    assert classify_source(Path("/p/lib/python3.12/site-packages/pkg/a")) == "external"
    assert classify_source(Path("/p/.workspace_tools/skills/a")) == "managed"
    assert classify_source(Path("/p/inst/a"), managed_roots=[Path("/p/inst")]) == "managed"
    assert classify_source(Path("/p/skills/a")) == "local"


def test_symlinked_aliases_collapse(tmp_path, make_skill) -> None:
    real = make_skill("alpha")
    other = tmp_path / "linked"
    other.mkdir()
    (other / "alpha").symlink_to(real, target_is_directory=True)
    r = reg(tmp_path, ["skills", "linked"])
    assert [s.path for s in r.list_skills()] == [real]
    assert r.diagnostics() == []
    assert r.get("alpha").path == real
    assert r.get("linked/alpha/SKILL.md").path == real  # the alias path still resolves


def test_code_skills_take_precedence(tmp_path, make_skill) -> None:
    make_skill("alpha")
    code = Skill(
        name="alpha",
        description="From code.",
        body="Code body.",
        files={"references/x.md": "in memory"},
    )
    r = reg(tmp_path, skills=[code])
    assert r.get("alpha").body == "Code body."
    assert r.get("alpha").source == "code"
    assert [s.source for s in r.list_skills()] == ["code", "local"]
    assert r.read_file("alpha", "references/x.md").text == "in memory"
    r.unregister("alpha")
    assert r.get("alpha").source == "local"


def test_register_validates(tmp_path) -> None:
    r = reg(tmp_path)
    with pytest.raises(SkillFormatError, match="Invalid skill 'Bad_Name' defined in code"):
        r.register(Skill(name="Bad_Name", description="d"))
    with pytest.raises(SkillFormatError, match="description is empty"):
        r.register(Skill(name="ok", description=" "))


def test_freshness_edit_add_remove(tmp_path, make_skill, skills_dir) -> None:
    make_skill("alpha", "First description.")
    r = reg(tmp_path)
    assert r.get("alpha").description == "First description."
    # edit in place (the folder mtime does not change)
    skill_md = skills_dir / "alpha" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("First", "Second"))
    bump(skill_md)
    assert r.get("alpha").description == "Second description."
    make_skill("beta")
    assert [s.name for s in r.list_skills()] == ["alpha", "beta"]
    import shutil

    shutil.rmtree(skills_dir / "alpha")
    assert [s.name for s in r.list_skills()] == ["beta"]


def test_freshness_resources_and_reference_edits(tmp_path, make_skill, skills_dir) -> None:
    make_skill("alpha", files={"references/a.md": "apples"})
    r = reg(tmp_path)
    assert r.search("pears") == []
    ref = skills_dir / "alpha" / "references" / "a.md"
    ref.write_text("pears pears")
    bump(ref)
    assert [h.source for h in r.search("pears")] == ["references/a.md"]
    (skills_dir / "alpha" / "references" / "b.md").write_text("new file")
    assert r.get("alpha").resources == ("references/a.md", "references/b.md")


def test_freshness_through_globs(tmp_path, make_skill) -> None:
    make_skill("a", parent=tmp_path / "p1" / "skills")
    r = reg(tmp_path, ["**/skills"])
    assert [s.name for s in r.list_skills()] == ["a"]
    make_skill("b", parent=tmp_path / "p2" / "deeper" / "skills")
    assert [s.name for s in r.list_skills()] == ["a", "b"]


def test_unchanged_skills_are_not_reparsed(tmp_path, make_skill, monkeypatch) -> None:
    make_skill("alpha")
    make_skill("beta")
    r = reg(tmp_path)
    r.list_skills()
    calls: list[Path] = []
    original = registry_module.parse_skill_file
    monkeypatch.setattr(
        registry_module, "parse_skill_file", lambda p, **kw: calls.append(p) or original(p, **kw)
    )
    r.list_skills()
    assert calls == []  # nothing changed: not even a rediscovery
    make_skill("gamma")
    r.list_skills()
    assert [p.parent.name for p in calls] == ["gamma"]


def test_missing_path_appears_later(tmp_path, make_skill) -> None:
    r = reg(tmp_path, ["later"])
    assert r.list_skills() == []
    assert "skills path does not exist" in r.diagnostics()[0].message
    make_skill("x", parent=tmp_path / "later")
    assert [s.name for s in r.list_skills()] == ["x"]


def test_check_interval_skips_checks(tmp_path, make_skill) -> None:
    make_skill("alpha")
    r = reg(tmp_path, check_interval=60)
    r.list_skills()
    make_skill("beta")
    assert [s.name for s in r.list_skills()] == ["alpha"]
    r.refresh()
    assert [s.name for s in r.list_skills()] == ["alpha", "beta"]


def test_dynamic_paths_are_isolated_per_request(tmp_path, make_skill) -> None:
    make_skill("shared", parent=tmp_path / "common")
    make_skill("dev-only", parent=tmp_path / "dev")
    seen: list[object] = []

    def paths(ctx: object) -> list[str]:
        seen.append(ctx)
        role = getattr(ctx, "role", None)
        return ["common", "dev"] if role == "developer" else ["common"]

    r = reg(tmp_path, paths)
    dev, user = SimpleNamespace(role="developer"), SimpleNamespace(role="user")
    assert [s.name for s in r.list_skills(context=dev)] == ["dev-only", "shared"]
    assert [s.name for s in r.list_skills(context=user)] == ["shared"]
    with pytest.raises(SkillNotFoundError):
        r.get("dev-only", context=user)
    assert r.get("dev-only", context=dev).name == "dev-only"
    assert [h.skill_name for h in r.search("thing", context=user)] == ["shared"]
    assert seen[0] is dev
    with pytest.raises(TypeError, match="dynamic paths"):
        r.add_path("x")


def test_dynamic_paths_order_does_not_matter(tmp_path, make_skill) -> None:
    make_skill("a", parent=tmp_path / "one")
    make_skill("b", parent=tmp_path / "two")
    r = reg(tmp_path, lambda ctx: ["one", "two"] if ctx else ["two", "one"])
    assert [s.name for s in r.list_skills(context=1)] == [s.name for s in r.list_skills()]


def test_add_and_remove_path(tmp_path, make_skill) -> None:
    make_skill("a", parent=tmp_path / "one")
    r = reg(tmp_path, [])
    r.add_path("one")
    assert [s.name for s in r.list_skills()] == ["a"]
    r.remove_path("one")
    assert r.list_skills() == []


def test_entry_points(tmp_path, make_skill, monkeypatch) -> None:
    make_skill("plugged", parent=tmp_path / "plugin")

    class EP:
        def __init__(self, name: str, value: object) -> None:
            self.name, self.value = name, value

        def load(self) -> object:
            if isinstance(self.value, Exception):
                raise self.value
            return self.value

    eps = [EP("ok", lambda: str(tmp_path / "plugin")), EP("broken", ImportError("nope"))]
    monkeypatch.setattr(
        registry_module.importlib.metadata,
        "entry_points",
        lambda group: eps if group == "workspace_tools.skills" else [],
    )
    r = SkillRegistry([], root=tmp_path, entry_points=True)
    assert [(s.name, s.source) for s in r.list_skills()] == [("plugged", "external")]
    # opt-in: by default an installed package's skills stay out of the catalogue
    assert SkillRegistry([], root=tmp_path).list_skills() == []


def test_from_project_reads_config(tmp_path, make_skill) -> None:
    make_skill("a")
    (tmp_path / "workspace-tools.yaml").write_text("skills:\n  - skills\nother: 1\n")
    r = SkillRegistry.from_project(tmp_path, entry_points=False)
    assert [s.name for s in r.list_skills()] == ["a"]
