"""Per-workspace dependency caches: the only writable places besides the workspace and a tmp.

``$S_CODE_TOOL_CACHE_DIR`` (absolute, outside the workspace) or ``$XDG_CACHE_HOME/s-code/
tool-dependencies`` (else ``~/.cache/...``), then one directory per canonical workspace path. The
package managers' own variables point there, so cargo, go and npm never touch the host's caches or
read the host's credentials (``npm_config_userconfig`` is a private, empty file).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from s_code.protocol.errors import ErrorKind, SCodeError

CACHE_ENV = "S_CODE_TOOL_CACHE_DIR"


def cache_base() -> Path:
    """Where every workspace's caches live: ``$S_CODE_TOOL_CACHE_DIR`` (real path) or the XDG
    default."""
    override = os.environ.get(CACHE_ENV)
    if override:
        if not os.path.isabs(override):
            raise SCodeError(
                ErrorKind.INVALID_PARAMS, f"{CACHE_ENV} must be an absolute path, not {override!r}"
            )
        return Path(os.path.realpath(override))
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "s-code" / "tool-dependencies"


def cache_root(workspace: Path) -> Path:
    """:func:`cache_base`, refused when ``$S_CODE_TOOL_CACHE_DIR`` is inside ``workspace``."""
    root = cache_base()
    override = os.environ.get(CACHE_ENV)
    if override:
        ws = Path(os.path.realpath(workspace))
        if root == ws or ws in root.parents:
            raise SCodeError(
                ErrorKind.INVALID_PARAMS,
                f"{CACHE_ENV} must be outside the workspace: {override!r} is inside {str(ws)!r}",
            )
    return root


def ensure_dir(root: Path, path: Path) -> None:
    """Create ``path`` below ``root`` one component at a time, never through a link: commands
    may write anything inside ``root``, including a link where a cache directory should be."""
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current, 0o700)
            continue
        if not stat.S_ISDIR(st.st_mode):  # a link or a file planted by a command: replace it
            os.unlink(current)
            os.mkdir(current, 0o700)


def _ensure_empty_file(path: Path) -> None:
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            return
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    os.close(fd)


@dataclass(frozen=True)
class Caches:
    root: Path
    env: dict[str, str]

    @property
    def writable(self) -> tuple[str, ...]:
        return (str(self.root),)


def for_workspace(workspace: Path) -> Caches:
    canonical = os.path.realpath(workspace)
    key = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    root = cache_root(workspace) / f"{Path(canonical).name or 'root'}-{key}"
    dirs = {
        "CARGO_HOME": root / "cargo",
        "GOPATH": root / "go",
        "GOMODCACHE": root / "go" / "pkg" / "mod",
        "GOCACHE": root / "go-build",
        "npm_config_cache": root / "npm",
        "PIP_CACHE_DIR": root / "pip",
    }
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    for d in dirs.values():
        ensure_dir(root, d)
    _ensure_empty_file(root / "npmrc")
    npmrc = root / "npmrc"
    env = {k: str(v) for k, v in dirs.items()}
    env.update(
        npm_config_userconfig=str(npmrc),
        GOFLAGS="-modcacherw",
        GOTOOLCHAIN="local",
    )
    return Caches(root=root, env=env)
