"""apply_patch, end to end: plan → preflight → approval → reserve → write → report.

Nothing is written unless the whole batch validated. Writes are sequential; each file's revision
is checked again immediately before its rename (or by the editor's document version), and the
first failure stops the batch with ``partially_applied`` listing what was written.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import time
import uuid
from collections.abc import Callable
from typing import Any

from s_code.approvals.cards import Card
from s_code.approvals.gate import Approval, check, redactor_of
from s_code.approvals.policy import decide
from s_code.edits.journal import Journal, reservation_conflict
from s_code.edits.preflight import Target, prepare
from s_code.edits.request import ApplyPatchArgs, plans_of
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.redaction import Redactor
from s_code.tools.session import Session
from s_code.workspace.documents import revision_of, sha256_hex
from s_code.workspace.writes import read_current, temp_name, write_atomic

RESERVATION_WAIT = 2.0
TURN_KEY = "turn"


def journal_of(session: Session) -> Journal:
    if session.store is None:
        raise SCodeError(
            ErrorKind.DURABILITY_UNCONFIRMED,
            "the state store is unavailable, so edits could not be undone; refusing",
            appliedPaths=[],
        )
    return Journal(session.store)


DIFF_LINES = 400  # per file, in the card's details (the whole change is on disk after approval)


def _diff(t: Target, shown: Callable[[str], str]) -> str:
    before = (t.before or b"").decode("utf-8", "replace").splitlines()
    after = t.after.decode("utf-8", "replace").splitlines()
    name = t.loc.display
    lines = list(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}", lineterm="", n=2))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more diff lines"]
    return shown("\n".join(lines))


def edit_card(
    targets: list[Target],
    legacy: bool,
    redactor: Redactor | None = None,
    with_diff: bool = False,
) -> Card:
    """The card of a batch; ``with_diff`` (only when the user will be asked) adds each file's
    unified diff, redacted and bounded."""
    shown = redactor.redact if redactor is not None else str
    paths = [shown(t.loc.display) for t in targets]
    files = []
    for t in targets:
        entry: dict[str, Any] = {
            "path": shown(t.loc.display),
            "created": t.created,
            "via": t.via,
            "lines_before": (t.before or b"").count(b"\n") + 1,
            "lines_after": t.after.count(b"\n") + 1,
            "sha_before": t.sha_before,
            "sha_after": t.sha_after,
        }
        if with_diff:
            entry["diff"] = _diff(t, shown)
        files.append(entry)
    where = paths[0] if len(paths) == 1 else f"{len(paths)} files"
    title = f"Edit {where}"[:150]
    target = paths[0] if legacy else json.dumps(paths)
    return Card("edit", title, target, {"files": files})


async def approve(session: Session, targets: list[Target], legacy: bool) -> Approval:
    """The gate for a batch. Re-projection after approval is the revision recheck before the
    first write: a file changed since the card was built fails the batch (stale_revision)."""
    asking = decide(session.permission_mode, "edit") == "ask"  # type: ignore[arg-type]
    card = edit_card(targets, legacy, redactor_of(session), with_diff=asking)
    return await check(session, "edit", card)


async def reserve(journal: Journal, targets: list[Target], owner: str) -> None:
    keys = [t.reservation_key for t in targets]
    deadline = time.monotonic() + RESERVATION_WAIT
    while True:
        held = await asyncio.to_thread(journal.reserve, keys, owner)
        if not held:
            return
        if time.monotonic() >= deadline:
            names = [t.loc.display for t in targets if t.reservation_key in set(held)]
            raise reservation_conflict(names)
        await asyncio.sleep(0.05)


def _check(expected_sha: str | None, path: str):  # type: ignore[no-untyped-def]
    def final_check(current: bytes | None) -> None:
        actual = None if current is None else sha256_hex(current)
        if actual != expected_sha:
            raise SCodeError(
                ErrorKind.STALE_REVISION,
                f"{path!r} changed on disk while the batch was being written",
                path=path,
                expected=None if expected_sha is None else revision_of(expected_sha),
                actual=None if actual is None else revision_of(actual),
            )

    return final_check


def _write_disk(journal: Journal, record: int, t: Target, tmp: str) -> bool:
    written = write_atomic(
        t.loc.root,
        t.loc.parts,
        t.after,
        create=not t.exists,
        final_check=_check(
            None if t.disk_before is None else sha256_hex(t.disk_before), t.loc.display
        ),
        tmp=tmp,
    )
    return written.durable


def record_pending(journal: Journal, turn: str, targets: list[Target]) -> None:
    """One transaction: a pending undo record (with its temp name) for every target."""
    rows = []
    for t in targets:
        t.tmp = temp_name(t.loc.parts[-1]) if t.via == "disk" else None
        rows.append(
            dict(
                turn_id=turn,
                root=t.loc.root.real_path,
                rel=t.loc.rel,
                display=t.loc.display,
                via=t.via,
                created=t.created,
                original=t.before,
                sha_before=t.sha_before,
                sha_after=t.sha_after,
                temp_name=t.tmp,
            )
        )
    for t, record in zip(targets, journal.add_pending_many(rows), strict=True):
        t.record_id = record


async def write_one(session: Session, journal: Journal, turn: str, t: Target) -> bool:
    """Write one target; returns whether it is durable. Raises with the reason on failure (and
    its pending record is dropped). Its record is marked applied by the caller."""
    if t.record_id is None:
        await asyncio.to_thread(record_pending, journal, turn, [t])
    assert t.record_id is not None
    record, tmp = t.record_id, t.tmp or ""
    try:
        if t.via == "editor":
            assert t.doc is not None
            ok = await session.editor.apply_edit(
                t.doc, t.after.decode("utf-8"), f"s-code: {t.loc.display}"
            )
            if not ok:
                raise SCodeError(
                    ErrorKind.STALE_REVISION,
                    f"the editor refused the edit of {t.loc.display!r} (the buffer "
                    "changed, or the user declined)",
                    path=t.loc.display,
                )
            return True
        return await asyncio.to_thread(_write_disk, journal, record, t, tmp)
    except BaseException:
        await asyncio.to_thread(journal.drop, record)
        t.record_id = None
        raise


def _current(session: Session, t: Target) -> tuple[bytes | None, bytes | None]:
    """(what read_file would show now, the disk bytes now) for a target."""
    dir_fd = t.loc.root.open_parts(t.loc.parts[:-1], os.O_RDONLY | os.O_DIRECTORY)
    try:
        disk = read_current(dir_fd, t.loc.parts[-1])
    finally:
        os.close(dir_fd)
    doc = session.overlay.document(t.loc.abs_paths())
    shown = doc.text.encode("utf-8", "surrogatepass") if doc is not None else disk
    return shown, disk


def recheck(session: Session, targets: list[Target]) -> None:
    for t in targets:
        try:
            shown, disk = _current(session, t)
        except SCodeError as exc:
            if exc.kind is not ErrorKind.NOT_FOUND:  # e.g. a parent became a symlink
                raise
            shown, disk = None, None  # the parent directory does not exist (yet)
        if shown != t.before or disk != t.disk_before:
            actual = None if shown is None else revision_of(sha256_hex(shown))
            raise SCodeError(
                ErrorKind.STALE_REVISION,
                f"{t.loc.display!r} changed while this batch waited for another one; read it again",
                path=t.loc.display,
                expected=t.plan.expected,
                actual=actual,
            )


def _turn_for(session: Session, journal: Journal, turn_id: str | None) -> tuple[str, bool]:
    if turn_id is not None:
        if not journal.turn_exists(turn_id):
            raise invalid_params(f"no turn {turn_id!r}", "turn_id")
        return turn_id, False
    current = session.state.get(TURN_KEY)
    if current is not None:
        return str(current), False
    return journal.begin_turn(), True


async def apply_patch(session: Session, args: ApplyPatchArgs) -> dict[str, Any]:
    plans = plans_of(args)
    journal = journal_of(session)
    targets = await asyncio.to_thread(prepare, session, plans)
    approval = await approve(session, targets, legacy="path" in args.model_fields_set)
    owner = uuid.uuid4().hex
    await reserve(journal, targets, owner)
    applied: list[dict[str, Any]] = []
    own_turn = False
    try:
        # Another batch may have written while this one waited for its reservation: check every
        # file again before the first write, so a stale batch writes nothing at all.
        await asyncio.to_thread(recheck, session, targets)
        turn, own_turn = await asyncio.to_thread(_turn_for, session, journal, args.turn_id)
        await asyncio.to_thread(record_pending, journal, turn, targets)
        for t in targets:
            entry = {
                "path": t.loc.display,
                "revision": revision_of(t.sha_after),
                "sha256": t.sha_after,
                "created": t.created,
                "via": t.via,
            }
            try:
                durable = await write_one(session, journal, turn, t)
            except SCodeError as err:
                raise SCodeError(
                    ErrorKind.PARTIALLY_APPLIED,
                    f"stopped at {t.loc.display!r}: {err.message}"
                    + (
                        f"; already written: {', '.join(a['path'] for a in applied)}"
                        if applied
                        else "; nothing was written"
                    ),
                    appliedPaths=[a["path"] for a in applied],
                    failedPath=t.loc.display,
                    cause=err.to_data(),
                    turn_id=turn,
                ) from None
            applied.append(entry)
            if not durable:
                raise SCodeError(
                    ErrorKind.DURABILITY_UNCONFIRMED,
                    f"{t.loc.display!r} was written but the directory fsync failed",
                    appliedPaths=[a["path"] for a in applied],
                    turn_id=turn,
                )
    finally:
        # Written files' records become "applied"; files never attempted leave no record.
        written = {a["path"] for a in applied}
        await asyncio.to_thread(
            journal.settle,
            [t.record_id for t in targets if t.record_id and t.loc.display in written],
            [t.record_id for t in targets if t.record_id and t.loc.display not in written],
        )
        if own_turn:
            await asyncio.to_thread(journal.end_turn, turn)
        await asyncio.to_thread(journal.release, owner)
        await asyncio.to_thread(approval.ran, session, {"written": sorted(written)})
    return {"applied": applied, "turn_id": turn}
