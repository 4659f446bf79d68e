"""apply_patch, end to end: plan → preflight → approval → reserve → write → report.

Nothing is written unless the whole batch validated. The write phase (:mod:`s_code.edits.writing`)
checks every file again, records and stages them all, then commits file by file in request
order; each file's revision is checked again immediately before its rename (or by the editor's
document version), and the first failure stops the batch with ``partially_applied`` listing what
was written.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from s_code.approvals.caller import current
from s_code.approvals.cards import EditDetails
from s_code.approvals.gate import Approval, check
from s_code.approvals.policy import Operation, decide
from s_code.edits import writing
from s_code.edits.card import edit_card
from s_code.edits.journal import Journal, reservation_conflict
from s_code.edits.preflight import Target, prepare
from s_code.edits.request import ApplyPatchArgs, plans_of
from s_code.edits.writing import WriteFailed
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.session.session import Session
from s_code.workspace.documents import revision_of
from s_code.workspace.writes import Staged

RESERVATION_WAIT = 2.0
T = TypeVar("T")


def applied_paths(paths: list[str]) -> dict[str, list[str]]:
    """The files a failed batch did write: ``applied_paths`` (tool error data is snake_case)
    and ``appliedPaths``, the name PROTOCOL.md gives them, both kept."""
    return {"applied_paths": paths, "appliedPaths": paths}


def journal_of(session: Session) -> Journal:
    if session.store is None:
        raise SCodeError(
            ErrorKind.DURABILITY_UNCONFIRMED,
            "the state store is unavailable, so edits could not be undone; refusing",
            **applied_paths([]),
        )
    return Journal(session.store)


def host_code(session: Session, targets: list[Target]) -> tuple[str, ...]:
    """For each target that is code an approved host process runs (its code scope), a line
    naming the file and who runs it."""
    found = []
    for t in targets:
        owners = session.host_code.owners(os.path.join(t.loc.root.real_path, *t.loc.parts))
        if owners:
            found.append(f"{t.loc.display}: run by {', '.join(owners)}")
    return tuple(found)


async def approve(session: Session, targets: list[Target], legacy: bool) -> Approval:
    """The gate for a batch. Re-projection after approval is the revision recheck before the
    first write: a file changed since the card was built fails the batch (stale_revision). A
    batch that edits code an approved host process runs asks in every mode."""
    code = host_code(session, targets)
    operation: Operation = "edit_host_code" if code else "edit"
    asking = decide(session.mode, operation) == "ask"
    card = edit_card(targets, legacy, session.redactor, with_diff=asking, host_code=code)
    return await check(session, operation, card)


class Held(Exception):
    """Another batch holds some of the targets (their reservation keys)."""

    def __init__(self, keys: list[str]) -> None:
        super().__init__(f"{len(keys)} targets are reserved")
        self.keys = keys


def try_reserve(journal: Journal, targets: list[Target], owner: str) -> None:
    """Reserve every target or none (on a worker thread); raises Held."""
    held = journal.reserve([t.reservation_key for t in targets], owner)
    if held:
        raise Held(held)


async def reserve(
    journal: Journal, targets: list[Target], owner: str, held: list[str] | None = None
) -> None:
    """Reserve every target, waiting a bounded time for another batch to finish; ``held``: the
    keys a first attempt found reserved. A cancellation releases whatever was reserved."""
    deadline = time.monotonic() + RESERVATION_WAIT
    while True:
        if held is not None:
            if time.monotonic() >= deadline:
                keys = set(held)
                raise reservation_conflict(
                    [t.loc.display for t in targets if t.reservation_key in keys]
                )
            await asyncio.sleep(0.05)
        try:
            await finish_in_thread(try_reserve, journal, targets, owner)
            return
        except Held as exc:
            held = exc.keys
        except asyncio.CancelledError:
            await finish_in_thread(journal.release, owner)
            raise


async def wait_out(fut: asyncio.Future[Any], on_cancel: Callable[[], None] | None = None) -> bool:
    """Await ``fut`` to its end even when the caller is cancelled meanwhile (``on_cancel`` is
    called once, to ask it to stop early); True when that happened. ``fut``'s own result or
    exception is left for the caller to read."""
    cancelled = False
    while not fut.done():
        try:
            await asyncio.shield(fut)
        except asyncio.CancelledError:
            if fut.cancelled():
                raise
            if not cancelled and on_cancel is not None and not fut.done():
                on_cancel()
            cancelled = True
        except Exception:
            pass  # fut failed: the caller reads it
    return cancelled


async def finish_in_thread(
    fn: Callable[..., T], *args: Any, on_cancel: Callable[[], None] | None = None
) -> T:
    """Run ``fn`` on a worker thread; a cancellation calls ``on_cancel`` (to ask ``fn`` to stop
    early) and waits for ``fn`` to end (the write phase must never run on behind the bookkeeping
    that follows it), then propagates: after a cancel, CancelledError is raised whatever ``fn``
    returned or raised (its exception is the cause), so a caller never mistakes a late answer
    (``Held``, say) for a reason to go on."""
    # run_in_executor's future directly (asyncio.to_thread would add a task around it, and
    # each layer costs the loop an iteration when the thread ends)
    context = contextvars.copy_context()
    task = asyncio.get_running_loop().run_in_executor(None, context.run, fn, *args)
    if await wait_out(task, on_cancel):
        raise asyncio.CancelledError from task.exception()
    return task.result()


@dataclass
class Batch:
    """The write phase's state, shared by the worker threads and the final bookkeeping."""

    session: Session
    journal: Journal
    targets: list[Target]
    turn: str | None = None
    own_turn: bool = False
    staged: dict[int, Staged] = field(default_factory=dict)
    written: list[Target] = field(default_factory=list)
    undurable: bool = False  # the last written file's directory fsync failed
    stop: threading.Event = field(default_factory=threading.Event)

    def begin(self, turn_id: str | None) -> None:
        """On a worker thread: open the turn, record every target, check every target again
        (a stale one stops the batch before anything is staged), then stage the disk ones."""
        self.turn, self.own_turn = _turn_for(self.session, self.journal, turn_id)
        writing.record_pending(self.journal, self.turn, self.targets)
        writing.recheck(self.session, self.targets)
        self.staged = writing.stage_all(self.targets)

    def commit_disk_run(self, indexes: list[int]) -> bool:
        """On a worker thread: commit these consecutive disk targets; False after one that is
        not durable (or when the batch was cancelled)."""
        for i in indexes:
            if self.stop.is_set():
                return False
            t = self.targets[i]
            durable = writing.commit_disk(t, self.staged.pop(i))
            self.written.append(t)
            if not durable:
                self.undurable = True
                return False
        return True

    def end(self, approval: Approval, owner: str) -> None:
        """On a worker thread, always: drop what was staged but not committed, settle the
        records (written → applied, the rest removed), end an own turn, release, audit."""
        writing.discard_all(self.staged.values())
        self.staged.clear()
        done = {id(t) for t in self.written}
        records = [(t.record_id, id(t) in done) for t in self.targets if t.record_id is not None]
        self.journal.finish_batch(
            applied=[r for r, ok in records if ok],
            dropped=[r for r, ok in records if not ok],
            end_turn=self.turn if self.own_turn else None,
            owner=owner,
        )
        shown = self.session.redactor.redact_shown  # the paths as the card showed them
        approval.ran({"written": sorted(shown(t.loc.display) for t in self.written)})

    def on_disk(self, turn_id: str | None, approval: Approval, owner: str) -> bool:
        """On a worker thread, for a batch with no open buffer: the reservation (raising
        :class:`Held`), :meth:`begin`, every commit and :meth:`end` in one go (each hop between
        the loop and a thread costs about 0.1 ms). Returns False after a commit that was not
        durable, or when cancelled."""
        try:
            try_reserve(self.journal, self.targets, owner)
        except Held:
            raise
        except BaseException:  # the store failed: drop what an earlier wait reserved
            self.journal.release(owner)
            raise
        try:
            self.begin(turn_id)
            return self.commit_disk_run(list(range(len(self.targets))))
        finally:
            self.end(approval, owner)


