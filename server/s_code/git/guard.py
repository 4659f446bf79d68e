"""The config guard: immediately before every git operation, read the effective configuration
(``git config --list --show-origin --show-scope --includes -z``, which runs nothing) and refuse
command-running or config-loading keys (:mod:`s_code.git.keys`) from any scope the repository
controls — every scope except ``command`` (our own ``-c``), since system and global config are
switched off. Submodules' own config (``$GIT_DIR/modules/**`` and gitdirs of the paths named in
``.gitmodules``) is vetted the same way. ``core.worktree`` is refused unless it names our work tree.

Before it, the files git opens at fixed places must be regular files (git would hang on a FIFO:
:func:`s_code.git.layout.refuse_special_files`). After the operation, the config files are
stat'ed again; if they changed while git ran, the guard runs again and a rejection then discards
the output (the ``-c`` overrides already kept fsmonitor, hooks, pagers and external diff off in
that window).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from s_code.git.keys import dangerous
from s_code.git.layout import (
    MAX_GITFILE_BYTES,
    Repository,
    files_git_reads,
    refuse_special_files,
)
from s_code.git.runner import Handle, spawn_sync
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace.root import read_head

CONFIG_LIST = ["config", "--list", "--show-origin", "--show-scope", "--includes", "-z"]
MAX_SUBMODULES = 64
MAX_ATTEMPTS = 3
TRUSTED_SCOPES = frozenset({"command"})


@dataclass(frozen=True)
class ConfigEntry:
    scope: str
    origin: str
    key: str
    value: str | None


@dataclass(frozen=True)
class Rejection:
    key: str
    scope: str
    origin: str
    why: str


def parse_config_list(raw: bytes) -> list[ConfigEntry]:
    """Parse ``--show-scope --show-origin -z`` output: scope NUL origin NUL key[LF value] NUL."""
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    if fields and fields[-1] == "":
        fields.pop()
    entries = []
    for i in range(0, len(fields) - 2, 3):
        scope, origin, item = fields[i], fields[i + 1], fields[i + 2]
        key, newline, value = item.partition("\n")
        entries.append(ConfigEntry(scope, origin, key, value if newline else None))
    return entries


def _worktree_problem(entry: ConfigEntry, repo: Repository) -> str | None:
    if entry.value is None:
        return "core.worktree redirects the work tree"
    base = repo.git_dir
    target = os.path.realpath(os.path.join(base, entry.value))
    if target == repo.work_tree:
        return None
    return f"redirects the work tree to {target}"


def rejections(
    entries: Iterable[ConfigEntry], repo: Repository | None, scope_as: str | None = None
) -> list[Rejection]:
    """Every entry the repository may not set (``repo`` None: a submodule's config)."""
    found = []
    for e in entries:
        if e.scope in TRUSTED_SCOPES:
            continue
        why = dangerous(e.key, e.value)
        if why is None and e.key.lower() == "core.worktree" and repo is not None:
            why = _worktree_problem(e, repo)
        if why is not None:
            found.append(Rejection(e.key, scope_as or e.scope, e.origin, why))
    return found


def _raise(found: list[Rejection], where: str) -> None:
    first = found[0]
    raise SCodeError(
        ErrorKind.GIT_CONFIG_REJECTED,
        f"refusing to run git in {where}: {first.key} ({first.why}) is set in the "
        f"{first.scope} config ({first.origin}); the repository may not configure commands",
        key=first.key,
        scope=first.scope,
        origin=first.origin,
        rejected=[{"key": r.key, "scope": r.scope, "origin": r.origin} for r in found[:10]],
    )


def _list(
    git_dir: str, work_tree: str, roots: tuple[str, ...], handle: Handle
) -> list[ConfigEntry]:
    out = spawn_sync(git_dir, work_tree, CONFIG_LIST, roots=roots, handle=handle, overrides=False)
    if out.returncode != 0 or out.truncated:
        raise SCodeError(
            ErrorKind.GIT_CONFIG_REJECTED,
            f"could not read the repository's configuration: {out.stderr.strip()[:300]}",
            key="<config>",
            scope="local",
            origin=git_dir,
        )
    return parse_config_list(out.stdout)


def _submodule_gitdirs(repo: Repository) -> list[str]:
    found: list[str] = []
    modules = os.path.join(repo.common_dir, "modules")
    for dirpath, dirnames, filenames in os.walk(modules):
        if "config" in filenames and "HEAD" in filenames:
            found.append(dirpath)
            dirnames[:] = [d for d in dirnames if d == "modules"]
        if len(found) > MAX_SUBMODULES:
            break
    return found


def parse_plain_list(raw: bytes) -> list[tuple[str, str | None]]:
    """Parse ``git config --list -z`` without scopes: key[LF value] NUL."""
    out = []
    for item in raw.decode("utf-8", "surrogateescape").split("\0"):
        if item:
            key, newline, value = item.partition("\n")
            out.append((key, value if newline else None))
    return out


def _gitdir_of(dot_git: str) -> str | None:
    try:
        st = os.lstat(dot_git)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return dot_git
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        raw = read_head(dot_git, MAX_GITFILE_BYTES)
    except OSError:
        return None
    text = (raw or b"").decode("utf-8", "replace").strip()
    if not text.startswith("gitdir:"):
        return None
    return os.path.realpath(os.path.join(os.path.dirname(dot_git), text[len("gitdir:") :].strip()))


def _declared_gitdirs(repo: Repository, roots: tuple[str, ...], handle: Handle) -> list[str]:
    """Gitdirs of the submodule paths ``.gitmodules`` names that have their own ``.git``."""
    gitmodules = os.path.join(repo.work_tree, ".gitmodules")
    try:
        if not stat.S_ISREG(os.lstat(gitmodules).st_mode):
            return []
    except OSError:
        return []
    tail = ["config", "--file", gitmodules, "--list", "-z"]
    out = spawn_sync(
        repo.git_dir, repo.work_tree, tail, roots=roots, handle=handle, overrides=False
    )
    dirs: list[str] = []
    for key, value in parse_plain_list(out.stdout):
        low = key.lower()
        if not (low.startswith("submodule.") and low.endswith(".path") and value):
            continue
        dot_git = os.path.normpath(os.path.join(repo.work_tree, value, ".git"))
        if not dot_git.startswith(repo.work_tree + "/"):
            continue
        gitdir = _gitdir_of(dot_git)
        if gitdir is not None and os.path.isfile(os.path.join(gitdir, "config")):
            dirs.append(gitdir)
        if len(dirs) > MAX_SUBMODULES:
            break
    return dirs


Stamp = tuple[str, tuple[int, int, int, int] | None]


@dataclass(frozen=True)
class Vetted:
    """What the guard saw: config file identities, to notice a change during the operation."""

    stamps: tuple[Stamp, ...]


def _stamp(paths: Iterable[str]) -> tuple[Stamp, ...]:
    out: list[Stamp] = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append((p, (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)))
        except OSError:
            out.append((p, None))
    return tuple(out)


def _watched(repo: Repository, entries: Iterable[ConfigEntry]) -> list[str]:
    paths = list(repo.config_files())
    for e in entries:
        if e.origin.startswith("file:"):
            p = os.path.join(repo.work_tree, e.origin[len("file:") :])
            if p not in paths:
                paths.append(p)
    return paths


def preflight(repo: Repository, roots: tuple[str, ...], handle: Handle) -> Vetted:
    """Refuse the repository if its configuration could make git run anything (in a worker
    thread, like every git spawn)."""
    refuse_special_files(files_git_reads(repo))
    for _ in range(MAX_ATTEMPTS):
        before = _stamp(repo.config_files())
        entries = _vet(repo, roots, handle)
        stamps = _stamp(_watched(repo, entries))
        if tuple(s for s in stamps if s[0] in dict(before)) == before:
            return Vetted(stamps)
    raise SCodeError(
        ErrorKind.GIT_CONFIG_REJECTED,
        "the repository's configuration kept changing while s-code read it; try again",
        key="<config>",
        scope="local",
        origin=repo.config_files()[0],
        reason="changing",
    )


def _vet(repo: Repository, roots: tuple[str, ...], handle: Handle) -> list[ConfigEntry]:
    entries = _list(repo.git_dir, repo.work_tree, roots, handle)
    found = rejections(entries, repo)
    if found:
        _raise(found, repo.work_tree)
    gitdirs = _submodule_gitdirs(repo)
    gitdirs += [d for d in _declared_gitdirs(repo, roots, handle) if d not in gitdirs]
    if len(gitdirs) > MAX_SUBMODULES:
        raise SCodeError(
            ErrorKind.GIT_CONFIG_REJECTED,
            f"more than {MAX_SUBMODULES} submodules: too many to vet",
            key="submodule",
            scope="submodule",
            origin=os.path.join(repo.common_dir, "modules"),
        )
    for gitdir in gitdirs:
        refuse_special_files([os.path.join(gitdir, "config")])
        sub = _list(gitdir, repo.work_tree, roots, handle)
        found = rejections(sub, None, scope_as="submodule")
        if found:
            _raise(found, f"the submodule at {gitdir}")
    return entries


def postflight(repo: Repository, vetted: Vetted, roots: tuple[str, ...], handle: Handle) -> None:
    """After the operation: if the config changed meanwhile, vet it again before answering."""
    if _stamp(p for p, _ in vetted.stamps) != vetted.stamps:
        preflight(repo, roots, handle)
