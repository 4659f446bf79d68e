"""Real agent CLIs as MCP clients, offline: Claude Code and Codex CLI driven by a scripted model.

The CLIs come from npm, pinned by tests/agents/package-lock.json (``make`` runs ``npm ci`` there).
:func:`run_claude` and :func:`run_codex` run one non-interactive turn (``claude -p``, ``codex
exec``) against a :class:`~tests.agents.scripted_model.ScriptedModel` and the given MCP stdio
servers, in a private HOME (and CODEX_HOME), with nothing of the caller's environment (no real API
key can leak in, no user or project config is read), telemetry, update checks and other
non-essential traffic off, stdin /dev/null and a timeout that kills the CLI's whole process group
(its MCP servers too). Each returns an :class:`AgentRun`: exit code, output (parsed where the CLI
emits JSON) and the requests the model server received during the run.

A CLI's exit code says little: Claude Code exits 0 when a tool was denied. Tests assert what the
tool did and what reached the model.

Settings beyond ../../shared/design/AGENTS-NOTES.md, found when building this:
- Claude Code 2.1.3xx defers MCP tools behind its ToolSearch tool (the model sees only the names
  in a reminder, no schema); ``ENABLE_TOOL_SEARCH=false`` offers them as ordinary tools, schema,
  description and all.
- Both CLIs read the project config of their working directory: they run in ``cwd`` (default: a
  ``work`` folder in ``home``), never in the repository.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.agents.scripted_model import Request, ScriptedModel

HERE = Path(__file__).resolve().parent
MODULES = HERE / "node_modules"
_PINS: dict[str, str] = json.loads((HERE / "package.json").read_text())["dependencies"]
CLAUDE_VERSION = _PINS["@anthropic-ai/claude-code"]
CODEX_VERSION = _PINS["@openai/codex"]

# A run takes 1-5 s; the bound is for a CLI that hangs (waiting for a server, say).
TIMEOUT = 180.0

# An MCP server as both CLIs' configs describe a stdio server.
McpServer = Mapping[str, Any]  # {"command": str, "args": [str], "env": {str: str}}


@dataclass(frozen=True)
class AgentRun:
    """What one run of an agent CLI did."""

    cli: str
    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str
    output: Any  # Claude Code: the result object; Codex: the list of JSONL events
    requests: list[Request]  # what the model server received during this run
    seconds: float

    def model_requests(self) -> list[Request]:
        return [r for r in self.requests if r.api in ("anthropic", "openai")]

    def tool_results(self) -> list[str]:
        """The tool results the model was sent, in the last model request of the run."""
        turns = self.model_requests()
        return turns[-1].tool_results() if turns else []

    def describe(self) -> str:
        """The whole run, for an assertion message."""
        return (
            f"{self.cli} exited {self.exit_code} after {self.seconds:.1f}s\n"
            f"argv: {self.argv}\nstdout:\n{self.stdout[-4000:]}\nstderr:\n{self.stderr[-4000:]}\n"
            f"requests: {[(r.method, r.path, r.step) for r in self.requests]}"
        )


class AgentTimeout(AssertionError):
    """The CLI did not finish within the timeout (it and its process group were killed)."""


# -- the installed CLIs ----------------------------------------------------------------------------


def _native(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF" and os.access(path, os.X_OK)
    except OSError:
        return False


def claude_binary() -> Path | None:
    """Claude Code's native binary: ``bin/claude.exe`` once its postinstall has copied the platform
    package's binary over the placeholder, else the platform package's own (npm may skip install
    scripts); None when the pinned version is not installed."""
    pkg = MODULES / "@anthropic-ai" / "claude-code"
    if _version(pkg) != CLAUDE_VERSION:
        return None
    if _native(pkg / "bin" / "claude.exe"):
        return pkg / "bin" / "claude.exe"
    for platform in sorted((MODULES / "@anthropic-ai").glob("claude-code-*")):
        if _version(platform) == CLAUDE_VERSION and _native(platform / "claude"):
            return platform / "claude"
    return None


def codex_script() -> Path | None:
    """Codex CLI's launcher (``bin/codex.js``, run by Node: it finds the platform binary and puts
    its helpers on PATH), when the pinned version and its platform binary are installed."""
    pkg = MODULES / "@openai" / "codex"
    if _version(pkg) != CODEX_VERSION:
        return None
    for meta in (MODULES / "@openai").glob("codex-*/vendor/*/codex-package.json"):
        info = json.loads(meta.read_text())
        if info.get("version") == CODEX_VERSION and _native(meta.parent / info["entrypoint"]):
            return pkg / "bin" / "codex.js"
    return None


def _version(package: Path) -> str | None:
    try:
        return str(json.loads((package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _missing(what: str) -> NoReturn:
    why = f"{what} is not installed: run `make agents` (npm ci in tests/agents)"
    if in_ci():
        pytest.fail(why + "; CI must run the real agents", pytrace=False)
    pytest.skip(why)


def require_claude() -> Path:
    """Claude Code's binary; without it the calling test skips, or fails under CI=true."""
    exe = claude_binary()
    if exe is None:
        _missing(f"Claude Code (@anthropic-ai/claude-code {CLAUDE_VERSION})")
    return exe


def require_codex() -> Path:
    """Codex CLI's launcher; without it (or Node) the calling test skips, or fails under CI."""
    script = codex_script()
    if script is None or shutil.which("node") is None:
        _missing(f"Codex CLI (@openai/codex {CODEX_VERSION}) or Node")
    return script


# -- running them ----------------------------------------------------------------------------------


def _base_env(home: Path) -> dict[str, str]:
    """A fixed environment: the caller's is not inherited (its API keys, its config dirs)."""
    node = shutil.which("node")
    path = ["/usr/local/bin", "/usr/bin", "/bin"]
    if node:
        path.insert(0, str(Path(node).parent))
    return {
        "PATH": ":".join(dict.fromkeys(path)),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
    }


