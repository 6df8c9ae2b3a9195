"""SkillCatalog: the skills resolved from one discovery, looked up by name or by path.

Names resolve to the best source type (code > local > managed > external); a tie is a conflict,
raised on lookup by name. Lookup by path always works.
"""

from __future__ import annotations

import difflib
import os
import threading
from collections.abc import Collection, Sequence
from pathlib import Path

from workspace_tools.core.errors import SkillNotFoundError
from workspace_tools.core.skills.model import SOURCE_PRIORITY, Skill, SkillDiagnostic
from workspace_tools.core.skills.search import SkillSearchHit, SkillSearchIndex

__all__ = ["AGENT_HINT", "SkillCatalog", "conflict_message"]

AGENT_HINT = "Call the skill tool with one of these names or a catalogue location."
"""Last sentence of a "no such skill" message (for a model; a CLI replaces it)."""


class SkillCatalog:
    """An immutable snapshot of the skills visible for one set of paths."""

    def __init__(
        self,
        skills: Sequence[Skill],
        *,
        root: Path,
        diagnostics: Sequence[SkillDiagnostic] = (),
        disabled: Collection[str] = (),
    ) -> None:
        self.root = root
        ordered = sorted(skills, key=lambda s: (s.name, SOURCE_PRIORITY[s.source], s.location))
        off = frozenset(disabled)
        self.skills: tuple[Skill, ...] = tuple(s for s in ordered if s.name not in off)
        """Every distinct skill (same-named ones from several places included), by name."""
        self.disabled: tuple[Skill, ...] = tuple(s for s in ordered if s.name in off)
        """Skills found but disabled (``disabled_skills``): listed nowhere, not loadable."""
        self.disabled_names: frozenset[str] = off
        """The disabled names (found or not)."""
        self.model_skills: tuple[Skill, ...] = tuple(
            s for s in self.skills if not s.disable_model_invocation
        )
        """The skills the model may see and load: :attr:`skills` without the explicit-only ones."""
        self._by_name: dict[str, list[Skill]] = {}
        for skill in self.skills:
            self._by_name.setdefault(skill.name, []).append(skill)
        self.conflicts: dict[str, tuple[Skill, ...]] = {}
        """Names whose best candidates share a source type: lookup by name fails for them."""
        diags = list(diagnostics)
        for name, found in self._by_name.items():
            if len(found) < 2:
                continue
            best = [s for s in found if s.source == found[0].source]
            if len(best) > 1:
                self.conflicts[name] = tuple(best)
                diags.append(
                    SkillDiagnostic(
                        path=best[0].location, skill=name, message=conflict_message(name, best)
                    )
                )
            else:
                others = ", ".join(f"{s.location} ({s.source})" for s in found[1:])
                diags.append(
                    SkillDiagnostic(
                        path=found[0].location,
                        skill=name,
                        message=f"skill {name!r} ({found[0].source}) shadows {others}; lookup by "
                        "name uses the first, lookup by path reaches the others.",
                    )
                )
        self.diagnostics: tuple[SkillDiagnostic, ...] = tuple(diags)
        """Problems found while loading, conflicts and shadowed skills."""
        self._index: SkillSearchIndex | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.skills)

    def names(self) -> list[str]:
        """Distinct skill names, sorted."""
        return list(self._by_name)

    def get(self, identifier: str, *, by_model: bool = False) -> Skill:
        """The skill with this name, or at this path (``<folder>`` or ``<folder>/SKILL.md``).

        Args:
            identifier: A name or a location.
            by_model: The model asks (the skill tools): an explicit-only skill is refused.

        Raises:
            SkillNotFoundError: No match, an ambiguous name, or an explicit-only one ``by_model``.
        """
        ident = identifier.strip()
        found = self._by_name.get(ident)
        skill = None
        if found:
            if ident in self.conflicts:
                raise SkillNotFoundError(
                    conflict_message(ident, self.conflicts[ident])
                    + " Call again with the location."
                )
            skill = found[0]
        skill = skill or self._by_path(ident)
        if skill is not None and by_model and skill.disable_model_invocation:
            msg = (
                f"Skill {skill.name!r} is explicit-only (disable-model-invocation: true in its "
                "SKILL.md): a person or the program loads it, the model cannot. Ask the user to "
                "run it, or pick another skill."
            )
            raise SkillNotFoundError(msg)
        if skill is not None:
            return skill
        off = self._by_path(ident, self.disabled)
        if ident in self.disabled_names or off is not None:
            shown = off.name if off is not None else ident
            msg = (
                f"Skill {shown!r} is disabled (disabled_skills in workspace-tools.yaml). Run "
                f"`workspace-tools skills enable {shown}` to use it, or pick another skill."
            )
            raise SkillNotFoundError(msg)
        raise SkillNotFoundError(self._not_found(identifier, by_model=by_model))

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        skill_names: Collection[str] | None = None,
        include_references: bool = True,
    ) -> list[SkillSearchHit]:
        """BM25 search over names, descriptions, bodies and references (explicit-only left out)."""
        return self.search_index().search(
            query, top_k=top_k, skill_names=skill_names, include_references=include_references
        )

    def search_index(self) -> SkillSearchIndex:
        """The search index of these skills (built on first use, then kept)."""
        with self._lock:
            if self._index is None:
                self._index = SkillSearchIndex(self.model_skills)
            return self._index

    def _by_path(self, ident: str, among: Sequence[Skill] | None = None) -> Skill | None:
        text = ident.replace("\\", "/").rstrip("/")
        if text.endswith("/SKILL.md"):
            text = text[: -len("/SKILL.md")]
        elif text == "SKILL.md" or not text or "\x00" in text:
            return None
        path = Path(text).expanduser()
        if not path.is_absolute():
            path = self.root / path
        target = Path(os.path.normpath(path))
        real = os.path.realpath(target)
        for skill in self.skills if among is None else among:
            if skill.path is not None and (
                skill.path == target or os.path.realpath(skill.path) == real
            ):
                return skill
        return None

    def _not_found(self, identifier: str, *, by_model: bool) -> str:
        names = list(dict.fromkeys(s.name for s in self.model_skills)) if by_model else self.names()
        close = difflib.get_close_matches(identifier.strip(), names, n=3, cutoff=0.6)
        parts = [f"No skill named or located at {identifier!r}."]
        if close:
            parts.append("Did you mean: " + ", ".join(close) + "?")
        if names:
            shown = ", ".join(names[:20]) + (
                f" (and {len(names) - 20} more)" if len(names) > 20 else ""
            )
            parts.append(f"Available skills: {shown}.")
            parts.append(AGENT_HINT)
        else:
            parts.append("No skills are configured; add a skills folder to the project.")
        return " ".join(parts)


def conflict_message(name: str, skills: Sequence[Skill]) -> str:
    """Why ``name`` cannot be resolved: the same-type candidates, and what to do."""
    paths = ", ".join(repr(s.location) for s in skills)
    return (
        f"Cannot resolve skill {name!r}: {len(skills)} {skills[0].source} skills have this name, "
        f"at {paths}. Rename one or move it to a different source type; lookup by path works."
    )
