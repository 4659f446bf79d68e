"""The five inspections: discover the repository, vet it, run git, parse the answer.

Each function here is one git operation, and each runs the config guard immediately before its
git command (:func:`run`). Paths are top-relative pathspecs made by the caller from validated
workspace paths; results use folder-relative paths (the repository may start above the folder).
Output cut at its bound ends before a trailing piece that starts a known value (``cut_end``, the
session redactor's): the known-value pass over the result would not recognise that piece.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from s_code.git.blame import Blame, parse_blame
from s_code.git.commits import FORMAT, Commit, parse_log, split_show
from s_code.git.guard import postflight, preflight
from s_code.git.layout import Repository
from s_code.git.patches import FileDiff, split_patch
from s_code.git.porcelain import Status, StatusEntry, parse_status
from s_code.git.runner import GitOutput, Handle, spawn_sync
from s_code.protocol.errors import ErrorKind, SCodeError

DIFF_SAFETY = ["--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=all"]
_NOT_FOUND = (
    "unknown revision",
    "bad revision",
    "bad object",
    "invalid object name",
    "not a valid object name",
    "needed a single revision",
    "ambiguous argument",
    "no such path",
    "does not exist in",
    "no such ref",
    "bad default revision",
    "does not have any commits yet",
    "has only",
)
MAX_MESSAGE = 400
CutEnd = Callable[[bytes], int]
"""Where output cut after its end must end instead (``Redactor.cut_end_bytes``)."""


def _failure(out: GitOutput, cut_end: CutEnd) -> SCodeError:
    message = " ".join(out.stderr.strip().splitlines()[:3])
    if len(message) > MAX_MESSAGE:
        cut = message[:MAX_MESSAGE].encode("utf-8", "surrogateescape")
        message = cut[: cut_end(cut)].decode("utf-8", "surrogateescape")
    message = message or f"exit {out.returncode}"
    sub = next((a for a in out.argv if a in ("status", "diff", "log", "show", "blame")), "git")
    if any(s in message.lower() for s in _NOT_FOUND):
        return SCodeError(ErrorKind.NOT_FOUND, f"git {sub}: {message}", reason="git")
    return SCodeError(
        ErrorKind.INTERNAL, f"git {sub} failed (exit {out.returncode}): {message}", reason="git"
    )


async def run(
    repo: Repository,
    tail: list[str],
    roots: Iterable[str],
    *,
    max_bytes: int,
    cut_end: CutEnd,
) -> GitOutput:
    """Guard, then git, then check that the config did not change while git ran: one worker
    thread call; a cancel stops whichever git is running and every spawn after it. Output cut at
    ``max_bytes`` ends where ``cut_end`` says (never inside a known value)."""
    handle = Handle()
    try:
        out = await asyncio.to_thread(_guarded, repo, tail, tuple(roots), max_bytes, handle)
    except asyncio.CancelledError:
        handle.stop()
        raise
    if out.returncode != 0 and not out.truncated:
        raise _failure(out, cut_end)
    if out.truncated:
        out = dataclasses.replace(out, stdout=out.stdout[: cut_end(out.stdout)])
    return out


def _guarded(
    repo: Repository, tail: list[str], roots: tuple[str, ...], max_bytes: int, handle: Handle
) -> GitOutput:
    vetted = preflight(repo, roots, handle)
    out = spawn_sync(
        repo.git_dir, repo.work_tree, tail, roots=roots, handle=handle, max_bytes=max_bytes
    )
    postflight(repo, vetted, roots, handle)
    return out


def _pathspecs(repo: Repository, pathspecs: list[str]) -> list[str]:
    if pathspecs:
        return ["--", *pathspecs]
    return ["--", repo.pathspec(())] if repo.prefix else ["--"]


def _strip(repo: Repository, path: str | None) -> str | None:
    """A top-relative path as folder-relative, or None when it lies outside the folder."""
    if path is None or not repo.prefix:
        return path
    head = "/".join(repo.prefix) + "/"
    return path[len(head) :] if path.startswith(head) else None


@dataclass
class StatusAnswer:
    status: Status
    truncated: bool


async def status(
    repo: Repository,
    roots: Iterable[str],
    pathspecs: list[str],
    *,
    untracked: str,
    max_entries: int,
    cut_end: CutEnd,
) -> StatusAnswer:
    tail = [
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        "--ignore-submodules=all",
        f"--untracked-files={untracked}",
        "--find-renames",
        *_pathspecs(repo, pathspecs),
    ]
    out = await run(repo, tail, roots, max_bytes=32 << 20, cut_end=cut_end)
    parsed = parse_status(out.stdout)
    entries: list[StatusEntry] = []
    for e in parsed.entries:
        path = _strip(repo, e.path)
        if path is None:
            continue
        orig = _strip(repo, e.orig_path)
        entries.append(StatusEntry(path, e.kind, e.index, e.worktree, orig, e.score, e.submodule))
    truncated = out.truncated or len(entries) > max_entries
    parsed.entries = entries[:max_entries]
    return StatusAnswer(parsed, truncated)


@dataclass
class DiffAnswer:
    files: list[FileDiff]
    truncated: bool


def _relative(repo: Repository) -> list[str]:
    return [f"--relative={'/'.join(repo.prefix)}"] if repo.prefix else []


async def diff(
    repo: Repository,
    roots: Iterable[str],
    revisions: list[str],
    pathspecs: list[str],
    *,
    staged: bool,
    context_lines: int,
    options: list[str],
    max_bytes: int,
    cut_end: CutEnd,
) -> DiffAnswer:
    tail = [
        "diff",
        *DIFF_SAFETY,
        "--no-color-moved",
        f"--unified={context_lines}",
        *_relative(repo),
        *options,
        *(["--cached"] if staged else []),
        "--end-of-options",
        *revisions,
        *_pathspecs(repo, pathspecs),
    ]
    out = await run(repo, tail, roots, max_bytes=max_bytes, cut_end=cut_end)
    files = split_patch(out.stdout)
    return DiffAnswer(files, out.truncated)


@dataclass
class LogAnswer:
    commits: list[Commit]
    truncated: bool


async def log(
    repo: Repository,
    roots: Iterable[str],
    revision: str | None,
    pathspecs: list[str],
    *,
    max_count: int,
    skip: int,
    filters: list[str],
    options: list[str],
    cut_end: CutEnd,
) -> LogAnswer:
    tail = [
        "log",
        "-z",
        FORMAT,
        *DIFF_SAFETY,
        "--no-show-signature",
        f"--max-count={max_count + 1}",
        f"--skip={skip}",
        *filters,
        *options,
        "--end-of-options",
        *([revision] if revision else []),
        *_pathspecs(repo, pathspecs),
    ]
    try:
        out = await run(repo, tail, roots, max_bytes=16 << 20, cut_end=cut_end)
    except SCodeError as err:
        if revision is None and "does not have any commits yet" in err.message:
            return LogAnswer([], False)
        raise
    commits = parse_log(out.stdout)
    truncated = out.truncated or len(commits) > max_count
    return LogAnswer(commits[:max_count], truncated)


@dataclass
class ShowAnswer:
    commit: Commit
    files: list[FileDiff]
    truncated: bool


async def show(
    repo: Repository,
    roots: Iterable[str],
    revision: str,
    pathspecs: list[str],
    *,
    context_lines: int,
    options: list[str],
    max_bytes: int,
    cut_end: CutEnd,
) -> ShowAnswer:
    tail = [
        "show",
        "-z",
        FORMAT,
        *DIFF_SAFETY,
        "--no-show-signature",
        "--patch",
        "--diff-merges=first-parent",
        f"--unified={context_lines}",
        *_relative(repo),
        *options,
        "--end-of-options",
        f"{revision}^{{commit}}",
        *_pathspecs(repo, pathspecs),
    ]
    out = await run(repo, tail, roots, max_bytes=max_bytes, cut_end=cut_end)
    try:
        commit, patch = split_show(out.stdout)
    except ValueError:
        raise SCodeError(
            ErrorKind.LIMIT_EXCEEDED,
            "the commit message alone exceeds max_bytes",
            limit="max_bytes",
            max=max_bytes,
        ) from None
    return ShowAnswer(commit, split_patch(patch), out.truncated)


@dataclass
class BlameAnswer:
    blame: Blame
    truncated: bool


async def blame(
    repo: Repository,
    roots: Iterable[str],
    revision: str | None,
    pathspec: str,
    *,
    start_line: int | None,
    end_line: int | None,
    options: list[str],
    max_lines: int,
    cut_end: CutEnd,
) -> BlameAnswer:
    tail = ["blame", "--porcelain", "--no-textconv", *options]
    if start_line is not None or end_line is not None:
        tail += ["-L", f"{start_line or 1},{end_line if end_line is not None else ''}"]
    if revision:
        tail.append(revision)  # the strict syntax never starts with '-' (no --end-of-options)
    tail += ["--", pathspec]
    out = await run(repo, tail, roots, max_bytes=32 << 20, cut_end=cut_end)
    parsed, cut = parse_blame(out.stdout, max_lines)
    return BlameAnswer(parsed, cut or out.truncated)