def _run(
    cli: str,
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    model: ScriptedModel,
    timeout: float,
) -> tuple[int, str, str, list[Request], float]:
    before = len(model.requests)
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        out, err = proc.communicate()
        raise AgentTimeout(
            f"{cli} did not finish in {timeout:.0f}s\n"
            f"stdout:\n{out[-4000:]}\nstderr:\n{err[-4000:]}"
        ) from None
    finally:
        _kill_group(proc.pid)  # what the CLI left behind: MCP servers it did not stop
    seconds = time.monotonic() - start
    return proc.returncode, out, err, model.requests[before:], seconds


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _workdir(home: Path, cwd: Path | None) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    work = cwd if cwd is not None else home / "work"
    work.mkdir(parents=True, exist_ok=True)
    return work


def run_claude(
    prompt: str,
    mcp_servers: Mapping[str, McpServer],
    allowed_tools: Sequence[str],
    model: ScriptedModel,
    home: Path,
    *,
    cwd: Path | None = None,
    model_name: str = "claude-sonnet-4-5",
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> AgentRun:
    """One ``claude -p`` turn. ``allowed_tools`` are the tools it may run without asking (MCP tools
    as ``mcp__SERVER__TOOL``); any other tool call is denied, and the run still exits 0."""
    exe = require_claude()
    work = _workdir(home, cwd)
    config = home / "mcp-config.json"
    config.write_text(json.dumps({"mcpServers": {k: dict(v) for k, v in mcp_servers.items()}}))
    argv = [
        str(exe),
        "-p",
        prompt,
        "--mcp-config",
        str(config),
        "--strict-mcp-config",
        "--allowedTools",
        ",".join(allowed_tools),
        "--model",
        model_name,
        "--output-format",
        "json",
        *extra_args,
    ]
    env = _base_env(home) | {
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "sk-ant-scripted-model-not-a-key",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # The first model request waits for the MCP servers (else their tools may be missing).
        "MCP_CONNECTION_NONBLOCKING": "0",
        "MCP_TIMEOUT": "60000",
        # MCP tools offered with their schemas, not deferred behind ToolSearch.
        "ENABLE_TOOL_SEARCH": "false",
    }
    env |= dict(extra_env or {})
    code, out, err, requests, seconds = _run("claude", argv, env, work, model, timeout)
    try:
        output: Any = json.loads(out)
    except ValueError:
        output = None
    return AgentRun("claude", argv, code, out, err, output, requests, seconds)


# Codex: bare TOML keys are [A-Za-z0-9_-]; MCP server names are kept to those.
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml(value: Any) -> str:
    """A TOML inline value (strings as JSON strings, which are TOML basic strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Sequence):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {value!r}")


def codex_config(
    mcp_servers: Mapping[str, McpServer],
    allowed_tools: Sequence[str] | None,
    model: ScriptedModel,
    model_name: str,
) -> str:
    """config.toml for CODEX_HOME: the scripted model as the provider, the MCP servers required
    (the first request waits for their tools), the allowed tools approved (``None``: every tool of
    every server), no plugin sync, no analytics."""
    lines = [
        f"model = {_toml(model_name)}",
        'model_provider = "scripted"',
        'approval_policy = "never"',
        "",
        "[features]",
        "plugins = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[model_providers.scripted]",
        'name = "scripted"',
        f"base_url = {_toml(model.url + '/v1')}",
        'wire_api = "responses"',
        'env_key = "SCRIPTED_KEY"',
    ]
    for name, server in mcp_servers.items():
        if not _BARE_KEY.fullmatch(name):
            raise ValueError(f"MCP server name {name!r}: use letters, digits, '-' and '_'")
        lines += ["", f"[mcp_servers.{name}]"]
        lines += [f"{key} = {_toml(value)}" for key, value in server.items()]
        lines += ["required = true", "startup_timeout_sec = 60"]
        if allowed_tools is None:
            lines.append('default_tools_approval_mode = "approve"')
            continue
        prefix = f"mcp__{name}__"
        for tool in (t.removeprefix(prefix) for t in allowed_tools if t.startswith(prefix)):
            lines += ["", f"[mcp_servers.{name}.tools.{_toml(tool)}]", 'approval_mode = "approve"']
    text = "\n".join(lines) + "\n"
    tomllib.loads(text)  # a quoting mistake fails here, not as a confusing CLI error
    return text


def run_codex(
    prompt: str,
    mcp_servers: Mapping[str, McpServer],
    allowed_tools: Sequence[str] | None,
    model: ScriptedModel,
    home: Path,
    *,
    cwd: Path | None = None,
    model_name: str = "scripted-model",
    extra_args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> AgentRun:
    """One ``codex exec`` turn. ``allowed_tools`` (``mcp__SERVER__TOOL``) are approved in advance;
    with approval_policy "never" any other MCP tool that needs approval is refused. ``None``
    approves every tool of every server."""
    script = require_codex()
    work = _workdir(home, cwd)
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        codex_config(mcp_servers, allowed_tools, model, model_name)
    )
    node = shutil.which("node") or "node"
    argv = [
        node,
        str(script),
        "exec",
        "--skip-git-repo-check",
        "--strict-config",
        "--json",
        *extra_args,
        prompt,
    ]
    env = _base_env(home) | {"CODEX_HOME": str(codex_home), "SCRIPTED_KEY": "scripted-not-a-key"}
    env |= dict(extra_env or {})
    code, out, err, requests, seconds = _run("codex", argv, env, work, model, timeout)
    events = []
    for line in out.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return AgentRun("codex", argv, code, out, err, events, requests, seconds)
