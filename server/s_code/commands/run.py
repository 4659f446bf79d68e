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
from s_code.commands.projection import Projection, project, with_private_tmp
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.sandbox import process, tiers, watch
from s_code.sandbox.launcher import LauncherUnavailable, helper
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
    """Run an approved projection in its sandbox: a fresh private tmp, protected paths checked
    (and put back) after, bubblewrap's placeholders removed."""
    try:
        helper_path = await asyncio.to_thread(helper)
    except LauncherUnavailable as exc:
        raise SCodeError(ErrorKind.SANDBOX_UNAVAILABLE, str(exc)) from None
    run_tmp = tempfile.mkdtemp(prefix="run-", dir=os.path.dirname(proj.tmp))
    profile = with_private_tmp(proj.profile, proj.tmp, run_tmp)
    argv, placeholders = tiers.argv_for(
        profile.tier, {"profile": profile}, str(helper_path), helper_path.parent, list(proj.argv)
    )
    known = session.known_repositories.setdefault(profile.workspace, set())
    async with session.lock.command():
        before = await asyncio.to_thread(watch.snapshot, profile.workspace, known)
        known.update(watch.repositories(before))
        try:
            outcome = await process.run(
                argv, profile.env, profile.cwd, timeout_s, on_output, session.redactor
            )
        finally:
            remove_placeholders(placeholders)
            changed = await asyncio.to_thread(watch.changed_and_restore, profile.workspace, before)
            shutil.rmtree(run_tmp, ignore_errors=True)
    return outcome, changed


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
