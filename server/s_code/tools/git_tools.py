"""The git inspection tools: git_status, git_diff, git_log (core), git_show, git_blame.

Each validates its paths through the workspace folders (WorkspaceRoot rules: no absolute paths,
no ``..``), its revisions and options through :mod:`s_code.git.args`, finds the repository of the
folder the paths land in (the primary folder when there are none), and runs one guarded git
operation (:mod:`s_code.git.operations`). In a multi-root workspace, paths start with the folder
name and results use the same spelling.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Literal

from pydantic import Field

from s_code.edits.unsaved import UNSAVED_DESCRIPTION, save_before_disk_read
from s_code.git import args as gitargs
from s_code.git import operations
from s_code.git.commits import Commit
from s_code.git.layout import Repository, discover
from s_code.git.patches import Change, FileDiff
from s_code.protocol.errors import invalid_params
from s_code.protocol.models import Args, Result
from s_code.session.session import Session
from s_code.tools.registry import ToolDef
from s_code.workspace.root import WorkspaceRoot

MAX_PATHS = 64
_PATHS: list[str] = Field(
    default_factory=list,
    max_length=MAX_PATHS,
    description="Workspace-relative paths (files or directories) to limit the answer to.",
)
_OPTIONS_DOC = "Extra git options, each from the tool's allow-list (others are refused)."


class _Target:
    """The folder, repository and pathspecs one call is aimed at. Made by :meth:`find`: in a
    worker thread (discovery stats and reads the repository's files), while the handler holds
    the git lock (so no command changes the layout under it)."""

    def __init__(
        self, session: Session, paths: list[str], field: str = "paths", *, blamed: bool = False
    ) -> None:
        located = [session.folders.locate(p, f"{field}.{i}") for i, p in enumerate(paths)]
        roots = {id(loc.root) for loc in located}
        if len(roots) > 1:
            raise invalid_params("all paths must be in the same workspace folder", field)
        if blamed:  # git reads the working-tree file: a regular file beneath the root, unopened
            located[0].root.regular_file(located[0].parts, field=field)
        self.session = session
        self.root: WorkspaceRoot = located[0].root if located else session.folders.primary
        self.repo: Repository = discover(self.root)
        self.pathspecs = [self.repo.pathspec(loc.parts) for loc in located]
        self.roots = tuple(r.real_path for r in session.folders.roots)

    @classmethod
    async def find(
        cls, session: Session, paths: list[str], field: str = "paths", *, blamed: bool = False
    ) -> _Target:
        return await asyncio.to_thread(cls, session, paths, field, blamed=blamed)

    @property
    def dirs(self) -> tuple[str, str, str]:
        return (self.repo.git_dir, self.repo.common_dir, self.repo.work_tree)

    def show(self, path: str | None) -> str | None:
        """A folder-relative path as the client spells it (folder name first when multi-root)."""
        if path is None:
            return None
        parts = tuple(p for p in path.split("/") if p)
        return self.session.folders.display(self.root, parts)


@contextlib.asynccontextmanager
async def _aimed(
    session: Session, paths: list[str], field: str = "paths", *, blamed: bool = False
) -> AsyncIterator[_Target]:
    """The call's target, found and used while no command that could change it runs: none of
    this session (the session lock), and none of another session whose workspace holds the
    repository (the lock files, taken once the repository is known; found again under them, and
    once more if a command moved it in between)."""
    async with session.lock.git():  # never while a command runs
        target = await _Target.find(session, paths, field, blamed=blamed)
        for _ in range(3):
            async with session.lock.git_dirs(*target.dirs):
                again = await _Target.find(session, paths, field, blamed=blamed)
                if again.dirs == target.dirs:
                    yield again
                    return
                target = again
        raise invalid_params("the repository moved while the call started; try again", field)


# -- git_status ------------------------------------------------------------------------------------


class GitStatusArgs(Args):
    path: str = Field(".", description="Limit to this workspace path (and pick its folder).")
    untracked: Literal["no", "normal", "all"] = Field(
        "normal",
        description="Untracked files: `no`, `normal` (directories collapsed) or `all`.",
    )
    max_entries: int = Field(1000, ge=1, le=10_000)


class StatusEntryResult(Result):
    path: str
    kind: Literal["changed", "renamed", "copied", "unmerged", "untracked", "ignored"]
    index: str = Field(description="Staged side: . unchanged, M, T, A, D, R, C, U.")
    worktree: str = Field(description="Unstaged side, same letters.")
    orig_path: str | None = Field(None, description="The source of a rename or copy.")
    score: int | None = Field(None, description="Rename/copy similarity in percent.")
    submodule: bool = False


class WorktreeResult(Result):
    """The result of a git call that reads the working tree, where unsaved buffers are not."""

    unsaved_buffers: list[str] | None = Field(
        None, description=UNSAVED_DESCRIPTION.format(reader="git")
    )


class GitStatusResult(WorktreeResult):
    branch: str | None = Field(description="The checked-out branch; null when detached.")
    head: str | None = Field(description="HEAD's commit; null before the first commit.")
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    entries: list[StatusEntryResult]
    truncated: bool


async def _git_status(session: Session, args: GitStatusArgs) -> GitStatusResult:
    unsaved = await save_before_disk_read(session)
    async with _aimed(session, [args.path], "path") as t:
        answer = await operations.status(
            t.repo,
            t.roots,
            t.pathspecs,
            untracked=args.untracked,
            max_entries=args.max_entries,
            cut_end=session.redactor.cut_end_bytes,
        )
    s = answer.status
    return GitStatusResult(
        branch=s.branch,
        head=s.head,
        upstream=s.upstream,
        ahead=s.ahead,
        behind=s.behind,
        entries=[
            StatusEntryResult(
                path=t.show(e.path) or "",
                kind=e.kind,
                index=e.index,
                worktree=e.worktree,
                orig_path=t.show(e.orig_path),
                score=e.score,
                submodule=e.submodule,
            )
            for e in s.entries
        ],
        truncated=answer.truncated,
        unsaved_buffers=unsaved,
    )


# -- diffs ---------------------------------------------------------------------------------------


class FileDiffResult(Result):
    path: str
    old_path: str | None = Field(None, description="The source of a rename or copy.")
    change: Change
    binary: bool
    additions: int
    deletions: int
    patch: str = Field(description="This file's section of the unified diff.")


class CommitResult(Result):
    commit: str
    parents: list[str]
    author_name: str
    author_email: str
    author_date: str = Field(description="ISO 8601.")
    committer_name: str
    committer_email: str
    committer_date: str
    subject: str
    body: str


def _commit(c: Commit) -> CommitResult:
    return CommitResult(
        commit=c.commit,
        parents=list(c.parents),
        author_name=c.author_name,
        author_email=c.author_email,
        author_date=c.author_date,
        committer_name=c.committer_name,
        committer_email=c.committer_email,
        committer_date=c.committer_date,
        subject=c.subject,
        body=c.body,
    )


def _files(t: _Target, files: list[FileDiff]) -> list[FileDiffResult]:
    return [
        FileDiffResult(
            path=t.show(f.path) or "",
            old_path=t.show(f.old_path),
            change=f.change,
            binary=f.binary,
            additions=f.additions,
            deletions=f.deletions,
            patch=f.patch,
        )
        for f in files
    ]


class GitDiffArgs(Args):
    paths: list[str] = _PATHS
    staged: bool = Field(False, description="Staged changes (index vs base, default HEAD).")
    base: str | None = Field(
        None,
        description="Compare against this revision; or a range `A..B` / `A...B` (no target).",
    )
    target: str | None = Field(None, description="Compare base with this revision.")
    context_lines: int = Field(3, ge=0, le=200)
    options: list[str] = Field(default_factory=list, max_length=16, description=_OPTIONS_DOC)
    max_bytes: int = Field(256_000, ge=1_000, le=8_000_000, description="Bound on the diff.")


class GitDiffResult(WorktreeResult):
    files: list[FileDiffResult]
    truncated: bool = Field(description="max_bytes was reached; the last file may be partial.")


async def _git_diff(session: Session, args: GitDiffArgs) -> GitDiffResult:
    revisions: list[str] = []
    if args.base is not None:
        revisions.append(gitargs.revision(args.base, "base", allow_range=args.target is None))
    if args.target is not None:
        if args.base is None:
            raise invalid_params("target needs a base", "target")
        revisions.append(gitargs.revision(args.target, "target"))
    if args.staged and len(revisions) > 1:
        raise invalid_params("staged compares the index with one base revision", "target")
    options = gitargs.options(args.options, "diff")
    reads_worktree = len(revisions) < 2 and not args.staged
    unsaved = await save_before_disk_read(session) if reads_worktree else None
    async with _aimed(session, list(args.paths)) as t:
        answer = await operations.diff(
            t.repo,
            t.roots,
            revisions,
            t.pathspecs,
            staged=args.staged,
            context_lines=args.context_lines,
            options=options,
            max_bytes=args.max_bytes,
            cut_end=session.redactor.cut_end_bytes,
        )
    return GitDiffResult(
        files=_files(t, answer.files), truncated=answer.truncated, unsaved_buffers=unsaved
    )


# -- git_log ---------------------------------------------------------------------------------------


class GitLogArgs(Args):
    revision: str | None = Field(
        None, description="Where to start (default HEAD), or a range `A..B` / `A...B`."
    )
    paths: list[str] = _PATHS
    max_count: int = Field(20, ge=1, le=500)
    skip: int = Field(0, ge=0, le=1_000_000)
    author: str | None = Field(None, description="Only commits whose author matches (regex).")
    grep: str | None = Field(None, description="Only commits whose message matches (regex).")
    since: str | None = Field(None, description="Only commits after this date.")
    until: str | None = Field(None, description="Only commits before this date.")
    options: list[str] = Field(default_factory=list, max_length=16, description=_OPTIONS_DOC)


class GitLogResult(Result):
    commits: list[CommitResult]
    truncated: bool = Field(description="More commits follow; raise skip to page.")


async def _git_log(session: Session, args: GitLogArgs) -> GitLogResult:
    revision = (
        gitargs.revision(args.revision, "revision", allow_range=True) if args.revision else None
    )
    filters = []
    if args.author is not None:
        filters.append("--author=" + gitargs.text_value(args.author, "author"))
    if args.grep is not None:
        filters.append("--grep=" + gitargs.text_value(args.grep, "grep"))
    if args.since is not None:
        filters.append("--since=" + gitargs.date_value(args.since, "since"))
    if args.until is not None:
        filters.append("--until=" + gitargs.date_value(args.until, "until"))
    options = gitargs.options(args.options, "log")
    async with _aimed(session, list(args.paths)) as t:
        answer = await operations.log(
            t.repo,
            t.roots,
            revision,
            t.pathspecs,
            max_count=args.max_count,
            skip=args.skip,
            filters=filters,
            options=options,
            cut_end=session.redactor.cut_end_bytes,
        )
    return GitLogResult(commits=[_commit(c) for c in answer.commits], truncated=answer.truncated)


# -- git_show --------------------------------------------------------------------------------------


class GitShowArgs(Args):
    revision: str = Field("HEAD", description="The commit to show.")
    paths: list[str] = _PATHS
    context_lines: int = Field(3, ge=0, le=200)
    options: list[str] = Field(default_factory=list, max_length=16, description=_OPTIONS_DOC)
    max_bytes: int = Field(256_000, ge=1_000, le=8_000_000, description="Bound on the output.")


class GitShowResult(Result):
    commit: CommitResult
    files: list[FileDiffResult] = Field(description="The change against the first parent.")
    truncated: bool


async def _git_show(session: Session, args: GitShowArgs) -> GitShowResult:
    revision = gitargs.revision(args.revision, "revision")
    options = gitargs.options(args.options, "show")
    async with _aimed(session, list(args.paths)) as t:
        answer = await operations.show(
            t.repo,
            t.roots,
            revision,
            t.pathspecs,
            context_lines=args.context_lines,
            options=options,
            max_bytes=args.max_bytes,
            cut_end=session.redactor.cut_end_bytes,
        )
    return GitShowResult(
        commit=_commit(answer.commit), files=_files(t, answer.files), truncated=answer.truncated
    )


# -- git_blame -------------------------------------------------------------------------------------


class GitBlameArgs(Args):
    path: str = Field(description="The file, workspace-relative.")
    revision: str | None = Field(None, description="Blame as of this commit (default: the file).")
    start_line: int | None = Field(None, ge=1, description="First line (1-based).")
    end_line: int | None = Field(None, ge=1, description="Last line (1-based, inclusive).")
    options: list[str] = Field(default_factory=list, max_length=8, description=_OPTIONS_DOC)
    max_lines: int = Field(2_000, ge=1, le=50_000)


class BlameLineResult(Result):
    line_number: int
    commit: str
    original_line: int = Field(description="The line's number in that commit.")
    text: str


class BlameCommitResult(Result):
    author_name: str
    author_email: str
    author_time: int = Field(description="Seconds since the epoch.")
    summary: str
    boundary: bool
    filename: str = Field(description="The file's path in that commit.")


class GitBlameResult(WorktreeResult):
    path: str
    lines: list[BlameLineResult]
    commits: dict[str, BlameCommitResult]
    truncated: bool


async def _git_blame(session: Session, args: GitBlameArgs) -> GitBlameResult:
    revision = gitargs.revision(args.revision, "revision") if args.revision else None
    if args.start_line and args.end_line and args.end_line < args.start_line:
        raise invalid_params("end_line is before start_line", "end_line")
    options = gitargs.options(args.options, "blame")
    if not session.folders.locate(args.path).parts:
        raise invalid_params("path must name a file", "path")
    unsaved = None if revision is not None else await save_before_disk_read(session)
    async with _aimed(session, [args.path], "path", blamed=revision is None) as t:
        answer = await operations.blame(
            t.repo,
            t.roots,
            revision,
            t.pathspecs[0],
            start_line=args.start_line,
            end_line=args.end_line,
            options=options,
            max_lines=args.max_lines,
            cut_end=session.redactor.cut_end_bytes,
        )
    b = answer.blame
    return GitBlameResult(
        path=t.show(_strip_path(t, t.pathspecs[0])) or args.path,
        lines=[
            BlameLineResult(
                line_number=ln.line_number,
                commit=ln.commit,
                original_line=ln.original_line,
                text=ln.text,
            )
            for ln in b.lines
        ],
        commits={
            sha: BlameCommitResult(
                author_name=c.author_name,
                author_email=c.author_email,
                author_time=c.author_time,
                summary=c.summary,
                boundary=c.boundary,
                filename=c.filename,
            )
            for sha, c in b.commits.items()
        },
        truncated=answer.truncated,
        unsaved_buffers=unsaved,
    )


def _strip_path(t: _Target, pathspec: str) -> str:
    head = "/".join(t.repo.prefix)
    return pathspec[len(head) + 1 :] if head else pathspec


TOOLS = (
    ToolDef(
        name="git_status",
        title="Git status",
        idempotent=True,
        args=GitStatusArgs,
        result=GitStatusResult,
        handler=_git_status,
        read_only=True,
        description=(
            "Show the git working-tree status: branch, upstream, ahead/behind, and changed, "
            "renamed, unmerged and untracked files with staged and unstaged letters. Runs git "
            "hardened; repositories whose config could run commands are refused."
        ),
    ),
    ToolDef(
        name="git_diff",
        title="Git diff",
        idempotent=True,
        args=GitDiffArgs,
        result=GitDiffResult,
        handler=_git_diff,
        read_only=True,
        description=(
            "Show a git diff as per-file sections (unified patch text, additions, deletions): "
            "unstaged changes by default, staged with staged=true, or between revisions."
        ),
    ),
    ToolDef(
        name="git_log",
        title="Git log",
        idempotent=True,
        args=GitLogArgs,
        result=GitLogResult,
        handler=_git_log,
        read_only=True,
        description=(
            "List git commits (hash, parents, author, dates, subject, body), newest first, "
            "optionally for a revision range, paths, author, message pattern or dates."
        ),
    ),
    ToolDef(
        name="git_show",
        title="Git show",
        idempotent=True,
        args=GitShowArgs,
        result=GitShowResult,
        handler=_git_show,
        read_only=True,
        profile="specialized",
        description=(
            "Show one git commit: its metadata and its change as per-file patch sections."
        ),
    ),
    ToolDef(
        name="git_blame",
        title="Git blame",
        idempotent=True,
        args=GitBlameArgs,
        result=GitBlameResult,
        handler=_git_blame,
        read_only=True,
        profile="specialized",
        description=(
            "Show git blame for a file or a line range: for each line, the commit that last "
            "changed it, with author, time and summary."
        ),
    ),
)
