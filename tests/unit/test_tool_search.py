"""tool_search over the real registry (BM25 ranking, select:, loaded tools), and the Registry's
own rules. The ranking's parts (words, fields, the catalog measurements) are in
test_tool_ranking.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import Field

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.models import Args, Result
from s_code.redaction import Redactor
from s_code.tools import files, plan
from s_code.tools import search as search_module
from s_code.tools.builtin import default_registry
from s_code.tools.ranking import search
from s_code.tools.registry import Registry, ToolDef
from s_code.tools.search import TOOLS, ToolSearchArgs, ToolSearchResult
from tests.unit.tool_catalog import mcp_tool

BASE_NAMES = ["read_file", "list_files", "search_text", "update_plan", "tool_search"]
QUERIES = ["list", "text", "file", "files", "explanation", "cursor", "plan", "path", "zzz"]


def names(tools: list[ToolDef]) -> list[str]:
    return [t.name for t in tools]


def base_registry() -> Registry:
    """The tools whose descriptions these rankings were written against.

    Other tools join default_registry() over time; exact rankings are checked on this fixed set,
    and :func:`test_default_registry_ranks_the_base_tools_alike` ties it to default_registry().
    """
    return Registry().extend((*files.TOOLS, *plan.TOOLS, *search_module.TOOLS))


class FakeArgs(Args):
    widget_id: str = Field(description="The widget.")
    colour: str | None = None


class GadgetArgs(Args):
    gadget_count: int


class FakeResult(Result):
    ok: bool


async def _fake_handler(session: Any, args: Any) -> FakeResult:
    return FakeResult(ok=True)


def fake(
    name: str,
    description: str = "A fake tool.",
    profile: str = "core",
    args: type[Args] = FakeArgs,
) -> ToolDef:
    return ToolDef(
        name=name,
        description=description,
        args=args,
        result=FakeResult,
        handler=_fake_handler,
        read_only=True,
        profile=profile,  # type: ignore[arg-type]
    )


def fake_session(registry: Registry) -> Any:
    return SimpleNamespace(registry=registry, loaded_tools=set())


async def tool_search(session: Any, query: str, limit: int = 5) -> list[str]:
    [tool] = TOOLS
    result = await tool.handler(session, ToolSearchArgs(query=query, limit=limit))
    assert isinstance(result, ToolSearchResult)
    return [t["name"] for t in result.tools]


# -- the default registry -----------------------------------------------------------------------


def test_default_registry_tools() -> None:
    assert names(list(base_registry())) == BASE_NAMES
    reg = default_registry()
    assert [n for n in names(list(reg)) if n in BASE_NAMES] == BASE_NAMES
    assert set(BASE_NAMES) <= set(names(reg.core()))


@pytest.mark.parametrize("query", QUERIES)
def test_default_registry_finds_the_base_tools(query: str) -> None:
    """More tools change BM25's statistics, so the order may differ: the same tools match."""
    full = {n for n in names(search(default_registry(), query, 50)) if n in BASE_NAMES}
    assert full == set(names(search(base_registry(), query, 50)))


def test_name_hits_outrank_description_hits() -> None:
    reg = base_registry()
    # list_files has "list" in its name; tool_search and update_plan only in their descriptions.
    assert names(search(reg, "list", 10))[0] == "list_files"
    assert set(names(search(reg, "list", 10))) == {"list_files", "tool_search", "update_plan"}
    # "text": search_text's name beats read_file's description ("unsaved text").
    assert names(search(reg, "text", 10)) == ["search_text", "read_file"]


def test_fields_rank_name_then_parameters_then_description() -> None:
    reg = Registry().extend(
        [
            fake("alpha", description="Mentions the gadget in passing."),
            fake("gadget_maker", description="Builds things."),
            fake("beta", description="Nothing relevant.", args=GadgetArgs),
        ]
    )
    assert names(search(reg, "gadget", 10)) == ["gadget_maker", "beta", "alpha"]


def test_argument_names_are_searched() -> None:
    reg = base_registry()
    # "explanation" appears only as an argument of update_plan.
    assert names(search(reg, "explanation", 5)) == ["update_plan"]
    # "cursor": list_files' argument (and its description's "next_cursor").
    assert names(search(reg, "cursor", 5)) == ["list_files"]
    assert names(search(reg, "globs", 5)) == ["search_text"]
    assert names(search(reg, "recursive", 5)) == ["list_files"]


