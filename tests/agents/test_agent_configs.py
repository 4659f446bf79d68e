"""The configurations of docs/agents.md, as ``s-code mcp --print-config`` prints them, do what the
doc says in the real CLIs (driven offline by the scripted model; they skip without `make agents`,
and fail under CI=true).

Claude Code with the printed ``.mcp.json`` and ``.claude/settings.local.json``: its own file and
shell tools are not offered to the model, and s-code's tools are, and run without Claude Code's
prompt (``claude -p`` refuses what would prompt). Codex with the printed ``config.toml`` and
profile: its shell tools are not offered, its own ``apply_patch`` cannot write, and s-code's tools
run without Codex's prompt. Each with its control: the same run without the setting offers the
agent's tools, lets its ``apply_patch`` write, or refuses s-code's tool.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from s_code.mcp_face import configs
from tests.agents import harness
from tests.agents.scripted_model import CallTool, Final, ScriptedModel, Step, _openai_results, _sse

CONTENT = "the file s-code read\n"
PATCH = "*** Begin Patch\n*** Add File: by-codex.txt\n+codex wrote this\n*** End Patch\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    work = tmp_path / "project"
    work.mkdir()
    (work / "a.txt").write_text(CONTENT)
    return work


def _blocks(client: str) -> dict[str, str]:
    # This interpreter running s-code, in the folder the CLI runs in; standalone, so that an
    # editor of this user serving a parent folder cannot take the calls, in a mode that lets the
    # edits of these tests run without s-code's own prompt (which they do not test).
    exe = [sys.executable, "-m", "s_code", "mcp", "--standalone", "--mode", "workspace"]
    original = configs.command
    configs.command = lambda: exe  # type: ignore[assignment]
    try:
        return {b.where: b.text for b in configs.blocks(client, None, "/unused")}
    finally:
        configs.command = original  # type: ignore[assignment]


# -- Claude Code -----------------------------------------------------------------------------------


def _claude(project: Path, home: Path, settings: dict[str, Any] | None) -> tuple[Any, list[str]]:
    exe = harness.require_claude()
    blocks = _blocks("claude")
    (project / ".mcp.json").write_text(blocks[".mcp.json"])
    if settings is not None:
        (project / ".claude").mkdir(exist_ok=True)
        (project / ".claude" / "settings.local.json").write_text(json.dumps(settings))
    script: list[Step] = [CallTool("s-code", "read_file", {"path": "a.txt"}), Final("done")]
    with ScriptedModel(script) as model:
        env = harness._base_env(home) | {
            "ANTHROPIC_BASE_URL": model.url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted-model-not-a-key",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        argv = [str(exe), "-p", "Read a.txt.", "--model", "claude-sonnet-4-5"]
        argv += ["--output-format", "json"]
        code, out, err, _, _ = harness._run("claude", argv, env, project, model, harness.TIMEOUT)
        conversation = model.conversation()
    assert code == 0 and conversation, f"claude exited {code}\n{out[-2000:]}\n{err[-2000:]}"
    return json.loads(out), [conversation[0].tool_names(), *conversation[-1].tool_results()]


def test_claude_code_offers_only_s_codes_tools_and_runs_them_unasked(
    project: Path, tmp_path: Path
) -> None:
    settings = json.loads(_blocks("claude")[".claude/settings.local.json"])
    output, (offered, *results) = _claude(project, tmp_path / "home", settings)

    assert "mcp__s-code__read_file" in offered and "mcp__s-code__apply_patch" in offered
    assert not set(offered) & set(configs.CLAUDE_DENY), offered
    assert output["permission_denials"] == []
    assert any("the file s-code read" in r for r in results), results


def test_claude_code_control_without_the_settings(project: Path, tmp_path: Path) -> None:
    """Enabled but neither denied nor allowed: Claude Code's own tools are offered, and s-code's
    tool is refused (it would prompt)."""
    output, (offered, *results) = _claude(
        project, tmp_path / "home", {"enabledMcpjsonServers": ["s-code"]}
    )

    assert {"Bash", "Read", "Edit", "Write"} <= set(offered), offered
    assert [d["tool_name"] for d in output["permission_denials"]] == ["mcp__s-code__read_file"]
    assert not any("the file s-code read" in r for r in results), results


# -- Codex -----------------------------------------------------------------------------------------


class _FreeformModel(ScriptedModel):
    """A scripted model whose ``CallTool(None, "apply_patch", {"input": ...})`` is Codex's freeform
    ``apply_patch`` (a custom tool call), as the models that carry it call it."""

    def openai_reply(self, body: Any) -> tuple[int | None, bytes, str]:
        index, step = self.step_for(len(_openai_results(body)))
        if not (isinstance(step, CallTool) and step.server is None and step.tool == "apply_patch"):
            return super().openai_reply(body)
        response_id = self.next_id("resp")
        item = {
            "type": "custom_tool_call",
            "id": self.next_id("ctc"),
            "call_id": self.next_id("call"),
            "name": "apply_patch",
            "input": step.arguments["input"],
        }
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        events = [
            {"type": "response.created", "response": {"id": response_id}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
        ]
        return index, _sse(events), "text/event-stream"


def _codex(
    project: Path,
    home: Path,
    script: list[Step],
    model_name: str,
    base: str = "",
    server: str | None = None,
    profile: bool = True,
) -> tuple[list[str], list[str]]:
    script_path = harness.require_codex()
    blocks = _blocks("codex")
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    with _FreeformModel(script, model_name=model_name) as model:
        config = [
            f"model = {json.dumps(model_name)}",
            'model_provider = "scripted"',
            base,
            "[features]",
            "plugins = false",
            "[analytics]",
            "enabled = false",
            "[model_providers.scripted]",
            'name = "scripted"',
            f"base_url = {json.dumps(model.url + '/v1')}",
            'wire_api = "responses"',
            'env_key = "SCRIPTED_KEY"',
            blocks["~/.codex/config.toml"] if server is None else server,
        ]
        (codex_home / "config.toml").write_text("\n".join(config) + "\n")
        argv = [shutil.which("node") or "node", str(script_path), "exec", "--skip-git-repo-check"]
        argv += ["--strict-config", "--json"]
        if profile:
            where = "~/.codex/s-code.config.toml (codex --profile s-code)"
            (codex_home / "s-code.config.toml").write_text(blocks[where] + "\n")
            argv += ["--profile", "s-code"]
        env = harness._base_env(home) | {"CODEX_HOME": str(codex_home), "SCRIPTED_KEY": "x"}
        code, out, err, _, _ = harness._run(
            "codex", [*argv, "Go."], env, project, model, harness.TIMEOUT
        )
        conversation = model.conversation()
    assert code == 0 and conversation, f"codex exited {code}\n{out[-2000:]}\n{err[-2000:]}"
    return conversation[0].tool_names(), conversation[-1].tool_results()


def test_codex_profile_removes_its_shell_and_stops_its_own_apply_patch(
    project: Path, tmp_path: Path
) -> None:
    # gpt-5.5 is a model Codex gives its own apply_patch tool (and its shell tools)
    script: list[Step] = [CallTool(None, "apply_patch", {"input": PATCH}), Final("done")]
    offered, results = _codex(project, tmp_path / "home", script, "gpt-5.5")

    assert "apply_patch" in offered and "exec_command" not in offered, offered
    assert not (project / "by-codex.txt").exists(), results
    assert "read-only sandbox" in results[0], results


def test_codex_control_without_the_profile_its_apply_patch_writes(
    project: Path, tmp_path: Path
) -> None:
    script: list[Step] = [CallTool(None, "apply_patch", {"input": PATCH}), Final("done")]
    base = 'sandbox_mode = "danger-full-access"\napproval_policy = "on-request"'
    offered, results = _codex(
        project, tmp_path / "home", script, "gpt-5.5", base=base, profile=False
    )

    assert "exec_command" in offered, offered
    assert (project / "by-codex.txt").read_text() == "codex wrote this\n", results


# s-code's edit: Codex runs tools marked read-only without asking anyway, so an edit shows what
# the approval mode changes.
S_CODE_EDIT: list[Step] = [
    CallTool(
        "s-code",
        "apply_patch",
        {"files": [{"path": "by-s-code.txt", "expected_revision": None, "content": "s-code\n"}]},
    ),
    Final("done"),
]


def test_codex_runs_s_codes_tools_unasked(project: Path, tmp_path: Path) -> None:
    # a model Codex offers MCP tools to directly (no tool search of its own)
    offered, results = _codex(project, tmp_path / "home", S_CODE_EDIT, "scripted-model")

    assert "mcp__s_code/apply_patch" in offered, offered
    assert (project / "by-s-code.txt").read_text() == "s-code\n", results


def test_codex_control_without_the_approval_mode(project: Path, tmp_path: Path) -> None:
    server = _blocks("codex")["~/.codex/config.toml"].replace(
        'default_tools_approval_mode = "approve"', ""
    )
    _, results = _codex(project, tmp_path / "home", S_CODE_EDIT, "scripted-model", server=server)

    assert not (project / "by-s-code.txt").exists(), results
    assert "requires approval" in results[0], results
