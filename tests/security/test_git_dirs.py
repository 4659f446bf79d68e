"""Every git directory in the workspace is protected from commands and edits (SECURITY.md S18-S20).

Git runs code from more places than ``<root>/.git``: the real git directory a ``.git`` file names
(``git init --separate-git-dir``), a linked worktree's directory, a bare repository laid out in
the workspace, and nested repositories at any depth, in ignored build and dependency folders too.
Each test first shows the attack working (the positive control: the command runs unconfined, then
the user's own plain ``git status`` runs the payload), then runs it through the sandbox (tier 1
keeps every git directory read-only; tier 2 puts back or removes what changed).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
from pathlib import Path

import pytest
from tests.polling import until_async
from tests.security.sandbox_support import Box, box
from tests.security.test_git_support import GIT, Marker, git, make_repo

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.session.session import Session
from s_code.state.store import Store
from s_code.tools.builtin import default_registry
from s_code.tools.dispatch import call
from s_code.workspace.folders import Folders

__all__ = ["box"]


def fsmonitor_script(marker: Marker) -> str:
    """A shell command that plants ``core.fsmonitor`` into the config named by $1."""
    return f'printf \'[core]\\n\\tfsmonitor = "{marker.command()}; false"\\n\' >> "$1"'


def user_git_status(repo: Path) -> None:
    """The user's own ``git status`` in ``repo``, the way a shell prompt or an editor runs it."""
    git(repo, "status", "--short", check=False)


def attack(box: Box, config_rel: str, marker: Marker) -> tuple[list[str], str]:
    """Run the config-planting command in the sandbox; the changed paths and the config after."""
    config = box.workspace / config_rel
    before = config.read_text() if config.exists() else ""
    _, changed = box.run(["sh", "-c", fsmonitor_script(marker) + "; exit 0", "sh", config_rel])
    after = config.read_text() if config.exists() else ""
    assert after == before, f"{config_rel} changed: {after!r}"
    return changed, after


def control(box: Box, workdir: Path, config_rel: str, marker: Marker) -> None:
    """The positive control: the same command unconfined, then plain git runs the payload."""
    saved = (box.workspace / config_rel).read_bytes()
    box.unconfined(["sh", "-c", fsmonitor_script(marker), "sh", config_rel])
    user_git_status(workdir)
    assert marker.fired(), "the attack does not work even unconfined: the test proves nothing"
    marker.clear()
    (box.workspace / config_rel).write_bytes(saved)


def test_s19_the_real_git_dir_behind_a_gitdir_file(box: Box, tmp_path: Path) -> None:
    """``git init --separate-git-dir=.gitdata``: ``.git`` is a file, the config lives in
    ``.gitdata/`` (finding 2 of the review)."""
    shutil.rmtree(box.workspace / ".git")
    git(box.workspace, "init", "-q", "--separate-git-dir=.gitdata")
    assert (box.workspace / ".git").is_file()
    marker = Marker(tmp_path / "pwned")
    control(box, box.workspace, ".gitdata/config", marker)
    changed, _ = attack(box, ".gitdata/config", marker)
    hook = box.workspace / ".gitdata" / "hooks" / "post-index-change"
    box.sh(f"printf '#!/bin/sh\\n{marker.command()}\\n' > {hook}; chmod +x {hook}; exit 0")
    assert not hook.exists()
    user_git_status(box.workspace)
    assert not marker.fired()
    if box.tier == 2:
        assert ".gitdata/config" in changed


def test_s19_a_bare_repository_in_the_workspace(box: Box, tmp_path: Path) -> None:
    """A local mirror (``git init --bare``) the user pushes to: its hooks run on every push."""
    git(box.workspace, "init", "-q", "--bare", "mirror.git")
    source = make_repo(tmp_path / "source")
    marker = Marker(tmp_path / "pwned")
    plant = (
        f"printf '#!/bin/sh\\n{marker.command()}\\n' > mirror.git/hooks/post-receive && "
        "chmod +x mirror.git/hooks/post-receive; "
        f"{fsmonitor_script(marker)}; exit 0"
    )
    box.unconfined(["sh", "-c", plant, "sh", "mirror.git/config"])  # positive control
    git(source, "push", "-q", str(box.workspace / "mirror.git"), "main")
    assert marker.fired()
    marker.clear()
    shutil.rmtree(box.workspace / "mirror.git")
    git(box.workspace, "init", "-q", "--bare", "mirror.git")
    config = (box.workspace / "mirror.git" / "config").read_text()
    box.run(["sh", "-c", plant, "sh", "mirror.git/config"])
    assert not (box.workspace / "mirror.git" / "hooks" / "post-receive").exists()
    assert (box.workspace / "mirror.git" / "config").read_text() == config
    git(source, "push", "-q", str(box.workspace / "mirror.git"), "main")
    assert not marker.fired()


