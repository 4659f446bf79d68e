"""run_command: a program in the OS sandbox, approved by the gate (the work is in ``commands/``)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from pydantic import Field, field_validator

from s_code.approvals.caller import current
from s_code.commands.projection import check_argv
from s_code.commands.run import approved, execute
from s_code.edits.unsaved import UNSAVED_DESCRIPTION, save_before_disk_read
from s_code.protocol import methods
from s_code.protocol.models import Args, Result
from s_code.session.session import Session
from s_code.tools.registry import ToolDef


class RunCommandArgs(Args):
    command: list[str] = Field(
        min_length=1, max_length=4096, description="argv: the program, then its arguments."
    )
    cwd: str | None = Field(None, description="Working directory, relative to the workspace.")
    timeout_ms: int = Field(120_000, ge=1, le=3_600_000, description="Killed after this long.")
    network: bool = Field(False, description="Ask for network access (always asks the user).")

    @field_validator("command")
    @classmethod
    def _argv(cls, value: list[str]) -> list[str]:
        check_argv(value)
        return value


class RunCommandResult(Result):
    command_id: str
    exit_code: int | None
    output: str
    truncated: bool
    timed_out: bool
    duration_ms: int
    argv: list[str]
    sandbox: dict[str, Any]
    protected_changed: list[str] = Field(default_factory=list)
    unsaved_buffers: list[str] | None = Field(
        None, description=UNSAVED_DESCRIPTION.format(reader="the command")
    )

    def to_wire(self) -> dict[str, Any]:
        wire = super().to_wire()
        wire.setdefault("exit_code", None)  # null after a timeout: always present
        return wire


async def _run_command(session: Session, args: RunCommandArgs) -> RunCommandResult:
    proj, approval = await approved(session, list(args.command), args.cwd, args.network)
    command_id = "c-" + uuid.uuid4().hex[:12]
    shown = approval.card.details_wire

    caller = current()

    def on_output(stream: str, text: str) -> None:
        params = {"commandId": command_id, "stream": stream, "text": text}
        session.notify(methods.COMMAND_OUTPUT, params)
        if caller is not None:  # an attached agent asked: its own stream too
            caller.notify(methods.COMMAND_OUTPUT, params)

    unsaved = await save_before_disk_read(session)
    status = {"commandId": command_id, "argv": shown["argv"], "cwd": shown.get("cwd", ".")}
    session.notify(methods.COMMAND_STATUS, {**status, "state": "running"})
    try:
        outcome, changed = await execute(session, proj, args.timeout_ms / 1000, on_output)
    except BaseException as exc:
        session.notify(methods.COMMAND_STATUS, {**status, "state": "failed"})
        await asyncio.to_thread(approval.ran, {"argv": shown["argv"], "error": type(exc).__name__})
        raise
    session.notify(
        methods.COMMAND_STATUS,
        {
            **status,
            "state": "exited",
            "exitCode": outcome.exit_code,
            "timedOut": outcome.timed_out,
            "durationMs": outcome.duration_ms,
        },
    )
    await asyncio.to_thread(
        approval.ran,
        {
            "argv": shown["argv"],
            "exit_code": outcome.exit_code,
            "timed_out": outcome.timed_out,
            "duration_ms": outcome.duration_ms,
            "protected_changed": changed,
        },
    )
    return RunCommandResult(
        command_id=command_id,
        exit_code=outcome.exit_code,
        output=outcome.output,
        truncated=outcome.truncated,
        timed_out=outcome.timed_out,
        duration_ms=outcome.duration_ms,
        argv=shown["argv"],
        sandbox=shown["sandbox"],
        protected_changed=changed,
        unsaved_buffers=unsaved,
    )


TOOLS = (
    ToolDef(
        name="run_command",
        title="Run a sandboxed command",
        destructive=True,
        open_world=True,
        args=RunCommandArgs,
        result=RunCommandResult,
        handler=_run_command,
        read_only=False,
        description=(
            "Run a program (argv, no shell) in the OS sandbox: no network unless asked for, writes "
            "only in the workspace and private dependency caches. Output streams to the editor; "
            "the result keeps its head and tail. Killed with its whole process tree on timeout."
        ),
    ),
)
