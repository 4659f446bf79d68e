"""The write phase of a batch: check again, record, stage, then commit file by file.

Everything up to the first commit changes nothing a user can see: every target's revision is
checked again (another batch may have written while this one waited), a pending undo record is
stored for each (with its temp file's name, for crash cleanup), and every disk target's new
content is staged as an fsynced temp file beside it. Staging runs on a few threads at once, so
the file fsyncs overlap (the checks run before it: under the threads' contention for the
interpreter they took several times longer); a staging failure leaves nothing written.

Commits are sequential, in request order: for a disk target the final revision check, the rename
and the directory fsync (:func:`commit_disk`); for an open buffer a versioned
``workspace/applyEdit``. The first failure stops the batch; staged files not committed are
removed.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from s_code.edits.journal import Journal
from s_code.edits.preflight import Target
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.session.session import Session
from s_code.workspace.documents import revision_of, sha256_hex
from s_code.workspace.writes import (
    COMPARE_LIMIT,
    Staged,
    commit,
    discard,
    open_parent,
    read_regular,
    stage,
    temp_name,
)

STAGING_THREADS = 8
_pool: ThreadPoolExecutor | None = None


def _staging_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(STAGING_THREADS, thread_name_prefix="s-code-stage")
    return _pool


class WriteFailed(Exception):
    """Writing ``target`` failed for ``reason``; the batch stops there."""

    def __init__(self, target: Target, reason: SCodeError) -> None:
        super().__init__(reason.message)
        self.target = target
        self.reason = reason


def os_failure(exc: OSError, path: str) -> SCodeError:
    code = errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return SCodeError(
        ErrorKind.INTERNAL,
        f"writing {path!r} failed: {exc.strerror or exc} ({code})",
        path=path,
        errno=code,
    )


# -- before the first commit ---------------------------------------------------------------------


def _current(session: Session, t: Target) -> tuple[bytes | None, bytes | None, int | None]:
    """(what read_file would show now, the disk bytes now, their st_mode) for a target."""
    dir_fd = t.loc.root.open_parts(t.loc.parts[:-1], os.O_RDONLY | os.O_DIRECTORY)
    try:
        found = read_regular(dir_fd, t.loc.parts[-1])
    finally:
        os.close(dir_fd)
    disk, mode = (None, None) if found is None else found
    doc = session.overlay.document(t.loc.abs_paths())
    shown = doc.text.encode("utf-8", "surrogatepass") if doc is not None else disk
    return shown, disk, mode


def recheck(session: Session, targets: list[Target]) -> None:
    """Every target still shows the bytes preflight saw, or the batch is stale. Notes each
    disk file's mode for staging."""
    for t in targets:
        try:
            shown, disk, t.mode = _current(session, t)
        except SCodeError as exc:
            if exc.kind is not ErrorKind.NOT_FOUND:  # e.g. a parent became a symlink
                raise
            shown, disk = None, None  # the parent directory does not exist (yet)
        if shown != t.before or disk != t.disk_before:
            actual = None  # absent, or cut at COMPARE_LIMIT: unknown
            if shown is not None and len(shown) <= COMPARE_LIMIT:
                actual = revision_of(sha256_hex(shown))
            raise SCodeError(
                ErrorKind.STALE_REVISION,
                f"{t.loc.display!r} changed while this batch waited for another one; read it again",
                path=t.loc.display,
                expected=t.plan.expected,
                actual=actual,
            )


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


def _stage_one(t: Target, dir_fd: int) -> Staged:
    assert t.tmp is not None
    try:
        return stage(
            t.loc.root,
            t.loc.parts,
            t.after,
            create=not t.exists,
            tmp=t.tmp,
            dir_fd=dir_fd,
            mode=t.mode,
        )
    except SCodeError as exc:
        raise WriteFailed(t, exc) from None
    except OSError as exc:
        raise WriteFailed(t, os_failure(exc, t.loc.display)) from None


def _parent_fds(disk: list[Target]) -> list[int]:
    """A parent directory fd for each target (its own, to hand to its staged file), each
    directory opened (or created) once."""
    opened: dict[tuple[int, tuple[str, ...]], int] = {}
    fds: list[int] = []
    try:
        for t in disk:
            key = (id(t.loc.root), t.loc.parts[:-1])
            if key not in opened:
                try:
                    opened[key] = open_parent(t.loc.root, t.loc.parts, create=not t.exists)
                except SCodeError as exc:
                    raise WriteFailed(t, exc) from None
                except OSError as exc:
                    raise WriteFailed(t, os_failure(exc, t.loc.display)) from None
            fds.append(os.dup(opened[key]))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    finally:
        for fd in opened.values():
            os.close(fd)
    return fds


def stage_all(targets: list[Target]) -> dict[int, Staged]:
    """Stage every disk target (keyed by its position), all or none: if one fails (the first
    in request order is named by :class:`WriteFailed`), whatever was staged is discarded."""
    disk = [(i, t) for i, t in enumerate(targets) if t.via == "disk"]
    fds = _parent_fds([t for _, t in disk])
    pool = _staging_pool()
    futures = [(i, pool.submit(_stage_one, t, fd)) for (i, t), fd in zip(disk, fds, strict=True)]
    failure: BaseException | None = None
    staged: dict[int, Staged] = {}
    for i, future in futures:
        try:
            staged[i] = future.result()
        except BaseException as exc:  # the first one (in request order) is raised below
            failure = failure or exc
    if failure is not None:
        discard_all(staged.values())
        raise failure
    return staged


def discard_all(staged: Iterable[Staged]) -> None:
    for s in list(staged):
        discard(s)


# -- commits -------------------------------------------------------------------------------------


def final_check(expected: bytes | None, path: str) -> Callable[[bytes | None], None]:
    """The check immediately before a rename: the disk still holds ``expected``."""

    def check(current: bytes | None) -> None:
        if current != expected:
            raise SCodeError(
                ErrorKind.STALE_REVISION,
                f"{path!r} changed on disk while the batch was being written",
                path=path,
                expected=None if expected is None else revision_of(sha256_hex(expected)),
                actual=None if current is None else revision_of(sha256_hex(current)),
            )

    return check


def commit_disk(t: Target, staged: Staged) -> bool:
    """Commit one staged target; returns whether its directory fsync succeeded."""
    try:
        return commit(staged, final_check(t.disk_before, t.loc.display)).durable
    except SCodeError as exc:
        raise WriteFailed(t, exc) from None
    except OSError as exc:
        raise WriteFailed(t, os_failure(exc, t.loc.display)) from None


def commit_run(run: list[tuple[Target, Staged]], done: Callable[[Target, bool], None]) -> bool:
    """Commit consecutive disk targets in order (one thread hop for all of them), calling
    ``done(target, durable)`` after each; stops after a non-durable one and returns False."""
    for t, staged in run:
        durable = commit_disk(t, staged)
        done(t, durable)
        if not durable:
            return False
    return True


async def commit_editor(session: Session, t: Target) -> None:
    """Apply one target to its open buffer as a versioned workspace edit."""
    assert t.doc is not None
    ok = await session.editor.apply_edit(t.doc, t.after.decode("utf-8"), f"s-code: {t.loc.display}")
    if ok:  # in the buffer, not on disk: saved before a command or git reads the disk
        session.agent_edited[t.doc.uri] = t.loc
    if not ok:
        raise WriteFailed(
            t,
            SCodeError(
                ErrorKind.STALE_REVISION,
                f"the editor refused the edit of {t.loc.display!r} (the buffer "
                "changed, or the user declined)",
                path=t.loc.display,
            ),
        )
