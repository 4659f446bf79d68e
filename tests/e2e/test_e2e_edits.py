"""apply_patch end to end: approvals through the editor's prompt, open buffers through
workspace/applyEdit, every error kind of the edit engine, turns and undo (also across a restart)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from collections import deque
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from s_code.lsp.converter import raw_converter
from s_code.protocol import methods
from tests.e2e.support import TIMEOUT, call, call_error


def rev(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


class Editor:
    """The editor side: a scripted approval queue and buffers that applyEdit really changes."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.answers: deque[str | None] = deque()
        self.prompts: list[types.ShowMessageRequestParams] = []
        self.accept_edits = True
        self.buffers: dict[str, tuple[int, str]] = {}
        self.edits: list[types.ApplyWorkspaceEditParams] = []
        self.hold: asyncio.Event | None = None  # set: the editor answers applyEdit when it is set
        self.holding = asyncio.Event()

    def open(self, path: Path, text: str) -> None:
        uri = path.as_uri()
        self.buffers[uri] = (1, text)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="text", version=1, text=text)
            )
        )

    def prompt(self, params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        self.prompts.append(params)
        answer = self.answers.popleft() if self.answers else None
        return None if answer is None else types.MessageActionItem(title=answer)

    def apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.edits.append(params)
        if not self.accept_edits:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason="user typed")
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            uri = change.text_document.uri
            version, text = self.buffers[uri]
            assert change.text_document.version == version
            for edit in change.edits:
                text = _apply(text, edit)  # type: ignore[arg-type]
            self.buffers[uri] = (version + 1, text)
            self.client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(
                        uri=uri, version=version + 1
                    ),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
        return types.ApplyWorkspaceEditResult(applied=True)


def _offset(text: str, pos: types.Position) -> int:
    lines = text.split("\n")
    if pos.line >= len(lines):
        return len(text)
    return sum(len(line) + 1 for line in lines[: pos.line]) + pos.character


def _apply(text: str, edit: types.TextEdit) -> str:
    start, end = _offset(text, edit.range.start), _offset(text, edit.range.end)
    return text[:start] + edit.new_text + text[end:]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=raw_converter)
    register_lsp_features(client)
    editor = Editor(client)
    client.editor = editor  # type: ignore[attr-defined]

    def prompt(params: types.ShowMessageRequestParams) -> types.MessageActionItem | None:
        return editor.prompt(params)

    async def apply(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if editor.hold is not None:
            editor.holding.set()
            await editor.hold.wait()
        return editor.apply(params)

    client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)(prompt)
    client.feature(types.WORKSPACE_APPLY_EDIT)(apply)
    return client


def server_config(state_dir: str, client_factory: Any = None) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=[sys.executable, "-m", "s_code", "serve"],
        client_factory=client_factory or make_client,
        server_env={**os.environ, "S_CODE_STATE_DIR": state_dir},
    )


STATE = os.environ["S_CODE_STATE_DIR"]


async def start(lsp_client: LanguageClient, root: Path, mode: str, preset: str) -> None:
    await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(preset),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
                initialization_options={"permissionMode": mode},
            )
        ),
        TIMEOUT,
    )


def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "b.txt").write_text("alpha\nbeta\nalpha\n")
    return root


@pytest_lsp.fixture(config=server_config(STATE), params=["neovim@v0.11", "visual_studio_code"])
async def manual(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):
    lsp_client.root = workspace(tmp_path)  # type: ignore[attr-defined]
    await start(lsp_client, lsp_client.root, "manual", request.param)  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


@pytest_lsp.fixture(config=server_config(STATE))
async def accepting(lsp_client: LanguageClient, tmp_path: Path):
    lsp_client.root = workspace(tmp_path)  # type: ignore[attr-defined]
    await start(lsp_client, lsp_client.root, "accept-edits", "visual_studio_code")  # type: ignore[attr-defined]
    yield
    await asyncio.wait_for(lsp_client.shutdown_session(), TIMEOUT)


def edit_a(revision: str, new_text: str = "TWO") -> dict[str, Any]:
    return {
        "files": [
            {
                "path": "a.txt",
                "expected_revision": revision,
                "edits": [{"start_line": 2, "end_line": 2, "new_text": new_text}],
            }
        ]
    }


A = rev(b"one\ntwo\nthree\n")


