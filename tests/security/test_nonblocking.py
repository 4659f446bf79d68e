"""T1 (SECURITY.md): no tool blocks the event loop on a file that is not a regular file.

A FIFO, a character device, a unix socket or a link to ``/proc`` put in the workspace, as a
tool's path or where the repository keeps its own files (``.git``, ``commondir``, ``HEAD``,
``.gitignore``, ``.git/info/exclude``...), must get a clear error (never ``internal``, never
the ``timeout`` of a tool that waited on it), and the server must keep answering
``s-code/permissionMode/get`` while the call is in flight. No time bound is asserted:
:data:`BOUND` is a safety deadline only a hang reaches, past git's own 30 s timeout, so a call
that waited for that timeout fails on its outcome, not on a clock. Every case goes through the
real server (``s-code serve`` over stdio).

Positive controls show that each hazard is real: a plain ``open()`` of a FIFO, the blame
pre-check as it was (``open_beneath`` without ``O_NONBLOCK``), plain git and plain ripgrep all
block on these files.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from tests.e2e.conftest import make_client
from tests.security.test_git_support import git, make_repo

from s_code.protocol import methods
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace import search
from s_code.workspace.folders import Folders
from s_code.workspace.openat2 import open_beneath
from s_code.workspace.root import WorkspaceRoot

BOUND = 60.0
"""Seconds before a call that never answers fails the test (a hang, not slowness: git's own
timeout is 30 s, and a case that waited for it answers with the wrong outcome)."""
PING_BOUND = BOUND
"""The same for ``permissionMode/get`` while a tool call is in flight."""
HAZARDS = ("fifo", "zero", "null", "socket")

CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "s_code", "serve"],
    client_factory=make_client,
    server_env=dict(os.environ),
)


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    ws = make_repo(tmp_path / "ws", {"a.txt": "one\nneedle\n", "sub/b.txt": "b\n"})
    (ws / "hazards").mkdir()
    lsp_client.workspace_root = ws  # type: ignore[attr-defined]
    await asyncio.wait_for(
        lsp_client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("neovim@v0.11"),
                root_uri=ws.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=ws.as_uri(), name="ws")],
                initialization_options={"permissionMode": "accept-edits"},
            )
        ),
        BOUND * 4,
    )
    yield
    try:
        await asyncio.wait_for(lsp_client.shutdown_session(), BOUND * 4)
    except BaseException:  # a frozen server (without the fix) must not outlive the test
        server = lsp_client._server
        if server is not None and server.returncode is None:
            server.kill()
        raise


def ws_of(client: LanguageClient) -> Path:
    return client.workspace_root  # type: ignore[attr-defined,no-any-return]


# -- making hazards ------------------------------------------------------------------------------


def make_device(path: Path, minor: int) -> None:
    """A character device with the numbers of /dev/zero (1, 5) or /dev/null (1, 3)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("mknod is refused here (no CAP_MKNOD)")


def make_socket(path: Path) -> None:
    """A bound unix socket (bound relative to its directory: socket paths are short)."""
    with contextlib.chdir(path.parent), socket.socket(socket.AF_UNIX) as s:
        s.bind(path.name)


