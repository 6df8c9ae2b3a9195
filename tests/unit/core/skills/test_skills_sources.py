"""Skill sources (issue 40): the SkillSource protocol, the versioned store, explicit-only skills."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.skills import write_skill
from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.errors import (
    InvalidInputError,
    SkillFormatError,
    SkillNotFoundError,
    SkillSourceError,
)
from workspace_tools.core.skills import (
    FolderSkillSource,
    Skill,
    SkillRegistry,
    SkillSource,
    SkillStore,
    SourceListing,
    VersionedSkillSource,
    read_skill_file,
    render_skills_prompt,
)

STORE = ".workspace_tools/skills/.store"


def draft(root: Path, body: str = "Version one.", *, name: str = "review") -> Path:
    return write_skill(
        root / "drafts",
        name,
        "Review code changes. Use for pull request reviews.",
        body,
        files={"references/checklist.md": "Look for racy timestamps.\n", "assets/x.bin": b"\0\1"},
    )


def test_sources_implement_the_protocol(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "alpha")
    folders = FolderSkillSource(["skills"], root=tmp_path)
    store = SkillStore(tmp_path)
    assert isinstance(folders, SkillSource) and isinstance(VersionedSkillSource(store), SkillSource)
    listing = folders.list()
    assert [s.name for s in listing.skills] == ["alpha"] and listing.skills[0].source == "local"
    assert folders.read(listing.skills[0], "SKILL.md").startswith(b"---\nname: alpha")
    forced = FolderSkillSource([("skills", "external")], root=tmp_path).list()
    assert forced.skills[0].source == "external"


def test_publish_is_content_addressed_and_immutable(tmp_path: Path) -> None:
    store = SkillStore(tmp_path)
    one = store.publish(draft(tmp_path))
    assert len(one.version) == 64 and one.name == "review"
    assert sorted(one.files) == ["SKILL.md", "assets/x.bin", "references/checklist.md"]
    assert store.publish(tmp_path / "drafts" / "review") == one  # same content, same version
    two = store.publish(draft(tmp_path, "Version two."))
    assert two.version != one.version
    assert [v.version for v in store.versions("review")] == [one.version, two.version]
    blobs = sorted(p.name for p in (tmp_path / STORE / "blobs").iterdir())
    assert len(blobs) == 4  # the unchanged files are stored once


def test_pinned_version_is_served_as_managed(tmp_path: Path) -> None:
    store = SkillStore(tmp_path)
    one = store.publish(draft(tmp_path))
    store.publish(draft(tmp_path, "Version two."))
    registry = SkillRegistry([], root=tmp_path)
    assert registry.list_skills() == []  # published is not served until pinned
    store.pin("review", one.version[:8])  # a unique prefix is enough
    assert ProjectConfig.load(tmp_path).settings["skill_versions"] == {"review": one.version}
    skill = registry.get("review")  # the registry follows the project file
    assert skill.source == "managed" and skill.body == "Version one."
    assert skill.location.endswith(f".workspace_tools/skills/review@{one.version[:12]}/SKILL.md")
    assert registry.get(f".workspace_tools/skills/review@{one.version[:12]}").name == "review"
    assert skill.resources == ("assets/x.bin", "references/checklist.md")
    assert registry.read_file("review", "references/checklist.md").text.startswith("Look for")
    assert read_skill_file(skill, "assets/x.bin").binary
    hits = registry.search("racy timestamps")
    assert hits[0].skill_name == "review" and hits[0].source == "references/checklist.md"
    assert "review@" in render_skills_prompt(registry)


def test_rollback_and_unpin(tmp_path: Path) -> None:
    store = SkillStore(tmp_path)
    one = store.publish(draft(tmp_path))
    two = store.publish(draft(tmp_path, "Version two."))
    store.pin("review", two.version)
    registry = SkillRegistry([], root=tmp_path)
    assert registry.get("review").body == "Version two."
    assert store.rollback("review") == one
    assert registry.get("review").body == "Version one."
    with pytest.raises(InvalidInputError, match="is pinned at its oldest version"):
        store.rollback("review")
    store.unpin("review")
    assert registry.list_skills() == []
    with pytest.raises(InvalidInputError, match="'review': it is not pinned"):
        store.rollback("review")
    with pytest.raises(InvalidInputError, match="matches no published version. Published: "):
        store.pin("review", "abc")


def test_resolution_order_holds_across_sources(tmp_path: Path) -> None:
    store = SkillStore(tmp_path)
    version = store.publish(draft(tmp_path))
    store.pin("review", version.version)
    write_skill(tmp_path / "skills", "review", "Local review.", "Local body.")
    registry = SkillRegistry(["skills"], root=tmp_path)
    assert registry.get("review").body == "Local body."  # local > managed
    assert any("shadows" in d.message for d in registry.diagnostics())
    (tmp_path / "skills" / "review" / "SKILL.md").unlink()
    write_skill(tmp_path / ".workspace_tools" / "skills", "review", "Installed review.")
    with pytest.raises(SkillNotFoundError, match="2 managed skills have this name"):
        registry.get("review")  # two managed candidates: a conflict, as within one source


def test_custom_source_is_listed_and_read(tmp_path: Path) -> None:
    class Memory:
        def list(self) -> SourceListing:
            skill = Skill(
                name="memo",
                description="From memory.",
                body="Memo body.",
                source="external",
                files={"references/a.md": b"bytes from a source"},
            )
            return SourceListing(skills=[skill])

        def read(self, skill: Skill, path: str) -> bytes:
            return bytes(skill.files[path])  # type: ignore[arg-type]

    registry = SkillRegistry([], root=tmp_path, sources=[Memory()])
    assert registry.get("memo").source == "external"
    assert registry.read_file("memo", "references/a.md").text == "bytes from a source"


def test_damaged_blob_and_manifest_are_refused(tmp_path: Path) -> None:
    store = SkillStore(tmp_path)
    version = store.publish(draft(tmp_path))
    store.pin("review", version.version)
    registry = SkillRegistry([], root=tmp_path)
    blob = tmp_path / STORE / "blobs" / version.files["references/checklist.md"]
    blob.write_text("Tampered.\n", encoding="utf-8")
    with pytest.raises(SkillSourceError, match="does not match its hash"):
        registry.read_file("review", "references/checklist.md")
    manifest = tmp_path / STORE / "versions" / "review" / f"{version.version}.json"
    record = json.loads(manifest.read_text(encoding="utf-8"))
    record["files"]["SKILL.md"] = version.files["references/checklist.md"]
    manifest.write_text(json.dumps(record), encoding="utf-8")
    assert registry.list_skills() == []
    [diag] = [d for d in registry.diagnostics() if d.skill == "review"]
    assert diag.severity == "error" and "damaged or edited" in diag.message
    assert "skills versions review" in diag.message


def test_store_paths_stay_inside_the_managed_folder(tmp_path: Path) -> None:
    store = SkillStore(tmp_path)
    version = store.publish(draft(tmp_path))
    secret = tmp_path / "secret.txt"
    secret.write_text("token\n", encoding="utf-8")
    # a manifest naming '../' paths: refused, even with a matching hash
    files = {"SKILL.md": version.files["SKILL.md"], "../../secret.txt": "0" * 64}
    from workspace_tools.core.skills.store import _version_of

    evil = _version_of(files)
    folder = tmp_path / STORE / "versions" / "review"
    (folder / f"{evil}.json").write_text(
        json.dumps({"name": "review", "published": "x", "files": files}), encoding="utf-8"
    )
    with pytest.raises(SkillSourceError, match="damaged or edited"):
        store.version("review", evil)
    # a blob that is a link out of the managed folder is not read
    digest = version.files["references/checklist.md"]
    blob = tmp_path / STORE / "blobs" / digest
    blob.unlink()
    blob.symlink_to(secret)
    with pytest.raises(SkillSourceError, match="cannot be read"):
        store.read_blob(digest)
    # a store folder that leads out of the project is neither written nor read
    (tmp_path / STORE / "blobs").rename(tmp_path / "blobs-elsewhere")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / STORE / "blobs").symlink_to(outside)
    with pytest.raises(SkillSourceError, match="leads out of"):
        store.publish(tmp_path / "drafts" / "review")
    assert list(outside.iterdir()) == []
    with pytest.raises(InvalidInputError, match="a valid skill name"):
        store.version("../x", "0" * 64)


def test_publish_leaves_out_links_and_refuses_invalid_skills(tmp_path: Path) -> None:
    folder = draft(tmp_path)
    (tmp_path / "secret.txt").write_text("token\n", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", folder / "references" / "leak.md")
    version = SkillStore(tmp_path).publish(folder)
    assert "references/leak.md" not in version.files
    bad = write_skill(tmp_path / "drafts", "Bad Name")
    with pytest.raises(SkillFormatError, match="Cannot publish .*lowercase letters"):
        SkillStore(tmp_path).publish(bad)
    with pytest.raises(SkillFormatError, match="Cannot publish"):
        SkillStore(tmp_path).publish(tmp_path / "nowhere")


def test_explicit_only_skill_is_kept_from_the_model(tmp_path: Path) -> None:
    write_skill(
        tmp_path / "skills",
        "deploy",
        "Deploy the service to production. Use when asked to ship.",
        "Run the deploy pipeline.",
        extra="disable-model-invocation: true\n",
    )
    write_skill(tmp_path / "skills", "review", "Review code before you ship it.")
    registry = SkillRegistry(["skills"], root=tmp_path)
    catalog = registry.catalog()
    skill = registry.get("deploy")  # the program loads it by name
    assert skill.disable_model_invocation and skill.body == "Run the deploy pipeline."
    assert [s.name for s in registry.list_skills()] == ["deploy", "review"]
    assert [s.name for s in catalog.model_skills] == ["review"]
    prompt = render_skills_prompt(registry)
    assert "<name>review</name>" in prompt and "deploy" not in prompt
    assert "deploy" not in render_skills_prompt(registry.list_skills())
    assert [h.skill_name for h in registry.search("ship deploy production")] == ["review"]
    with pytest.raises(SkillNotFoundError, match="'deploy' is explicit-only"):
        catalog.get("deploy", by_model=True)
    with pytest.raises(SkillNotFoundError, match="Available skills: review\\."):
        catalog.get("deploi", by_model=True)


def test_disable_model_invocation_must_be_a_boolean(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "odd", extra="disable-model-invocation: 'yes'\n")
    registry = SkillRegistry(["skills"], root=tmp_path)
    assert not registry.get("odd").disable_model_invocation
    [diag] = registry.diagnostics()
    assert diag.field == "disable-model-invocation" and "treated as false" in diag.message


def test_versioned_source_with_pins_in_code(tmp_path: Path) -> None:
    store = SkillStore(tmp_path)
    one = store.publish(draft(tmp_path))
    source = VersionedSkillSource(store, pins={"review": one.version[:10]})
    registry = SkillRegistry([], root=tmp_path, sources=[source])
    assert registry.get("review").body == "Version one."
    broken = VersionedSkillSource(store, pins={"review": "f" * 64}).list()
    assert broken.skills == [] and "cannot be served" in broken.diagnostics[0].message
