"""docs/agents.md and ``s-code mcp --print-config`` say the same thing.

Every block ``--print-config`` prints parses in its language (JSON, TOML, the shell line's argv and
the JSON in it), and the doc's section for that client holds a block equal to it, key for key and
value for value (with the doc's example path of ``s-code`` and folder), so neither can change
without the other. Every JSON and TOML block of the doc parses. The CLI names the folder only
where the client needs it.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from s_code.mcp_face import configs

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
EXE = "/home/you/.local/bin/s-code"  # the doc's example path
FOLDER = "/home/you/project"  # the doc's example folder
SECTIONS = {
    "claude": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "vscode": "VS Code (agent mode)",
    "zed": "Zed",
    "acp": "ACP hosts: CodeCompanion, avante.nvim (Neovim), agent-shell (Emacs)",
}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def parsed(lang: str, text: str) -> Any:
    """A block as data: JSON and TOML parsed, a shell line split (with its JSON argument parsed),
    Markdown as its text."""
    if lang == "json":
        return json.loads(text)
    if lang == "toml":
        return tomllib.loads(text)
    if lang == "sh":
        argv = shlex.split(text)
        return [json.loads(a) if a.startswith("{") else a for a in argv]
    return text.strip()


def doc_sections() -> dict[str, list[tuple[str, str]]]:
    """The fenced blocks (language, text) under each ``## `` heading of the doc."""
    sections: dict[str, list[tuple[str, str]]] = {}
    for part in re.split(r"^## ", DOC.read_text(), flags=re.MULTILINE)[1:]:
        title, _, body = part.partition("\n")
        sections[title.strip()] = FENCE.findall(body)
    return sections


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> None:
    """configs as the doc shows them: s-code at the doc's example path."""
    monkeypatch.setattr(configs, "command", lambda: [EXE, "mcp"])


@pytest.mark.parametrize("client", sorted(SECTIONS))
def test_every_printed_block_parses(client: str) -> None:
    for block in configs.blocks(client, None, FOLDER):
        assert block.lang in ("json", "toml", "sh", "md"), block
        data = parsed(block.lang, block.text)
        assert data, block
        assert "s-code" in block.text


@pytest.mark.parametrize("client", sorted(SECTIONS))
def test_the_doc_shows_each_printed_block(client: str, example: None) -> None:
    shown = doc_sections()[SECTIONS[client]]
    for block in configs.blocks(client, None, FOLDER):
        want = parsed(block.lang, block.text)
        same_lang = [parsed(lang, text) for lang, text in shown if lang == block.lang]
        assert want in same_lang, (
            f"docs/agents.md, section {SECTIONS[client]!r}, lacks the {block.where} block "
            f"that --print-config {client} prints:\n{block.text}"
        )


def test_a_changed_key_is_caught(example: None) -> None:
    """The control of the comparison above: the doc's Codex block no longer matches a snippet
    whose approval mode differs."""
    shown = [parsed(lang, text) for lang, text in doc_sections()["Codex"] if lang == "toml"]
    server = parsed("toml", configs.blocks("codex", None, FOLDER)[0].text)
    assert server in shown
    server["mcp_servers"]["s-code"]["default_tools_approval_mode"] = "prompt"
    assert server not in shown


def test_every_json_and_toml_block_of_the_doc_parses() -> None:
    blocks = [(lang, text) for bs in doc_sections().values() for lang, text in bs]
    data = [parsed(lang, text) for lang, text in blocks if lang in ("json", "toml")]
    assert len(data) >= 8, blocks


def test_the_zed_block_allows_exactly_the_core_tools() -> None:
    settings = json.loads(configs.blocks("zed", None, FOLDER)[0].text)
    allowed = settings["agent"]["tool_permissions"]["tools"]
    assert sorted(allowed) == sorted(f"mcp:s-code:{t}" for t in configs.core_tools())
    assert "read_file" in configs.core_tools()


def _print_config(client: str, *extra: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "s_code", "mcp", "--print-config", client, *extra],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_the_cli_names_the_folder_only_where_the_client_needs_it(tmp_path: Path) -> None:
    for client in ("claude", "codex", "gemini"):
        assert "--workspace" not in _print_config(client, cwd=tmp_path), client
    assert '"${workspaceFolder}"' in _print_config("vscode", cwd=tmp_path)
    for client in ("zed", "acp"):
        assert json.dumps(str(tmp_path.resolve())) in _print_config(client, cwd=tmp_path)
    pinned = tmp_path / "other"
    pinned.mkdir()
    codex = _print_config("codex", "--workspace", str(pinned), cwd=tmp_path)
    server = tomllib.loads(codex.split("\n\n")[0])
    assert server["mcp_servers"]["s-code"]["args"][-2:] == ["--workspace", str(pinned.resolve())]


def test_the_cli_prints_the_blocks_under_their_file(tmp_path: Path) -> None:
    out = _print_config("claude", cwd=tmp_path)
    heads = [line for line in out.splitlines() if line.startswith(("# ", "// "))]
    assert heads == [
        "# shell, in the project (writes .mcp.json)",
        "// .mcp.json",
        "// .claude/settings.local.json",
    ]
    assert heads == [configs.label(b) for b in configs.blocks("claude", None, str(tmp_path))]
