"""run_command end to end over stdio: streaming, head and tail, timeout and cancel kill the whole
tree, approvals in manual mode (one per run), network always asks, secrets never in a prompt.

What depends on the sandbox tier (what runs, where it writes, how its tree is killed) runs in each
tier the machine has: tier 2 by a server started with bubblewrap switched off."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from s_code.client import RpcError, StdioClient
from s_code.sandbox import tiers
from tests.security.sandbox_support import alive, each_tier, tier_env, tier_of

pytestmark = pytest.mark.skipif(
    tiers.current().tier == 3, reason="these tests run commands in a sandbox tier 1 or 2"
)


class Prompts:
    def __init__(self) -> None:
        self.answers: list[str | None] = []
        self.seen: list[dict[str, Any]] = []

    def __call__(self, method: str, params: Any) -> Any:
        if method != "window/showMessageRequest":
            return None
        self.seen.append(params)
        answer = self.answers.pop(0) if self.answers else None
        return None if answer is None else {"title": answer}


class Server(NamedTuple):
    client: StdioClient
    prompts: Prompts
    ws: Path
    tier: int | None  # None: the detected one


def _client(tmp_path: Path, mode: str, tier: int | None) -> Server:
    ws = tmp_path / "ws"
    ws.mkdir()
    prompts = Prompts()
    client = StdioClient(env=tier_env(tier), on_request=prompts)
    caps = {
        "window": {"showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}}}
    }
    client.initialize(str(ws), capabilities=caps, options={"permissionMode": mode})
    return Server(client, prompts, ws, tier)


@pytest.fixture
def workspace_mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    server = _client(tmp_path, "workspace", tier_of(request))
    yield server
    server.client.close()


@pytest.fixture
def manual_mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    server = _client(tmp_path, "manual", tier_of(request))
    yield server
    server.client.close()


def run(client: StdioClient, command: list[str], **extra: Any) -> dict[str, Any]:
    return client.request("s-code/runCommand", {"command": command, **extra}, timeout=60)


def ran_at(server: Server, result: dict[str, Any]) -> None:
    if server.tier is not None:
        assert result["sandbox"]["tier"] == server.tier, result["sandbox"]


def until(check: Any, within_s: float = 20) -> bool:
    """Poll ``check()`` until it holds or ``within_s`` passed; whether it held."""
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _marker(base: int) -> str:
    return f"{base + (uuid.uuid4().int % 1000) / 1000:.3f}"


def _tree(marker: str) -> list[str]:
    """A command whose grandchild leaves the process group (setsid) and says it is up; both
    sleep ``marker`` seconds (what finds them in /proc)."""
    grandchild = f"echo grandchild up; exec sleep {marker}"
    return ["sh", "-c", f"(setsid sh -c '{grandchild}' &); sleep {marker}"]


def _escapes_a_group_kill(marker: str) -> None:
    """Positive control: unsandboxed, killing the command's process group leaves the grandchild
    running (it is what kill_tree must also reach)."""
    sleeping = f"sleep\0{marker}"
    proc = subprocess.Popen(_tree(marker), start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        assert until(lambda: len(alive(sleeping)) == 2)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        until(lambda: len(alive(sleeping)) < 2)  # the group's own sleep dies of it
        assert len(alive(sleeping)) == 1, "positive control: the grandchild did not escape"
    finally:
        for pid in alive(sleeping):
            os.kill(pid, signal.SIGKILL)


@each_tier("workspace_mode")
def test_output_streams_while_it_runs(workspace_mode: Server) -> None:
    client = workspace_mode.client
    result = run(client, ["sh", "-c", "echo one; sleep 0.5; echo two >&2; sleep 0.5; echo three"])
    assert result["exit_code"] == 0
    assert result["output"].splitlines() == ["one", "two", "three"]  # 0.5 s apart: in order
    chunks = [n["params"] for n in client.notifications if n["method"] == "s-code/commandOutput"]
    assert {c["commandId"] for c in chunks} == {result["command_id"]}
    assert chunks[0] == {"commandId": result["command_id"], "stream": "stdout", "text": "one\n"}
    assert {"stream": "stderr", "text": "two\n"}.items() <= chunks[1].items()
    assert result["sandbox"]["tier"] in (1, 2)
    ran_at(workspace_mode, result)
    assert result["argv"][0].startswith("/")  # the resolved executable


def test_long_output_keeps_head_and_tail(workspace_mode: Server) -> None:
    client = workspace_mode.client
    script = "for i in $(seq 1 20000); do echo line-$i; done"
    result = run(client, ["sh", "-c", script])
    assert result["truncated"] is True
    assert result["output"].startswith("line-1\n")
    assert result["output"].rstrip().endswith("line-20000")
    assert "characters omitted" in result["output"]


@each_tier("workspace_mode")
def test_exit_code_and_errors(workspace_mode: Server) -> None:
    client, ws = workspace_mode.client, workspace_mode.ws
    exited = run(client, ["sh", "-c", "exit 7"])
    assert exited["exit_code"] == 7
    ran_at(workspace_mode, exited)
    with pytest.raises(RpcError) as err:
        run(client, ["no-such-program-here"])
    assert err.value.kind == "not_found"
    with pytest.raises(RpcError) as err:
        run(client, [])
    assert err.value.kind == "invalid_params" and err.value.data["field"] == "command"
    with pytest.raises(RpcError) as err:
        run(client, ["true"], cwd="../")
    assert err.value.kind == "path_escape"
    (ws / "sub").mkdir()
    assert run(client, ["pwd"], cwd="sub")["output"].strip() == str((ws / "sub").resolve())


@each_tier("workspace_mode")
def test_timeout_kills_the_whole_tree(workspace_mode: Server) -> None:
    client = workspace_mode.client
    _escapes_a_group_kill(_marker(300))
    marker = _marker(301)
    result = run(client, _tree(marker), timeout_ms=1500)
    assert result["timed_out"] is True and result["exit_code"] is None
    ran_at(workspace_mode, result)
    assert "grandchild up" in result["output"]  # it was there to be killed
    assert until(lambda: alive(f"sleep\0{marker}") == []), alive(f"sleep\0{marker}")


@each_tier("workspace_mode")
def test_cancel_request_kills_the_whole_tree(workspace_mode: Server) -> None:
    client = workspace_mode.client
    marker = _marker(302)
    sleeping = f"sleep\0{marker}"
    replies: list[dict[str, Any]] = []
    params = {"command": _tree(marker)}
    thread = threading.Thread(
        target=lambda: replies.append(
            client.request_raw("s-code/runCommand", params, timeout=30, msg_id="cancel-me")
        )
    )
    thread.start()
    assert until(lambda: len(alive(sleeping)) == 2), alive(sleeping)  # the tree is up
    client.notify("$/cancelRequest", {"id": "cancel-me"})
    thread.join(20)
    assert replies and replies[0]["error"]["code"] == -32800
    assert replies[0]["error"]["data"]["kind"] == "cancelled"
    assert until(lambda: alive(sleeping) == []), alive(sleeping)


@each_tier("manual_mode")
def test_manual_mode_asks_once_per_run(manual_mode: Server) -> None:
    client, prompts, ws = manual_mode.client, manual_mode.prompts, manual_mode.ws
    prompts.answers = ["Approve once", "Deny"]
    ran = run(client, ["touch", "first"])
    assert ran["exit_code"] == 0
    ran_at(manual_mode, ran)
    assert (ws / "first").exists()
    with pytest.raises(RpcError) as err:
        run(client, ["touch", "second"])  # the first approval was spent: it asks again
    assert err.value.kind == "approval_denied"
    assert not (ws / "second").exists()
    assert len(prompts.seen) == 2
    message = prompts.seen[0]["message"]
    assert "touch" in message and len(message) < 200
    # Deny first: a client that preselects the first action denies on a stray Enter
    assert [a["title"] for a in prompts.seen[0]["actions"]] == [
        "Deny",
        "Show details",
        "Approve once",
    ]


def test_dismissed_prompt_runs_nothing(manual_mode: Server) -> None:
    client, prompts, ws, _ = manual_mode
    prompts.answers = [None]
    with pytest.raises(RpcError) as err:
        run(client, ["touch", "never"])
    assert err.value.kind == "approval_denied"
    assert not (ws / "never").exists()


def test_network_always_asks_even_in_workspace_mode(workspace_mode: Server) -> None:
    client, prompts, ws, _ = workspace_mode
    preview = client.request("s-code/sandbox/preview", {"command": ["true"], "network": True})
    assert preview["decision"] == "ask" and preview["sandbox"]["network"] is True
    quiet = client.request("s-code/sandbox/preview", {"command": ["true"]})
    assert quiet["decision"] == "allow" and quiet["sandbox"]["network"] is False
    prompts.answers = ["Deny"]
    with pytest.raises(RpcError):
        run(client, ["touch", "net"], network=True)
    assert not (ws / "net").exists()
    assert "network" in prompts.seen[0]["message"]


def test_a_secret_in_an_argument_never_reaches_the_prompt(manual_mode: Server) -> None:
    client, prompts, _, _ = manual_mode
    token = "ghp_" + "S3cr3t" * 6
    prompts.answers = ["Deny"]
    with pytest.raises(RpcError):
        run(client, ["curl", "-H", f"Authorization: token {token}", "https://example.com"])
    assert token not in str(prompts.seen)
    assert "[REDACTED]" in prompts.seen[0]["message"]


def test_preview_rejects_bad_params(workspace_mode: Server) -> None:
    client = workspace_mode.client
    for params, field in (
        ({}, "command"),
        ({"command": "ls"}, "command"),
        ({"command": []}, "command"),
    ):
        with pytest.raises(RpcError) as err:
            client.request("s-code/sandbox/preview", params)
        assert err.value.kind == "invalid_params" and err.value.data["field"] == field


def test_bad_arguments_name_the_field(workspace_mode: Server) -> None:
    client, ws = workspace_mode.client, workspace_mode.ws
    for command, field in (
        (["echo", "a\0b"], "command.1"),
        ([""], "command.0"),
        (["echo", 5], "command.1"),
    ):
        with pytest.raises(RpcError) as err:
            run(client, command)
        assert err.value.kind == "invalid_params" and err.value.data["field"] == field
    with pytest.raises(RpcError) as err:
        run(client, ["true"], timeout_ms=0)
    assert err.value.data["field"] == "timeout_ms"
    assert sorted(p.name for p in ws.iterdir()) == []  # nothing ran
