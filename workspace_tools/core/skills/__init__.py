"""Agent Skills: parse and validate SKILL.md, discover, resolve, render and search skills."""

from __future__ import annotations

from workspace_tools.core.skills.catalogue import (
    DEFAULT_BUDGET,
    CatalogueBudget,
    CatalogueFormat,
    render_catalog_prompt,
    render_catalogue,
    render_skills_prompt,
    select_skills,
    skill_location,
)
from workspace_tools.core.skills.discover import discover, is_glob, list_resources
from workspace_tools.core.skills.files import (
    SkillFile,
    list_skill_files,
    read_skill_bytes,
    read_skill_file,
)
from workspace_tools.core.skills.git import GitSkillPin, GitSkills, is_git_source
from workspace_tools.core.skills.model import (
    Skill,
    SkillDiagnostic,
    SkillSource,
    SourceListing,
    SourceType,
)
from workspace_tools.core.skills.parse import (
    ParsedSkill,
    parse_skill_file,
    parse_skill_text,
    validate_name,
)
from workspace_tools.core.skills.registry import (
    ENTRY_POINT_GROUP,
    MANAGED_DIR,
    FolderSkillSource,
    SkillCatalog,
    SkillRegistry,
    classify_source,
)
from workspace_tools.core.skills.search import (
    MAX_SKILL_NAMES,
    MAX_SKILL_QUERY_CHARS,
    SkillSearchHit,
    SkillSearchIndex,
)
from workspace_tools.core.skills.store import SkillStore, SkillVersion, VersionedSkillSource

__all__ = [
    "DEFAULT_BUDGET",
    "ENTRY_POINT_GROUP",
    "MANAGED_DIR",
    "MAX_SKILL_NAMES",
    "MAX_SKILL_QUERY_CHARS",
    "CatalogueBudget",
    "CatalogueFormat",
    "FolderSkillSource",
    "GitSkillPin",
    "GitSkills",
    "ParsedSkill",
    "Skill",
    "SkillCatalog",
    "SkillDiagnostic",
    "SkillFile",
    "SkillRegistry",
    "SkillSearchHit",
    "SkillSearchIndex",
    "SkillSource",
    "SkillStore",
    "SkillVersion",
    "SourceListing",
    "SourceType",
    "VersionedSkillSource",
    "classify_source",
    "discover",
    "is_git_source",
    "is_glob",
    "list_resources",
    "list_skill_files",
    "parse_skill_file",
    "parse_skill_text",
    "read_skill_bytes",
    "read_skill_file",
    "render_catalog_prompt",
    "render_catalogue",
    "render_skills_prompt",
    "select_skills",
    "skill_location",
    "validate_name",
]
