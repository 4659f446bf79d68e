"""Issue 4 end to end with pytest-lsp (Neovim and VS Code presets) and a scripted approval queue:
each row of the policy table in each mode, approve once / deny, details of a 32-file batch, the
approvalCards protocol, redaction in prompts, and the audit log."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from s_code.client import RpcError, StdioClient
from s_code.lsp.converter import raw_converter
from s_code.protocol import methods
from s_code.sandbox import tiers
from tests.e2e.support import TIMEOUT, call, call_error
from tests.e2e.test_e2e_edits import server_config
from tests.security.sandbox_support import each_tier, tier_env, tier_of

PRESETS = ["neovim@v0.11", "visual_studio_code"]
SANDBOX = tiers.current().tier in (1, 2)


def documents(client: LanguageClient) -> list[str]:
    """The text of each document the server asked the editor to show (pytest-lsp records them)."""
    return [Path(d.uri.removeprefix("file://")).read_text() for d in client.shown_documents]


class Queue:
    """The user: answers prompts in order (None = dismissed), records what was shown."""

    def __init__(self) -> None:
        self.answers: deque[str | None] = deque()
        self.prompts: list[types.ShowMessageRequestParams] = []
        self.cards: list[dict[str, Any]] = []
        self.card_answers: deque[str] = deque()


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=raw_converter)
    register_lsp_features(client)
    queue = Queue()
    client.queue = queue  # type: ignore[attr-defined]

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def prompt(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        queue.prompts.append(params)
        answer = queue.answers.popleft() if queue.answers else None
        return None if answer is None else types.MessageActionItem(title=answer)

    @client.feature(methods.APPROVAL_REQUEST)
    def card(params: Any) -> Any:
        queue.cards.append(params["card"])
        return {"decision": queue.card_answers.popleft() if queue.card_answers else "deny"}

    return client


STATE = os.environ["S_CODE_STATE_DIR"]


def workspace(root: Path) -> Path:
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    return root


async def start(client: LanguageClient, root: Path, preset: str, mode: str, **caps: Any) -> None:
    capabilities = client_capabilities(preset)
    if caps.get("approval_cards"):
        capabilities.experimental = {"sCode": {"approvalCards": True}}
    await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities,
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                initialization_options={"permissionMode": mode},
            )
        ),
        TIMEOUT,
    )


@pytest_lsp.fixture(config=server_config(STATE, make_client), params=PRESETS)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):
    lsp_client.root = workspace(tmp_path / "ws")  # type: ignore[attr-defined]
    lsp_client.preset = request.param  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


def q(client: LanguageClient) -> Queue:
    return client.queue  # type: ignore[attr-defined,no-any-return]


def edit(path: str, revision: str | None = None, text: str = "TWO\n") -> dict[str, Any]:
    return (
        {"files": [{"path": path, "expected_revision": None, "content": text}]}
        if revision is None
        else {}
    )


EXPECTED = {  # PROTOCOL.md's table: (operation) -> decision per mode
    "read": {"manual": "allow", "accept-edits": "allow", "workspace": "allow"},
    "edit": {"manual": "ask", "accept-edits": "allow", "workspace": "allow"},
    "edit_protected": {"manual": "reject", "accept-edits": "reject", "workspace": "reject"},
    "command_sandboxed": {"manual": "ask", "accept-edits": "ask", "workspace": "allow"},
    "command_network": {"manual": "ask", "accept-edits": "ask", "workspace": "ask"},
}


async def _operation(client: LanguageClient, operation: str, n: int) -> Any:
    root: Path = client.root  # type: ignore[attr-defined]
    if operation == "read":
        return await call(client, methods.READ_FILE, {"path": "a.txt"})
    if operation == "edit":
        return await call(
            client,
            methods.APPLY_PATCH,
            {"files": [{"path": f"new{n}.txt", "expected_revision": None, "content": "x\n"}]},
        )
    if operation == "edit_protected":
        return await call(
            client,
            methods.APPLY_PATCH,
            {"files": [{"path": ".git/config", "expected_revision": None, "content": "x\n"}]},
        )
    network = operation == "command_network"
    assert root.exists()
    return await call(
        client, methods.RUN_COMMAND, {"command": ["touch", f"ran{n}"], "network": network}
    )


@pytest.mark.parametrize("mode", ["manual", "accept-edits", "workspace"])
@pytest.mark.parametrize("operation", sorted(EXPECTED))
async def test_policy_table(client: LanguageClient, mode: str, operation: str) -> None:
    if operation.startswith("command") and not SANDBOX:
        pytest.skip("no sandbox here: every command asks")
    await start(client, client.root, client.preset, mode)  # type: ignore[attr-defined]
    expected = EXPECTED[operation][mode]
    queue = q(client)
    queue.answers.extend(["Deny"])
    from pygls.exceptions import JsonRpcException

    try:
        await _operation(client, operation, 1)
        outcome = "ok"
    except JsonRpcException as exc:
        outcome = (exc.data or {}).get("kind", "error")  # type: ignore[union-attr]
    asked = len(queue.prompts)
    if expected == "allow":
        assert (asked, outcome) == (0, "ok")
    elif expected == "ask":
        assert (asked, outcome) == (1, "approval_denied")  # denied: nothing happened
        assert not (client.root / "new1.txt").exists()  # type: ignore[attr-defined]
        assert not (client.root / "ran1").exists()  # type: ignore[attr-defined]
        queue.answers.extend(["Approve once"])
        await _operation(client, operation, 2)  # approved once: exactly this one runs
        assert len(queue.prompts) == 2
    else:
        assert asked == 0 and outcome == "protected_path"


async def test_details_list_every_path_of_a_32_file_batch(client: LanguageClient) -> None:
    await start(client, client.root, client.preset, "manual")  # type: ignore[attr-defined]
    queue = q(client)
    queue.answers.extend(["Show details", "Approve once"])
    files = [
        {"path": f"pkg/module_{i:02d}.py", "expected_revision": None, "content": f"# {i}\n"}
        for i in range(32)
    ]
    result = await call(client, methods.APPLY_PATCH, {"files": files})
    assert len(result["applied"]) == 32
    assert len(queue.prompts) == 2  # asked again after the details
    message = queue.prompts[0].message
    # compact: the first files with their line counts, the rest counted (the details list all)
    assert len(message) < 200 and "32 files" in message and "and 29 more" in message
    assert "pkg/module_00.py (new, 1 line)" in message and "module_31" not in message
    assert [a.title for a in queue.prompts[0].actions or []] == [
        "Deny",
        "Show details",
        "Approve once",
    ]
    (document,) = documents(client)
    for i in range(32):
        assert f"pkg/module_{i:02d}.py" in document


async def test_approval_cards_protocol(client: LanguageClient) -> None:
    await start(client, client.root, client.preset, "manual", approval_cards=True)  # type: ignore[attr-defined]
    queue = q(client)
    queue.card_answers.extend(["approve", "deny"])
    batch = {
        "files": [
            {"path": "x.txt", "expected_revision": None, "content": "1\n"},
            {"path": "y.txt", "expected_revision": None, "content": "2\n"},
        ]
    }
    await call(client, methods.APPLY_PATCH, batch)
    card = queue.cards[0]
    assert json.loads(card["target"]) == ["x.txt", "y.txt"]  # a batch: a JSON array of paths
    assert card["kind"] == "edit" and len(card["digest"]) == 64
    assert "+++ b/x.txt" in card["details"]["files"][0]["diff"]  # what the edit does
    assert "+1" in card["details"]["files"][0]["diff"].splitlines()
    read = await call(client, methods.READ_FILE, {"path": "a.txt"})
    legacy = {
        "path": "a.txt",
        "expected_revision": read["revision"],
        "edits": [{"start_line": 1, "end_line": 1, "new_text": "ONE"}],
    }
    err = await call_error(client, methods.APPLY_PATCH, legacy)
    assert err.data["kind"] == "approval_denied"
    assert queue.cards[1]["target"] == "a.txt"  # the legacy form: the plain path
    assert queue.prompts == []  # cards replace the message prompt
    assert (client.root / "a.txt").read_text() == "one\ntwo\n"  # type: ignore[attr-defined]


async def test_a_secret_in_a_path_never_reaches_the_prompt(client: LanguageClient) -> None:
    await start(client, client.root, client.preset, "manual")  # type: ignore[attr-defined]
    queue = q(client)
    queue.answers.extend(["Show details", "Deny"])
    token = "ghp_" + "Zz9" * 12
    await call_error(
        client,
        methods.APPLY_PATCH,
        {"files": [{"path": f"keys/{token}.txt", "expected_revision": None, "content": "x\n"}]},
    )
    assert token not in queue.prompts[0].message and "[REDACTED]" in queue.prompts[0].message
    assert token not in documents(client)[0]


def test_client_without_prompts_is_denied(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    client = StdioClient(env={**os.environ, "S_CODE_STATE_DIR": str(tmp_path / "state")})
    try:
        client.initialize(str(root), capabilities={}, options={"permissionMode": "manual"})
        with pytest.raises(RpcError) as err:
            client.request(
                methods.APPLY_PATCH,
                {"files": [{"path": "z.txt", "expected_revision": None, "content": "x\n"}]},
            )
        assert err.value.kind == "approval_denied"
        assert not (root / "z.txt").exists()
    finally:
        client.close()


def test_every_client_is_prompted_whatever_it_declared(tmp_path: Path) -> None:
    """window/showMessageRequest is base LSP: a client that declares no window capability (Emacs
    eglot does not) is still asked, and its approval counts."""
    root = workspace(tmp_path / "ws")
    asked: list[str] = []

    def answer(method: str, params: Any) -> Any:
        asked.append(params["message"])
        return {"title": "Approve once"}

    client = StdioClient(
        env={**os.environ, "S_CODE_STATE_DIR": str(tmp_path / "state")}, on_request=answer
    )
    try:
        client.initialize(str(root), capabilities={}, options={"permissionMode": "manual"})
        done = client.request(
            methods.APPLY_PATCH,
            {"files": [{"path": "z.txt", "expected_revision": None, "content": "x\n"}]},
        )
        assert done["applied"][0]["path"] == "z.txt"
        assert asked and "z.txt" in asked[0]
    finally:
        client.close()


def test_an_editor_that_cannot_show_the_prompt_is_denied_honestly(tmp_path: Path) -> None:
    """A client that answers the prompt with an error could not show it: denied (fail closed),
    and the error says the editor could not show the prompt, never that the user said no."""
    root = workspace(tmp_path / "ws")

    def refuse(method: str, params: Any) -> Any:
        raise RuntimeError("Unhandled method window/showMessageRequest")

    client = StdioClient(
        env={**os.environ, "S_CODE_STATE_DIR": str(tmp_path / "state")}, on_request=refuse
    )
    try:
        client.initialize(str(root), capabilities={}, options={"permissionMode": "manual"})
        with pytest.raises(RpcError) as err:
            client.request(
                methods.APPLY_PATCH,
                {"files": [{"path": "z.txt", "expected_revision": None, "content": "x\n"}]},
            )
        assert err.value.kind == "approval_denied"
        assert err.value.error["data"]["reason"] == "no_prompt"
        message = err.value.error["message"]
        assert "could not show the approval prompt" in message
        assert "did not approve" not in message
        assert not (root / "z.txt").exists()
    finally:
        client.close()


class LateEditor(StdioClient):
    """An editor whose user has not looked yet: each prompt is held unanswered until
    :meth:`answer`."""

    def __init__(self, **kwargs: Any) -> None:
        self.held: list[dict[str, Any]] = []
        super().__init__(**kwargs)

    def _answer(self, msg: dict[str, Any]) -> None:
        if msg["method"] == "window/showMessageRequest":
            self.held.append(msg)
        else:
            super()._answer(msg)

    def answer(self, title: str) -> None:
        for msg in self.held:
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": {"title": title}})


def test_an_approval_that_comes_after_the_call_was_cancelled_does_nothing(
    tmp_path: Path,
) -> None:
    """The call waiting on a prompt is cancelled (an agent gave up, the user cancelled), then the
    user approves: nothing is written, and the late answer is dropped quietly (no traceback in the
    server's log, which the same answer in time does not produce either)."""
    root = workspace(tmp_path / "ws")
    log = tmp_path / "server.log"
    with log.open("w") as stderr:
        client = LateEditor(
            env={**os.environ, "S_CODE_STATE_DIR": str(tmp_path / "state")}, stderr=stderr
        )
        try:
            client.initialize(str(root), capabilities={}, options={"permissionMode": "manual"})
            params = {"files": [{"path": "z.txt", "expected_revision": None, "content": "x\n"}]}
            replies: list[dict[str, Any]] = []
            asking = threading.Thread(
                target=lambda: replies.append(
                    client.request_raw(methods.APPLY_PATCH, params, msg_id="late")
                )
            )
            asking.start()
            deadline = time.monotonic() + TIMEOUT
            while not client.held and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(client.held) == 1, "the prompt never came"
            client.notify("$/cancelRequest", {"id": "late"})
            asking.join(TIMEOUT)
            assert replies and replies[0]["error"]["data"]["kind"] == "cancelled", replies
            client.answer("Approve once")
            # the control: the same answer in time approves and writes
            client.held.clear()
            waiting = threading.Thread(
                target=lambda: replies.append(client.request_raw(methods.APPLY_PATCH, params))
            )
            waiting.start()
            while not client.held and time.monotonic() < deadline:
                time.sleep(0.02)
            # asked again, so the late answer was handled before: it wrote nothing
            assert len(client.held) == 1 and not (root / "z.txt").exists()
            client.answer("Approve once")
            waiting.join(TIMEOUT)
            assert replies[1]["result"]["applied"][0]["path"] == "z.txt", replies
        finally:
            client.close()  # its round trip: the late answer was handled before it
    assert (root / "z.txt").read_text() == "x\n"
    assert len(replies) == 2
    text = log.read_text()
    assert "Traceback" not in text and "failed to handle" not in text, text


def _audit(state: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(state / "state.sqlite3") as conn:
        return conn.execute(
            "SELECT kind, decision, mode, target, ran_json FROM audit_log ORDER BY id"
        ).fetchall()


def test_audit_rows_are_written(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    state = tmp_path / "state"
    answers = deque(["Approve once", "Deny"])

    def on_request(method: str, params: Any) -> Any:
        if method == "window/showMessageRequest":
            return {"title": answers.popleft()}
        return None

    client = StdioClient(env={**os.environ, "S_CODE_STATE_DIR": str(state)}, on_request=on_request)
    try:
        client.initialize(str(root), capabilities={"window": {"showMessage": {}}})
        client.request(
            methods.APPLY_PATCH,
            {"files": [{"path": "ok.txt", "expected_revision": None, "content": "x\n"}]},
        )
        with pytest.raises(RpcError):
            client.request(
                methods.APPLY_PATCH,
                {"files": [{"path": "no.txt", "expected_revision": None, "content": "x\n"}]},
            )
        client.request(methods.PERMISSION_MODE_SET, {"mode": "accept-edits"})
        client.request(
            methods.APPLY_PATCH,
            {"files": [{"path": "auto.txt", "expected_revision": None, "content": "x\n"}]},
        )
    finally:
        client.close()
    rows = _audit(state)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("edit", "approved", "manual"),
        ("edit", "denied", "manual"),
        ("edit", "allowed", "accept-edits"),
    ]
    assert json.loads(rows[0][4]) == {"written": ["ok.txt"]}
    assert rows[1][4] is None  # nothing ran
    assert json.loads(rows[2][3]) == ["auto.txt"]


@pytest.fixture
def tier(request: pytest.FixtureRequest) -> int | None:
    return tier_of(request)


@each_tier("tier")  # what the command finds and runs, in the sandbox of each tier
def test_a_projection_that_changes_after_approval_asks_again(
    tmp_path: Path, tier: int | None
) -> None:
    """The approved card named bin2/mytool; while the user was answering, bin1/mytool appeared
    earlier on PATH, so the command that would run differs: the user is asked again."""
    root = workspace(tmp_path / "ws")
    bin1, bin2 = root / "bin1", root / "bin2"  # visible inside the sandbox
    bin1.mkdir()
    bin2.mkdir()
    tool = bin2 / "mytool"
    tool.write_text("#!/bin/sh\necho from-bin2\n")
    tool.chmod(0o755)
    seen: list[str] = []

    def on_request(method: str, params: Any) -> Any:
        if method != "window/showMessageRequest":
            return None
        seen.append(params["message"])
        if len(seen) == 1:
            planted = bin1 / "mytool"
            planted.write_text("#!/bin/sh\necho from-bin1\n")
            planted.chmod(0o755)
        return {"title": "Approve once"}

    env = tier_env(
        tier,
        {
            **os.environ,
            "PATH": f"{bin1}:{bin2}:{os.environ['PATH']}",
            "S_CODE_STATE_DIR": str(tmp_path / "s"),
        },
    )
    client = StdioClient(env=env, on_request=on_request)
    try:
        client.initialize(str(root), capabilities={"window": {"showMessage": {}}})
        result = client.request(methods.RUN_COMMAND, {"command": ["mytool"]})
    finally:
        client.close()
    assert len(seen) == 2
    assert "bin2/mytool" in seen[0] and "bin1/mytool" in seen[1]
    assert result["output"] == "from-bin1\n"  # what ran is what the second card showed
    assert result["sandbox"]["tier"] == tier
    subprocess.run(["true"], check=True)
