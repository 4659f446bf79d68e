"""The harness itself: each real agent CLI (Claude Code, Codex CLI), driven offline by the scripted
model, calls an MCP stdio server's tool. The tool really ran (its marker file holds the text the
model sent), its result reached the model (the model server's log), and the tool was offered to the
model under the name the script uses. The control: the same script with the tool not allowed
leaves no marker, so the marker check can fail. Without the CLIs (`make agents`) these tests skip,
or fail under CI=true."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.agents import harness
from tests.agents.scripted_model import CallTool, Final, ScriptedModel, Step

# real agents' sessions, each bounded at harness.TIMEOUT (180 s), several to a test
pytestmark = pytest.mark.timeout(900)

PROBE = Path(__file__).resolve().parent / "probe_server.py"
SERVER = "s-probe"  # a hyphen, as in "s-code": Codex renders it as an underscore
TOOL = f"mcp__{SERVER}__echo"


def run_agent(
    cli: str,
    model: ScriptedModel,
    home: Path,
    servers: dict[str, Any],
    allowed: Sequence[str],
) -> harness.AgentRun:
    prompt = "Call the echo tool of the s-probe server."
    if cli == "claude":
        return harness.run_claude(prompt, servers, allowed, model, home)
    return harness.run_codex(prompt, servers, allowed, model, home)


@pytest.fixture(params=["claude", "codex"])
def cli(request: pytest.FixtureRequest) -> str:
    (harness.require_claude if request.param == "claude" else harness.require_codex)()
    return str(request.param)


@pytest.fixture
def probe(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    marker = tmp_path / "marker"
    servers = {
        SERVER: {
            "command": sys.executable,
            "args": [str(PROBE)],
            "env": {"PROBE_MARKER": str(marker)},
        }
    }
    return servers, marker


def offered(model: ScriptedModel) -> Callable[[str], bool]:
    """Whether the first model request offered the probe's tool (in the CLI's own naming)."""
    names = model.conversation()[0].tool_names()
    return lambda cli: (TOOL if cli == "claude" else "mcp__s_probe/echo") in names


def test_the_agent_calls_the_mcp_tool_and_the_model_gets_its_result(
    cli: str, probe: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    servers, marker = probe
    token = f"token-{uuid.uuid4().hex[:12]}"
    script: list[Step] = [CallTool(SERVER, "echo", {"text": token}), Final("the probe answered")]
    with ScriptedModel(script) as model:
        run = run_agent(cli, model, tmp_path / "home", servers, [TOOL])

    assert marker.exists(), run.describe()
    assert marker.read_text() == token
    assert offered(model)(cli), model.conversation()[0].tool_names()
    assert any(f"probe echoed {token}" in r for r in run.tool_results()), run.describe()
    # Two model requests: the one answered with the call, the one carrying its result.
    assert [r.step for r in run.model_requests()] == [0, 1], run.describe()
    assert run.exit_code == 0, run.describe()
    if cli == "claude":
        assert run.output["result"] == "the probe answered"
        assert run.output["permission_denials"] == []
    else:
        messages = [e["item"]["text"] for e in run.output if _item(e, "agent_message")]
        assert messages == ["the probe answered"]
        calls = [e["item"] for e in run.output if _item(e, "mcp_tool_call")]
        assert [(c["server"], c["tool"], c["status"]) for c in calls] == [
            (SERVER, "echo", "completed")
        ]


def test_a_tool_that_is_not_allowed_does_not_run(
    cli: str, probe: tuple[dict[str, Any], Path], tmp_path: Path
) -> None:
    """The control of the marker check: the same call, not allowed, leaves no marker (and the CLI
    still exits 0: the exit code alone proves nothing)."""
    servers, marker = probe
    script: list[Step] = [CallTool(SERVER, "echo", {"text": "not allowed"}), Final("refused")]
    with ScriptedModel(script) as model:
        run = run_agent(cli, model, tmp_path / "home", servers, [])

    assert offered(model)(cli), model.conversation()[0].tool_names()
    assert not marker.exists(), run.describe()
    results = run.tool_results()
    assert len(results) == 1, run.describe()  # the model was told the call did not happen
    assert "probe echoed" not in results[0]
    assert run.exit_code == 0, run.describe()
    if cli == "claude":
        assert [d["tool_name"] for d in run.output["permission_denials"]] == [TOOL]
        assert "haven't granted" in results[0]
    else:
        assert "requires approval" in results[0]


def _item(event: dict[str, Any], kind: str) -> bool:
    return event.get("type") == "item.completed" and event.get("item", {}).get("type") == kind
