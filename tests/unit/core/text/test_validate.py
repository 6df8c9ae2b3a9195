"""check_unicode: a lone surrogate is refused wherever it is; any other text passes."""

from __future__ import annotations

import pytest

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.text.validate import check_unicode


@pytest.mark.parametrize("text", ["", "plain ascii", "café ± β – ’", "emoji 😀 whole", "\x00\x7f"])
def test_text_without_a_lone_surrogate_passes(text: str) -> None:
    check_unicode(text, what="The text")


@pytest.mark.parametrize(
    ("text", "position", "code"),
    [("\ud83d", 0, "d83d"), ("ascii then \udc00", 11, "dc00"), ("é\ud800é", 1, "d800")],
)
def test_a_lone_surrogate_is_refused_with_its_position(text: str, position: int, code: str) -> None:
    with pytest.raises(
        InvalidInputError, match=rf"lone surrogate \\u{code} at position {position}"
    ):
        check_unicode(text, what="The text")
