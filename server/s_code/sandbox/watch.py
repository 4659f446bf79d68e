"""What a command must not change, snapshotted before it runs and checked (and put back) after.

Watched: the protected names at the workspace root (``.vscode``, ``.envrc``, …), every git
directory at any depth (:mod:`s_code.workspace.gitdirs`: nested repositories, ``gitdir:``
targets, common directories, directories git takes for git directories, submodules and linked
worktrees; below each only what can make git run code, since objects and refs are data and can be
huge), every ``.git`` file, and the files matching the user's ``protectedPaths``. Tier 1 keeps
them read-only, so nothing changes; tier 2 (Landlock cannot deny a path below an allowed
directory) relies on this check: whatever a command changed there is reported and put back as it
was, and a new hook or ``.git`` file is removed.

A git directory that was not there before (a repository a command made, or moved: ``mv libs/foo
libs/bar``) is never deleted: its config, hooks and the rest of what could run code are set aside
(renamed ``*.s-code-quarantined-<time>``), so git finds nothing to run and nothing is lost. So is
a changed file whose old content was too large to keep. Config and hook files are always kept
whole (up to 4 MiB each), whatever the snapshot's budget for the rest.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from s_code.sandbox.entries import (
    KEPT_BYTES,
    OVERFLOW,
    Entry,
    create,
    entry_of,
    quarantine,
    remove,
    same,
    walk,
)
from s_code.workspace.gitdirs import GitDirs, TreeIndex, is_git_dir
from s_code.workspace.protected import protected_in

log = logging.getLogger(__name__)

# Below a git directory only what can make git run code (or load configuration that does).
# Submodules (modules/**) and linked worktrees (worktrees/*) are git directories of their own.
GIT_WATCHED = (
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
)


@dataclass
class Snapshot:
    entries: dict[str, Entry]
    gitdirs: GitDirs = field(default_factory=GitDirs)
    extra: tuple[str, ...] = ()
    """Files of the user's protectedPaths watched with this snapshot."""


_ALWAYS_KEPT = ("config", "config.worktree", "commondir", "hooks")


def _git_subset(workspace: str, rel: str, snap: dict[str, Entry], budget: list[int]) -> None:
    here = entry_of(os.path.join(workspace, rel), budget)
    if here is None or here[0] != "dir":
        if os.path.basename(rel) == ".git" and here is not None:
            snap[rel] = here
        return
    if os.path.basename(rel) == ".git":
        snap[rel] = here
    unbudgeted = [1 << 62]  # config and hooks are kept whatever else the snapshot holds
    for name in GIT_WATCHED:
        spend = unbudgeted if name in _ALWAYS_KEPT else budget
        snap.update(walk(workspace, f"{rel}/{name}" if rel else name, spend))


def current_gitdirs(workspace: str) -> GitDirs:
    index = TreeIndex(workspace)
    index.refresh()
    return index.git_dirs()


def snapshot(
    workspace: str,
    gitdirs: GitDirs | None = None,
    extra: Iterable[str] = (),
    skip: frozenset[str] = frozenset(),
) -> Snapshot:
    """The watched entries of ``workspace``; ``gitdirs``: its git directories (found now when
    not given), ``extra``: files of the user's protected patterns; nothing at or below ``skip``
    (new git directories, set aside on their own)."""
    found = gitdirs if gitdirs is not None else current_gitdirs(workspace)
    snap: dict[str, Entry] = {}
    budget = [KEPT_BYTES]
    for rel in sorted(found.dirs - skip):
        _git_subset(workspace, rel, snap, budget)
        if rel in found.layouts:
            head = entry_of(os.path.join(workspace, rel, "HEAD"), budget)
            if head is not None:
                snap[f"{rel}/HEAD" if rel else "HEAD"] = head
    for rel in sorted(found.gitfiles):
        here = entry_of(os.path.join(workspace, rel), budget)
        if here is not None:
            snap[rel] = here
    for top in protected_in(workspace):
        name = os.path.basename(top)
        if name in skip:
            continue
        if name == ".git":
            _git_subset(workspace, name, snap, budget)
        else:
            snap.update(walk(workspace, name, budget))
    kept = tuple(sorted(extra))
    for rel in kept:  # a file, or a directory with everything below it
        snap.update(walk(workspace, rel, budget))
    if skip:
        snap = {k: v for k, v in snap.items() if not any(_under(k, x) for x in skip)}
    return Snapshot(snap, found, kept)


def merged(a: GitDirs, b: GitDirs) -> GitDirs:
    return GitDirs(a.dirs | b.dirs, a.gitfiles | b.gitfiles, a.layouts | b.layouts)


def changed_and_restore(
    workspace: str,
    before: Snapshot,
    after_gitdirs: GitDirs | None = None,
    after_extra: Iterable[str] = (),
    *,
    keep: bool = False,
    since: float | None = None,
) -> list[str]:
    """The watched paths a command changed, each put back as it was (or removed). A failure
    of the check itself fails closed: whatever watched entry did not exist before is removed.
    ``keep``: nothing is removed, everything in the way is set aside instead (the restore at
    start, long after the command: what differs now may be the user's own work since).
    ``since``: when the command had certainly ended; a path whose change time is later was
    changed by someone else (a change time cannot be set back), and is left as it is."""
    after_found = after_gitdirs if after_gitdirs is not None else current_gitdirs(workspace)
    remove = _set_aside_instead if keep else _remove
    try:
        return _restore(workspace, before, after_found, after_extra, remove, since)
    except Exception as exc:
        log.error("the protected-path check failed (%s): removing what is new", exc)
        removed = []
        new = [os.path.basename(t) for t in protected_in(workspace)]
        new += [d for d in after_found.dirs if os.path.basename(d) == ".git"]
        new += [*after_found.gitfiles, *(f"{d}/HEAD" for d in after_found.layouts)]
        for rel in new:
            if rel not in before.entries and os.path.lexists(os.path.join(workspace, rel)):
                with contextlib.suppress(OSError):
                    remove(workspace, rel)
                    removed.append(rel)
        return [*removed, f"(the check failed: {type(exc).__name__}; new entries removed)"]


