"""tool_search: find tools by keywords (BM25, see :mod:`s_code.tools.ranking`), or load them by
exact name with ``select:<name>[,<name>...]``. Whatever it returns stays loaded for the session:
``s-code/tools/list`` shows it beside the core profile (:func:`s_code.tools.catalog.tools_list`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from s_code.approvals.caller import current
from s_code.protocol.errors import invalid_params
from s_code.protocol.models import Args, Result
from s_code.session.session import Session
from s_code.tools import ranking
from s_code.tools.registry import Registry, ToolDef

SELECT = "select:"


def select(registry: Registry, query: str) -> list[ToolDef]:
    """The tools named by ``select:a,b`` in that order; an unknown name is ``unknown_tool``."""
    names = dict.fromkeys(n.strip() for n in query.strip()[len(SELECT) :].split(","))
    names.pop("", None)
    if not names:
        raise invalid_params("select: names no tool; give select:<name>[,<name>...]", "query")
    return [registry.get(name) for name in names]


async def current_index(registry: Registry) -> ranking.ToolIndex:
    """The index of ``registry``'s current version, built in a thread when stale (the first
    build also imports bm25s and numpy) so that the server keeps answering meanwhile."""
    index = ranking.fresh(registry)
    if index is None:
        tools, version = ranking.snapshot(registry)
        built = await asyncio.to_thread(ranking.ToolIndex.build, tools, version)
        index = ranking.remember(registry, built)
    return index


class ToolSearchArgs(Args):
    query: str = Field(
        min_length=1,
        max_length=500,
        description=(
            "Keywords, e.g. 'git blame'; or exact tool names after 'select:', comma-separated "
            "(select:git_show,git_blame)."
        ),
    )
    limit: int = Field(5, ge=1, le=50, description="Most tools a keyword search returns.")


class ToolSearchResult(Result):
    tools: list[dict[str, Any]] = Field(
        description="Full definitions (name, description, inputSchema, profile) of the matches."
    )


async def _tool_search(session: Session, args: ToolSearchArgs) -> ToolSearchResult:
    registry = session.registry
    if not isinstance(registry, Registry):
        raise TypeError("tool_search needs the tool layer's Registry")
    if args.query.lstrip().startswith(SELECT):
        found = select(registry, args.query)
    else:
        found = (await current_index(registry)).search(args.query, args.limit)
    if current() is None:  # an attached agent keeps the tools it loaded on its own list
        session.loaded_tools.update(t.name for t in found)
    return ToolSearchResult(tools=[t.describe() for t in found])


TOOLS = (
    ToolDef(
        name="tool_search",
        title="Find more tools",
        idempotent=True,
        args=ToolSearchArgs,
        result=ToolSearchResult,
        handler=_tool_search,
        read_only=True,
        description=(
            "Find tools by keywords (names, descriptions, parameters), including specialized "
            "tools that tools/list leaves out; returns their full schemas, and the tools found "
            "stay available for the session. 'select:name1,name2' loads tools by exact name."
        ),
    ),
)
