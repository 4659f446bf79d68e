"""terminal_start|read|write|wait|kill|list: background terminals the agent drives (specialized
tools, found with tool_search; the work is in ``terminals/``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from s_code.protocol.models import Args, Result
from s_code.session.session import Session
from s_code.terminals.manager import terminals_for
from s_code.tools.registry import ToolDef

MAX_ARGUMENT = 128 * 1024
"""The kernel's own limit on one argument (MAX_ARG_STRLEN)."""
Argument = Annotated[str, Field(min_length=0, max_length=MAX_ARGUMENT, pattern=r"^[^\x00]*$")]


class TerminalStartArgs(Args):
    command: list[Argument] = Field(
        min_length=1,
        max_length=4096,
        description="argv: the program, then its arguments (each without NUL, at most 128 KiB; "
        "never a credential handle: any program can read a command line, so pass it in env).",
    )
    cwd: str | None = Field(None, description="Working directory, relative to the workspace.")
    env: dict[str, str] = Field(
        default_factory=dict,
        description="More environment variables; a value may be a credential handle "
        "(${secret:keyring:service/account} or ${secret:env:NAME}).",
    )
    tty: bool = Field(False, description="Run on a pseudo-terminal (else on pipes).")


class TerminalIdArgs(Args):
    terminal_id: str = Field(min_length=1, max_length=64)


class TerminalReadArgs(TerminalIdArgs):
    cursor: int = Field(0, ge=0, description="The byte to read from (the last read's cursor).")
    max_bytes: int = Field(65536, ge=1, le=1 << 20)


class TerminalWriteArgs(TerminalIdArgs):
    text: str = Field(max_length=65536, description="Written to the terminal's input as is.")


class TerminalWaitArgs(TerminalIdArgs):
    timeout_ms: int = Field(10_000, ge=0, le=600_000)


class TerminalListArgs(Args):
    pass


class TerminalStartResult(Result):
    terminal_id: str


class TerminalReadResult(Result):
    output: str
    cursor: int
    truncated: bool
    omitted_bytes: int
    exit: dict[str, Any] | None = None


async def _start(session: Session, args: TerminalStartArgs) -> dict[str, Any]:
    return await terminals_for(session).start(
        list(args.command), args.cwd, dict(args.env), args.tty
    )


async def _read(session: Session, args: TerminalReadArgs) -> dict[str, Any]:
    return terminals_for(session).read(args.terminal_id, args.cursor, args.max_bytes)


async def _write(session: Session, args: TerminalWriteArgs) -> dict[str, Any]:
    return await terminals_for(session).write(args.terminal_id, args.text)


async def _wait(session: Session, args: TerminalWaitArgs) -> dict[str, Any]:
    return await terminals_for(session).wait(args.terminal_id, args.timeout_ms)


async def _kill(session: Session, args: TerminalIdArgs) -> dict[str, Any]:
    return await terminals_for(session).kill(args.terminal_id)


async def _list(session: Session, args: TerminalListArgs) -> dict[str, Any]:
    return {"terminals": terminals_for(session).entries()}


def _tool(
    name: str,
    args: type[Args],
    handler: Any,
    read_only: bool,
    text: str,
    result: type[Result] | None = None,
    *,
    title: str,
    destructive: bool = False,
) -> ToolDef:
    """A terminal tool: each reaches a host process with the user's own access."""
    return ToolDef(
        name=name,
        args=args,
        result=result,
        handler=handler,
        read_only=read_only,
        profile="specialized",
        description=text,
        title=title,
        destructive=destructive,
        open_world=True,
    )


TOOLS = (
    _tool(
        "terminal_start",
        TerminalStartArgs,
        _start,
        False,
        "Start a background terminal: a program that keeps running (a dev server, a watcher, a "
        "REPL) outside the sandbox, with the user's own access; the user approves every start. "
        "Returns terminal_id at once; read its output with terminal_read.",
        TerminalStartResult,
        title="Start a background terminal",
        destructive=True,
    ),
    _tool(
        "terminal_read",
        TerminalReadArgs,
        _read,
        True,
        "Read a terminal's output from a byte cursor: {output, cursor (pass it next time), "
        "truncated (more is waiting), omitted_bytes (dropped from the middle of a long output), "
        "exit ({code, signal} once it ended, else null)}.",
        TerminalReadResult,
        title="Read a terminal's output",
    ),
    _tool(
        "terminal_write",
        TerminalWriteArgs,
        _write,
        False,
        "Write text to a running terminal's input (include the newline to send a line).",
        title="Type into a terminal",
        destructive=True,
    ),
    _tool(
        "terminal_wait",
        TerminalWaitArgs,
        _wait,
        False,  # changes nothing, but waits: out of code mode's reach (no timers there)
        "Wait until a terminal's program exits, or timeout_ms passes: {exit, timed_out, cursor}.",
        title="Wait for a terminal",
    ),
    _tool(
        "terminal_kill",
        TerminalIdArgs,
        _kill,
        False,
        "End a terminal and every process it started; answers once they are all gone.",
        title="End a terminal",
        destructive=True,
    ),
    _tool(
        "terminal_list",
        TerminalListArgs,
        _list,
        True,
        "The session's terminals: id, command, cwd, state (running, exited, killed), exit, bytes.",
        title="List terminals",
    ),
)
