"""Finding the repository of a workspace folder, and refusing layouts that redirect git.

Discovery is ours, never git's: from the folder's root upward (stopping at a file-system
boundary), the first ``.git`` wins, as in git. Git is then always told ``--git-dir`` and
``--work-tree`` explicitly, so nothing in the workspace (an embedded bare repository, a nested
``.git``) can be discovered by git itself. Refused (``git_config_rejected``, ``scope: "layout"``):

- ``embedded_bare``: a directory on the way up that is itself a git directory (HEAD, objects/,
  refs/) — git would use it, and its config, as the repository;
- ``gitfile_outside``: a ``.git`` file whose ``gitdir:`` points outside the workspace folder;
- ``gitdir_symlink``: a ``.git`` that is a symbolic link;
- ``commondir_outside``: a ``commondir`` redirecting the gitdir's config outside the folder;
- ``gitfile_invalid``, ``commondir_invalid``: a ``.git`` or ``commondir`` that is not a regular
  file (a FIFO, a device: read without blocking, never followed) or not a ``gitdir:`` link;
- ``special_file`` (:func:`refuse_special_files`, before each git operation): a file git opens
  at a fixed place (``config``, ``index``, ``info/exclude``, ``.gitignore``...) that is not a
  regular file: git opens these blocking and would hang on a FIFO until its timeout;
- ``foreign_owner``: a gitdir or work tree owned by another user (git's ``safe.directory``
  check, which an explicit ``--git-dir`` would otherwise skip).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace.root import WorkspaceRoot, read_head

MAX_GITFILE_BYTES = 4096


@dataclass(frozen=True)
class Repository:
    """A vetted repository: absolute real paths, and where the workspace folder sits in it."""

    root: WorkspaceRoot
    git_dir: str
    work_tree: str
    prefix: tuple[str, ...]
    """Components from the work tree's top down to the workspace folder (``()`` when equal)."""
    common_dir: str

    def pathspec(self, parts: tuple[str, ...]) -> str:
        """The top-relative spelling of a folder-relative path (``.`` for the top itself)."""
        return "/".join((*self.prefix, *parts)) or "."

    def config_files(self) -> tuple[str, ...]:
        """The files whose change means the guard has to look again."""
        return (
            os.path.join(self.common_dir, "config"),
            os.path.join(self.git_dir, "config.worktree"),
            os.path.join(self.git_dir, "commondir"),
        )


def layout_error(layout: str, message: str, origin: str, **extra: object) -> SCodeError:
    return SCodeError(
        ErrorKind.GIT_CONFIG_REJECTED,
        message,
        key=".git",
        scope="layout",
        origin=origin,
        layout=layout,
        **extra,
    )


def _inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def looks_like_gitdir(path: str) -> bool:
    """git's own test: HEAD, objects/ and refs/ (``is_git_directory``)."""
    try:
        head = os.lstat(os.path.join(path, "HEAD"))
        objects = os.stat(os.path.join(path, "objects"))
        refs = os.stat(os.path.join(path, "refs"))
    except OSError:
        return False
    return (
        (stat.S_ISREG(head.st_mode) or stat.S_ISLNK(head.st_mode))
        and stat.S_ISDIR(objects.st_mode)
        and stat.S_ISDIR(refs.st_mode)
    )