def _entry(t: Target) -> dict[str, Any]:
    return {
        "path": t.loc.display,
        "revision": revision_of(t.sha_after),
        "sha256": t.sha_after,
        "created": t.created,
        "via": t.via,
    }


async def _commit_all(batch: Batch) -> None:
    """Commit in request order: runs of disk targets on one thread hop, open buffers through
    the editor. Raises WriteFailed or durability_unconfirmed at the first failure."""
    targets, i = batch.targets, 0
    while i < len(targets):
        if targets[i].via == "editor":
            # The request is out once sent: a cancel waits for the editor's answer (bounded by
            # APPLY_EDIT_TIMEOUT), so a buffer the editor did change keeps its undo record.
            editing = asyncio.ensure_future(writing.commit_editor(batch.session, targets[i]))
            cancelled = await wait_out(editing)
            if editing.exception() is None:
                batch.written.append(targets[i])
            if cancelled:
                raise asyncio.CancelledError from editing.exception()
            editing.result()
            i += 1
            continue
        run = [i]
        while run[-1] + 1 < len(targets) and targets[run[-1] + 1].via == "disk":
            run.append(run[-1] + 1)
        durable = await finish_in_thread(batch.commit_disk_run, run, on_cancel=batch.stop.set)
        if not durable:
            raise _not_durable(batch)
        i = run[-1] + 1


