"""s-code in a real Emacs with eglot (Debian's emacs-nox and elpa-eglot), headless.

The configuration of docs/editors/emacs.md is loaded as written; tests/editors/emacs/run.el then
starts eglot on a workspace file, reads the unsaved buffer, approves an edit through the
minibuffer prompt (after its details), sees it land in the buffer through ``workspace/applyEdit``,
denies the next one with a stray RET, undoes the turn and shuts the server down. The user's
answers come from stdin, which is what Emacs's minibuffer reads in batch mode."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.test_neovim import case_env

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "editors" / "emacs.md"
RUNNER = Path(__file__).with_name("emacs") / "run.el"
EMACS = shutil.which("emacs")

pytestmark = pytest.mark.skipif(
    EMACS is None and os.environ.get("CI") != "true",
    reason="Emacs is not installed (make test installs emacs-nox and elpa-eglot)",
)


def documented_config() -> str:
    """The elisp block between the markers of docs/editors/emacs.md, as a user copies it."""
    found = re.search(
        r"<!-- emacs-config:begin -->\s*```elisp\n(.*?)```\s*<!-- emacs-config:end -->",
        DOC.read_text(),
        re.S,
    )
    assert found, "docs/editors/emacs.md lost its configuration block"
    return found.group(1)


def test_eglot_reads_asks_edits_undoes(tmp_path: Path) -> None:
    assert EMACS is not None, "CI installs Emacs: it must be here"
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)  # the project eglot finds
    (ws / "a.txt").write_text("one\ntwo\nthree\n")
    config = tmp_path / "s-code.el"
    config.write_text(documented_config())
    env = case_env(tmp_path)
    env["HOME"] = str(tmp_path / "home")  # no user init file, no package state
    env["PATH"] = f"{os.path.dirname(sys.executable)}{os.pathsep}{env['PATH']}"  # s-code
    done = subprocess.run(
        [EMACS, "--batch", "-q", "-l", str(config), "-l", str(RUNNER), str(ws)],
        input="Show details\nApprove once\n\n",  # the user's three answers; the last a bare RET
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ws,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "ok emacs" in out, out
    assert "Choose an option" in out  # eglot's own minibuffer prompt
    assert "+ONE" in out and "Files (1):" in out  # the details: the whole card, with its diff
    assert (ws / "a.txt").read_text() == "one\ntwo\nthree\n"  # edits stayed in the buffer
