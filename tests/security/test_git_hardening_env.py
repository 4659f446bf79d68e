"""SECURITY.md §5 G16, G23-G25: the pager on a TTY, a fake ``git`` on PATH, and a poisoned
environment of the sidecar itself (``GIT_CONFIG_PARAMETERS``, ``GIT_EXTERNAL_DIFF``,
``LD_PRELOAD``, ``GIT_DIR``). These run the real server (``s-code serve``) with that environment.
"""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.security.test_git_support import (
    Marker,
    git,
    make_repo,
    naive_env,
    set_config,
)

from s_code.client import RpcError, StdioClient
from s_code.git import binary
from s_code.protocol import methods


def _under_pty(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 20) -> bytes:
    """Run ``argv`` with a terminal as stdin/stdout/stderr and return what it printed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True
    )
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=5)
    os.close(master)
    return out


def _server(env: dict[str, str], tmp_path: Path) -> StdioClient:
    log = (tmp_path / "server.log").open("wb")
    return StdioClient([sys.executable, "-m", "s_code", "serve"], env=env, stderr=log)


def _server_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "LD_"))}
    env.update(extra)
    return env


@pytest.mark.parametrize("key", ["core.pager", "pager.log"])
def test_g16_pager_under_a_pty(tmp_path: Path, key: str) -> None:
    marker = Marker(tmp_path / "MARKER")
    repo = make_repo(tmp_path / "ws")
    set_config(repo, key, str(marker.script(tmp_path / "pager", "cat", 0)))
    _under_pty(["git", "log", "-1"], repo, naive_env(tmp_path / "home"))
    assert marker.fired(), "positive control: plain git log on a TTY ran the pager"
    marker.clear()
    # The sidecar, itself on a TTY: refused by the guard; and with the guard bypassed, the
    # runner alone (--no-pager, a pipe, GIT_PAGER=cat) still runs no pager.
    script = (
        "import asyncio, sys\n"
        "from tests.security.test_git_support import call, session\n"
        "from s_code.git.runner import Handle, spawn_sync\n"
        f"r = call(session(__import__('pathlib').Path({str(repo)!r})), 'git_log')\n"
        "print('KIND', getattr(r, 'kind', None), r.data.get('key'))\n"
        f"gd, wt = {str(repo / '.git')!r}, {str(repo)!r}\n"
        "out = spawn_sync(gd, wt, ['log', '-1'], roots=(), handle=Handle())\n"
        "print('RC', out.returncode, len(out.stdout))\n"
    )
    printed = _under_pty([sys.executable, "-c", script], Path.cwd(), _server_env())
    assert f"KIND git_config_rejected {key}".encode() in printed, printed
    assert b"RC 0" in printed, printed
    assert not marker.fired()


def test_g23_fake_git_in_the_workspace_on_path(tmp_path: Path) -> None:
    marker = Marker(tmp_path / "MARKER")
    repo = make_repo(tmp_path / "ws")
    marker.script(repo / "git", exit_code=0)
    path = f"{repo}:.:{os.environ['PATH']}"
    subprocess.run(["git", "status"], cwd=repo, env=naive_env(tmp_path / "h", PATH=path))
    assert marker.fired(), "positive control: a naive tool ran ./git from the workspace"
    marker.clear()
    chosen = binary.resolve(path, [str(repo)])
    assert chosen.path == os.path.realpath(shutil.which("git", path=os.environ["PATH"]) or "")
    assert not chosen.path.startswith(str(repo))
    client = _server(_server_env(PATH=path), tmp_path)
    try:
        client.initialize(str(repo))
        status = client.request(methods.GIT_STATUS, {"untracked": "all"})
        assert {"path": "git", "kind": "untracked"}.items() <= status["entries"][0].items()
    finally:
        client.close()
    assert not marker.fired()


def test_world_writable_and_relative_path_entries_are_skipped(tmp_path: Path) -> None:
    marker = Marker(tmp_path / "MARKER")
    open_dir = tmp_path / "open"
    marker.script(open_dir / "git", exit_code=0)
    open_dir.chmod(0o777)
    chosen = binary.resolve(f"{open_dir}:bin:{os.environ['PATH']}", [])
    assert chosen.path != str(open_dir / "git")
    with pytest.raises(Exception) as info:
        binary.resolve(f"{open_dir}:.", [])
    assert "world-writable directory" in str(info.value)
    assert not marker.fired()


def _preload_library(tmp_path: Path, marker: Marker) -> Path | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    src = tmp_path / "preload.c"
    src.write_text(
        "#include <fcntl.h>\n#include <string.h>\n#include <unistd.h>\n"
        "__attribute__((constructor)) static void fire(void) {\n"
        '  char comm[32] = {0}; int fd = open("/proc/self/comm", O_RDONLY);\n'
        "  if (fd >= 0) { read(fd, comm, sizeof comm - 1); close(fd); }\n"
        '  if (strncmp(comm, "git", 3) == 0) {\n'
        f'    int m = open("{marker.path}", O_CREAT | O_WRONLY, 0644); if (m >= 0) close(m);\n'
        "  }\n}\n"
    )
    lib = tmp_path / "preload.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def test_g24_g25_poisoned_sidecar_environment(tmp_path: Path) -> None:
    markers = {n: Marker(tmp_path / f"MARKER-{n}") for n in ("params", "extdiff", "preload", "dir")}
    repo = make_repo(tmp_path / "ws")
    (repo / "a.txt").write_text("changed\n")
    other = make_repo(tmp_path / "other")
    set_config(other, "core.fsmonitor", str(markers["dir"].script(tmp_path / "fsmon-dir")))
    fsmon = markers["params"].script(tmp_path / "fsmon")
    poison = {
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{fsmon}'",
        "GIT_EXTERNAL_DIFF": str(markers["extdiff"].script(tmp_path / "extdiff")),
        "GIT_DIR": str(other / ".git"),
    }
    lib = _preload_library(tmp_path, markers["preload"])
    if lib is not None:
        poison["LD_PRELOAD"] = str(lib)
    naive = naive_env(tmp_path / "home")
    for name, command in (
        ("GIT_CONFIG_PARAMETERS", ["status"]),
        ("GIT_EXTERNAL_DIFF", ["diff"]),
        ("GIT_DIR", ["status"]),
        ("LD_PRELOAD", ["--version"]),
    ):
        if name in poison:
            git(repo, *command, env={**naive, name: poison[name]}, check=False)
    for name, m in markers.items():
        if name != "preload" or lib is not None:
            assert m.fired(), f"positive control failed for {name}"
            m.clear()
    client = _server(_server_env(**poison), tmp_path)
    try:
        client.initialize(str(repo))
        status = client.request(methods.GIT_STATUS, {})
        assert [(e["path"], e["worktree"]) for e in status["entries"]] == [("a.txt", "M")]
        diff = client.request(methods.GIT_DIFF, {})
        assert "+changed" in diff["files"][0]["patch"]  # the workspace's repo, not GIT_DIR's
        log = client.request(methods.GIT_LOG, {})
        assert [c["subject"] for c in log["commits"]] == ["initial"]
    finally:
        client.close()
    assert [n for n, m in markers.items() if m.fired()] == []


def test_git_older_than_2_39_4_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'git version 2.39.3'\n")
    fake.chmod(0o755)
    with pytest.raises(Exception) as info:
        binary.resolve(str(fake.parent), [])
    assert "too old" in str(info.value) and "2.39.4" in str(info.value)
    assert getattr(info.value, "data", {})["reason"] == "git_too_old"


def test_a_refusal_reaches_the_client_with_its_kind(tmp_path: Path) -> None:
    marker = Marker(tmp_path / "MARKER")
    repo = make_repo(tmp_path / "ws")
    set_config(repo, "core.fsmonitor", str(marker.script(tmp_path / "fsmon")))
    client = _server(_server_env(), tmp_path)
    try:
        client.initialize(str(repo))
        with pytest.raises(RpcError) as info:
            client.request(methods.GIT_STATUS, {})
    finally:
        client.close()
    assert info.value.kind == "git_config_rejected"
    assert info.value.data["key"] == "core.fsmonitor" and info.value.data["scope"] == "local"
    assert not marker.fired()
