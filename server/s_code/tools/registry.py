"""The tool table: one definition per tool, whether built in or arriving at run time.

A built-in tool has pydantic models (its arguments are validated by them, its schema comes from
them); a runtime tool (an MCP server's) has only a raw JSON Schema, checked when it is added and
validated with ``jsonschema``. Both are reached the same way: ``tools/call``, ``tool_search``, and
for built-ins their typed method (named in :data:`s_code.protocol.methods.TOOL_METHODS`, the one
table of method names, so the server can advertise them before this layer is imported).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.protocol.methods import TOOL_METHODS

if TYPE_CHECKING:
    from s_code.protocol.models import Args, Result
    from s_code.session.session import Session

Handler = Callable[["Session", Any], Awaitable[Any]]
Profile = Literal["core", "specialized"]


@dataclass(frozen=True, eq=False)
class ToolDef:
    name: str
    description: str
    handler: Handler
    read_only: bool
    args: type[Args] | None = None
    """Built-in tools: the pydantic model of the arguments."""
    result: type[Result] | None = None
    schema: dict[str, Any] | None = None
    """Runtime tools: the raw JSON Schema of the arguments."""
    profile: Profile = "core"
    source: str = "builtin"
    """Where the tool comes from: ``builtin``, or ``mcp:<server>``."""
    annotations: dict[str, Any] = field(default_factory=dict)
    """Runtime tools: the hints their own server gave (``read_only``, ``destructive``...)."""
    title: str | None = None
    """A short human name (MCP ``title``)."""
    destructive: bool = False
    """It may delete or overwrite what is there (not only add): an edit, a command."""
    open_world: bool = False
    """It reaches beyond the workspace: network, or a host process with the user's access."""
    idempotent: bool = False
    """Calling it again with the same arguments changes nothing more."""
    redact_result: bool = False
    """Runtime tools: their results pass the session's redactor before the client sees them."""

    def __post_init__(self) -> None:
        if (self.args is None) == (self.schema is None):
            raise ValueError(f"tool {self.name!r}: give either a pydantic model or a JSON Schema")

    @property
    def builtin(self) -> bool:
        """Defined in this package (pydantic models), not arrived at run time."""
        return self.args is not None

    @property
    def method(self) -> str | None:
        """The typed method of a built-in tool; runtime tools have none (``tools/call`` only)."""
        return TOOL_METHODS.get(self.name) if self.builtin else None

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        if self.args is not None:
            return self.args.model_json_schema(by_alias=True)
        assert self.schema is not None
        return self.schema

    @cached_property
    def output_schema(self) -> dict[str, Any] | None:
        if self.result is None:
            return None
        return self.result.model_json_schema(by_alias=True, mode="serialization")

    @cached_property
    def argument_names(self) -> tuple[str, ...]:
        props = self.input_schema.get("properties", {})
        return tuple(props) if isinstance(props, dict) else ()

    @cached_property
    def _validator(self) -> Any:
        from jsonschema.validators import validator_for

        assert self.schema is not None
        return validator_for(self.schema)(self.schema)

    def parse(self, raw: Any) -> Any:
        """Validate raw JSON arguments; errors name the field path (``count``, ``items.2``)."""
        if self.args is not None:
            from s_code.protocol.models import parse_params

            return parse_params(self.args, raw)
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise invalid_params(f"arguments must be an object, not {type(raw).__name__}", "")
        from jsonschema.exceptions import best_match

        error = best_match(self._validator.iter_errors(raw))
        if error is not None:
            raise schema_error(error)
        return raw

    def describe(self) -> dict[str, Any]:
        """The entry of tools/list: ``name``, ``description``, ``inputSchema`` and our extras."""
        entry: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if self.output_schema is not None:
            entry["outputSchema"] = self.output_schema
        if self.method is not None:
            entry["method"] = self.method
        entry["readOnly"] = self.read_only
        entry["profile"] = self.profile
        if self.source != "builtin":
            entry["source"] = self.source
        if self.annotations:
            entry["annotations"] = self.annotations
        return entry


def schema_error(error: Any) -> SCodeError:
    """A jsonschema ``ValidationError`` as ``invalid_params`` naming the field at fault: the
    missing or unknown property for ``required`` and ``additionalProperties``."""
    path = [str(p) for p in error.absolute_path]
    message = error.message
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [k for k in error.validator_value if k not in error.instance]
        if missing:
            path.append(str(missing[0]))
            message = f"{missing[0]} is required"
    elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        if extra:
            path.append(str(extra[0]))
            message = f"unknown field {extra[0]!r}"
    field_path = ".".join(path) or "<params>"
    return invalid_params(f"{field_path}: {message}", field_path)


def check_schema(name: str, schema: Any) -> None:
    """Refuse a runtime tool whose schema is not a valid JSON Schema object schema."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    if not isinstance(schema, dict):
        raise invalid_params(f"tool {name!r}: inputSchema must be an object", "inputSchema")
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise invalid_params(
            f"tool {name!r}: inputSchema is not a valid JSON Schema: {exc.message}", "inputSchema"
        ) from None


@dataclass(eq=False)
class Registry:
    """The session's tools by name. Compared (and hashed) by identity: it is one mutable table, and
    what other layers derive from it (tool_search's index) is keyed on it and its ``version``."""

    tools: dict[str, ToolDef] = field(default_factory=dict)
    version: int = 0
    """Counts the changes made by :meth:`add` and :meth:`remove`, the only ways to change the
    table: whatever was built from an older version is stale."""
    explain_missing: Callable[[str], SCodeError | None] | None = None
    """Who can say why a tool is not here (an MCP server pending approval, say)."""

    def add(self, tool: ToolDef) -> ToolDef:
        if tool.name in self.tools:
            raise ValueError(f"tool {tool.name!r} is defined twice")
        if tool.schema is not None:
            check_schema(tool.name, tool.schema)
        self.tools[tool.name] = tool
        self.version += 1
        return tool

    def remove(self, name: str) -> ToolDef | None:
        """Drop a runtime tool (its server stopped or changed it); built-ins stay."""
        tool = self.tools.get(name)
        if tool is None or tool.builtin:
            return None
        del self.tools[name]
        self.version += 1
        return tool

    def extend(self, tools: Iterable[ToolDef]) -> Registry:
        for t in tools:
            self.add(t)
        return self

    def get(self, name: str) -> ToolDef:
        try:
            return self.tools[name]
        except KeyError:
            explained = self.explain_missing(name) if self.explain_missing is not None else None
            if explained is not None:
                raise explained from None
            raise SCodeError(
                ErrorKind.UNKNOWN_TOOL,
                f"no tool named {name!r}; s-code/tools/list and tool_search list the tools",
                name=name,
            ) from None

    def core(self) -> list[ToolDef]:
        return [t for t in self.tools.values() if t.profile == "core"]

    def __iter__(self) -> Iterator[ToolDef]:
        return iter(list(self.tools.values()))


class LazyRegistry(Registry):
    """A registry built on first use, so the server answers ``initialize`` before the tool layer
    (and pydantic) is imported."""

    def __init__(self, factory: Callable[[], Registry]) -> None:
        self._factory: Callable[[], Registry] | None = factory
        self._tools: dict[str, ToolDef] = {}
        self.version = 0
        self.explain_missing = None

    @property
    def tools(self) -> dict[str, ToolDef]:
        if self._factory is not None:
            factory, self._factory = self._factory, None
            self._tools = factory().tools
        return self._tools

    @tools.setter
    def tools(self, value: dict[str, ToolDef]) -> None:
        self._tools = value