def test_s19_a_linked_worktree_config(box: Box, tmp_path: Path) -> None:
    shutil.rmtree(box.workspace / ".git")
    make_repo(box.workspace)
    git(box.workspace, "worktree", "add", "-q", "wt")
    git(box.workspace, "config", "extensions.worktreeConfig", "true")
    rel = ".git/worktrees/wt/config.worktree"
    (box.workspace / rel).write_text("")
    marker = Marker(tmp_path / "pwned")
    control(box, box.workspace / "wt", rel, marker)
    attack(box, rel, marker)
    user_git_status(box.workspace / "wt")
    assert not marker.fired()


@pytest.mark.parametrize("where", ["a/b/c/d/e", "build/x", "node_modules/pkg", ".venv/lib"])
def test_s20_an_existing_nested_repository_at_any_depth(
    box: Box, tmp_path: Path, where: str
) -> None:
    nested = box.workspace / where
    make_repo(nested)
    marker = Marker(tmp_path / "pwned")
    control(box, nested, f"{where}/.git/config", marker)
    attack(box, f"{where}/.git/config", marker)
    user_git_status(nested)
    assert not marker.fired()


@pytest.mark.parametrize("where", ["a/b/c/d/e", "build/x", "node_modules/pkg"])
def test_s20_a_repository_a_command_creates_is_set_aside(
    box: Box, tmp_path: Path, where: str
) -> None:
    marker = Marker(tmp_path / "pwned")
    script = (
        f"mkdir -p {where} && cd {where} && {GIT} init -q . && "
        f"{GIT} config core.fsmonitor '{marker.command()}; false'; exit 0"
    )
    box.unconfined(["sh", "-c", script])  # positive control
    user_git_status(box.workspace / where)
    assert marker.fired()
    marker.clear()
    shutil.rmtree(box.workspace / where.split("/")[0])
    _, changed = box.sh(script)
    git_dir = box.workspace / where / ".git"
    assert not (git_dir / "config").exists()  # what could run code is set aside...
    assert any(n.startswith("config.s-code-quarantined-") for n in os.listdir(git_dir))
    assert (git_dir / "HEAD").exists()  # ...and nothing is deleted
    user_git_status(box.workspace / where)
    assert not marker.fired()
    assert any(c.startswith(f"{where}/.git (a git directory that was not there") for c in changed)


def test_s20_a_directory_laid_out_as_a_git_dir_is_neutralised(box: Box, tmp_path: Path) -> None:
    """A command that lays out ``tools/`` as a bare repository with a hostile config: the user
    who runs git inside ``tools/`` would run it."""
    (box.workspace / "tools").mkdir()
    (box.workspace / "tools" / "keep.txt").write_text("mine\n")
    marker = Marker(tmp_path / "pwned")
    script = (
        "cd tools && mkdir -p objects refs/heads && echo 'ref: refs/heads/main' > HEAD && "
        f"printf '[core]\\n\\tbare = true\\n\\tfsmonitor = \"{marker.command()}; false\"\\n' "
        "> config; exit 0"
    )
    _, changed = box.sh(script)
    assert (box.workspace / "tools" / "keep.txt").read_text() == "mine\n"  # the folder stays
    assert not (box.workspace / "tools" / "config").exists()  # its config is set aside
    git(box.workspace / "tools", "log", check=False)  # the user's git inside it
    assert not marker.fired()
    assert any(c.startswith("tools (a git directory that was not there") for c in changed)


