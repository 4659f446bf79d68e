"""The registry of every tool this build of s-code serves."""

from __future__ import annotations

from s_code.tools import (
    code_tools,
    command_tools,
    edit_tools,
    files,
    git_tools,
    plan,
    search,
    terminal_tools,
)
from s_code.tools.registry import Registry


def default_registry() -> Registry:
    return Registry().extend(
        (
            *files.TOOLS,
            *edit_tools.TOOLS,
            *plan.TOOLS,
            *search.TOOLS,
            *git_tools.TOOLS,
            *command_tools.TOOLS,
            *code_tools.TOOLS,
            *terminal_tools.TOOLS,
        )
    )
