"""run_command end to end over stdio: streaming, head and tail, timeout and cancel kill the whole
tree, approvals in manual mode (one per run), network always asks, secrets never in a prompt."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from s_code.client import RpcError, StdioClient
from s_code.sandbox import tiers
from tests.security.sandbox_support import alive

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


def _client(tmp_path: Path, mode: str) -> tuple[StdioClient, Prompts, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    prompts = Prompts()
    client = StdioClient(on_request=prompts)
    caps = {
        "window": {"showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}}}
    }
    client.initialize(str(ws), capabilities=caps, options={"permissionMode": mode})
    return client, prompts, ws


@pytest.fixture
def workspace_mode(tmp_path: Path) -> Iterator[tuple[StdioClient, Prompts, Path]]:
    client, prompts, ws = _client(tmp_path, "workspace")
    yield client, prompts, ws
    client.close()


@pytest.fixture
def manual_mode(tmp_path: Path) -> Iterator[tuple[StdioClient, Prompts, Path]]:
    client, prompts, ws = _client(tmp_path, "manual")
    yield client, prompts, ws
    client.close()


def run(client: StdioClient, command: list[str], **extra: Any) -> dict[str, Any]:
    return client.request("s-code/runCommand", {"command": command, **extra}, timeout=60)


def test_output_streams_while_it_runs(workspace_mode: Any) -> None:
    client, _, _ = workspace_mode
    result = run(client, ["sh", "-c", "echo one; sleep 0.5; echo two >&2; sleep 0.5; echo three"])
    assert result["exit_code"] == 0
    assert result["output"].splitlines() == ["one", "two", "three"]  # 0.5 s apart: in order
    chunks = [n["params"] for n in client.notifications if n["method"] == "s-code/commandOutput"]
    assert {c["commandId"] for c in chunks} == {result["command_id"]}
    assert chunks[0] == {"commandId": result["command_id"], "stream": "stdout", "text": "one\n"}
    assert {"stream": "stderr", "text": "two\n"}.items() <= chunks[1].items()
    assert result["sandbox"]["tier"] in (1, 2)
    assert result["argv"][0].startswith("/")  # the resolved executable


def test_long_output_keeps_head_and_tail(workspace_mode: Any) -> None:
    client, _, _ = workspace_mode
    script = "for i in $(seq 1 20000); do echo line-$i; done"
    result = run(client, ["sh", "-c", script])
    assert result["truncated"] is True
    assert result["output"].startswith("line-1\n")
    assert result["output"].rstrip().endswith("line-20000")
    assert "characters omitted" in result["output"]


def test_exit_code_and_errors(workspace_mode: Any) -> None:
    client, _, ws = workspace_mode
    assert run(client, ["sh", "-c", "exit 7"])["exit_code"] == 7
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


def test_timeout_kills_the_whole_tree(workspace_mode: Any) -> None:
    client, _, _ = workspace_mode
    marker = f"{301 + (uuid.uuid4().int % 1000) / 1000:.3f}"
    start = time.monotonic()
    result = run(client, ["sh", "-c", f"(setsid sleep {marker} &); sleep {marker}"], timeout_ms=700)
    assert result["timed_out"] is True and result["exit_code"] is None
    assert time.monotonic() - start < 15
    time.sleep(0.2)
    assert alive(f"sleep\0{marker}") == []


def test_cancel_request_kills_the_whole_tree(workspace_mode: Any) -> None:
    client, _, _ = workspace_mode
    marker = f"{302 + (uuid.uuid4().int % 1000) / 1000:.3f}"
    replies: list[dict[str, Any]] = []
    params = {"command": ["sh", "-c", f"(setsid sleep {marker} &); sleep {marker}"]}
    thread = threading.Thread(
        target=lambda: replies.append(
            client.request_raw("s-code/runCommand", params, timeout=30, msg_id="cancel-me")
        )
    )
    thread.start()
    deadline = time.monotonic() + 10
    while len(alive(f"sleep\0{marker}")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert alive(f"sleep\0{marker}")  # it is running
    client.notify("$/cancelRequest", {"id": "cancel-me"})
    thread.join(20)
    assert replies and replies[0]["error"]["code"] == -32800
    assert replies[0]["error"]["data"]["kind"] == "cancelled"
    time.sleep(0.2)
    assert alive(f"sleep\0{marker}") == []


def test_manual_mode_asks_once_per_run(manual_mode: Any) -> None:
    client, prompts, ws = manual_mode
    prompts.answers = ["Approve once", "Deny"]
    assert run(client, ["touch", "first"])["exit_code"] == 0
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


def test_dismissed_prompt_runs_nothing(manual_mode: Any) -> None:
    client, prompts, ws = manual_mode
    prompts.answers = [None]
    with pytest.raises(RpcError) as err:
        run(client, ["touch", "never"])
    assert err.value.kind == "approval_denied"
    assert not (ws / "never").exists()


def test_network_always_asks_even_in_workspace_mode(workspace_mode: Any) -> None:
    client, prompts, ws = workspace_mode
    preview = client.request("s-code/sandbox/preview", {"command": ["true"], "network": True})
    assert preview["decision"] == "ask" and preview["sandbox"]["network"] is True
    quiet = client.request("s-code/sandbox/preview", {"command": ["true"]})
    assert quiet["decision"] == "allow" and quiet["sandbox"]["network"] is False
    prompts.answers = ["Deny"]
    with pytest.raises(RpcError):
        run(client, ["touch", "net"], network=True)
    assert not (ws / "net").exists()
    assert "network" in prompts.seen[0]["message"]


def test_a_secret_in_an_argument_never_reaches_the_prompt(manual_mode: Any) -> None:
    client, prompts, _ = manual_mode
    token = "ghp_" + "S3cr3t" * 6
    prompts.answers = ["Deny"]
    with pytest.raises(RpcError):
        run(client, ["curl", "-H", f"Authorization: token {token}", "https://example.com"])
    assert token not in str(prompts.seen)
    assert "[REDACTED]" in prompts.seen[0]["message"]


def test_preview_rejects_bad_params(workspace_mode: Any) -> None:
    client, _, _ = workspace_mode
    for params, field in (
        ({}, "command"),
        ({"command": "ls"}, "command"),
        ({"command": []}, "command"),
    ):
        with pytest.raises(RpcError) as err:
            client.request("s-code/sandbox/preview", params)
        assert err.value.kind == "invalid_params" and err.value.data["field"] == field


def test_bad_arguments_name_the_field(workspace_mode: Any) -> None:
    client, _, ws = workspace_mode
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
