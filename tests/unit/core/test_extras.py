"""The one table of extras: it matches pyproject.toml, and every missing-extra error comes from it."""

from __future__ import annotations

import re

import pytest
import tomllib

from tests.support.paths import REPO
from workspace_tools.core import extras
from workspace_tools.core.distributed import RayNotInstalledError, require_ray
from workspace_tools.core.embedding.openvino_model import require_openvino
from workspace_tools.core.errors import MissingDependencyError
from workspace_tools.core.extras import EXTRAS, install_hint, missing_packages, require_extra

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
DECLARED = PYPROJECT["project"]["optional-dependencies"]
BROUGHT_ALONG = {"pyarrow"}
"""Distributions an extra brings without naming them (pyarrow comes with ``ray[data]``)."""


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_every_extra_of_the_table_is_declared_with_its_packages() -> None:
    for name, extra in EXTRAS.items():
        assert name in DECLARED, name
        listed = _names(DECLARED[name])
        for dist in [*extra.packages.values(), *extra.more.values()]:
            assert dist.lower() in listed | BROUGHT_ALONG, (name, dist)


@pytest.mark.parametrize("name", sorted(EXTRAS))
def test_the_install_hint_names_the_extra(name: str) -> None:
    assert install_hint(name) == f'pip install "workspace-tools[{name}]"'


def test_a_missing_package_is_named_with_the_extra_and_the_way_round_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(extras, "_installed", lambda module: module != "pymilvus")
    assert missing_packages("milvus") == ["pymilvus"]
    with pytest.raises(MissingDependencyError) as caught:
        require_extra("milvus", purpose="the Milvus search backend")
    assert str(caught.value) == (
        "The Milvus search backend needs pymilvus, which is not installed. Install the milvus "
        "extra: pip install \"workspace-tools[milvus]\" (or use backend='embedded')."
    )


def test_named_modules_map_to_their_distributions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "_installed", lambda module: False)
    assert missing_packages("documents", "pdfminer.high_level", "docx") == [
        "pdfminer.six",
        "python-docx",
    ]
    assert missing_packages("vector", "faiss", "nncf") == ["faiss-cpu", "nncf"]


def test_the_features_raise_through_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "_installed", lambda module: False)
    with pytest.raises(RayNotInstalledError, match=r"Install the ray extra: pip install"):
        require_ray()
    with pytest.raises(MissingDependencyError, match=r"Install the vector extra: pip install"):
        require_openvino()
    with pytest.raises(MissingDependencyError, match=r"Install the mcp extra: pip install"):
        extras.require_mcp()
    with pytest.raises(MissingDependencyError, match=r"Vector search needs faiss-cpu, which is"):
        extras.require_vector("vector search", "faiss")


def test_installed_packages_raise_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "_installed", lambda module: True)
    for name in EXTRAS:
        require_extra(name, purpose="anything")
