"""Escapes found by the adversarial review of the sandbox, each a test with a positive control:
symlinked protected paths and write-through on restore, resource limits of host processes, the
supervisor outliving a killed sidecar, workspaces that hold the sandbox's own state, System V IPC,
links planted in the dependency cache, rebase state, and flooding a protected name."""

from __future__ import annotations

import os
import resource
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests.security.sandbox_support import PY, Box, alive, box

from s_code.hostproc.unsafe_workspace import refuse_unsafe_workspace
from s_code.protocol.errors import SCodeError
from s_code.sandbox import caches, launcher

__all__ = ["box"]


def test_symlinked_git_config_and_hooks_are_put_back(box: Box, tmp_path: Path) -> None:
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "config").write_text("[core]\n\tfsmonitor = /tmp/pwn\n")
    (evil / "hooks").mkdir()
    config = box.workspace / ".git" / "config"
    original = config.read_text()
    script = (
        f"ln -sf {evil}/config .git/config; mv .git/hooks .git/hooks.old; "
        f"ln -s {evil}/hooks .git/hooks; echo done"
    )
    box.sh(script)
    assert not config.is_symlink() and config.read_text() == original
    hooks = box.workspace / ".git" / "hooks"
    assert hooks.is_dir() and not hooks.is_symlink()
    assert (evil / "config").read_text().startswith("[core]\n\tfsmonitor")  # not written through
    box.unconfined(["sh", "-c", script])
    assert config.is_symlink()  # positive control


def test_restore_never_writes_through_a_replaced_git_dir(box: Box) -> None:
    victim = box.outside / "D"
    (victim / "hooks").mkdir(parents=True)
    (victim / "config").write_text("outside config\n")
    (victim / "hooks" / "keepme").write_text("outside hook\n")
    _, changed = box.sh(f"mv .git .git-real && ln -s {victim} .git; echo done")
    assert (victim / "config").read_text() == "outside config\n"
    assert sorted(os.listdir(victim / "hooks")) == ["keepme"]
    git = box.workspace / ".git"
    assert not git.is_symlink()  # the link was removed, never followed
    if box.tier == 2:
        assert ".git" in changed and not git.exists()  # left absent: no repository to run


def test_prlimit_on_a_host_process_is_denied(box: Box) -> None:
    host = subprocess.Popen(["sleep", "300"])
    try:
        code = (
            "import resource\n"
            f"resource.prlimit({host.pid}, resource.RLIMIT_NOFILE, (3, 3))\n"
            "print('limited')\n"
        )
        outcome = box.py(code)
        assert "limited" not in outcome.output
        assert resource.prlimit(host.pid, resource.RLIMIT_NOFILE)[0] != 3
        box.unconfined([PY, "-c", code])
        assert resource.prlimit(host.pid, resource.RLIMIT_NOFILE) == (3, 3)  # positive control
    finally:
        host.kill()
        host.wait()


@pytest.mark.parametrize("reap", [True, False], ids=["supervised", "control"])
def test_supervisor_kills_the_tree_when_the_sidecar_dies(reap: bool) -> None:
    marker = f"{303 + (uuid.uuid4().int % 1000) / 1000:.3f}"
    helper = str(launcher.helper())
    argv = [helper, *(["--reap"] if reap else []), "--no-landlock", "--", "sleep", marker]
    parent = subprocess.Popen(
        [PY, "-c", f"import subprocess, time; subprocess.Popen({argv!r}); time.sleep(60)"]
    )
    deadline = time.monotonic() + 10
    while not alive(f"sleep\0{marker}") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert alive(f"sleep\0{marker}")
    parent.kill()  # the sidecar dies
    parent.wait()
    time.sleep(0.5)
    survivors = alive(f"sleep\0{marker}")
    for pid in survivors:
        os.kill(pid, 9)
    if reap:
        assert survivors == []
    else:
        assert survivors  # positive control: an unsupervised command outlives its parent


