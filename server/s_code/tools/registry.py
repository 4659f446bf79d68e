"""One definition per tool: tools/list, tools/call, the typed methods and schemas come from it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from s_code.protocol.errors import ErrorKind, SCodeError

if TYPE_CHECKING:
    from s_code.protocol.models import Args, Result
    from s_code.tools.session import Session

Handler = Callable[["Session", Any], Awaitable["Result"]]
Profile = Literal["core", "specialized"]


@dataclass(frozen=True, eq=False)
class ToolDef:
    name: str
    method: str
    description: str
    args: type[Args]
    result: type[Result]
    handler: Handler
    read_only: bool
    profile: Profile = "core"

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        return self.args.model_json_schema(by_alias=True)

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        return self.result.model_json_schema(by_alias=True, mode="serialization")

    @cached_property
    def argument_names(self) -> tuple[str, ...]:
        return tuple(self.input_schema.get("properties", {}))

    def describe(self) -> dict[str, Any]:
        """The entry of tools/list: ``name``, ``description``, ``inputSchema`` and our extras."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
            "method": self.method,
            "readOnly": self.read_only,
            "profile": self.profile,
        }


@dataclass
class Registry:
    tools: dict[str, ToolDef] = field(default_factory=dict)

    def add(self, tool: ToolDef) -> ToolDef:
        if tool.name in self.tools:
            raise ValueError(f"tool {tool.name!r} is defined twice")
        if any(t.method == tool.method for t in self.tools.values()):
            raise ValueError(f"method {tool.method!r} is bound twice")
        self.tools[tool.name] = tool
        return tool

    def extend(self, tools: Iterable[ToolDef]) -> Registry:
        for t in tools:
            self.add(t)
        return self

    def get(self, name: str) -> ToolDef:
        try:
            return self.tools[name]
        except KeyError:
            raise SCodeError(
                ErrorKind.UNKNOWN_TOOL,
                f"no tool named {name!r}; s-code/tools/list and tool_search list the tools",
                name=name,
            ) from None

    def core(self) -> list[ToolDef]:
        return [t for t in self.tools.values() if t.profile == "core"]

    def __iter__(self) -> Iterator[ToolDef]:
        return iter(self.tools.values())


class LazyRegistry(Registry):
    """A registry built on first use, so the server answers ``initialize`` before the tool layer
    (and pydantic) is imported."""

    def __init__(self, factory: Callable[[], Registry]) -> None:
        self._factory: Callable[[], Registry] | None = factory
        self._tools: dict[str, ToolDef] = {}

    @property
    def tools(self) -> dict[str, ToolDef]:
        if self._factory is not None:
            factory, self._factory = self._factory, None
            self._tools = factory().tools
        return self._tools

    @tools.setter
    def tools(self, value: dict[str, ToolDef]) -> None:
        self._tools = value