def make(kind: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        make_device(path, 5)
    elif kind == "null":
        make_device(path, 3)
    elif kind == "socket":
        make_socket(path)
    elif kind == "proc":
        path.symlink_to("/proc/self/status")
    else:
        raise AssertionError(kind)
    return path


def release(fifo: Path) -> None:
    """Let a reader blocked in open() of ``fifo`` go (a writer comes and leaves)."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


# -- calling the server --------------------------------------------------------------------------


async def ping(client: LanguageClient) -> None:
    mode = await asyncio.wait_for(
        client.protocol.send_request_async(methods.PERMISSION_MODE_GET, {}), PING_BOUND
    )
    assert mode["mode"] == "accept-edits", mode


async def outcome(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    """The result of ``method``, or its error's data; the server answers a ping meanwhile."""
    pending = asyncio.wrap_future(client.protocol.send_request(method, params))
    try:
        await ping(client)  # while the call is in flight (or right after it)
        # shielded: a late reply must find its future pending, not cancelled
        result = await asyncio.wait_for(asyncio.shield(pending), BOUND)
    except JsonRpcException as exc:
        data = exc.data
        assert isinstance(data, dict), exc
        assert data["kind"] != "internal", data
        assert "Traceback" not in str(data) and "traceback" not in data, data
        return data
    await ping(client)
    return result


async def refused(client: LanguageClient, method: str, params: dict[str, Any], kind: str) -> Any:
    data = await outcome(client, method, params)
    assert isinstance(data, dict) and data.get("kind") == kind, (method, params, data)
    return data


async def answered(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    result = await outcome(client, method, params)
    assert "kind" not in result, (method, params, result)
    return result


# -- a tool's path names the hazard --------------------------------------------------------------


@pytest.mark.parametrize("kind", HAZARDS)
async def test_read_file_refuses_special_files(client: LanguageClient, kind: str) -> None:
    make(kind, ws_of(client) / "hazards" / kind)
    await refused(client, methods.READ_FILE, {"path": f"hazards/{kind}"}, "invalid_params")


async def test_read_file_refuses_a_link_to_proc(client: LanguageClient) -> None:
    make("proc", ws_of(client) / "hazards" / "proc")
    await refused(client, methods.READ_FILE, {"path": "hazards/proc"}, "path_escape")


async def test_list_files_lists_special_files_without_opening_them(
    client: LanguageClient,
) -> None:
    ws = ws_of(client)
    made = [k for k in HAZARDS if k not in ("zero", "null")]
    for kind in made:
        make(kind, ws / "hazards" / kind)
    make("proc", ws / "hazards" / "proc")
    with contextlib.suppress(pytest.skip.Exception):
        make("zero", ws / "hazards" / "zero")
        made.append("zero")
    listed = await answered(client, methods.LIST_FILES, {"path": "hazards"})
    kinds = {e["path"]: e["type"] for e in listed["entries"]}
    assert kinds == {
        **{f"hazards/{k}": "other" for k in made},
        "hazards/proc": "symlink",
    }
    for kind in made:
        await refused(client, methods.LIST_FILES, {"path": f"hazards/{kind}"}, "not_found")


async def test_search_text_skips_special_files(client: LanguageClient) -> None:
    ws = ws_of(client)
    for kind in ("fifo", "socket", "proc"):
        make(kind, ws / "hazards" / kind)
    with contextlib.suppress(pytest.skip.Exception):
        make("zero", ws / "hazards" / "zero")
    found = await answered(client, methods.SEARCH_TEXT, {"pattern": "needle"})
    assert [m["path"] for m in found["matches"]] == ["a.txt"]
    for kind in ("fifo", "socket"):
        await refused(
            client, methods.SEARCH_TEXT, {"pattern": "x", "path": f"hazards/{kind}"}, "not_found"
        )


@pytest.mark.parametrize("kind", HAZARDS)
async def test_apply_patch_refuses_special_files(client: LanguageClient, kind: str) -> None:
    make(kind, ws_of(client) / "hazards" / kind)
    path = f"hazards/{kind}"
    whole = {"files": [{"path": path, "expected_revision": "0" * 16, "content": "x\n"}]}
    await refused(client, methods.APPLY_PATCH, whole, "invalid_params")
    deleted = {"patch": f"*** Begin Patch\n*** Delete File: {path}\n*** End Patch"}
    await refused(client, methods.APPLY_PATCH, deleted, "invalid_params")


async def test_apply_patch_beside_a_fifo(client: LanguageClient) -> None:
    """A FIFO in the target's directory is never opened: the new file is written beside it."""
    ws = ws_of(client)
    for kind in ("fifo", "socket"):
        make(kind, ws / "hazards" / kind)
    created = {"files": [{"path": "hazards/new.txt", "expected_revision": None, "content": "n\n"}]}
    done = await answered(client, methods.APPLY_PATCH, created)
    assert [a["path"] for a in done["applied"]] == ["hazards/new.txt"]
    assert (ws / "hazards" / "new.txt").read_text() == "n\n"
    assert stat.S_ISFIFO((ws / "hazards" / "fifo").lstat().st_mode)


@pytest.mark.parametrize("kind", HAZARDS)
async def test_git_blame_refuses_special_files(client: LanguageClient, kind: str) -> None:
    """Finding 6 of issue 16: git_blame opened the file blocking, on the event loop."""
    make(kind, ws_of(client) / "hazards" / kind)
    await refused(client, methods.GIT_BLAME, {"path": f"hazards/{kind}"}, "invalid_params")
    await refused(client, methods.GIT_BLAME, {"path": "hazards/proc-none"}, "not_found")


async def test_git_blame_refuses_a_link_to_proc(client: LanguageClient) -> None:
    make("proc", ws_of(client) / "hazards" / "proc")
    await refused(client, methods.GIT_BLAME, {"path": "hazards/proc"}, "path_escape")


async def test_git_tools_limited_to_special_paths(client: LanguageClient) -> None:
    ws = ws_of(client)
    for kind in ("fifo", "socket"):
        make(kind, ws / "hazards" / kind)
    paths = ["hazards/fifo", "hazards/socket"]
    status = await answered(client, methods.GIT_STATUS, {"path": "hazards/fifo"})
    assert status["entries"] == []
    assert (await answered(client, methods.GIT_DIFF, {"paths": paths}))["files"] == []
    assert (await answered(client, methods.GIT_LOG, {"paths": paths}))["commits"] == []
    shown = await answered(client, methods.GIT_SHOW, {"paths": [*paths, "a.txt"]})
    assert [f["path"] for f in shown["files"]] == ["a.txt"]


# -- the repository's own files are hazards ------------------------------------------------------


def _move_git_dir(ws: Path) -> Path:
    """``.git`` becomes a ``gitdir:`` file pointing at ``.gitdata`` (inside the workspace)."""
    (ws / ".git").rename(ws / ".gitdata")
    (ws / ".git").write_text("gitdir: .gitdata\n")
    return ws / ".gitdata"


def _fifo_instead(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _fifo_dot_git(ws: Path) -> None:
    shutil.rmtree(ws / ".git")
    os.mkfifo(ws / ".git")


LAYOUTS: dict[str, tuple[Callable[[Path], None], str, str | None]] = {
    # name: (how to make it, the error kind every git tool answers, data["layout"])
    "fifo_dot_git": (
        _fifo_dot_git,
        "git_config_rejected",
        "gitfile_invalid",
    ),
    "fifo_commondir": (
        lambda ws: os.mkfifo(ws / ".git" / "commondir"),
        "git_config_rejected",
        "commondir_invalid",
    ),
    "gitfile_fifo_head": (
        lambda ws: _fifo_instead(_move_git_dir(ws) / "HEAD"),
        "not_found",
        None,
    ),
    "gitfile_fifo_commondir": (
        lambda ws: os.mkfifo(_move_git_dir(ws) / "commondir"),
        "git_config_rejected",
        "commondir_invalid",
    ),
    "fifo_gitignore": (
        lambda ws: os.mkfifo(ws / ".gitignore"),
        "git_config_rejected",
        "special_file",
    ),
    "fifo_info_exclude": (
        lambda ws: _fifo_instead(ws / ".git" / "info" / "exclude"),
        "git_config_rejected",
        "special_file",
    ),
    "gitfile_fifo_info_exclude": (
        lambda ws: _fifo_instead(_move_git_dir(ws) / "info" / "exclude"),
        "git_config_rejected",
        "special_file",
    ),
    "fifo_config": (
        lambda ws: _fifo_instead(ws / ".git" / "config"),
        "git_config_rejected",
        "special_file",
    ),
    "fifo_index": (
        lambda ws: _fifo_instead(ws / ".git" / "index"),
        "git_config_rejected",
        "special_file",
    ),
    "fifo_gitattributes": (
        lambda ws: os.mkfifo(ws / ".gitattributes"),
        "git_config_rejected",
        "special_file",
    ),
    "fifo_mailmap": (
        lambda ws: os.mkfifo(ws / ".mailmap"),
        "git_config_rejected",
        "special_file",
    ),
    "fifo_gitmodules": (
        lambda ws: os.mkfifo(ws / ".gitmodules"),
        "git_config_rejected",
        "special_file",
    ),
}
GIT_CALLS = [
    (methods.GIT_STATUS, {}),
    (methods.GIT_DIFF, {}),
    (methods.GIT_LOG, {}),
    (methods.GIT_SHOW, {}),
    (methods.GIT_BLAME, {"path": "a.txt"}),
]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
async def test_git_tools_refuse_special_repository_files(
    client: LanguageClient, layout: str
) -> None:
    build, kind, name = LAYOUTS[layout]
    build(ws_of(client))
    for method, params in GIT_CALLS:
        data = await refused(client, method, params, kind)
        if name is not None:
            assert data["layout"] == name, (method, data)


@pytest.mark.parametrize("where", [".gitignore", ".git/info/exclude"])
async def test_file_tools_with_a_fifo_ignore_file(client: LanguageClient, where: str) -> None:
    """list_files reads ignore files itself (non-blocking: a FIFO is skipped); ripgrep would
    block on one, so search_text refuses it by name (or passes over it with include_ignored)."""
    ws = ws_of(client)
    _fifo_instead(ws / where)
    listed = await answered(client, methods.LIST_FILES, {"path": "."})
    assert "a.txt" in [e["path"] for e in listed["entries"]]
    data = await refused(client, methods.SEARCH_TEXT, {"pattern": "needle"}, "not_found")
    assert data["reason"] == "unreadable" and data["path"] == where, data
    found = await answered(
        client, methods.SEARCH_TEXT, {"pattern": "needle", "include_ignored": True}
    )
    assert [m["path"] for m in found["matches"]] == ["a.txt"]


@pytest.mark.parametrize("method", [methods.SEARCH_TEXT, methods.GIT_STATUS])
async def test_a_nested_fifo_ignore_file_is_cancellable(
    client: LanguageClient, method: str
) -> None:
    """What remains: ripgrep and git read every directory's ``.gitignore`` themselves and
    block on a FIFO deep in the tree (until their deadline). The event loop stays free, the
    call can be cancelled, and the child is gone with it."""
    ws = ws_of(client)
    os.mkfifo(ws / "sub" / ".gitignore")
    params = {"pattern": "needle"} if method == methods.SEARCH_TEXT else {}
    reply = asyncio.wrap_future(client.protocol.send_request(method, params, msg_id="slow"))
    await ping(client)  # requests start in order: answered, the call is under way (and blocked)
    assert not reply.done()
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow"))
    with pytest.raises(JsonRpcException) as err:
        await asyncio.wait_for(reply, BOUND)
    assert err.value.data["kind"] == "cancelled", err.value.data
    (ws / "sub" / ".gitignore").unlink()
    await answered(client, method, params)


# -- in process: the search deadline -------------------------------------------------------------


async def test_search_text_has_a_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_repo(tmp_path / "ws", {"a.txt": "needle\n", "sub/b.txt": "b\n"})
    os.mkfifo(ws / "sub" / ".gitignore")
    monkeypatch.setattr(search, "SEARCH_TIMEOUT", 1.0)
    folders = Folders.open([(str(ws), None)])
    try:
        with pytest.raises(SCodeError) as err:
            await asyncio.wait_for(
                search.search_text(
                    folders,
                    "needle",
                    ".",
                    fixed_strings=False,
                    ignore_case=False,
                    globs=[],
                    include_ignored=False,
                    max_results=10,
                    redact=str,
                ),
                BOUND,
            )
    finally:
        folders.close()
    assert err.value.kind is ErrorKind.TIMEOUT


# -- positive controls: the hazards are real -----------------------------------------------------


def blocks(fn: Callable[[], object], seconds: float = 1.0) -> bool:
    """Whether ``fn`` is still running after ``seconds`` in a thread (left to finish)."""
    done = threading.Event()

    def run() -> None:
        with contextlib.suppress(BaseException):
            fn()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    return not done.wait(seconds)


def test_control_a_plain_open_of_a_fifo_blocks(tmp_path: Path) -> None:
    fifo = make("fifo", tmp_path / "fifo")
    try:
        assert blocks(lambda: open(fifo, "rb").close())
    finally:
        release(fifo)


def test_control_the_old_blame_precheck_blocks_and_the_root_no_longer_does(
    tmp_path: Path,
) -> None:
    """git_blame checked ``loc.root.opened(parts)``: ``open_beneath`` with ``O_RDONLY``, which
    blocks on a FIFO; every open through WorkspaceRoot now adds ``O_NONBLOCK``."""
    ws = tmp_path / "ws"
    fifo = make("fifo", ws / "hazards" / "fifo")
    root = WorkspaceRoot(str(ws))
    try:
        parts = ("hazards", "fifo")
        old = blocks(lambda: os.close(open_beneath(root.fd, parts, os.O_RDONLY | os.O_CLOEXEC)))
        release(fifo)
        assert old, "the old pre-check's open did not block"

        def now() -> None:
            with root.opened(parts):
                pass

        assert not blocks(now, BOUND)  # it ends at all (a blocked open never would)
    finally:
        release(fifo)
        root.close()


@pytest.mark.parametrize("where", [".gitignore", "sub/.gitignore", ".git/info/exclude"])
def test_control_plain_git_and_ripgrep_block_on_a_fifo_ignore_file(
    tmp_path: Path, where: str
) -> None:
    ws = make_repo(tmp_path / "ws", {"a.txt": "needle\n", "sub/b.txt": "b\n"})
    _fifo_instead(ws / where)
    with pytest.raises(subprocess.TimeoutExpired):
        git(ws, "status", "--porcelain", timeout=2)
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(
            [search.ripgrep_path(), "--no-config", "--hidden", "needle", "./"],
            cwd=ws,
            capture_output=True,
            timeout=2,
        )


@pytest.mark.parametrize("where", [".git/commondir", ".git/config", ".mailmap"])
def test_control_plain_git_blocks_on_a_fifo_repository_file(tmp_path: Path, where: str) -> None:
    ws = make_repo(tmp_path / "ws")
    _fifo_instead(ws / where)
    with pytest.raises(subprocess.TimeoutExpired):
        git(ws, "log", timeout=2)
