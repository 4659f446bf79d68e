"""Running a command: project, approve, run in the sandbox, check the protected paths after.

The one place a sandboxed command runs, for every face (``run_command``, ``s-code sandbox``). The
session's command/git lock makes a command exclusive: no git call and no other command overlaps
it, so the check after the run (and tier 2's restore of git directories) sees what the command
left, and no git call ever reads a configuration a running command planted.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile

from s_code.approvals.cards import Card
from s_code.approvals.gate import Approval, check
from s_code.approvals.policy import decide
from s_code.approvals.render import wire
from s_code.commands import snapshots
from s_code.commands.projection import (
    Projection,
    project,
    scan,
    with_private_tmp,
    with_read_only,
)
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.sandbox import process, tiers, watch
from s_code.sandbox.launcher import LauncherUnavailable, cache_dir, helper
from s_code.sandbox.profile import remove_placeholders
from s_code.session.session import Session


async def approved(
    session: Session, command: list[str], cwd: str | None, network: bool
) -> tuple[Projection, Approval]:
    """The projection to run, through the gate; re-projected after an approval and asked again
    if it changed. An approval is spent on exactly this one run."""
    proj = await asyncio.to_thread(project, session, command, cwd, network)
    latest = [proj]

    async def reproject() -> Card:
        latest[0] = await asyncio.to_thread(project, session, command, cwd, network)
        return latest[0].card(session.redactor)

    approval = await check(session, proj.operation, proj.card(session.redactor), reproject)
    return latest[0], approval


async def execute(
    session: Session, proj: Projection, timeout_s: float, on_output: process.OnOutput
) -> tuple[process.Outcome, list[str]]:
    """Run an approved projection in its sandbox, holding the session's command/git lock: the
    watched paths scanned again and snapshotted (the snapshot kept in the state store while the
    command runs), a fresh private tmp, the command, then every watched path checked and put
    back, and bubblewrap's placeholders removed."""
    try:
        helper_path = await asyncio.to_thread(helper)
    except LauncherUnavailable as exc:
        raise SCodeError(ErrorKind.SANDBOX_UNAVAILABLE, str(exc)) from None
    workspace = proj.profile.workspace
    async with session.lock.command(workspace):
        watched = await asyncio.to_thread(scan, session, workspace)
        before = await asyncio.to_thread(watch.snapshot, workspace, watched.gitdirs, watched.extra)
        row = await asyncio.to_thread(snapshots.save, session.store, workspace, before, timeout_s)
        run_tmp = tempfile.mkdtemp(prefix="run-", dir=os.path.dirname(proj.tmp))
        profile = with_private_tmp(proj.profile, proj.tmp, run_tmp)
        if profile.env.get("HOME", "").startswith(run_tmp + "/"):
            os.makedirs(profile.env["HOME"], mode=0o700, exist_ok=True)
        if profile.tier == 1:  # what is read-only now, not when the card was made
            profile = with_read_only(profile, watched.keep_read_only(workspace))
        argv, placeholders = tiers.argv_for(
            profile.tier,
            {"profile": profile},
            str(helper_path),
            cache_dir(),  # the seccomp programs: the shipped helper's directory may be read-only
            list(proj.argv),
        )
        try:
            outcome = await process.run(
                argv, profile.env, profile.cwd, timeout_s, on_output, session.redactor
            )
        finally:
            remove_placeholders(placeholders)
            changed = await asyncio.to_thread(_check_after, session, workspace, before)
            await asyncio.to_thread(snapshots.drop, session.store, row)
            shutil.rmtree(run_tmp, ignore_errors=True)
    return outcome, changed


def _check_after(session: Session, workspace: str, before: watch.Snapshot) -> list[str]:
    after = scan(session, workspace)
    return watch.changed_and_restore(workspace, before, after.gitdirs, after.extra)


def preview(
    session: Session, command: list[str], cwd: str | None, network: bool
) -> dict[str, object]:
    """``s-code/sandbox/preview`` and the CLI: the effective profile that would run, its card
    (rendered), and the decision the current mode would take."""
    proj = project(session, command, cwd, network)
    card = proj.card(session.redactor)
    details = card.details_wire
    return {
        "argv": details["argv"],
        "sandbox": details["sandbox"],
        "tier": tiers.current().to_wire(),
        "decision": decide(session.mode, proj.operation),
        "card": wire(card),
    }