def read_link_file(path: str, layout: str) -> bytes | None:
    """The first bytes of a small file of the repository's (a ``.git`` file, a ``commondir``),
    read without blocking (:func:`read_head`); None when absent. Anything but a regular file
    (a FIFO, a device, a symbolic link), or one that cannot be read, is refused as ``layout``."""
    try:
        raw = read_head(path, MAX_GITFILE_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        why = "a symbolic link" if exc.errno == errno.ELOOP else f"unreadable ({exc.strerror})"
        raise layout_error(layout, f"{path} is {why}; s-code refuses it", path) from None
    if raw is None:
        raise layout_error(layout, f"{path} is not a regular file; s-code refuses it", path)
    return raw


def _read_gitfile(directory: str) -> str:
    dot_git = os.path.join(directory, ".git")
    raw = read_link_file(dot_git, "gitfile_invalid")
    if raw is None:
        raise layout_error("gitfile_invalid", f"{dot_git} disappeared", dot_git)
    text = raw.decode("utf-8", "replace").strip()
    if not text.startswith("gitdir:"):
        raise layout_error(
            "gitfile_invalid", f"{directory}/.git is a file but not a gitdir link", directory
        )
    target = text[len("gitdir:") :].strip()
    return os.path.realpath(os.path.join(directory, target))


def _check_owner(path: str, what: str) -> None:
    st = os.stat(path)
    if st.st_uid != os.geteuid():
        raise layout_error(
            "foreign_owner",
            f"the {what} {path} is owned by uid {st.st_uid}, not by this user (uid "
            f"{os.geteuid()}); git calls this dubious ownership and so does s-code",
            path,
            owner=st.st_uid,
        )


def _common_dir(git_dir: str, folder: str) -> str:
    link = os.path.join(git_dir, "commondir")
    raw = read_link_file(link, "commondir_invalid")
    if raw is None:
        return git_dir
    target = raw.decode("utf-8", "replace").strip()
    common = os.path.realpath(os.path.join(git_dir, target))
    if not _inside(common, folder) and not _inside(common, git_dir):
        raise layout_error(
            "commondir_outside",
            f"{link} redirects the repository's config to {common}, outside the workspace",
            link,
        )
    return common


_GIT_DIR_FILES = ("HEAD", "index", "config.worktree", "MERGE_HEAD")
_COMMON_FILES = (
    "config",
    "packed-refs",
    "shallow",
    "info/exclude",
    "info/attributes",
    "objects/info/alternates",
)
_WORK_TREE_FILES = (".gitignore", ".gitattributes", ".gitmodules", ".mailmap")


def _head_ref(git_dir: str) -> str | None:
    """The loose ref file HEAD names (``refs/heads/main``), when it names one."""
    try:
        raw = read_head(os.path.join(git_dir, "HEAD"), 1024)
    except OSError:
        return None
    text = (raw or b"").decode("utf-8", "replace").strip()
    if not text.startswith("ref: refs/"):
        return None
    ref = text[len("ref: ") :]
    return ref if ".." not in ref.split("/") else None


def files_git_reads(repo: Repository) -> list[str]:
    """The files every git operation may open at fixed places: the gitdir's and the common
    dir's own files, the checked-out branch's loose ref, the work tree's top-level ignore,
    attribute, submodule and mailmap files."""
    paths = [os.path.join(repo.git_dir, f) for f in _GIT_DIR_FILES]
    paths += [os.path.join(repo.common_dir, f) for f in _COMMON_FILES]
    ref = _head_ref(repo.git_dir)
    if ref is not None:
        paths.append(os.path.join(repo.common_dir, ref))
    paths += [os.path.join(repo.work_tree, f) for f in _WORK_TREE_FILES]
    return paths


def refuse_special_files(paths: list[str]) -> None:
    """Refuse (``layout: special_file``) when one of ``paths`` exists and is not a regular file:
    git opens these blocking, and would hang on a FIFO until its timeout."""
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            raise layout_error(
                "special_file",
                f"{path} is not a regular file (a FIFO, a device or a socket?); git would "
                "block reading it, so s-code refuses the repository",
                path,
            )


def discover(root: WorkspaceRoot) -> Repository:
    """The repository of ``root``: ``.git`` in the folder or in a parent directory."""
    root.ensure_intact()
    folder = root.real_path
    device = os.stat(folder).st_dev
    directory = folder
    prefix: list[str] = []
    while True:
        dot_git = os.path.join(directory, ".git")
        try:
            st = os.lstat(dot_git)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat.S_ISLNK(st.st_mode):
                raise layout_error(
                    "gitdir_symlink", f"{dot_git} is a symbolic link; s-code refuses it", dot_git
                )
            if stat.S_ISDIR(st.st_mode):
                git_dir = dot_git
            elif stat.S_ISREG(st.st_mode):
                git_dir = _read_gitfile(directory)
                if not _inside(git_dir, folder):
                    raise layout_error(
                        "gitfile_outside",
                        f"{dot_git} points git at {git_dir}, outside the workspace folder "
                        f"{folder}: that gitdir's config and hooks are not the workspace's",
                        dot_git,
                        gitdir=git_dir,
                    )
            else:
                raise layout_error("gitfile_invalid", f"{dot_git} is not a directory", dot_git)
            if not looks_like_gitdir(git_dir):
                raise SCodeError(
                    ErrorKind.NOT_FOUND,
                    f"{dot_git} is not a valid git directory",
                    reason="not_a_repository",
                )
            _check_owner(git_dir, "git directory")
            _check_owner(directory, "work tree")
            common = _common_dir(git_dir, folder)
            if common != git_dir:
                _check_owner(common, "common git directory")
            return Repository(root, git_dir, directory, tuple(reversed(prefix)), common)
        if looks_like_gitdir(directory):
            raise layout_error(
                "embedded_bare",
                f"{directory} is itself a git directory (an embedded bare repository); its "
                "config would be trusted by git, so s-code refuses it",
                directory,
            )
        parent = os.path.dirname(directory)
        if parent == directory or os.stat(parent).st_dev != device:
            raise SCodeError(
                ErrorKind.NOT_FOUND,
                f"{folder} is not inside a git repository",
                reason="not_a_repository",
            )
        prefix.append(os.path.basename(directory))
        directory = parent
