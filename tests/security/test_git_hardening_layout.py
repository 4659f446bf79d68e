"""SECURITY.md §5 G15, G21, G22, G29: repository layouts that redirect git.

Positive control first (plain git in the fixture runs the payload or reads outside), then the
sidecar, which must refuse with ``git_config_rejected`` (``scope: "layout"`` or the redirecting
key) or run harmlessly, leaving no marker.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.security.test_git_support import (
    Marker,
    call,
    git,
    make_repo,
    naive_env,
    rejected,
    session,
    set_config,
)

from s_code.protocol.errors import SCodeError


def _fsmonitor_config(marker: Marker, where: Path) -> str:
    return f'[core]\n\tfsmonitor = "{marker.script(where)}"\n'


def test_g15_gitfile_pointing_outside(tmp_path: Path) -> None:
    marker = Marker(tmp_path / "MARKER")
    outside = tmp_path / "outside" / "gitdir"
    outside.parent.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main", f"--separate-git-dir={outside}")
    (ws / "a.txt").write_text("x\n")
    git(ws, "add", "a.txt")
    git(ws, "commit", "-qm", "x")
    assert (ws / ".git").is_file()
    with (outside / "config").open("a") as f:
        f.write(_fsmonitor_config(marker, tmp_path / "fsmon"))
    git(ws, "status", check=False)
    assert marker.fired(), "positive control: plain git used the outside gitdir's config"
    marker.clear()
    err = rejected(call(session(ws), "git_status"), ".git", "layout")
    assert err.data["layout"] == "gitfile_outside" and err.data["gitdir"] == str(outside)
    assert not marker.fired()


def test_g21_embedded_bare_repository(tmp_path: Path) -> None:
    marker = Marker(tmp_path / "MARKER")
    outer = make_repo(tmp_path / "ws")
    evil = outer / "evil"
    git(outer, "init", "-q", "--bare", str(evil))
    set_config(evil, "core.bare", "false", file="config")
    set_config(evil, "core.worktree", "..", file="config")
    set_config(evil, "core.fsmonitor", str(marker.script(tmp_path / "fsmon")), file="config")
    git(evil, "status", check=False)
    assert marker.fired(), "positive control: plain git in evil/ ran its fsmonitor"
    marker.clear()
    # The outer workspace: git is told its own --git-dir, so evil/ is just files.
    result = call(session(outer), "git_status", {"path": "evil", "untracked": "all"})
    assert not isinstance(result, SCodeError), result
    assert "evil/config" in {e["path"] for e in result["entries"]}
    # A workspace folder that is itself the bare repository: refused.
    err = rejected(call(session(evil), "git_status"), ".git", "layout")
    assert err.data["layout"] == "embedded_bare"
    assert not marker.fired()


def test_g22_foreign_owned_parent_git(tmp_path: Path) -> None:
    marker = Marker(tmp_path / "MARKER")
    parent = make_repo(tmp_path / "parent", {"project/a.txt": "x\n"})
    with (parent / ".git" / "config").open("a") as f:
        f.write(_fsmonitor_config(marker, tmp_path / "fsmon"))
    for dirpath, _dirs, files in os.walk(parent / ".git"):
        os.chown(dirpath, 12345, 12345)
        for name in files:
            os.chown(os.path.join(dirpath, name), 12345, 12345, follow_symlinks=False)
    project = parent / "project"
    plain = git(project, "status", check=False)
    assert b"dubious ownership" in plain.stderr and not marker.fired()  # git's own check
    # Positive control: with the safe.directory=* many containers set globally, it fires.
    env = naive_env(tmp_path / "home")
    (tmp_path / "home" / ".gitconfig").write_text("[safe]\n\tdirectory = *\n")
    git(project, "status", env=env, check=False)
    assert marker.fired(), "positive control: a foreign-owned parent .git ran its fsmonitor"
    marker.clear()
    err = rejected(call(session(project), "git_status"), ".git", "layout")
    assert err.data["layout"] == "foreign_owner" and err.data["owner"] == 12345
    assert not marker.fired()


def test_parent_repository_owned_by_us_is_scoped_to_the_folder(tmp_path: Path) -> None:
    """A folder below the top of its repository: answers cover only the folder, in its terms."""
    parent = make_repo(tmp_path / "parent", {"project/a.txt": "x\n", "secret.txt": "s\n"})
    (parent / "project" / "a.txt").write_text("changed\n")
    (parent / "secret.txt").write_text("changed\n")
    project = parent / "project"
    status = call(session(project), "git_status")
    assert [e["path"] for e in status["entries"]] == ["a.txt"]
    diff = call(session(project), "git_diff")
    assert [f["path"] for f in diff["files"]] == ["a.txt"]
    assert "secret" not in diff["files"][0]["patch"]
    log = call(session(project), "git_log")
    assert [c["subject"] for c in log["commits"]] == ["initial"]


def test_g29_core_worktree_outside(tmp_path: Path) -> None:
    """The oracle here is disclosure: plain git reports files of the outside directory."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret-outside.txt").write_text("secret\n")
    repo = make_repo(tmp_path / "ws")
    set_config(repo, "core.worktree", str(outside))
    plain = git(repo, "status", "--porcelain", check=False)
    assert b"secret-outside.txt" in plain.stdout, "positive control: git read outside"
    err = rejected(call(session(repo), "git_status"), "core.worktree", "local")
    assert str(outside) in err.message
    # core.worktree naming the work tree itself is harmless and served.
    set_config(repo, "core.worktree", str(repo))
    assert not isinstance(call(session(repo), "git_status"), SCodeError)


def test_symlinked_dot_git_is_refused(tmp_path: Path) -> None:
    real = make_repo(tmp_path / "real")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").symlink_to(real / ".git")
    err = rejected(call(session(ws), "git_status"), ".git", "layout")
    assert err.data["layout"] == "gitdir_symlink"


def test_commondir_outside_is_refused(tmp_path: Path) -> None:
    marker = Marker(tmp_path / "MARKER")
    other = make_repo(tmp_path / "other")
    with (other / ".git" / "config").open("a") as f:
        f.write(_fsmonitor_config(marker, tmp_path / "fsmon"))
    repo = make_repo(tmp_path / "ws")
    (repo / ".git" / "commondir").write_text(str(other / ".git") + "\n")
    git(repo, "status", check=False)
    assert marker.fired(), "positive control: commondir redirected the config"
    marker.clear()
    err = rejected(call(session(repo), "git_status"), ".git", "layout")
    assert err.data["layout"] == "commondir_outside"
    assert not marker.fired()


def test_no_repository_is_not_found(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    result = call(session(ws), "git_status")
    assert isinstance(result, SCodeError) and result.kind == "not_found"
    assert result.data["reason"] == "not_a_repository"
