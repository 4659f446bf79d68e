"""The server's own projection of a command: what the card shows is what runs.

From the agent's argv, cwd and network flag: the executable resolved to an absolute path (on the
sandbox's PATH), the cwd checked to be a directory inside the workspace, the tier from the
self-test, and the effective sandbox profile. The card is built from that and nothing else;
known secret values and secret-format tokens in arguments are hidden in what is shown, nothing
else (:meth:`~s_code.redaction.Redactor.redact_shown`: what runs is what the user sees).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from s_code.approvals.cards import Card, CommandDetails, SandboxShown
from s_code.approvals.policy import Operation
from s_code.hostproc.unsafe_workspace import refuse_unsafe_workspace
from s_code.protocol.display import head_tail
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.redaction import Redactor
from s_code.sandbox import caches, tiers
from s_code.sandbox.profile import Profile, build, read_only_binds
from s_code.session.session import Session
from s_code.workspace.gitdirs import GitDirs
from s_code.workspace.root import WorkspaceRoot

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY


@dataclass(frozen=True)
class Projection:
    argv: tuple[str, ...]
    cwd_display: str
    profile: Profile
    report: tiers.TierReport
    tmp: str

    @property
    def operation(self) -> Operation:
        if self.profile.tier == 3 or self.profile.network:
            return "command_network"
        return "command_sandboxed"

    def card(self, redactor: Redactor) -> Card:
        shown = [redactor.redact_shown(a) for a in self.argv]
        compact = shlex.join([_short_path(shown[0]), *shown[1:]])
        where = self.cwd_display or "."
        extra = ", network" if self.profile.network else ""
        title = f"Run {head_tail(compact, TITLE_COMMAND)} in {where} ({self.profile.label}{extra})"
        details = CommandDetails(
            argv=tuple(shown),
            cwd=self.profile.cwd,
            network=self.profile.network,
            sandbox=_shown_profile(self.profile, self.tmp),
        )
        return Card("command", title, shlex.join(shown), details)


TITLE_COMMAND = 120  # characters of the command in the title: its head and its tail


def _short_path(path: str) -> str:
    """A long absolute executable path with its middle elided: ``/usr/…/bin/tool``."""
    parts = path.split("/")
    if len(path) <= 40 or len(parts) <= 4:
        return path
    return "/".join([*parts[:2], "…", *parts[-2:]])


def _shown_profile(profile: Profile, tmp: str) -> SandboxShown:
    # the private tmp gets a fresh name on every run: show what it is, not a name
    return SandboxShown(
        tier=profile.tier,
        label=profile.label,
        cwd=profile.cwd,
        network=profile.network,
        readable=profile.readable,
        writable=tuple("<private tmp>" if w == tmp else w for w in profile.writable),
        read_only=profile.read_only,
        hidden=profile.hidden,
        workspace=profile.workspace,
        runtimes=profile.runtimes,
        caches=dict(sorted(profile.caches.items())),
        env=tuple(sorted(profile.env)),
        limits=profile.limits.shown(profile.tier) if profile.limits is not None else {},
        not_prevented=profile.not_prevented,
        unreadable=profile.unreadable,
    )


def check_argv(command: list[str]) -> None:
    """An argv the sandbox can run: a program name, no NUL anywhere."""
    if not command:
        raise invalid_params("command must be a non-empty array of strings", "command")
    for i, arg in enumerate(command):
        if "\0" in arg:
            raise invalid_params("an argument holds a NUL character", f"command.{i}")
    if not command[0]:
        raise invalid_params("the program name is empty", "command.0")


def _locate(session: Session, cwd: str | None) -> tuple[WorkspaceRoot, tuple[str, ...], str]:
    if cwd is None or cwd in ("", "."):
        return session.folders.primary, (), ""
    located = session.folders.locate(cwd, "cwd")
    return located.root, located.parts, located.display


def resolve_cwd(session: Session, cwd: str | None) -> tuple[WorkspaceRoot, str, str]:
    root, parts, display = _locate(session, cwd)
    with root.opened(parts, _DIR_FLAGS, field="cwd"):
        pass  # a directory beneath the root, reached without following a symlink
    return root, os.path.join(root.real_path, *parts), display


def resolve_executable(name: str, cwd: str, path: str) -> str:
    if "/" in name:
        candidate = os.path.normpath(os.path.join(cwd, name))
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
        raise SCodeError(
            ErrorKind.NOT_FOUND, f"{name!r} is not an executable file", field="command.0"
        )
    for entry in path.split(":"):
        candidate = os.path.join(entry, name)
        if entry and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise SCodeError(
        ErrorKind.NOT_FOUND, f"{name!r} was not found on the sandbox's PATH", field="command.0"
    )


@dataclass(frozen=True)
class Watched:
    """What a command must not change in one workspace, as a scan found it just now."""

    gitdirs: GitDirs
    extra: tuple[str, ...]  # files and directories of the user's protected patterns

    def keep_read_only(self, workspace: str) -> tuple[str, ...]:
        rels = {*self.gitdirs.dirs, *self.gitdirs.gitfiles, *self.extra}
        return tuple(sorted(os.path.join(workspace, r) if r else workspace for r in rels))


def scan(session: Session, workspace: str) -> Watched:
    """Refresh the workspace's directory index: every git directory, at any depth, and the
    files of the user's protected patterns."""
    index = session.tree(workspace)
    index.refresh()
    extra = index.matching(session.protected.user_matches) if session.protected.any_files else []
    return Watched(index.git_dirs(), tuple(extra))


def project(session: Session, command: list[str], cwd: str | None, network: bool) -> Projection:
    check_argv(command)
    root, cwd_abs, cwd_display = resolve_cwd(session, cwd)
    workspace = Path(root.real_path)
    refuse_unsafe_workspace(str(workspace), "commands")
    report = tiers.current()
    dep = caches.for_workspace(workspace)
    tmp_base = dep.root / "tmp"
    caches.ensure_dir(dep.root, tmp_base)  # a command may have planted a link there
    tmp = str(tmp_base / "run")  # replaced by a fresh directory for each run
    watched = scan(session, str(workspace))
    keep = watched.keep_read_only(str(workspace))
    profile = build(report.tier, workspace, Path(cwd_abs), network, dep, tmp, keep)
    exe = resolve_executable(command[0], cwd_abs, profile.env.get("PATH", ""))
    return Projection((exe, *command[1:]), cwd_display, profile, report, tmp)


def with_private_tmp(profile: Profile, placeholder: str, tmp: str) -> Profile:
    """The profile of one run: its own private tmp in place of the placeholder."""
    writable = tuple(tmp if w == placeholder else w for w in profile.writable)
    env = {
        k: tmp + v[len(placeholder) :] if v == placeholder or v.startswith(placeholder + "/") else v
        for k, v in profile.env.items()
    }
    return replace(profile, writable=writable, env=env, private_tmp=tmp)


def with_read_only(profile: Profile, keep: tuple[str, ...]) -> Profile:
    """The profile with tier 1's read-only binds made again from a scan just before the run."""
    return replace(profile, read_only=read_only_binds(profile.workspace, keep))
