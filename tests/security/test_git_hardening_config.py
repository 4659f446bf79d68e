"""SECURITY.md §5 G1-G14: repository config that makes plain git run a program.

Each test builds the malicious repository, runs plain git on it as a naive tool would (the
positive control: the marker appears), clears the marker, then calls the sidecar's tool, which
must refuse with ``git_config_rejected`` naming the key and its scope (or run harmlessly) and
leave no marker.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.security.test_git_support import (
    Marker,
    call,
    git,
    make_repo,
    rejected,
    session,
    set_config,
)

from s_code.git import guard
from s_code.protocol.errors import SCodeError


@pytest.fixture
def marker(tmp_path: Path) -> Marker:
    return Marker(tmp_path / "MARKER")


def _control(marker: Marker, repo: Path, *args: str, **kw: object) -> None:
    """Positive control: plain git fires the payload."""
    marker.clear()
    git(repo, *args, check=False, **kw)  # type: ignore[arg-type]
    assert marker.fired(), f"positive control failed: plain git {' '.join(args)} ran nothing"
    marker.clear()


def test_g1_fsmonitor_absolute(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    set_config(repo, "core.fsmonitor", str(marker.script(tmp_path / "fsmon")))
    _control(marker, repo, "status")
    for tool, args in (("git_status", {}), ("git_diff", {}), ("git_blame", {"path": "a.txt"})):
        rejected(call(session(repo), tool, args), "core.fsmonitor", "local")
    assert not marker.fired()


def test_g2_fsmonitor_relative(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    marker.script(repo / "tools" / "fsmon.sh")
    set_config(repo, "core.fsmonitor", "tools/fsmon.sh")
    _control(marker, repo, "status")
    err = rejected(call(session(repo), "git_status"), "core.fsmonitor", "local")
    assert err.data["origin"] == f"file:{repo}/.git/config"
    assert not marker.fired()


def test_g3_post_index_change_hook_runs_harmlessly(tmp_path: Path, marker: Marker) -> None:
    """Hooks in $GIT_DIR/hooks are not refused: core.hooksPath=/dev/null and optional locks off
    keep them from running, and the answer is served."""
    repo = make_repo(tmp_path / "ws")
    marker.script(repo / ".git" / "hooks" / "post-index-change", exit_code=0)
    (repo / "a.txt").touch()  # stale stat data: plain status refreshes and writes the index
    _control(marker, repo, "status")
    (repo / "a.txt").write_text("one\nTWO\n")
    result = call(session(repo), "git_status")
    assert not isinstance(result, SCodeError), result
    assert [e["path"] for e in result["entries"]] == ["a.txt"]
    assert not isinstance(call(session(repo), "git_diff"), SCodeError)
    assert not marker.fired()


def test_g4_hooks_path(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    marker.script(tmp_path / "hooks" / "post-index-change", exit_code=0)
    set_config(repo, "core.hooksPath", str(tmp_path / "hooks"))
    (repo / "a.txt").touch()
    _control(marker, repo, "status")
    (repo / "a.txt").touch()
    rejected(call(session(repo), "git_status"), "core.hooksPath", "local")
    assert not marker.fired()


def test_g5_external_diff(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    set_config(repo, "diff.external", str(marker.script(tmp_path / "extdiff")))
    (repo / "a.txt").write_text("changed\n")
    _control(marker, repo, "diff")
    rejected(call(session(repo), "git_diff"), "diff.external", "local")
    assert not marker.fired()


def _attributes(repo: Path, line: str, commit: bool = True) -> None:
    (repo / ".gitattributes").write_text(line + "\n")
    if commit:
        git(repo, "add", ".gitattributes")
        git(repo, "commit", "-q", "-m", "attributes")


def test_g6_diff_driver_command(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    _attributes(repo, "*.txt diff=evil")
    set_config(repo, "diff.evil.command", str(marker.script(tmp_path / "drv")))
    (repo / "a.txt").write_text("changed\n")
    _control(marker, repo, "diff")
    rejected(call(session(repo), "git_diff"), "diff.evil.command", "local")
    assert not marker.fired()


def test_g7_textconv(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    _attributes(repo, "*.txt diff=evil")
    set_config(repo, "diff.evil.textconv", str(marker.script(tmp_path / "conv", 'cat "$1"', 0)))
    (repo / "a.txt").write_text("changed\n")
    git(repo, "commit", "-qam", "change")
    _control(marker, repo, "show", "HEAD")
    _control(marker, repo, "log", "-p", "-1")
    for tool, args in (("git_show", {}), ("git_log", {}), ("git_diff", {"base": "HEAD~1"})):
        rejected(call(session(repo), tool, args), "diff.evil.textconv", "local")
    assert not marker.fired()


@pytest.mark.parametrize("kind", ["clean", "process"])
def test_g8_g9_clean_and_process_filters_with_committed_attributes(
    tmp_path: Path, marker: Marker, kind: str
) -> None:
    """The clean filter fires in diff, blame and status after a same-size edit; -c overrides
    cannot stop it, only the refusal does."""
    repo = make_repo(tmp_path / "ws")
    _attributes(repo, "*.txt filter=evil")
    set_config(repo, f"filter.evil.{kind}", str(marker.script(tmp_path / "flt", "cat", 0)))
    (repo / "a.txt").write_text("ONE\nTWO\n")  # same size
    _control(marker, repo, "diff")
    _control(marker, repo, "blame", "a.txt")
    (repo / "a.txt").write_text("one\nTWO\n")
    _control(marker, repo, "status")
    for tool, args in (("git_status", {}), ("git_diff", {}), ("git_blame", {"path": "a.txt"})):
        rejected(call(session(repo), tool, args), f"filter.evil.{kind}", "local")
    assert not marker.fired()


def test_g10_smudge_filter(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    _attributes(repo, "*.txt filter=evil")
    set_config(repo, "filter.evil.smudge", str(marker.script(tmp_path / "smudge", "cat", 0)))
    (repo / "a.txt").unlink()
    _control(marker, repo, "checkout", "--", "a.txt")
    rejected(call(session(repo), "git_status"), "filter.evil.smudge", "local")
    assert not marker.fired()


def test_g11_merge_driver(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    _attributes(repo, "*.txt merge=evil")
    set_config(repo, "merge.evil.driver", str(marker.script(tmp_path / "merge")))
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "a.txt").write_text("other\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("main\n")
    git(repo, "commit", "-qam", "main")
    _control(marker, repo, "merge", "other")
    git(repo, "merge", "--abort", check=False)
    rejected(call(session(repo), "git_status"), "merge.evil.driver", "local")
    assert not marker.fired()


def test_g12_include_path(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    included = tmp_path / "included.cfg"
    included.write_text(f'[core]\n\tfsmonitor = "{marker.script(tmp_path / "fsmon")}"\n')
    set_config(repo, "include.path", str(included))
    _control(marker, repo, "status")
    err = rejected(call(session(repo), "git_status"), "include.path", "local")
    keys = {(r["key"], r["origin"]) for r in err.data["rejected"]}
    assert ("core.fsmonitor", f"file:{included}") in keys  # the included key is named too
    assert not marker.fired()


def test_g13_include_if(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    included = tmp_path / "included.cfg"
    included.write_text(f'[core]\n\tfsmonitor = "{marker.script(tmp_path / "fsmon")}"\n')
    set_config(repo, f"includeIf.gitdir:{repo}/.git.path", str(included))
    _control(marker, repo, "status")
    err = rejected(call(session(repo), "git_status"), scope="local")
    assert err.data["key"].lower() == f"includeif.gitdir:{repo}/.git.path"
    assert not marker.fired()


def test_g14_worktree_config(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    set_config(repo, "core.repositoryformatversion", "1")
    set_config(repo, "extensions.worktreeConfig", "true")
    (repo / ".git" / "config.worktree").write_text(
        f'[core]\n\tfsmonitor = "{marker.script(tmp_path / "fsmon")}"\n'
    )
    _control(marker, repo, "status")
    err = rejected(call(session(repo), "git_status"), "extensions.worktreeConfig", "local")
    scopes = {(r["key"], r["scope"]) for r in err.data["rejected"]}
    assert ("core.fsmonitor", "worktree") in scopes
    assert not marker.fired()


def test_hook_keys_are_refused_though_git_2_39_ignores_them(tmp_path: Path, marker: Marker) -> None:
    """``hook.<name>.command`` runs hooks from config only on git >= 2.54: no positive control
    can fire on git 2.39 (shown below: plain git ignores it), but the guard refuses the key."""
    repo = make_repo(tmp_path / "ws")
    script = str(marker.script(tmp_path / "hook", exit_code=0))
    set_config(repo, "hook.evil.command", script)
    set_config(repo, "hook.evil.event", "post-index-change")
    (repo / "a.txt").touch()
    git(repo, "status")
    assert not marker.fired()  # git 2.39 has no config-defined hooks
    rejected(call(session(repo), "git_status"), "hook.evil.command", "local")


# Every other key of SECURITY.md §2 (their payloads need commands the inspection tools never run:
# fetch, push, commit, rebase, difftool, send-email...); the guard must refuse each one.
KEYS = [
    ("core.sshCommand", "touch /tmp/x"),
    ("core.gitProxy", "/tmp/proxy"),
    ("core.askPass", "/tmp/askpass"),
    ("core.editor", "vi"),
    ("sequence.editor", "vi"),
    ("core.pager", "less"),
    ("pager.log", "/tmp/pager"),
    ("gpg.program", "/tmp/gpg"),
    ("gpg.ssh.program", "/tmp/ssh-keygen"),
    ("gpg.ssh.defaultKeyCommand", "/tmp/key"),
    ("credential.helper", "store"),
    ("credential.https://example.com.helper", "/tmp/helper"),
    ("alias.st", "!touch /tmp/x"),
    ("submodule.lib.update", "!touch /tmp/x"),
    ("core.alternateRefsCommand", "/tmp/x"),
    ("uploadpack.packObjectsHook", "/tmp/x"),
    ("interactive.diffFilter", "/tmp/x"),
    ("difftool.evil.cmd", "/tmp/x"),
    ("mergetool.evil.cmd", "/tmp/x"),
    ("trailer.sign.command", "/tmp/x"),
    ("core.attributesFile", "/tmp/attributes"),
    ("attr.tree", "HEAD"),
    ("lfs.customtransfer.evil.path", "/tmp/x"),
    ("lfs.extension.evil.clean", "/tmp/x"),
    ("protocol.ext.allow", "always"),
    ("protocol.allow", "always"),
    ("remote.origin.uploadpack", "/tmp/x"),
    ("remote.origin.receivepack", "/tmp/x"),
    ("remote.origin.url", "ext::sh -c touch% /tmp/x"),
    ("remote.origin.vcs", "evil"),
    ("url.ext::sh -c x.insteadOf", "https://"),
    ("filter.lfs.smudge", "git-lfs smudge -- %f"),
    ("core.fsmonitor", ".git/hooks/fsmonitor-watchman"),
    ("guitool.evil.cmd", "/tmp/x"),
]


@pytest.mark.parametrize(("key", "value"), KEYS, ids=[k for k, _ in KEYS])
def test_every_command_key_is_refused(tmp_path: Path, key: str, value: str) -> None:
    repo = make_repo(tmp_path / "ws")
    set_config(repo, key, value)
    err = rejected(call(session(repo), "git_log"), scope="local")
    assert err.data["key"].lower() == key.lower()


HARMLESS = [
    ("user.name", "Someone"),
    ("core.autocrlf", "input"),
    ("core.fsmonitor", "false"),
    ("pager.log", "false"),
    ("alias.st", "status"),
    ("diff.evil.xfuncname", "^def "),
    ("remote.origin.url", "https://example.com/repo.git"),
    ("extensions.worktreeConfig", "false"),
    ("log.showSignature", "true"),
]


@pytest.mark.parametrize(("key", "value"), HARMLESS, ids=[k for k, _ in HARMLESS])
def test_harmless_keys_are_served(tmp_path: Path, key: str, value: str) -> None:
    repo = make_repo(tmp_path / "ws")
    set_config(repo, key, value)
    result = call(session(repo), "git_log")
    assert not isinstance(result, SCodeError), result
    assert [c["subject"] for c in result["commits"]] == ["initial"]


def test_config_list_parser_reads_scopes_origins_and_valueless_keys() -> None:
    raw = b"local\0file:.git/config\0core.bare\nfalse\0worktree\0file:x\0core.fsmonitor\0"
    entries = guard.parse_config_list(raw)
    assert entries == [
        guard.ConfigEntry("local", "file:.git/config", "core.bare", "false"),
        guard.ConfigEntry("worktree", "file:x", "core.fsmonitor", None),
    ]
    assert [r.key for r in guard.rejections(entries, None)] == []  # valueless = true: a bool