def test_a_workspace_holding_home_or_the_sandbox_state_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(caches.CACHE_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("S_CODE_LAUNCHER_DIR", str(tmp_path / "elsewhere" / "launcher"))
    for workspace in (home, tmp_path):  # the home itself, and a folder above it
        with pytest.raises(SCodeError) as err:
            refuse_unsafe_workspace(str(workspace), "commands")
        assert err.value.kind == "sandbox_unavailable"
    project = home / "project"
    project.mkdir()
    refuse_unsafe_workspace(str(project), "commands")  # a project folder is fine
    monkeypatch.setenv("S_CODE_LAUNCHER_DIR", str(project / ".cache" / "launcher"))
    with pytest.raises(SCodeError, match="exec helper"):
        refuse_unsafe_workspace(str(project), "commands")


_SHM = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
shmid = libc.shmget(0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
print("shmid", shmid, ctypes.get_errno())
"""


def test_sysv_ipc_is_denied_in_tier2(box: Box) -> None:
    outcome = box.py(_SHM)
    shmid = int(outcome.output.split()[1])
    if box.tier == 2:
        assert shmid == -1 and outcome.output.split()[2] == "1"  # EPERM
    control = box.unconfined([PY, "-c", _SHM]).stdout.split()
    assert int(control[1]) >= 0  # positive control: the host's IPC namespace takes it
    subprocess.run(["ipcrm", "-m", control[1]], check=False)
    if box.tier == 1 and shmid >= 0:  # a private IPC namespace: gone with the command
        listed = subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout
        assert f" {shmid} " not in listed


def test_links_planted_in_the_cache_do_not_redirect_the_sidecar(box: Box, tmp_path: Path) -> None:
    dep = caches.for_workspace(box.workspace)
    target = box.outside / "planted"
    box.sh(f"cd {dep.root} && rm -rf go npmrc && ln -s {target}/new npmrc && ln -s {target} go")
    target.mkdir()
    caches.for_workspace(box.workspace)  # the next command's set-up
    assert os.listdir(target) == []  # nothing created through the links
    assert (dep.root / "npmrc").is_file() and not (dep.root / "npmrc").is_symlink()
    assert (dep.root / "go").is_dir() and not (dep.root / "go").is_symlink()


def test_rebase_state_left_in_git_is_removed(box: Box) -> None:
    script = "mkdir -p .git/rebase-merge && echo 'exec touch /tmp/pwn' > .git/rebase-merge/done"
    _, changed = box.sh(script + "; echo ok")
    assert not (box.workspace / ".git" / "rebase-merge").exists()
    if box.tier == 2:
        assert ".git/rebase-merge" in changed
    box.unconfined(["sh", "-c", script])
    assert (box.workspace / ".git" / "rebase-merge").exists()  # positive control


def test_flooding_a_protected_name_hides_nothing(box: Box) -> None:
    script = (
        "mkdir .envrc && for i in $(seq 1 2100); do : > .envrc/f$i; done; "
        "echo x > .mcp.json; echo x > .nvim.lua; mkdir -p .vscode && echo x > .vscode/tasks.json; "
        "echo '#!/bin/sh' > .git/hooks/pre-commit; echo ok"
    )
    box.sh(script)
    for name in (".envrc", ".mcp.json", ".nvim.lua", ".vscode", ".git/hooks/pre-commit"):
        assert not (box.workspace / name).exists(), name


def test_a_nested_repository_is_protected_too(box: Box) -> None:
    nested = box.workspace / "vendor" / "lib" / ".git"
    (nested / "hooks").mkdir(parents=True)
    (nested / "config").write_text("[core]\n")
    script = (
        "printf '\\tfsmonitor = /tmp/pwn\\n' >> vendor/lib/.git/config; "
        "echo '#!/bin/sh' > vendor/lib/.git/hooks/post-checkout; echo ok"
    )
    _, changed = box.sh(script)
    assert (nested / "config").read_text() == "[core]\n"
    assert not (nested / "hooks" / "post-checkout").exists()
    if box.tier == 2:
        assert "vendor/lib/.git/config" in changed
    box.unconfined(["sh", "-c", script])
    assert "fsmonitor" in (nested / "config").read_text()  # positive control


# -- the second review ------------------------------------------------------------------------


def test_a_deep_tree_does_not_crash_the_check(box: Box) -> None:
    script = (
        "printf '\\tfsmonitor = /tmp/pwn\\n' >> .git/config; "
        "d=.vscode; for i in $(seq 1 1200); do d=$d/a; done; mkdir -p $d; "
        "echo x > .mcp.json; echo ok"
    )
    box.sh(script)
    assert "fsmonitor" not in (box.workspace / ".git" / "config").read_text()
    assert not (box.workspace / ".vscode").exists()
    assert not (box.workspace / ".mcp.json").exists()


def test_the_root_cannot_become_a_bare_repository(box: Box) -> None:
    (box.workspace / ".git" / "config").unlink()
    (box.workspace / ".git" / "hooks").rmdir()
    (box.workspace / ".git").rmdir()
    script = (
        "mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD && "
        "printf '[core]\\n\\tbare = true\\n\\tfsmonitor = /tmp/pwn\\n' > config; echo ok"
    )
    box.sh(script)
    assert not (box.workspace / "config").exists()  # its config set aside: nothing to run
    box.unconfined(["sh", "-c", script])
    assert (box.workspace / "config").exists()  # positive control


def test_a_gitdir_file_in_a_subdirectory_is_removed(box: Box) -> None:
    (box.workspace / "lib").mkdir()
    script = "mkdir -p lib/.r && echo 'gitdir: .r' > lib/.git; echo ok"
    box.sh(script)
    assert not (box.workspace / "lib" / ".git").exists()
    box.unconfined(["sh", "-c", script])
    assert (box.workspace / "lib" / ".git").is_file()  # positive control


def test_a_known_repository_stays_protected_past_the_search_budget(
    box: Box, tmp_path: Path
) -> None:
    """A repository the first run learned stays protected after a command spent the search
    budget: tier 1 binds it read-only (the plant fails), tier 2 lets the plant be made and puts
    the config back (reported). Either way the user's git never runs the payload."""
    from tests.security.test_git_support import Marker, git, make_repo

    nested = make_repo(box.workspace / "vendor")
    config = nested / ".git" / "config"
    original = config.read_text()
    marker = Marker(tmp_path / "pwned")
    plant = f"printf '\\tfsmonitor = \"{marker.command()}; false\"\\n' >> vendor/.git/config"
    box.sh("echo ok")  # the first run learns vendor/.git
    box.sh("for i in $(seq 1 21000); do : > f$i; done; echo ok")  # the search budget is spent
    outcome, changed = box.sh(plant)
    if box.tier == 1:
        assert "Read-only file system" in outcome.output, outcome.output
    else:
        assert outcome.exit_code == 0, outcome.output  # the plant was made ...
        assert "vendor/.git/config" in changed, changed  # ... and seen
    assert config.read_text() == original  # put back, or never changed
    git(nested, "status", "--short", check=False)
    assert not marker.fired()
    box.unconfined(["sh", "-c", plant])  # positive control: the plant, not sandboxed, runs
    git(nested, "status", "--short", check=False)
    assert marker.fired(), "positive control: the planted config did not run"


def test_no_set_user_id_bits(box: Box) -> None:
    victim = box.outside / "tool"
    victim.write_text("#!/bin/sh\n")
    inside = box.workspace / "tool"
    inside.write_text("#!/bin/sh\n")
    box.sh(f"chmod 4755 tool {victim}; chmod 2755 tool; chmod 755 tool; echo done")
    assert not victim.stat().st_mode & 0o6000
    assert inside.stat().st_mode & 0o7777 == 0o755  # ordinary modes still work
    box.unconfined(["chmod", "4755", str(victim)])
    assert victim.stat().st_mode & 0o4000  # positive control


def test_a_workspace_holding_s_code_itself_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import s_code

    package_root = Path(s_code.__file__).resolve().parents[1]  # .../server
    with pytest.raises(SCodeError, match="s-code itself"):
        refuse_unsafe_workspace(str(package_root), "commands")


def test_a_link_planted_as_the_private_tmp_is_not_followed(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command may write anything in its workspace's cache folder, so it can put a link where
    the sidecar makes the next command's private tmp: that tmp is made where the sidecar means,
    never where the link points (outside the workspace, anywhere the user can write). In tier 1
    the tmp holds the running command's mount points, so the plant moves it aside."""
    import tempfile

    dep = caches.for_workspace(box.workspace)
    target = box.outside / "tmp-target"
    target.mkdir()
    plant = f"mv {dep.root}/tmp {dep.root}/tmp.$$ && ln -s {target} {dep.root}/tmp; echo ok"
    made: list[Path] = []  # where each command's private tmp really is, as it is made
    mkdtemp = tempfile.mkdtemp

    def recorded(*args: Any, **kwargs: Any) -> Any:
        path = mkdtemp(*args, **kwargs)
        made.append(Path(os.path.realpath(path)))
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", recorded)

    def next_tmp() -> Path:
        box.sh(plant)
        assert (dep.root / "tmp").is_symlink(), "the plant was not made"
        box.sh('echo written > "$TMPDIR/w"; echo ok')
        return made[-1]

    assert target not in next_tmp().parents
    assert os.listdir(target) == []
    # positive control: making the tmp's folder the naive way follows the link
    monkeypatch.setattr(caches, "ensure_dir", lambda root, path: os.makedirs(path, exist_ok=True))
    assert target in next_tmp().parents, "positive control: the link was not followed"
