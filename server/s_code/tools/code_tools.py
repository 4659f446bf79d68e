"""code_mode: JavaScript that calls read-only tools and returns only what matters (the work is in
``codemode/``; this is its adapter to the one dispatch).

A child call ``tools.<name>(args)`` goes through :func:`s_code.tools.dispatch.call`, like any
other call, and only to a tool that reads: the built-in reads, search and git inspection in
:data:`READ_TOOLS`, and tools that arrived at run time (MCP tools: registered only once the user
approved their server) that declare ``readOnlyHint``. Anything else is ``tool_not_read_only``.
"""

from __future__ import annotations

import weakref
from typing import Any, Literal

from pydantic import Field

from s_code.codemode.limits import DEFAULT_TIMEOUT_MS, MAX_CODE_CHARS, MAX_TIMEOUT_MS, Limits
from s_code.codemode.runner import run
from s_code.codemode.workers import Pool
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.models import Args, Result
from s_code.session.session import Session
from s_code.tools import dispatch
from s_code.tools.registry import ToolDef

READ_TOOLS = frozenset(
    {
        "read_file",
        "list_files",
        "search_text",
        "git_status",
        "git_diff",
        "git_log",
        "git_show",
        "git_blame",
        "tool_search",
    }
)
"""Built-in tools code mode may call: each only reads (update_plan, which reads nothing but
changes the plan, is not one; nor is code_mode itself)."""


def may_call(tool: ToolDef) -> bool:
    if tool.builtin:
        return tool.name in READ_TOOLS
    return tool.read_only and tool.source.startswith("mcp:")


class CodeModeArgs(Args):
    code: str = Field(
        min_length=1,
        max_length=MAX_CODE_CHARS,
        description=(
            "The body of an async JavaScript function: `tools.<name>(args)` calls a read-only "
            "tool and returns its result; `return` the value you need; console.log adds lines."
        ),
    )
    timeout_ms: int = Field(
        DEFAULT_TIMEOUT_MS, ge=1, le=MAX_TIMEOUT_MS, description="Wall time of the whole run."
    )


class ChildCallOut(Result):
    call_id: str
    name: str
    arguments: Any
    status: Literal["ok", "error", "refused", "cancelled", "running"]
    duration_ms: int | None
    error: str | None = None


class CodeModeResult(Result):
    run_id: str
    result: Any = Field(description="What the code returned (JSON); null when nothing.")
    logs: str = Field(description="console.log lines (head and tail kept).")
    truncated: bool = Field(description="The result or the logs were cut to head and tail.")
    calls: list[ChildCallOut]
    duration_ms: int

    def to_wire(self) -> dict[str, Any]:
        wire = super().to_wire()
        wire["result"] = self.result  # null is a value here
        for call in wire["calls"]:
            call.setdefault("duration_ms", None)
        return wire


class _Host:
    def __init__(self, session: Session) -> None:
        self.session = session

    def check(self, name: str) -> None:
        tool = self.session.registry.get(name)
        if not may_call(tool):
            raise SCodeError(
                ErrorKind.TOOL_NOT_READ_ONLY,
                f"{name} is not a read-only tool: code mode calls only reads, search and git "
                "inspection (and approved MCP tools that declare readOnlyHint); call it directly",
                name=name,
            )

    async def call(self, name: str, arguments: Any) -> Any:
        return await dispatch.call(self.session, name, arguments)

    def redact(self, value: Any) -> Any:
        return self.session.redactor.redact_json(value)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.session.notify(method, params)


_POOLS: weakref.WeakKeyDictionary[Session, Pool] = weakref.WeakKeyDictionary()


def pool_of(session: Session) -> Pool:
    """The session's workers (a warm spare once code mode was used), closed with it."""
    pool = _POOLS.get(session)
    if pool is None:
        pool = _POOLS[session] = Pool()
        session.on_close.append(pool.close)
    return pool


async def _code_mode(session: Session, args: CodeModeArgs) -> CodeModeResult:
    limits = Limits(timeout_ms=args.timeout_ms)
    outcome = await run(pool_of(session), _Host(session), args.code, limits)
    return CodeModeResult(
        run_id=outcome.run_id,
        result=outcome.result,
        logs=outcome.logs,
        truncated=outcome.truncated,
        calls=[ChildCallOut.model_validate(c.to_wire()) for c in outcome.calls],
        duration_ms=outcome.duration_ms,
    )


TOOLS = (
    ToolDef(
        name="code_mode",
        title="Batch read-only tools in JavaScript",
        idempotent=True,
        args=CodeModeArgs,
        result=CodeModeResult,
        handler=_code_mode,
        read_only=True,
        profile="specialized",
        description=(
            "Run a short JavaScript program that calls read-only tools and returns only what "
            "you need, instead of many separate calls. `tools.read_file({path})`, "
            "`tools.search_text({pattern})`, `tools.list_files({})`, `tools.git_log({})`... "
            "return each tool's result object synchronously (a failed call throws an Error "
            "with `kind`). `return` a JSON value; console.log adds lines. No file system, "
            "network, timers or imports. Limits: timeout_ms (default 10 s), 64 MiB heap, "
            "200 child calls, 1 MB per result passed in, 32,000 characters of output (head "
            "and tail kept). Edits, commands and write-capable tools are refused "
            "(tool_not_read_only): call them directly."
        ),
    ),
)