async def test_manual_mode_asks_once_per_operation(manual: LanguageClient) -> None:
    editor: Editor = manual.editor  # type: ignore[attr-defined]
    root: Path = manual.root  # type: ignore[attr-defined]
    editor.answers.extend(["Approve once", "Deny", None])
    done = await call(manual, methods.APPLY_PATCH, edit_a(A))
    assert done["applied"][0]["path"] == "a.txt" and done["applied"][0]["via"] == "disk"
    assert (root / "a.txt").read_text() == "one\nTWO\nthree\n"
    prompt = editor.prompts[0]
    assert len(prompt.message) < 200 and "a.txt" in prompt.message
    assert [a.title for a in prompt.actions or []] == ["Deny", "Show details", "Approve once"]
    new_rev = done["applied"][0]["revision"]
    for _ in range(2):  # "Deny", then a dismissed prompt: both deny, nothing written
        err = await call_error(manual, methods.APPLY_PATCH, edit_a(new_rev, "2"))
        assert err.data["kind"] == "approval_denied"
    assert (root / "a.txt").read_text() == "one\nTWO\nthree\n"
    assert len(editor.prompts) == 3


async def test_open_buffer_is_edited_in_the_editor(accepting: LanguageClient) -> None:
    editor: Editor = accepting.editor  # type: ignore[attr-defined]
    root: Path = accepting.root  # type: ignore[attr-defined]
    unsaved = "one\ntwo (typed by the user, unsaved)\nthree\n"
    editor.open(root / "a.txt", unsaved)
    read = await call(accepting, methods.READ_FILE, {"path": "a.txt"})
    assert read["source"] == "buffer"
    done = await call(
        accepting,
        methods.APPLY_PATCH,
        {
            "files": [
                {
                    "path": "a.txt",
                    "expected_revision": read["revision"],
                    "edits": [{"old_text": "three", "new_text": "THREE"}],
                }
            ]
        },
    )
    assert done["applied"][0]["via"] == "editor"
    assert editor.buffers[(root / "a.txt").as_uri()][1] == (
        "one\ntwo (typed by the user, unsaved)\nTHREE\n"
    )
    assert (root / "a.txt").read_text() == "one\ntwo\nthree\n"  # the disk is untouched
    again = await call(accepting, methods.READ_FILE, {"path": "a.txt"})
    assert again["revision"] == done["applied"][0]["revision"]
    undone = await call(accepting, methods.TURN_UNDO, {"turnId": done["turn_id"]})
    assert undone == {"restored": ["a.txt"], "refused": []}
    assert editor.buffers[(root / "a.txt").as_uri()][1] == unsaved


async def test_editor_refusing_the_edit_writes_nothing(accepting: LanguageClient) -> None:
    editor: Editor = accepting.editor  # type: ignore[attr-defined]
    root: Path = accepting.root  # type: ignore[attr-defined]
    editor.open(root / "a.txt", "one\ntwo\nthree\n")
    editor.accept_edits = False
    err = await call_error(accepting, methods.APPLY_PATCH, edit_a(A))
    assert err.data["kind"] == "partially_applied"
    assert err.data["appliedPaths"] == [] and err.data["cause"]["kind"] == "stale_revision"
    assert editor.buffers[(root / "a.txt").as_uri()][1] == "one\ntwo\nthree\n"
    assert (root / "a.txt").read_text() == "one\ntwo\nthree\n"


async def test_a_cancel_while_the_editor_applies_keeps_the_undo_record(
    accepting: LanguageClient,
) -> None:
    """The cancel arrives while the editor holds the applyEdit request for a.txt, which it then
    applies: the batch stops before b.txt, the reply is ``cancelled`` but names a.txt as
    written, and the turn's undo restores the buffer."""
    from pygls.exceptions import JsonRpcException

    editor: Editor = accepting.editor  # type: ignore[attr-defined]
    root: Path = accepting.root  # type: ignore[attr-defined]
    uri = (root / "a.txt").as_uri()
    editor.open(root / "a.txt", "one\ntwo\nthree\n")
    editor.hold = asyncio.Event()
    batch = edit_a(A)
    b_before = (root / "b.txt").read_bytes()
    batch["files"].append({"path": "b.txt", "expected_revision": rev(b_before), "content": "B\n"})
    sent = accepting.protocol.send_request(methods.APPLY_PATCH, batch, msg_id="cancel-me")
    reply = asyncio.wrap_future(sent)
    await asyncio.wait_for(editor.holding.wait(), TIMEOUT)
    accepting.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="cancel-me"))
    # messages are read in order: once a later request is answered, the cancel was read
    await call(accepting, methods.PERMISSION_MODE_GET, {})
    editor.hold.set()  # the editor applies the edit after all
    with pytest.raises(JsonRpcException) as err:
        await asyncio.wait_for(reply, TIMEOUT)
    data = err.value.data
    assert data["kind"] == "cancelled", data
    assert data["appliedPaths"] == ["a.txt"]
    assert editor.buffers[uri][1] == "one\nTWO\nthree\n"
    assert (root / "b.txt").read_bytes() == b_before, "b.txt is not attempted after the cancel"
    undone = await call(accepting, methods.TURN_UNDO, {"turnId": data["turn_id"]})
    assert undone == {"restored": ["a.txt"], "refused": []}
    assert editor.buffers[uri][1] == "one\ntwo\nthree\n"


