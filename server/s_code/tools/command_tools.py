"""run_command and the sandbox preview: project, approve, run in the sandbox, report."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
from typing import Any

from pydantic import Field, field_validator

from s_code.approvals.cards import Card
from s_code.approvals.gate import Approval, check, redactor_of
from s_code.approvals.policy import decide
from s_code.commands.projection import Projection, project, with_private_tmp
from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.protocol.models import Args, Result
from s_code.sandbox import process, tiers, watch
from s_code.sandbox.launcher import LauncherUnavailable, helper
from s_code.sandbox.profile import remove_placeholders
from s_code.tools.registry import ToolDef
from s_code.tools.session import Session


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
        for i, arg in enumerate(value):
            if "\0" in arg:
                raise invalid_params("an argument holds a NUL character", f"command.{i}")
        if not value[0]:
            raise invalid_params("the program name is empty", "command.0")
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

    def to_wire(self) -> dict[str, Any]:
        wire = super().to_wire()
        wire.setdefault("exit_code", None)  # null after a timeout: always present
        return wire


class SandboxPreviewResult(Result):
    argv: list[str]
    sandbox: dict[str, Any]
    tier: dict[str, Any]
    decision: str
    card: dict[str, Any]


async def _approved(session: Session, args: RunCommandArgs) -> tuple[Projection, Approval]:
    """The projection to run, through the gate; re-projected after an approval and asked again
    if it changed. An approval is spent on exactly this one run."""
    redactor = redactor_of(session)
    proj = await asyncio.to_thread(project, session, args.command, args.cwd, args.network)
    latest = [proj]

    async def reproject() -> Card:
        latest[0] = await asyncio.to_thread(project, session, args.command, args.cwd, args.network)
        return latest[0].card(redactor)

    approval = await check(session, proj.operation, proj.card(redactor), reproject)
    return latest[0], approval


async def execute(
    session: Session, proj: Projection, timeout_s: float, on_output: process.OnOutput
) -> tuple[process.Outcome, list[str]]:
    """Run an approved projection in its sandbox: a fresh private tmp, protected paths checked
    (and put back) after, bubblewrap's placeholders removed."""
    from s_code.sandbox.tiers import argv_for

    try:
        helper_path = await asyncio.to_thread(helper)
    except LauncherUnavailable as exc:
        raise SCodeError(ErrorKind.SANDBOX_UNAVAILABLE, str(exc)) from None
    run_tmp = tempfile.mkdtemp(prefix="run-", dir=os.path.dirname(proj.tmp))
    profile = with_private_tmp(proj.profile, proj.tmp, run_tmp)
    argv, placeholders = argv_for(
        profile.tier, {"profile": profile}, str(helper_path), helper_path.parent, list(proj.argv)
    )
    known: set[str] = session.state.setdefault(KNOWN_REPOS_KEY, {}).setdefault(
        profile.workspace, set()
    )
    # One command at a time per workspace: the check after a run must not race another run.
    async with _workspace_lock(profile.workspace):
        before = await asyncio.to_thread(watch.snapshot, profile.workspace, known)
        known.update(watch.repositories(before))
        try:
            outcome = await process.run(
                argv, profile.env, profile.cwd, timeout_s, on_output, redactor_of(session)
            )
        finally:
            remove_placeholders(placeholders)
            changed = await asyncio.to_thread(watch.changed_and_restore, profile.workspace, before)
            shutil.rmtree(run_tmp, ignore_errors=True)
    return outcome, changed


KNOWN_REPOS_KEY = "known_repositories"
_LOCKS: dict[str, asyncio.Lock] = {}


def _workspace_lock(workspace: str) -> asyncio.Lock:
    lock = _LOCKS.get(workspace)
    if lock is None:
        lock = _LOCKS[workspace] = asyncio.Lock()
    return lock


async def _run_command(session: Session, args: RunCommandArgs) -> RunCommandResult:
    proj, approval = await _approved(session, args)
    command_id = "c-" + uuid.uuid4().hex[:12]

    def on_output(stream: str, text: str) -> None:
        session.notify(
            methods.COMMAND_OUTPUT, {"commandId": command_id, "stream": stream, "text": text}
        )

    try:
        outcome, changed = await execute(session, proj, args.timeout_ms / 1000, on_output)
    except BaseException as exc:
        await asyncio.to_thread(
            approval.ran,
            session,
            {"argv": approval.card.details["argv"], "error": type(exc).__name__},
        )
        raise
    await asyncio.to_thread(
        approval.ran,
        session,
        {
            "argv": approval.card.details["argv"],
            "exit_code": outcome.exit_code,
            "timed_out": outcome.timed_out,
            "duration_ms": outcome.duration_ms,
            "protected_changed": changed,
        },
    )
    card = proj.card(redactor_of(session))
    return RunCommandResult(
        command_id=command_id,
        exit_code=outcome.exit_code,
        output=outcome.output,
        truncated=outcome.truncated,
        timed_out=outcome.timed_out,
        duration_ms=outcome.duration_ms,
        argv=card.details["argv"],
        sandbox=card.details["sandbox"],
        protected_changed=changed,
    )


def preview(session: Session, command: list[str], cwd: str | None, network: bool) -> dict[str, Any]:
    """``s-code/sandbox/preview`` and the CLI: the effective profile that would run."""
    args = RunCommandArgs(command=command, cwd=cwd, network=network)
    proj = project(session, args.command, args.cwd, args.network)
    card = proj.card(redactor_of(session))
    return SandboxPreviewResult(
        argv=card.details["argv"],
        sandbox=card.details["sandbox"],
        tier=tiers.current().to_wire(),
        decision=decide(session.permission_mode, proj.operation),  # type: ignore[arg-type]
        card=card.to_wire(),
    ).to_wire()


TOOLS = (
    ToolDef(
        name="run_command",
        method=methods.RUN_COMMAND,
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