def test_s18_git_tools_wait_for_a_running_command(box: Box, tmp_path: Path) -> None:
    """A command plants a clean filter (config and .gitattributes) and holds it while it runs; a
    git_diff asked meanwhile waits for the command to end (and, in tier 2, for the config to be
    put back), so the filter never runs. Finding 1 of the review, the critical one."""
    shutil.rmtree(box.workspace / ".git")
    make_repo(box.workspace)
    marker = Marker(tmp_path / "pwned")
    filter_config = f'[filter "ev"]\\n\\tclean = "{marker.command()}; cat"\\n'
    # positive control: git run while the hostile config is in place runs the filter
    saved = (box.workspace / ".git" / "config").read_bytes()
    box.unconfined(
        [
            "sh",
            "-c",
            f"printf '{filter_config}' >> .git/config; echo '* filter=ev' > .gitattributes",
        ]
    )
    (box.workspace / "a.txt").write_text("changed\n")
    git(box.workspace, "diff", check=False)
    assert marker.fired()
    marker.clear()
    (box.workspace / ".git" / "config").write_bytes(saved)
    (box.workspace / ".gitattributes").unlink()

    async def race() -> tuple[float, float, object]:
        from s_code.commands.projection import project
        from s_code.commands.run import execute

        loop = asyncio.get_running_loop()
        script = (
            f"printf '{filter_config}' >> .git/config; echo '* filter=ev' > .gitattributes; "
            "echo started; sleep 1.5; exit 0"
        )
        proj = project(box.session, ["sh", "-c", script], None, False)
        started = asyncio.Event()
        running = asyncio.ensure_future(execute(box.session, proj, 30, lambda s, t: started.set()))
        await asyncio.wait_for(started.wait(), 20)  # the command is running (its first output)
        config = box.workspace / ".git" / "config"
        await until_async(  # the filter is in place (its definition only in tier 2: tier 1
            # keeps .git read-only, so the attribute names a filter git does not have)
            lambda: (
                (box.workspace / ".gitattributes").exists()
                and (box.tier == 1 or b'[filter "ev"]' in config.read_bytes())
            ),
            what="the command's .gitattributes and filter config",
        )
        try:
            diff: object = await call(box.session, "git_diff", {})
        except SCodeError as err:
            diff = err
        diff_done = loop.time()
        await running
        return diff_done, loop.time(), diff

    diff_done, command_done, diff = asyncio.run(race())
    assert not marker.fired()
    assert diff_done >= command_done - 0.05, f"git_diff ran while the command was running: {diff}"
    if isinstance(diff, SCodeError):  # the filter's attribute stays; its definition is gone
        assert diff.kind is not ErrorKind.INTERNAL, diff


def test_edits_never_write_inside_a_git_directory_however_named(tmp_path: Path) -> None:
    """The edit engine refuses ``.gitdata/config`` (a gitdir target) and a batch that would lay
    out a git directory, in every mode; the same names elsewhere are ordinary files."""
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "--separate-git-dir=.gitdata")
    store = Store(str(tmp_path / "state.sqlite3")).workspace(os.path.realpath(ws))
    folders = Folders.open([(str(ws), None)])
    s = Session(folders=folders, registry=default_registry(), store=store, mode="workspace")

    def apply(files: list[dict[str, object]]) -> object:
        try:
            return asyncio.run(call(s, "apply_patch", {"files": files}))
        except SCodeError as err:
            return err

    config = ws / ".gitdata" / "config"
    revision = hashlib.sha256(config.read_bytes()).hexdigest()[:16]
    refused = apply(
        [{"path": ".gitdata/config", "expected_revision": revision, "content": "[core]\n"}]
    )
    assert isinstance(refused, SCodeError) and refused.kind is ErrorKind.PROTECTED_PATH
    layout = [
        {"path": f"evil/{p}", "expected_revision": None, "content": "x\n"}
        for p in ("HEAD", "objects/x", "refs/x", "config")
    ]
    refused = apply(layout)
    assert isinstance(refused, SCodeError) and refused.kind is ErrorKind.PROTECTED_PATH
    assert not (ws / "evil").exists()
    # positive control: the same names, not laid out as a git directory, are written
    done = apply(layout[1:])
    assert not isinstance(done, SCodeError), done
    assert (ws / "evil" / "config").read_text() == "x\n"
    folders.close()