ERRORS = [
    ("stale_revision", edit_a("0123456789abcdef")),
    (
        "match_not_found",
        {
            "files": [
                {
                    "path": "a.txt",
                    "expected_revision": A,
                    "edits": [{"old_text": "four", "new_text": "4"}],
                }
            ]
        },
    ),
    (
        "match_ambiguous",
        {
            "files": [
                {
                    "path": "b.txt",
                    "expected_revision": rev(b"alpha\nbeta\nalpha\n"),
                    "edits": [{"old_text": "alpha", "new_text": "x"}],
                }
            ]
        },
    ),
    (
        "overlapping_edits",
        {
            "files": [
                {
                    "path": "a.txt",
                    "expected_revision": A,
                    "edits": [
                        {"start_line": 1, "end_line": 2, "new_text": "x"},
                        {"start_line": 2, "end_line": 3, "new_text": "y"},
                    ],
                }
            ]
        },
    ),
    (
        "mixed_edit_kinds",
        {
            "files": [
                {
                    "path": "a.txt",
                    "expected_revision": A,
                    "edits": [
                        {"start_line": 1, "end_line": 1, "new_text": "x"},
                        {"old_text": "two", "new_text": "y"},
                    ],
                }
            ]
        },
    ),
    (
        "patch_syntax",
        {
            "patch": "*** Begin Patch\n*** Update File: a.txt\n@@ -1 +1 @@\n-one\n+1\n"
            "*** End Patch",
            "revisions": {"a.txt": A},
        },
    ),
    (
        "unsupported_patch_op",
        {
            "patch": "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch",
            "revisions": {"a.txt": A},
        },
    ),
    (
        "protected_path",
        {"files": [{"path": ".git/config", "expected_revision": None, "content": "[core]\n"}]},
    ),
    (
        "alias_conflict",
        {
            "files": [
                {"path": "N.txt", "expected_revision": None, "content": "1\n"},
                {"path": "n.txt", "expected_revision": None, "content": "2\n"},
            ]
        },
    ),
    (
        "limit_exceeded",
        {
            "files": [
                {"path": f"f{i}.txt", "expected_revision": None, "content": "x\n"}
                for i in range(33)
            ]
        },
    ),
    (
        "invalid_params",
        {
            "files": [
                {
                    "path": "a.txt",
                    "expected_revision": A,
                    "edits": [{"start_line": 1, "end_line": 1, "new_txt": "x"}],
                }
            ]
        },
    ),
    (
        "path_escape",
        {"files": [{"path": "../outside.txt", "expected_revision": None, "content": "x\n"}]},
    ),
    (
        "not_found",
        {
            "files": [
                {
                    "path": "missing.txt",
                    "expected_revision": A,
                    "edits": [{"old_text": "a", "new_text": "b"}],
                }
            ]
        },
    ),
]


@pytest.mark.parametrize(("kind", "params"), ERRORS, ids=[k for k, _ in ERRORS])
async def test_error_kinds_write_nothing(
    accepting: LanguageClient, kind: str, params: dict[str, Any]
) -> None:
    root: Path = accepting.root  # type: ignore[attr-defined]
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    err = await call_error(accepting, methods.APPLY_PATCH, params)
    if kind == "not_found":  # a missing file with a revision is a stale revision
        assert err.data["kind"] in ("not_found", "stale_revision")
    else:
        assert err.data["kind"] == kind, err.data
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before
    if kind == "stale_revision":
        assert err.data["expected"] == "0123456789abcdef" and err.data["actual"] == A
    if kind == "match_ambiguous":
        assert err.data["lines"] == [1, 3]
    if kind == "patch_syntax":
        assert err.data["line"] == 3 and err.data["rule"] == "hunk_header"
    if kind == "invalid_params":
        assert err.data["field"] == "files.0.edits.0.new_txt"
    if kind == "limit_exceeded":
        assert err.data["limit"] == "paths"


async def test_unsupported_encoding(accepting: LanguageClient) -> None:
    root: Path = accepting.root  # type: ignore[attr-defined]
    (root / "l1.txt").write_bytes("café\n".encode("latin-1"))
    data = (root / "l1.txt").read_bytes()
    err = await call_error(
        accepting,
        methods.APPLY_PATCH,
        {
            "files": [
                {
                    "path": "l1.txt",
                    "expected_revision": rev(data),
                    "edits": [{"old_text": "caf", "new_text": "CAF"}],
                }
            ]
        },
    )
    assert err.data["kind"] == "unsupported_encoding"
    assert (root / "l1.txt").read_bytes() == data


