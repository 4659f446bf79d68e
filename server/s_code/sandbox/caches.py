"""Per-workspace dependency caches: the only writable places besides the workspace and a tmp.

``$S_CODE_TOOL_CACHE_DIR`` (absolute, outside the workspace) or ``$XDG_CACHE_HOME/s-code/
tool-dependencies`` (else ``~/.cache/...``), then one directory per canonical workspace path. The
package managers' own variables point there, so cargo, go and npm never touch the host's caches or
read the host's credentials (``npm_config_userconfig`` is a private, empty file).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from s_code.protocol.errors import ErrorKind, SCodeError

CACHE_ENV = "S_CODE_TOOL_CACHE_DIR"


def cache_root(workspace: Path) -> Path:
    override = os.environ.get(CACHE_ENV)
    if override:
        root = Path(override)
        if not root.is_absolute():
            raise SCodeError(
                ErrorKind.INVALID_PARAMS, f"{CACHE_ENV} must be an absolute path, not {override!r}"
            )
        real = Path(os.path.realpath(root))
        ws = Path(os.path.realpath(workspace))
        if real == ws or ws in real.parents:
            raise SCodeError(
                ErrorKind.INVALID_PARAMS,
                f"{CACHE_ENV} must be outside the workspace: {override!r} is inside {str(ws)!r}",
            )
        return real
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "s-code" / "tool-dependencies"


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
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
    npmrc = root / "npmrc"
    if not npmrc.exists():
        npmrc.write_text("")
    env = {k: str(v) for k, v in dirs.items()}
    env.update(
        npm_config_userconfig=str(npmrc),
        GOFLAGS="-modcacherw",
        GOTOOLCHAIN="local",
    )
    return Caches(root=root, env=env)
