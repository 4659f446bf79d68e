"""One card, rendered once by the server, shown the same by every face.

The card of one command (``true`` in one workspace), as the LSP face gives it
(``s-code/sandbox/preview`` and ``s-code/approval/details``), as ``s-code sandbox`` prints it on a
terminal, as the VS Code extension shows it (its own ``decide()``, bundled and run by Node) and as
the Neovim plugin shows it (a real headless Neovim, "Show details" through the real prompt):
the same text, character for character, and the same one-line question.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from s_code.client import StdioClient
from s_code.protocol import methods
from tests.editors.test_neovim import NVIM, case_env, run_case
from tests.editors.test_vscode import EXT, NPX

NOT_A_TERMINAL = "s-code sandbox: not a terminal"


def lsp_card(ws: Path, env: dict[str, str]) -> dict[str, Any]:
    client = StdioClient([sys.executable, "-m", "s_code", "serve"], env=env)
    try:
        client.initialize(str(ws))
        preview = client.request(methods.SANDBOX_PREVIEW, {"command": ["true"]})
    finally:
        client.close()
    return preview["card"]  # type: ignore[no-any-return]


def cli_text(ws: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "s_code", "sandbox", "--", "true"],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 125, done.stderr  # not run: no terminal and no --yes
    text, _, rest = done.stderr.partition(NOT_A_TERMINAL)
    assert rest, done.stderr
    return text


def vscode_face(card: dict[str, Any], out: Path) -> dict[str, Any]:
    assert NPX is not None
    bundle = out / "card_face.js"
    built = subprocess.run(
        [NPX, "esbuild", "test/card_face.ts", "--bundle", "--platform=node", f"--outfile={bundle}"],
        cwd=EXT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, str(bundle)], input=json.dumps(card), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.skipif(
    NVIM is None or NPX is None or not (EXT / "node_modules").is_dir(),
    reason="Neovim and the VS Code extension's node_modules are needed (make test installs them)",
)
def test_the_same_card_text_in_every_face(tmp_path: Path) -> None:
    out = tmp_path / "neovim-card.json"
    ws, _ = run_case("card_face", tmp_path, S_CODE_CARD_OUT=str(out))
    neovim = json.loads(out.read_text())
    env = case_env(tmp_path)  # the same caches, state and launcher as Neovim's server
    card = lsp_card(ws, env)
    text, message = card["text"], card["message"]
    assert text.startswith("# s-code asks: Run /") and "Command (exactly what runs" in text

    assert cli_text(ws, env) == text
    assert neovim["shown"] == text.rstrip("\n")  # a buffer holds lines, not the final newline
    assert neovim["asked"] == [message, message]  # asked, details shown, asked again
    vscode = vscode_face(card, tmp_path)
    assert vscode["shown"] == [text]
    assert vscode["asked"] == [message, message]
    assert vscode["decision"] == "deny"
