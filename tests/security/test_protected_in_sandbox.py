"""The user's own protected paths hold inside the sandbox (S24), and a sidecar killed while a
command runs has what the command changed put back at the next start (S23)."""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest
from tests.polling import until
from tests.security.sandbox_support import Box, alive, box

from s_code.client import StdioClient
from s_code.protocol import methods
from s_code.sandbox import tiers
from s_code.workspace.protected import ProtectedPaths

__all__ = ["box"]

PATTERNS = ["secrets/", "*.pem", "/deploy.env"]


def plant(box: Box) -> dict[str, str]:
    files = {
        "secrets/db.txt": "db password\n",
        "keys/server.pem": "-----BEGIN CERT-----\n",
        "deploy.env": "TARGET=prod\n",
        "src/app.py": "print('ok')\n",
    }
    for rel, text in files.items():
        (box.workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (box.workspace / rel).write_text(text)
    return files


SCRIPT = (
    "echo tampered >> secrets/db.txt; echo tampered >> keys/server.pem; "
    "echo tampered >> deploy.env; echo new > secrets/new.txt; echo new > keys/other.pem; "
    "echo changed >> src/app.py; exit 0"
)


def test_s24_user_protected_paths_are_not_changed_by_a_command(box: Box) -> None:
    files = plant(box)
    box.unconfined(["sh", "-c", SCRIPT])  # positive control: nothing stops it unconfined
    assert (box.workspace / "secrets/db.txt").read_text().endswith("tampered\n")
    for rel, text in files.items():
        (box.workspace / rel).write_text(text)
    for rel in ("secrets/new.txt", "keys/other.pem"):
        (box.workspace / rel).unlink()

    box.session.protected = ProtectedPaths(PATTERNS)
    _, changed = box.sh(SCRIPT)
    for rel in ("secrets/db.txt", "keys/server.pem", "deploy.env"):
        assert (box.workspace / rel).read_text() == files[rel], rel
    assert not (box.workspace / "secrets/new.txt").exists()
    assert not (box.workspace / "keys/other.pem").exists()
    # what the user did not protect is the command's to change
    assert (box.workspace / "src/app.py").read_text().endswith("changed\n")
    if box.tier == 2:
        assert {"secrets/db.txt", "keys/server.pem", "deploy.env", "keys/other.pem"} <= set(changed)


def _tiers() -> list[int]:
    best = tiers.current().tier
    return [t for t in (1, 2) if t >= best]


@pytest.mark.parametrize("tier", _tiers(), ids=lambda t: f"tier{t}")
def test_s23_a_killed_sidecar_s_command_is_undone_at_the_next_start(
    tmp_path: Path, tier: int
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    config = ws / ".git" / "config"
    config.write_text("[core]\n\tbare = false\n")
    env = dict(
        os.environ,
        S_CODE_STATE_DIR=str(tmp_path / "state"),
        S_CODE_TOOL_CACHE_DIR=str(tmp_path / "caches"),
    )
    if tier == 2:
        env["S_CODE_SANDBOX_DISABLE"] = "bwrap"
    tag = f"{60 + (uuid.uuid4().int % 1000) / 1000:.3f}"  # a sleep argument of its own
    script = (
        "printf '\\tfsmonitor = /tmp/pwn\\n' >> .git/config 2>/dev/null; "
        f"touch .git/hooks/post-index-change 2>/dev/null; touch started; sleep {tag}"
    )
    client = StdioClient([sys.executable, "-m", "s_code", "serve"], env=env)
    client.initialize(str(ws), options={"permissionMode": "workspace"})
    client.send_raw(
        client.encode_request(methods.RUN_COMMAND, {"command": ["sh", "-c", script]})[1]
    )
    deadline = time.monotonic() + 30
    while not (ws / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (ws / "started").exists(), "the command did not start"
    assert alive(tag), "the command's processes are not to be found"
    client.proc.send_signal(signal.SIGKILL)  # the sidecar dies mid-command
    client.proc.wait()
    # the sandbox dies with it (parent-death signal, --die-with-parent): no process is left
    # whose command line holds the tag (the sandbox, the shell, its sleep)
    until(lambda: not alive(tag), what="the end of the killed sidecar's command")
    if tier == 2:  # positive control: the damage is on disk after the kill
        assert "fsmonitor" in config.read_text()
        assert (ws / ".git" / "hooks" / "post-index-change").exists()
    restarted = StdioClient([sys.executable, "-m", "s_code", "serve"], env=env)
    try:
        restarted.initialize(str(ws))
        restarted.request(methods.PERMISSION_MODE_GET, {})  # the session has opened
        assert config.read_text() == "[core]\n\tbare = false\n"
        assert not (ws / ".git" / "hooks" / "post-index-change").exists()
    finally:
        restarted.close()