def _remove(workspace: str, rel: str) -> None:
    remove(workspace, rel)


def _set_aside_instead(workspace: str, rel: str) -> None:
    quarantine(workspace, rel)


def _changed_after(workspace: str, rel: str, since: float) -> bool:
    try:
        return os.lstat(os.path.join(workspace, rel)).st_ctime > since
    except OSError:
        return False  # gone: whether it went before or after cannot be told


def _under(rel: str, root: str) -> bool:
    return rel == root or rel.startswith(root + "/")


def _set_aside(workspace: str, gitdir: str) -> list[str]:
    """A git directory that was not there before: what could run code in it set aside."""
    moved = []
    for name in GIT_WATCHED:
        aside = quarantine(workspace, f"{gitdir}/{name}" if gitdir else name)
        if aside is not None:
            moved.append(os.path.basename(aside))
    return moved


def _restore(
    workspace: str,
    before: Snapshot,
    after_found: GitDirs,
    after_extra: Iterable[str],
    remove: Callable[[str, str], None],
    since: float | None = None,
) -> list[str]:
    # new git directories git would use (a repository made or moved) are set aside, never
    # deleted; a new ``.git`` that is no repository holds nothing to keep and is removed below
    new_dirs = {
        d
        for d in after_found.dirs - before.gitdirs.dirs
        if is_git_dir(os.path.join(workspace, d) if d else workspace)
    }
    notes: list[str] = []
    for gitdir in sorted(new_dirs, key=lambda d: d.count("/")):
        moved = _set_aside(workspace, gitdir)
        if moved:
            notes.append(
                f"{gitdir or '.'} (a git directory that was not there before: "
                f"{', '.join(moved)} set aside, nothing deleted)"
            )
    found = merged(before.gitdirs, after_found)
    skip = frozenset(new_dirs)
    after = snapshot(workspace, found, {*before.extra, *after_extra}, skip).entries
    old = before.entries
    # A protected tree that overflowed the walk: set aside whole (it may hold content the
    # snapshot did not keep), then rebuilt from ``before`` (unless it was already too large
    # before: then it cannot be verified, and is reported).
    for rel in [r for r, e in after.items() if e == OVERFLOW]:
        if old.get(rel) == OVERFLOW:
            notes.append(f"{rel} (too many entries to verify)")
            continue
        aside = quarantine(workspace, rel)
        notes.append(f"{rel} (too many entries: set aside as {aside}, rebuilt as it was)")
        after = {k: v for k, v in after.items() if not _under(k, rel)}
    changed = sorted(p for p in set(old) | set(after) if not same(old.get(p), after.get(p)))
    changed = [p for p in changed if not any(_under(p, x) for x in skip)]
    unverifiable = [r for r, e in old.items() if e == OVERFLOW]
    changed = [p for p in changed if not any(_under(p, r) for r in unverifiable)]
    if since is not None:
        later = [p for p in changed if _changed_after(workspace, p, since)]
        changed = [p for p in changed if not any(_under(p, x) for x in later)]
        notes += [f"{p} (changed after the command had ended: left as it is)" for p in later]
    # Below an entry that is new (or replaced by another kind), the removal of that entry covers
    # everything: keep only the topmost of such paths (a tree 1,000 levels deep is one removal).
    covering: list[str] = []
    kept: list[str] = []
    for rel in changed:  # sorted: a parent comes before its children
        if any(_under(rel, c) for c in covering):
            continue
        kept.append(rel)
        was, now = old.get(rel), after.get(rel)
        if now is not None and (was is None or was[0] != now[0]):
            covering.append(rel)
    changed = kept
    # a replaced repository directory cannot be rebuilt from the watched subset: left absent
    replaced = [
        rel
        for rel, was in old.items()
        if os.path.basename(rel) == ".git"
        and was[0] == "dir"
        and (after.get(rel) or ("",))[0] != "dir"
    ]
    # 1. deepest first: remove what is new, or of another kind, or different; a changed file
    # whose old content was not kept is set aside (never left as the command wrote it)
    for rel in sorted(changed, key=lambda p: p.count("/"), reverse=True):
        now = after.get(rel)
        if now is None:
            continue
        was = old.get(rel)
        if was is not None and was[0] == "dir" and now[0] == "dir":
            continue  # a directory that is still one: only its children differ
        if was is not None and was[0] == "file" and was[2] is None and now[0] == "file":
            with contextlib.suppress(OSError):
                aside = quarantine(workspace, rel)
                notes.append(f"{rel} (too large to put back: set aside as {aside})")
            continue
        with contextlib.suppress(OSError):
            remove(workspace, rel)
    # 2. shallowest first: put back what was there
    for rel in sorted(changed, key=lambda p: p.count("/")):
        was = old.get(rel)
        if was is None or any(_under(rel, r) for r in replaced):
            continue
        if same(entry_of(os.path.join(workspace, rel)), was):
            continue
        put_back = False
        with contextlib.suppress(OSError):
            put_back = create(workspace, rel, was)
        if not put_back and was[0] == "file" and was[2] is None:
            notes.append(f"{rel} (too large to have been kept: not put back)")
    return [*changed, *notes]
