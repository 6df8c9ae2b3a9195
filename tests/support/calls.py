"""Record the calls of a patched function while it keeps working (tests count work done)."""

from __future__ import annotations

from typing import Any

import pytest

__all__ = ["record_first_arguments"]


def record_first_arguments(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[Any]:
    """Patch ``owner.name`` so each call appends its first argument to the returned list.

    The real function still runs and its result is returned: only what was asked is recorded.
    """
    recorded: list[Any] = []
    real = getattr(owner, name)

    def recording(value: Any, *args: Any, **kwargs: Any) -> Any:
        recorded.append(value)
        return real(value, *args, **kwargs)

    monkeypatch.setattr(owner, name, recording)
    return recorded
