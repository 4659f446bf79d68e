"""docs/protocol.md describes every method and notification the server advertises: a client
author can build from it (a new method without docs fails here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from s_code.protocol import methods

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
NAMES = sorted(
    {
        *methods.CONTROL_METHODS,
        *methods.TOOL_METHODS.values(),
        *methods.NOTIFICATIONS,
        *methods.SERVER_REQUESTS,
    }
)


@pytest.mark.parametrize("name", NAMES)
def test_every_advertised_name_is_documented(name: str) -> None:
    assert f"`{name}`" in DOC or f"`{name} " in DOC, f"{name} is not described in docs/protocol.md"


def test_the_check_would_catch_an_undocumented_method() -> None:
    """Positive control: a name the docs never mention is caught by the same test."""
    assert "`s-code/not/documented`" not in DOC