async def test_turns_group_edits_and_undo_them(accepting: LanguageClient) -> None:
    root: Path = accepting.root  # type: ignore[attr-defined]
    turn = (await call(accepting, methods.TURN_BEGIN, {}))["turnId"]
    first = await call(accepting, methods.APPLY_PATCH, edit_a(A))
    await call(
        accepting,
        methods.APPLY_PATCH,
        {"path": "c/new.txt", "expected_revision": None, "content": "new\n"},
    )
    second = await call(
        accepting, methods.APPLY_PATCH, edit_a(first["applied"][0]["revision"], "2")
    )
    assert first["turn_id"] == second["turn_id"] == turn
    await call(accepting, methods.TURN_END, {"turnId": turn})
    undone = await call(accepting, methods.TURN_UNDO, {"turnId": turn})
    assert undone == {"restored": ["a.txt", "c/new.txt", "a.txt"], "refused": []}
    assert (root / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert not (root / "c" / "new.txt").exists()
    err = await call_error(accepting, methods.TURN_UNDO, {"turnId": "t-nope"})
    assert err.data["kind"] == "invalid_params" and err.data["field"] == "turnId"


async def test_undo_survives_a_restart(tmp_path: Path) -> None:
    from s_code.client import StdioClient

    root = workspace(tmp_path)
    env = {**os.environ, "S_CODE_STATE_DIR": str(tmp_path / "state")}
    first = StdioClient(env=env)
    first.initialize(str(root), options={"permissionMode": "accept-edits"})
    done = first.request(methods.APPLY_PATCH, edit_a(A))
    assert first.close() == 0
    assert (root / "a.txt").read_text() == "one\nTWO\nthree\n"
    second = StdioClient(env=env)
    second.initialize(str(root), options={"permissionMode": "accept-edits"})
    undone = second.request(methods.TURN_UNDO, {"turnId": done["turn_id"]})
    assert undone == {"restored": ["a.txt"], "refused": []}
    assert (root / "a.txt").read_text() == "one\ntwo\nthree\n"
    (root / "a.txt").write_text("the user's own later work\n")
    again = second.request(methods.TURN_UNDO, {"turnId": done["turn_id"]})
    assert again == {"restored": [], "refused": []}  # already undone: nothing left to restore
    assert second.close() == 0


async def test_turns_and_the_plan_are_listed_after_a_restart(tmp_path: Path) -> None:
    """An editor that restarts offers the turns to undo and shows the plan (from the server)."""
    from s_code.client import StdioClient

    root = workspace(tmp_path)
    env = {**os.environ, "S_CODE_STATE_DIR": str(tmp_path / "state")}
    first = StdioClient(env=env)
    first.initialize(str(root), options={"permissionMode": "accept-edits"})
    assert first.request(methods.TURN_LIST, {}) == {"turns": []}
    assert first.request(methods.PLAN_GET, {})["plan"] == []
    one = first.request(methods.APPLY_PATCH, edit_a(A))
    empty = first.request(methods.TURN_BEGIN, {})["turnId"]  # nothing changed: not offered
    first.request(methods.TURN_END, {"turnId": empty})
    turn = first.request(methods.TURN_BEGIN, {})["turnId"]
    b = rev((root / "b.txt").read_bytes())
    edit_b = {"start_line": 1, "end_line": 1, "new_text": "ALPHA"}
    first.request(
        methods.APPLY_PATCH,
        {"files": [{"path": "b.txt", "expected_revision": b, "edits": [edit_b]}]},
    )
    plan = [{"step": "Fix it", "status": "in_progress"}]
    first.request(methods.UPDATE_PLAN, {"plan": plan})
    assert first.close() == 0
    second = StdioClient(env=env)
    second.initialize(str(root), options={"permissionMode": "accept-edits"})
    turns = second.request(methods.TURN_LIST, {})["turns"]
    assert [(t["turnId"], t["files"], t["undone"]) for t in turns] == [
        (turn, ["b.txt"], False),
        (one["turn_id"], ["a.txt"], False),
    ]
    assert second.request(methods.PLAN_GET, {})["plan"] == plan
    second.request(methods.TURN_UNDO, {"turnId": turn})
    assert second.request(methods.TURN_LIST, {"limit": 1})["turns"][0]["undone"] is True
    err = second.request_raw(methods.TURN_LIST, {"limit": 0})["error"]
    assert err["data"]["kind"] == "invalid_params" and err["data"]["field"] == "limit"
    assert second.close() == 0
