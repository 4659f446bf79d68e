"""tool_search's ranking (s_code/tools/ranking.py): words, fields, the index cache, and the
choices measured on a catalog of realistic MCP tools (tests/unit/tool_catalog.py)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from s_code.tools import ranking
from s_code.tools.builtin import default_registry
from s_code.tools.ranking import ToolIndex, fields_of, forms, stem, tokens, words
from s_code.tools.registry import Registry
from s_code.tools.search import current_index
from tests.unit.tool_catalog import CATALOG, QUERIES, catalog_registry, mcp_tool

# -- words --------------------------------------------------------------------------------------


def test_words_split_case_and_punctuation() -> None:
    assert words("read_file listFiles getHTTPResponse base64Encode my-server") == [
        "read",
        "file",
        "list",
        "files",
        "get",
        "http",
        "response",
        "base64",
        "encode",
        "my",
        "server",
    ]
    assert words("Find the tools, e.g. 'git blame'!") == ["find", "tools", "e", "g", "git", "blame"]
    assert words("Übersetze café") == ["übersetze", "café"]
    assert words("") == [] and words("!!! --- __") == []


@pytest.mark.parametrize(
    ("word", "singular"),
    [
        ("files", "file"),
        ("entries", "entry"),
        ("repositories", "repository"),
        ("branches", "branch"),
        ("boxes", "box"),
        ("addresses", "address"),
        ("messages", "message"),
        ("commits", "commit"),
        ("status", "status"),
        ("class", "class"),
        ("analysis", "analysis"),
        ("has", "has"),
        ("logs", "log"),
        ("file", "file"),
    ],
)
def test_stem_folds_plurals(word: str, singular: str) -> None:
    assert stem(word) == singular


def test_words_are_indexed_as_written_and_as_singular() -> None:
    assert forms("files") == ("files", "file")
    assert forms("file") == ("file",)
    assert tokens("List files") == ["list", "files", "file"]


def test_fields_of_an_mcp_tool() -> None:
    tool = mcp_tool(
        "git-hub", "create_pullRequest", "Open one.", {"repo": "Repository name", "draft": ""}
    )
    assert fields_of(tool) == {
        "name": "git-hub__create_pullRequest",
        "parameters": "repo draft",
        "description": "Open one.",
        "parameter_text": "Repository name ",
    }
    assert words(fields_of(tool)["name"]) == ["git", "hub", "create", "pull", "request"]


# -- the catalog --------------------------------------------------------------------------------


def top_ranks(index: ToolIndex) -> list[int | None]:
    """Each catalog query's rank of the tool it wants (1-based; None: not found)."""
    ranks = []
    for query, wanted in QUERIES:
        found = [t.name for t in index.search(query, 50)]
        ranks.append(found.index(wanted) + 1 if wanted in found else None)
    return ranks


def fresh_index() -> ToolIndex:
    reg = catalog_registry()
    return ToolIndex.build(list(reg), reg.version)


def test_catalog_queries_find_their_tool() -> None:
    """57 of 60 first, the rest second or (no word in common: "restaurants nearby") not found."""
    ranks = top_ranks(fresh_index())
    assert len(ranks) == len(QUERIES) == 60
    assert ranks.count(1) >= 57, [q for (q, _), r in zip(QUERIES, ranks, strict=True) if r != 1]
    mrr = sum(1 / r for r in ranks if r) / len(ranks)
    assert mrr >= 0.96


def test_indexing_singulars_beside_the_words_helps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stemmer earns its place: without it, or with singulars alone, fewer queries find
    their tool first (a plural in a name is information: "slack channels" -> list_channels)."""
    both = top_ranks(fresh_index()).count(1)
    monkeypatch.setattr(ranking, "forms", lambda word: (word,))
    unstemmed = top_ranks(fresh_index()).count(1)
    monkeypatch.setattr(ranking, "forms", lambda word: (stem(word),))
    singular_only = top_ranks(fresh_index()).count(1)
    assert both > singular_only > unstemmed


def test_servers_tell_same_named_tools_apart() -> None:
    index = fresh_index()
    for server in ("github", "jira", "linear"):
        [first, *_] = index.search(f"create {server} issue", 5)
        assert first.name == f"mcp__{server}__create_issue"


def test_catalog_has_no_duplicate_tools() -> None:
    assert len({(server, tool) for server, tool, *_ in CATALOG}) == len(CATALOG)


# -- the index, once per registry version -------------------------------------------------------


def counting_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    built: list[int] = []
    real = ToolIndex.build.__func__  # type: ignore[attr-defined]

    def build(cls: Any, tools: Any, version: int) -> ToolIndex:
        built.append(version)
        return real(cls, tools, version)  # type: ignore[no-any-return]

    monkeypatch.setattr(ToolIndex, "build", classmethod(build))
    return built


def test_index_is_built_once_per_version(monkeypatch: pytest.MonkeyPatch) -> None:
    built = counting_builds(monkeypatch)
    reg = default_registry()
    first = ranking.index_for(reg)
    assert ranking.index_for(reg) is first
    assert ranking.search(reg, "git blame", 1)[0].name == "git_blame"
    assert built == [reg.version]

    reg.add(mcp_tool("w", "stock", "Count stock.", {"warehouse_code": "The warehouse"}))
    assert [t.name for t in ranking.search(reg, "warehouse", 5)] == ["mcp__w__stock"]
    assert ranking.search(reg, "warehouse stock", 5)[0].name == "mcp__w__stock"
    assert built == [reg.version - 1, reg.version]

    assert reg.remove("read_file") is None  # no change, no rebuild
    ranking.search(reg, "file", 5)
    assert len(built) == 2
    reg.remove("mcp__w__stock")
    assert ranking.search(reg, "warehouse", 5) == []
    assert len(built) == 3


def test_indexes_are_per_registry() -> None:
    a, b = default_registry(), default_registry()
    b.add(mcp_tool("w", "stock", "Count stock.", {}))
    assert ranking.search(a, "stock", 5) == []
    assert [t.name for t in ranking.search(b, "stock", 5)] == ["mcp__w__stock"]
    assert ranking.index_for(a) is not ranking.index_for(b)


def test_an_index_built_while_the_registry_changed_is_not_kept() -> None:
    reg = default_registry()
    tools, version = ranking.snapshot(reg)
    reg.add(mcp_tool("w", "stock", "Count stock.", {}))
    stale = ranking.remember(reg, ToolIndex.build(tools, version))
    assert ranking.fresh(reg) is None
    assert stale.search("stock", 5) == []
    assert [t.name for t in ranking.search(reg, "stock", 5)] == ["mcp__w__stock"]


async def test_the_server_builds_in_a_thread_once(monkeypatch: pytest.MonkeyPatch) -> None:
    built = counting_builds(monkeypatch)
    reg = default_registry()
    first = await current_index(reg)
    assert await current_index(reg) is first
    assert ranking.index_for(reg) is first
    reg.add(mcp_tool("w", "stock", "Count stock.", {}))
    assert (await current_index(reg)) is not first
    assert built == [reg.version - 1, reg.version]


def test_empty_fields_and_registries() -> None:
    reg = Registry().extend([mcp_tool("s", "ping", "", {})])  # no description, no parameters
    assert [t.name for t in ranking.search(reg, "ping", 5)] == ["mcp__s__ping"]
    assert ranking.search(Registry(), "ping", 5) == []


def test_bm25s_logs_at_the_configured_level() -> None:
    ranking.index_for(default_registry())
    assert logging.getLogger("bm25s").level == logging.NOTSET