def test_whole_words_only() -> None:
    """BM25 matches words (and their singular or plural), not prefixes or parts of words."""
    reg = base_registry()
    assert names(search(reg, "search", 5)) == ["search_text", "tool_search"]
    assert search(reg, "sear", 5) == []
    assert search(reg, "earch", 5) == []
    assert names(search(reg, "files", 5))[0] == "list_files"
    assert "read_file" in names(search(reg, "files", 5))


def test_query_is_case_insensitive_and_multi_term() -> None:
    reg = base_registry()
    assert names(search(reg, "SEARCH", 5)) == ["search_text", "tool_search"]
    # Both words count: tool_search has "tool" and "search" in its name.
    assert names(search(reg, "tool search", 5)) == ["tool_search", "search_text"]


def test_more_query_words_matched_ranks_higher() -> None:
    """A tool matching both words outranks one that matches a single word more strongly."""
    reg = Registry().extend(
        [
            fake("invoice", description="An invoice tool."),
            fake("store_records", description="Archive an invoice for the auditors."),
            fake("unrelated", description="Nothing to see."),
        ]
    )
    assert names(search(reg, "invoice", 5)) == ["invoice", "store_records"]
    assert names(search(reg, "archive invoice", 5)) == ["store_records", "invoice"]
    assert names(search(reg, "invoice archive", 5)) == ["store_records", "invoice"]


def test_parameter_descriptions_break_ties_but_do_not_lead() -> None:
    """tool_search's own parameter description says "e.g. 'git blame'": it is found for "git
    blame", but after every tool that has one of the words in its name, arguments or text."""
    found = names(search(default_registry(), "git blame", 20))
    assert found[0] == "git_blame"
    assert found[-1] == "tool_search"
    assert {n for n in found if n.startswith("git_")} == {
        "git_blame",
        "git_show",
        "git_diff",
        "git_log",
        "git_status",
    }


def test_limit_is_respected() -> None:
    reg = base_registry()
    assert names(search(reg, "file", 10)) == ["read_file", "list_files", "search_text"]
    assert names(search(reg, "file", 2)) == ["read_file", "list_files"]
    assert names(search(reg, "file", 1)) == ["read_file"]


def test_no_hits_is_empty() -> None:
    reg = base_registry()
    assert search(reg, "zzzqqq", 5) == []
    assert search(reg, "   ", 5) == []
    assert search(reg, "!!!", 5) == []
    assert search(reg, "the of and", 5) == []  # function words only
    assert search(Registry(), "file", 5) == []


def test_results_carry_full_schemas() -> None:
    reg = base_registry()
    [tool] = search(reg, "explanation", 1)
    described = tool.describe()
    assert set(described) == {
        "name",
        "description",
        "inputSchema",
        "outputSchema",
        "method",
        "readOnly",
        "profile",
    }
    assert described["name"] == "update_plan"
    assert described["method"] == "s-code/updatePlan"
    assert described["description"] == tool.description
    assert described["inputSchema"] == tool.args.model_json_schema(by_alias=True)
    assert set(described["inputSchema"]["properties"]) == {"plan", "explanation"}
    assert described["outputSchema"] == tool.result.model_json_schema(
        by_alias=True, mode="serialization"
    )
    assert described["readOnly"] is tool.read_only
    assert described["profile"] == "core"


async def test_tool_search_handler_returns_described_tools() -> None:
    reg = Registry().extend(
        [
            fake("git_blame", description="Who changed each line.", profile="specialized"),
            fake("git_show", description="Show a commit.", profile="specialized"),
            fake("other"),
        ]
    )
    [tool_search_def] = TOOLS
    session = fake_session(reg)
    result = await tool_search_def.handler(session, ToolSearchArgs(query="git blame", limit=5))
    assert isinstance(result, ToolSearchResult)
    assert [t["name"] for t in result.tools] == ["git_blame", "git_show"]
    assert result.tools[0] == reg.get("git_blame").describe()
    assert result.tools[0]["profile"] == "specialized"
    assert result.tools[0]["inputSchema"]["properties"]["widget_id"]["description"] == "The widget."
    assert session.loaded_tools == {"git_blame", "git_show"}


