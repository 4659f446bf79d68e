"""Shared fixtures for the git hardening tests (SECURITY.md §5, G1-G30), and their self-tests.

The oracle is a marker file that a payload writes when git runs it. Every attack test first runs
*plain* git on the fixture the way a naive tool would (the positive control: the marker appears),
removes the marker, then calls the sidecar's tool, which must refuse or run harmlessly and leave
no marker.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.session.session import Session
from s_code.tools.builtin import default_registry
from s_code.workspace.folders import Folders

GIT = shutil.which("git") or "/usr/bin/git"
IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "2024-01-02T03:04:05+00:00",
    "GIT_COMMITTER_DATE": "2024-01-02T03:04:05+00:00",
}


class Marker:
    """A file a payload touches; ``script`` makes an executable that writes it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fired(self) -> bool:
        return self.path.exists()

    def clear(self) -> None:
        if self.path.exists():
            self.path.unlink()

    def script(self, where: Path, body: str = "", exit_code: int = 1) -> Path:
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(f'#!/bin/sh\ntouch "{self.path}"\n{body}\nexit {exit_code}\n')
        where.chmod(0o755)
        return where

    def command(self) -> str:
        """A shell command string that writes the marker."""
        return f'touch "{self.path}"'


def naive_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a naive tool: the user's, with a HOME holding only an identity."""
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Naive\n\temail = naive@example.com\n"
        '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), **extra)
    return env


def git(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    check: bool = True,
    input: bytes | None = None,
    timeout: float = 30,
) -> subprocess.CompletedProcess[bytes]:
    """Plain git, as a naive tool runs it (used to build fixtures and for positive controls)."""
    base = env if env is not None else naive_env(cwd.parent / ".naive-home")
    done = subprocess.run(
        [GIT, *args],
        cwd=cwd,
        env={**base, **IDENTITY},
        capture_output=True,
        input=input,
        timeout=timeout,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr.decode()}")
    return done


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository with one commit of ``files`` (default: ``a.txt``)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in (files or {"a.txt": "one\ntwo\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def set_config(repo: Path, key: str, value: str, file: str = ".git/config") -> None:
    git(repo, "config", "--file", str(repo / file), key, value)


def session(*roots: Path) -> Session:
    return Session(folders=Folders.open([(str(r), None) for r in roots]), registry=REGISTRY)


REGISTRY = default_registry()


def call(sess: Session, tool: str, args: dict[str, Any] | None = None) -> Any:
    """Run a tool in-process; returns the wire result or the SCodeError it raised."""
    t = REGISTRY.get(tool)

    async def run() -> Any:
        return (await t.handler(sess, t.args.model_validate(args or {}))).to_wire()

    try:
        return asyncio.run(run())
    except SCodeError as err:
        return err


def rejected(result: Any, key: str | None = None, scope: str | None = None) -> SCodeError:
    """Assert ``result`` is git_config_rejected (naming ``key``/``scope`` when given)."""
    assert isinstance(result, SCodeError), f"expected a refusal, got {result!r}"
    assert result.kind == ErrorKind.GIT_CONFIG_REJECTED, result
    if key is not None:
        assert result.data["key"].lower() == key.lower(), result.data
    if scope is not None:
        assert result.data["scope"] == scope, result.data
    assert result.data["origin"]
    return result


def is_executable(path: Path) -> bool:
    return path.is_file() and bool(path.stat().st_mode & stat.S_IXUSR)


# -- self-tests of the harness ---------------------------------------------------------------------


def test_marker_script_writes_the_marker(tmp_path: Path) -> None:
    m = Marker(tmp_path / "marker")
    s = m.script(tmp_path / "bin" / "payload")
    assert is_executable(s) and not m.fired()
    subprocess.run([str(s)], check=False)
    assert m.fired()
    m.clear()
    assert not m.fired()


def test_a_clean_repository_is_served(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    (repo / "a.txt").write_text("one\nTWO\n")
    result = call(session(repo), "git_status")
    assert not isinstance(result, SCodeError), result
    assert result["branch"] == "main"
    assert [(e["path"], e["kind"], e["worktree"]) for e in result["entries"]] == [
        ("a.txt", "changed", "M")
    ]
