"""Language runtime roots (NVM, pyenv, Conda, asdf, mise, Volta, rustup): usable, read-only.

Found from their environment variables and default locations. In tier 1 ``$HOME`` is a private
tmpfs, so each root under it is bound back read-only; in every tier nothing here is writable.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# (environment variable, default location relative to $HOME)
_ROOTS = (
    ("NVM_DIR", ".nvm"),
    ("PYENV_ROOT", ".pyenv"),
    ("CONDA_PREFIX", "miniconda3"),
    ("CONDA_ROOT", "anaconda3"),
    ("MAMBA_ROOT_PREFIX", "miniforge3"),
    ("ASDF_DATA_DIR", ".asdf"),
    ("ASDF_DIR", ".asdf"),
    ("MISE_DATA_DIR", ".local/share/mise"),
    ("VOLTA_HOME", ".volta"),
    ("RUSTUP_HOME", ".rustup"),
)
# Variables passed into the sandbox so those runtimes find themselves.
ENV_NAMES = tuple(sorted({name for name, _ in _ROOTS} | {"PYENV_VERSION", "CONDA_DEFAULT_ENV"}))


def roots(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    found: list[str] = []
    for name, default in _ROOTS:
        for candidate in (env.get(name), str(home / default)):
            if candidate and os.path.isabs(candidate) and os.path.isdir(candidate):
                found.append(os.path.realpath(candidate))
    # cargo's binaries live in ~/.cargo/bin, beside the CARGO_HOME the sandbox redirects.
    cargo_bin = home / ".cargo" / "bin"
    if cargo_bin.is_dir():
        found.append(str(cargo_bin))
    # The interpreter the sidecar runs on, wherever it is installed.
    for prefix in (sys.base_prefix, sys.prefix):
        found.append(os.path.realpath(prefix))
    unique: list[str] = []
    for path in found:
        if path not in unique and not any(path.startswith(u + "/") for u in unique):
            unique = [u for u in unique if not u.startswith(path + "/")] + [path]
    return tuple(unique)


def variables(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Each runtime found at its default place under ``$HOME``, named by its variable: a command
    whose HOME is elsewhere (tier 2 gives it an empty private one) still finds it."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    found: dict[str, str] = {}
    for name, default in _ROOTS:
        path = home / default
        if name not in env and name not in found and path.is_dir():
            found[name] = os.path.realpath(path)
    return found