def _not_durable(batch: Batch) -> SCodeError:
    t = batch.written[-1]
    return SCodeError(
        ErrorKind.DURABILITY_UNCONFIRMED,
        f"{t.loc.display!r} was written but the directory fsync failed",
        **applied_paths([w.loc.display for w in batch.written]),
        turn_id=batch.turn,
    )


async def _write(batch: Batch, turn_id: str | None, approval: Approval, owner: str) -> None:
    """Reserve, write, and do the bookkeeping after it whatever happens. Another batch may have
    written while this one waited for its reservation: every target is checked again before
    the first commit, so a stale batch writes nothing at all."""
    if all(t.via == "disk" for t in batch.targets):
        while True:
            try:
                durable = await finish_in_thread(
                    batch.on_disk, turn_id, approval, owner, on_cancel=batch.stop.set
                )
                break
            except Held as exc:  # wait for the other batch; then this one's attempt succeeds
                await reserve(batch.journal, batch.targets, owner, held=exc.keys)
        if not durable:  # (a cancellation was raised above)
            raise _not_durable(batch)
        return
    await reserve(batch.journal, batch.targets, owner)
    try:
        await finish_in_thread(batch.begin, turn_id)
        await _commit_all(batch)
    finally:
        await finish_in_thread(batch.end, approval, owner)


def _partially_applied(batch: Batch, failed: WriteFailed) -> SCodeError:
    done = [t.loc.display for t in batch.written]
    t, err = failed.target, failed.reason
    return SCodeError(
        ErrorKind.PARTIALLY_APPLIED,
        f"stopped at {t.loc.display!r}: {err.message}"
        + (f"; already written: {', '.join(done)}" if done else "; nothing was written"),
        **applied_paths(done),
        failed_path=t.loc.display,
        failedPath=t.loc.display,  # the spelling of release 0.1, kept one release
        cause=err.to_data(),
        turn_id=batch.turn,
    )


def _cancelled_after_writing(batch: Batch) -> SCodeError:
    """A cancel that landed between two commits: the reply still says what was written (undo
    records exist for exactly those files)."""
    done = [t.loc.display for t in batch.written]
    return SCodeError(
        ErrorKind.CANCELLED,
        f"apply_patch was cancelled after writing {', '.join(done)}; the rest was not written",
        **applied_paths(done),
        turn_id=batch.turn,
    )


def _turn_for(session: Session, journal: Journal, turn_id: str | None) -> tuple[str, bool]:
    if turn_id is not None:
        if not journal.turn_exists(turn_id):
            raise invalid_params(f"no turn {turn_id!r}", "turn_id")
        return turn_id, False
    if session.turn is not None and current() is None:  # an attached agent's: its own turn
        return session.turn, False
    return journal.begin_turn(), True


async def apply_patch(session: Session, args: ApplyPatchArgs) -> dict[str, Any]:
    plans = plans_of(args)
    journal = journal_of(session)
    targets = await asyncio.to_thread(prepare, session, plans)
    approval = await approve(session, targets, legacy="path" in args.model_fields_set)
    owner = uuid.uuid4().hex
    batch = Batch(session, journal, targets)
    try:
        await _write(batch, args.turn_id, approval, owner)
    except WriteFailed as failed:
        _scoped_written(session, approval)
        raise _partially_applied(batch, failed) from None
    except asyncio.CancelledError as cancel:
        _scoped_written(session, approval)
        # What the batch came to, when the cancel arrived too late to stop it, is the answer.
        if isinstance(cancel.__cause__, WriteFailed):
            raise _partially_applied(batch, cancel.__cause__) from None
        if batch.undurable:
            raise _not_durable(batch) from None
        if not batch.written:
            raise
        if len(batch.written) < len(targets):
            raise _cancelled_after_writing(batch) from None
    _scoped_written(session, approval)
    return {"applied": [_entry(t) for t in targets], "turn_id": batch.turn}


def _scoped_written(session: Session, approval: Approval) -> None:
    """After a batch that edited code a host process runs: its entries check their scope."""
    details = approval.card.details
    if isinstance(details, EditDetails) and details.host_code:
        session.host_code.changed()
