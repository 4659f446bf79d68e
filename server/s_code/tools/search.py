"""tool_search: keyword search over tool names, descriptions and argument names."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import Field

from s_code.protocol.models import Args, Result
from s_code.session.session import Session
from s_code.tools.registry import ToolDef

_WORD = re.compile(r"[a-z0-9]+")
NAME_WEIGHT, ARGUMENT_WEIGHT, DESCRIPTION_WEIGHT = 5, 2, 1


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower().replace("_", " ")))


def score(tool: ToolDef, terms: set[str]) -> int:
    name, args = _words(tool.name), _words(" ".join(tool.argument_names))
    desc = _words(tool.description)
    total = 0
    for term in terms:
        total += NAME_WEIGHT * any(w.startswith(term) for w in name)
        total += ARGUMENT_WEIGHT * any(w.startswith(term) for w in args)
        total += DESCRIPTION_WEIGHT * any(w.startswith(term) for w in desc)
    return total


def search(registry: Iterable[ToolDef], query: str, limit: int) -> list[ToolDef]:
    terms = _words(query)
    ranked = [(score(t, terms), t.name, t) for t in registry]
    ranked = [r for r in ranked if r[0] > 0]
    ranked.sort(key=lambda r: (-r[0], r[1]))
    return [t for _, _, t in ranked[:limit]]


class ToolSearchArgs(Args):
    query: str = Field(min_length=1, max_length=500, description="Keywords, e.g. 'git blame'.")
    limit: int = Field(5, ge=1, le=50)


class ToolSearchResult(Result):
    tools: list[dict[str, Any]] = Field(
        description="Full definitions (name, description, inputSchema, profile) of the matches."
    )


async def _tool_search(session: Session, args: ToolSearchArgs) -> ToolSearchResult:
    return ToolSearchResult(
        tools=[t.describe() for t in search(session.registry, args.query, args.limit)]
    )


TOOLS = (
    ToolDef(
        name="tool_search",
        args=ToolSearchArgs,
        result=ToolSearchResult,
        handler=_tool_search,
        read_only=True,
        description=(
            "Find tools by keyword, including specialized tools that tools/list leaves out; "
            "returns their full schemas."
        ),
    ),
)