# -- select: ------------------------------------------------------------------------------------


async def test_select_loads_exact_names_in_order() -> None:
    reg = base_registry()
    session = fake_session(reg)
    assert await tool_search(session, "select:update_plan") == ["update_plan"]
    # several, spaces allowed, duplicates once, the limit is for keyword searches only
    found = await tool_search(session, " select: read_file , list_files,read_file", limit=1)
    assert found == ["read_file", "list_files"]
    assert session.loaded_tools == {"update_plan", "read_file", "list_files"}


async def test_select_unknown_name_is_unknown_tool_and_loads_nothing() -> None:
    session = fake_session(base_registry())
    with pytest.raises(SCodeError) as exc:
        await tool_search(session, "select:read_file,no_such_tool")
    assert exc.value.kind is ErrorKind.UNKNOWN_TOOL
    assert exc.value.data == {"name": "no_such_tool"}
    assert session.loaded_tools == set()


@pytest.mark.parametrize("query", ["select:", "select: , ,"])
async def test_select_without_names_is_invalid(query: str) -> None:
    with pytest.raises(SCodeError) as exc:
        await tool_search(fake_session(base_registry()), query)
    assert exc.value.kind is ErrorKind.INVALID_PARAMS
    assert exc.value.data["field"] == "query"


async def test_select_is_not_a_keyword() -> None:
    """``select`` without the colon, or inside a query, is an ordinary word."""
    reg = Registry().extend([fake("select_rows", description="Pick rows.")])
    session = fake_session(reg)
    assert await tool_search(session, "select rows") == ["select_rows"]
    assert await tool_search(session, "rows select:x") == ["select_rows"]


def test_tool_search_args_bounds() -> None:
    from pydantic import ValidationError

    assert ToolSearchArgs(query="x").limit == 5
    for bad in ({"query": ""}, {"query": "x", "limit": 0}, {"query": "x", "limit": 51}):
        with pytest.raises(ValidationError):
            ToolSearchArgs.model_validate(bad)


# -- Registry -----------------------------------------------------------------------------------


def test_duplicate_name_is_refused() -> None:
    reg = Registry().extend([fake("one", "first")])
    with pytest.raises(ValueError, match="'one' is defined twice"):
        reg.add(fake("one", "second"))
    assert names(list(reg)) == ["one"]
    assert reg.get("one").description == "first"


def test_methods_come_from_the_one_table() -> None:
    """A built-in tool's typed method is the table's (protocol/methods.py), never its own copy:
    a tool the table does not name has none, and is reached through tools/call only."""
    reg = default_registry()
    assert reg.get("read_file").method == "s-code/readFile"
    assert fake("not_in_the_table").method is None
    assert "method" not in fake("not_in_the_table").describe()


def test_default_tools_cannot_be_registered_twice() -> None:
    reg = default_registry()
    with pytest.raises(ValueError):
        reg.add(reg.get("read_file"))


def test_get_unknown_tool() -> None:
    reg = default_registry()
    assert reg.get("read_file").name == "read_file"
    with pytest.raises(SCodeError) as exc:
        reg.get("no_such_tool")
    assert exc.value.kind is ErrorKind.UNKNOWN_TOOL
    assert exc.value.data == {"name": "no_such_tool"}
    assert exc.value.to_data() == {"kind": "unknown_tool", "name": "no_such_tool"}


def test_core_excludes_specialized_tools() -> None:
    reg = Registry().extend(
        [
            fake("first"),
            fake("hidden_power", profile="specialized", description="A specialized widget."),
            fake("second"),
        ]
    )
    assert names(reg.core()) == ["first", "second"]
    assert names(list(reg)) == ["first", "hidden_power", "second"]
    # tool_search still finds the specialized one.
    assert names(search(reg, "hidden", 5)) == ["hidden_power"]
    assert names(search(reg, "specialized", 5)) == ["hidden_power"]


def test_default_registry_is_fresh_each_time() -> None:
    a, b = default_registry(), default_registry()
    a.add(fake("extra"))
    assert "extra" not in b.tools


# -- runtime tools (a raw JSON Schema, as an MCP server gives) ----------------------------------


