"""Preflight: everything about a batch that can be checked before one byte is written.

For every planned file: path resolution through its WorkspaceRoot, a folder or a directory no
workspace write may reach (a home folder, s-code's own: :mod:`s_code.hostproc.unsafe_workspace`),
protected paths, aliases (one file named twice by inode, hard links, case variants), the current
text (the editor buffer when the document is open, else the disk) and its revision, and the new
text (never one made from the redacted view of a secret: :mod:`.hidden`). Raises the first
problem; returns the targets otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from s_code.edits.hidden import compute_guarded
from s_code.edits.request import MAX_BYTES, FilePlan
from s_code.hostproc.unsafe_workspace import WriteGuard
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.session.session import Session
from s_code.workspace.documents import OpenDocument, revision_of, sha256_hex
from s_code.workspace.folders import Located
from s_code.workspace.protected import GitLayouts, fold
from s_code.workspace.read import decode_text


@dataclass
class Target:
    plan: FilePlan
    loc: Located
    exists: bool  # on disk
    identity: tuple[int, int] | None  # (st_dev, st_ino) of the existing file
    doc: OpenDocument | None  # the open editor buffer
    before: bytes | None  # the current bytes (buffer or disk); None: the file is new
    disk_before: bytes | None
    after: bytes
    via: str  # "editor" or "disk"
    record_id: int | None = None  # its pending journal record, once written
    tmp: str | None = None  # the temp file name recorded for crash cleanup
    mode: int | None = None  # the disk file's st_mode when checked again before staging

    @property
    def created(self) -> bool:
        return self.before is None

    @cached_property
    def sha_before(self) -> str | None:
        return None if self.before is None else sha256_hex(self.before)

    @cached_property
    def sha_after(self) -> str:
        return sha256_hex(self.after)

    @cached_property
    def reservation_key(self) -> str:
        return self.loc.root.real_path + "\x00" + "/".join(fold(p) for p in self.loc.parts)


def _stale(path: str, expected: str | None, actual: str | None, why: str) -> SCodeError:
    return SCodeError(
        ErrorKind.STALE_REVISION, f"{path!r}: {why}", path=path, expected=expected, actual=actual
    )


def _check_revision(plan: FilePlan, display: str, current: bytes | None) -> None:
    if current is None:
        if plan.expected is not None:
            raise _stale(display, plan.expected, None, "the file does not exist (any more)")
        return
    sha = sha256_hex(current)
    actual = revision_of(sha)
    if plan.expected is None:
        raise _stale(
            display, None, actual, "the file already exists; read it and send its revision"
        )
    ok = sha == plan.expected if len(plan.expected) == 64 else actual == plan.expected
    if not ok:
        raise _stale(
            display,
            plan.expected,
            actual,
            f"the file changed since it was read (revision {plan.expected} expected, "
            f"now {actual}); read it again",
        )


def prepare_one(session: Session, plan: FilePlan, guard: WriteGuard) -> Target:
    field_path = "path" if plan.field in ("path", "patch") else f"{plan.field}.path"
    loc = session.folders.locate(plan.path, field_path)
    if not loc.parts:
        raise invalid_params("the path names the workspace folder itself", field_path)
    guard.check(loc.root, loc.parts, loc.display)  # a home folder, s-code's own directories
    session.protected.check(loc.parts, loc.display)
    exists, identity, disk = False, None, None
    try:  # a FIFO, a device or a socket is refused here, never opened
        st = loc.root.regular_file(loc.parts, field=field_path)
        exists = True
    except SCodeError as exc:
        if exc.kind is not ErrorKind.NOT_FOUND:
            raise
    if exists:
        if st.st_nlink > 1:
            raise SCodeError(
                ErrorKind.ALIAS_CONFLICT,
                f"{loc.display!r} has {st.st_nlink} hard links; writing it would "
                "change the other names too",
                paths=[loc.display],
            )
        identity = (st.st_dev, st.st_ino)
        disk = loc.root.read_parts(loc.parts, MAX_BYTES, field=field_path)
    doc = session.overlay.document(loc.abs_paths())
    before = doc.text.encode("utf-8", "surrogatepass") if doc is not None else disk
    _check_revision(plan, loc.display, before)
    original = None if before is None else decode_text(before, loc.display)
    new_text = compute_guarded(plan, original, session.redactor, loc.display)
    after = new_text.encode("utf-8", "surrogatepass")
    if len(after) > MAX_BYTES:
        raise SCodeError(
            ErrorKind.LIMIT_EXCEEDED,
            f"{loc.display!r} would be {len(after)} bytes",
            limit="result_size",
            max=MAX_BYTES,
            path=loc.display,
        )
    use_editor = (
        doc is not None and session.edit_application != "disk" and session.editor.can_apply_edit
    )
    if doc is not None and not use_editor and disk != before:
        raise _stale(
            loc.display,
            plan.expected,
            revision_of(sha256_hex(before or b"")),
            "the file is open in the editor with unsaved changes, and edits cannot go "
            "through the editor here; save or close it first",
        )
    return Target(
        plan, loc, exists, identity, doc, before, disk, after, "editor" if use_editor else "disk"
    )


def _git_layout(targets: list[Target]) -> None:
    """Refuse a write inside a git directory (at any depth, however it is named) and a batch
    whose new files would lay one out."""
    layouts = GitLayouts()
    for t in targets:
        where = layouts.inside(t.loc.root, t.loc.parts)
        if where is not None:
            raise SCodeError(
                ErrorKind.PROTECTED_PATH,
                f"{t.loc.display!r} is protected: {where}/ is a git directory (HEAD, objects/, "
                "refs/), whose config and hooks git would run",
                path=t.loc.display,
            )
    by_root: dict[int, list[Target]] = {}
    for t in targets:
        if t.created:
            by_root.setdefault(id(t.loc.root), []).append(t)
    for group in by_root.values():
        where = layouts.completed(group[0].loc.root, [t.loc.parts for t in group])
        if where is not None:
            raise SCodeError(
                ErrorKind.PROTECTED_PATH,
                f"the batch would make {where}/ a git directory (HEAD, objects/, refs/), "
                "which git would open as a repository; refused",
                path=where,
            )


def prepare(session: Session, plans: list[FilePlan]) -> list[Target]:
    guard = WriteGuard()
    targets = [prepare_one(session, p, guard) for p in plans]
    _git_layout(targets)
    by_identity: dict[tuple[int, int], Target] = {}
    by_name: dict[str, Target] = {}
    snapshot = 0
    for t in targets:
        if t.identity is not None:
            other = by_identity.setdefault(t.identity, t)
            if other is not t:
                raise SCodeError(
                    ErrorKind.ALIAS_CONFLICT,
                    f"{other.loc.display!r} and {t.loc.display!r} are one file",
                    paths=[other.loc.display, t.loc.display],
                )
        other = by_name.setdefault(t.reservation_key, t)
        if other is not t:
            raise SCodeError(
                ErrorKind.ALIAS_CONFLICT,
                f"{other.loc.display!r} and {t.loc.display!r} differ only in case",
                paths=[other.loc.display, t.loc.display],
            )
        snapshot += len(t.before or b"")
    if snapshot > MAX_BYTES:
        raise SCodeError(
            ErrorKind.LIMIT_EXCEEDED,
            f"the files add up to {snapshot} bytes",
            limit="snapshot_size",
            max=MAX_BYTES,
            actual=snapshot,
        )
    return targets