async def _echo(session: Any, args: Any) -> dict[str, Any]:
    return dict(args)


def runtime(name: str, schema: Any) -> ToolDef:
    return ToolDef(
        name=name, description="A runtime tool.", handler=_echo, read_only=True, schema=schema
    )


def test_a_runtime_tool_with_an_invalid_schema_is_refused() -> None:
    reg = Registry()
    with pytest.raises(SCodeError) as exc:
        reg.add(runtime("bad", {"type": "object", "properties": {"n": {"type": "nmber"}}}))
    assert exc.value.kind is ErrorKind.INVALID_PARAMS
    assert exc.value.data["field"] == "inputSchema"
    assert list(reg) == []
    with pytest.raises(SCodeError):
        reg.add(runtime("not_a_dict", ["type", "object"]))


def test_a_tool_has_a_model_or_a_schema_never_both() -> None:
    with pytest.raises(ValueError, match="either"):
        ToolDef(name="x", description="", handler=_echo, read_only=True)
    with pytest.raises(ValueError, match="either"):
        ToolDef(name="x", description="", handler=_echo, read_only=True, args=FakeArgs, schema={})


def test_runtime_tools_are_searched_by_their_schema_and_removed() -> None:
    reg = Registry().extend([*files.TOOLS])
    reg.add(
        runtime(
            "mcp__w__stock",
            {"type": "object", "properties": {"warehouse_code": {"type": "string"}}},
        )
    )
    assert names(search(reg, "warehouse", 5)) == ["mcp__w__stock"]
    assert reg.remove("read_file") is None  # built-ins stay
    assert reg.remove("mcp__w__stock") is not None
    assert search(reg, "warehouse", 5) == []


def test_version_counts_changes() -> None:
    reg = Registry()
    assert reg.version == 0
    reg.extend([fake("one"), fake("two")])
    assert reg.version == 2
    reg.add(runtime("mcp__s__three", {"type": "object"}))
    assert reg.version == 3
    assert reg.remove("one") is None  # a built-in: nothing changes
    assert reg.remove("missing") is None
    assert reg.version == 3
    assert reg.remove("mcp__s__three") is not None
    assert reg.version == 4
    with pytest.raises(ValueError):
        reg.add(fake("two"))
    assert reg.version == 4


# -- loaded tools in tools/list -----------------------------------------------------------------


def test_tools_list_shows_core_then_loaded_tools_still_registered() -> None:
    from s_code.tools.catalog import tools_list

    reg = Registry().extend(
        [fake("first"), fake("hidden_power", profile="specialized"), fake("second")]
    )
    reg.add(mcp_tool("s", "late", "A runtime tool.", {}))
    session = SimpleNamespace(
        registry=reg, loaded_tools=set(), edit_format=None, redactor=Redactor()
    )
    assert [t["name"] for t in tools_list(session)["tools"]] == ["first", "second"]
    session.loaded_tools |= {"mcp__s__late", "hidden_power", "first", "never_registered"}
    listed = tools_list(session)["tools"]
    assert [t["name"] for t in listed] == ["first", "second", "hidden_power", "mcp__s__late"]
    assert listed[3] == reg.get("mcp__s__late").describe()
    reg.remove("mcp__s__late")
    assert [t["name"] for t in tools_list(session)["tools"]] == ["first", "second", "hidden_power"]
    reg.add(mcp_tool("s", "late", "A runtime tool.", {}))  # its server came back
    assert [t["name"] for t in tools_list(session)["tools"]][-1] == "mcp__s__late"


def test_tools_list_hides_a_value_learned_after_the_tool_was_added() -> None:
    from s_code.tools.catalog import tools_list

    value = "late-known-4f1e9a7c"
    reg = Registry().extend([fake("first")])
    reg.add(mcp_tool("s", "late", f"Signs in with {value}.", {"type": "object"}))
    session = SimpleNamespace(
        registry=reg, loaded_tools={"mcp__s__late"}, edit_format=None, redactor=Redactor()
    )
    assert value in str(tools_list(session))  # not known yet: shown as the server said it
    session.redactor.add_known([value])
    listed = tools_list(session)
    assert value not in str(listed) and "Signs in with [REDACTED]." in str(listed)
