"""SECURITY.md §5 G17-G20, G26-G28, G30: signatures, submodules, partial clones, agent
arguments, aliases, credential helpers, and config rewritten between preflight and spawn.
Plus defence in depth: with the guard bypassed, the runner's overrides alone keep the payloads
that have a kill switch from running.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

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

from s_code.git.operations import DIFF_SAFETY
from s_code.git.runner import Handle, spawn_sync
from s_code.protocol.errors import ErrorKind, SCodeError


@pytest.fixture
def marker(tmp_path: Path) -> Marker:
    return Marker(tmp_path / "MARKER")


def _signed_head(repo: Path) -> str:
    """Make HEAD a commit with a (fake) gpgsig header, so verifying it calls gpg.program."""
    raw = git(repo, "cat-file", "commit", "HEAD").stdout.decode()
    headers, _, message = raw.partition("\n\n")
    sig = " -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
    body = f"{headers}\ngpgsig{sig}\n\n{message}"
    (repo.parent / "signed.txt").write_text(body)
    sha = git(repo, "hash-object", "-t", "commit", "-w", str(repo.parent / "signed.txt"))
    sha_text = sha.stdout.decode().strip()
    git(repo, "update-ref", "HEAD", sha_text)
    return sha_text


def test_g17_gpg_program_with_a_signed_head(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    sha = _signed_head(repo)
    set_config(repo, "gpg.program", str(marker.script(tmp_path / "gpg")))
    for args in (["log", "-1", "--show-signature"], ["log", "-1", "--format=%G?"]):
        git(repo, *args, check=False)
        assert marker.fired(), f"positive control: plain git {args} ran gpg.program"
        marker.clear()
    set_config(repo, "log.showSignature", "true")
    git(repo, "log", "-1", check=False)
    assert marker.fired(), "positive control: log.showSignature made plain git log run gpg"
    marker.clear()
    for tool in ("git_log", "git_show"):
        rejected(call(session(repo), tool), "gpg.program", "local")
    # The agent cannot ask for signatures either.
    for tool, args in (
        ("git_log", {"options": ["--show-signature"]}),
        ("git_log", {"options": ["--format=%G?"]}),
        ("git_log", {"revision": "%G?"}),
        ("git_show", {"options": ["--show-sig"]}),
    ):
        err = call(session(repo), tool, args)
        assert isinstance(err, SCodeError) and err.kind == ErrorKind.GIT_ARGUMENT_REJECTED, err
    assert not marker.fired()
    # Without gpg.program, log.showSignature=true is overridden: the signed HEAD is listed.
    git(repo, "config", "--unset", "gpg.program")
    log = call(session(repo), "git_log")
    assert log["commits"][0]["commit"] == sha


def test_g18_submodule_with_its_own_fsmonitor(tmp_path: Path, marker: Marker) -> None:
    lib = make_repo(tmp_path / "lib", {"lib.txt": "lib\n"})
    repo = make_repo(tmp_path / "ws")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub")
    git(repo, "commit", "-qm", "add submodule")
    set_config(
        repo,
        "core.fsmonitor",
        str(marker.script(tmp_path / "fsmon")),
        file=".git/modules/sub/config",
    )
    (repo / "sub" / "lib.txt").write_text("changed\n")
    git(repo, "status", check=False)
    assert marker.fired(), "positive control: plain status recursed into the submodule"
    marker.clear()
    err = rejected(call(session(repo), "git_status"), "core.fsmonitor", "submodule")
    assert err.data["origin"].endswith("/.git/modules/sub/config")
    assert not marker.fired()


def test_g18_old_style_embedded_submodule_repository(tmp_path: Path, marker: Marker) -> None:
    """A submodule whose own ``.git`` directory sits in the work tree (found via .gitmodules)."""
    repo = make_repo(tmp_path / "ws")
    sub = make_repo(repo / "sub", {"lib.txt": "lib\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "./sub", "sub")
    git(repo, "commit", "-qm", "add submodule")
    assert (sub / ".git").is_dir()
    set_config(sub, "core.fsmonitor", str(marker.script(tmp_path / "fsmon")))
    (sub / "lib.txt").write_text("changed\n")
    git(repo, "status", check=False)
    assert marker.fired(), "positive control: plain status ran the submodule's fsmonitor"
    marker.clear()
    rejected(call(session(repo), "git_status"), "core.fsmonitor", "submodule")
    assert not marker.fired()


def _partial_clone(tmp_path: Path) -> Path:
    server = make_repo(tmp_path / "server", {"big.txt": "blob content\n"})
    (server / "big.txt").write_text("second version\n")
    git(server, "commit", "-qam", "second")
    set_config(server, "uploadpack.allowFilter", "true")
    client = tmp_path / "client"
    git(
        tmp_path,
        "clone",
        "-q",
        "--filter=blob:none",
        "--no-checkout",
        f"file://{server}",
        str(client),
    )
    assert git(client, "config", "remote.origin.promisor").stdout.strip() == b"true"
    return client


def test_g19_lazy_fetch_through_uploadpack(tmp_path: Path, marker: Marker) -> None:
    client = _partial_clone(tmp_path)
    set_config(client, "remote.origin.uploadpack", f"{marker.command()}; git-upload-pack")
    git(client, "show", "HEAD", check=False)
    assert marker.fired(), "positive control: plain show lazily fetched through uploadpack"
    marker.clear()
    for tool, args in (("git_show", {}), ("git_blame", {"path": "big.txt", "revision": "HEAD"})):
        rejected(call(session(client), tool, args), "remote.origin.uploadpack", "local")
    assert not marker.fired()


def test_g20_lazy_fetch_through_an_ext_url(tmp_path: Path, marker: Marker) -> None:
    client = _partial_clone(tmp_path)
    set_config(client, "remote.origin.url", f"ext::sh -c {marker.command().replace(' ', '% ')}")
    set_config(client, "protocol.ext.allow", "always")
    git(client, "show", "HEAD", check=False)
    assert marker.fired(), "positive control: plain show ran the ext:: remote"
    marker.clear()
    err = rejected(call(session(client), "git_show"), scope="local")
    assert {r["key"] for r in err.data["rejected"]} >= {"remote.origin.url", "protocol.ext.allow"}
    assert not marker.fired()


def test_a_plain_partial_clone_never_fetches(tmp_path: Path) -> None:
    """No command-running keys: served, but no transport is allowed, so nothing is fetched."""
    client = _partial_clone(tmp_path)
    result = call(session(client), "git_show")
    assert isinstance(result, SCodeError) or result["commit"]["subject"] == "second"
    missing = git(client, "rev-list", "--objects", "--missing=print", "HEAD").stdout
    assert b"?" in missing  # the blobs are still missing: the sidecar fetched nothing


MALICIOUS: list[tuple[str, dict[str, Any], str]] = [
    ("git_diff", {"options": ["--output={out}"]}, "--output={out}"),
    ("git_diff", {"options": ["--ext-diff"]}, "--ext-diff"),
    ("git_diff", {"options": ["--textconv"]}, "--textconv"),
    ("git_diff", {"options": ["--no-index"]}, "--no-index"),
    ("git_diff", {"options": ["-O{out}"]}, "-O{out}"),
    ("git_diff", {"options": ["--open-files-in-pager"]}, "--open-files-in-pager"),
    ("git_diff", {"options": ["-c", "core.pager=x"]}, "-c"),
    ("git_diff", {"base": "--output={out}"}, "--output={out}"),
    ("git_diff", {"base": "HEAD", "target": "-C/tmp"}, "-C/tmp"),
    ("git_log", {"revision": "--exec-path=/tmp"}, "--exec-path=/tmp"),
    ("git_log", {"revision": "--git-dir=/tmp"}, "--git-dir=/tmp"),
    ("git_log", {"options": ["--work-tree=/tmp"]}, "--work-tree=/tmp"),
    ("git_log", {"options": ["--config-env=core.pager=X"]}, "--config-env=core.pager=X"),
    ("git_log", {"options": ["--upload-pack=touch x"]}, "--upload-pack=touch x"),
    ("git_log", {"revision": "HEAD --output=x"}, "HEAD --output=x"),
    ("git_log", {"revision": "HEAD:a.txt"}, "HEAD:a.txt"),
    ("git_log", {"revision": "@{-1}"}, "@{-1}"),
    ("git_log", {"author": "-c"}, "-c"),
    ("git_show", {"revision": "HEAD..HEAD~1"}, "HEAD..HEAD~1"),
    ("git_show", {"options": ["--ext"]}, "--ext"),
    ("git_blame", {"path": "a.txt", "options": ["--contents={out}"]}, "--contents={out}"),
    ("git_blame", {"path": "a.txt", "options": ["-S{out}"]}, "-S{out}"),
    ("git_blame", {"path": "a.txt", "revision": "-p"}, "-p"),
]


def test_g26_malicious_agent_arguments(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    out = tmp_path / "written-by-git"
    git(repo, "diff", f"--output={out}", "HEAD")
    assert out.exists(), "positive control: plain git diff --output writes a file"
    out.unlink()
    for tool, args, argument in MALICIOUS:
        filled = {
            k: [x.replace("{out}", str(out)) for x in v]
            if isinstance(v, list)
            else v.replace("{out}", str(out))
            for k, v in args.items()
        }
        err = call(session(repo), tool, filled)
        assert isinstance(err, SCodeError), (tool, args, err)
        assert err.kind == ErrorKind.GIT_ARGUMENT_REJECTED, (tool, args, err)
        assert err.data["argument"] == argument.replace("{out}", str(out))
    assert not out.exists()


def test_g26_path_arguments_stay_in_the_workspace(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    for tool, args, kind in (
        ("git_diff", {"paths": ["../x"]}, "path_escape"),
        ("git_log", {"paths": ["/etc/passwd"]}, "path_escape"),
        ("git_blame", {"path": "a/../../x"}, "path_escape"),
        ("git_status", {"path": ":(glob)**"}, None),
    ):
        result = call(session(repo), tool, args)
        if kind is None:  # --literal-pathspecs: magic is a plain (absent) name
            assert result["entries"] == []
        else:
            assert isinstance(result, SCodeError) and result.kind == kind, (tool, result)


def test_g27_shell_alias(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    set_config(repo, "alias.st", f"!{marker.command()}")
    git(repo, "st", check=False)
    assert marker.fired(), "positive control: plain git st ran the alias"
    marker.clear()
    rejected(call(session(repo), "git_status"), "alias.st", "local")
    assert not marker.fired()


def test_g28_credential_helper(tmp_path: Path, marker: Marker) -> None:
    repo = make_repo(tmp_path / "ws")
    set_config(repo, "credential.helper", f"!{marker.command()}; echo")
    git(repo, "credential", "fill", input=b"protocol=https\nhost=example.com\n\n", check=False)
    assert marker.fired(), "positive control: plain git credential fill ran the helper"
    marker.clear()
    rejected(call(session(repo), "git_log"), "credential.helper", "local")
    assert not marker.fired()


def test_g30_config_rewritten_between_preflight_and_spawn(tmp_path: Path, marker: Marker) -> None:
    """A thread flips .git/config between clean and fsmonitor while the tool runs 1000 times."""
    repo = make_repo(tmp_path / "ws")
    (repo / "a.txt").write_text("changed\n")
    config = repo / ".git" / "config"
    clean = config.read_text()
    evil = clean + f'[core]\n\tfsmonitor = "{marker.script(tmp_path / "fsmon")}"\n'
    config.write_text(evil)
    git(repo, "status", check=False)
    assert marker.fired(), "positive control: the fsmonitor config fires in plain status"
    marker.clear()
    config.write_text(clean)
    stop = threading.Event()
    flips = 0

    def flip() -> None:
        nonlocal flips
        while not stop.is_set():
            config.write_text(evil)
            time.sleep(0.0005)
            config.write_text(clean)
            flips += 1
            time.sleep(0.0005)

    sess = session(repo)
    served = refused = 0

    async def calls() -> None:
        nonlocal served, refused
        from s_code.tools.git_tools import GitStatusArgs, _git_status

        for _ in range(1000):
            try:
                await _git_status(sess, GitStatusArgs())
                served += 1
            except SCodeError as err:
                assert err.kind == ErrorKind.GIT_CONFIG_REJECTED, err
                refused += 1

    writer = threading.Thread(target=flip, daemon=True)
    writer.start()
    try:
        asyncio.run(asyncio.wait_for(calls(), 300))  # a safety deadline: only a hang reaches it
    finally:
        stop.set()
        writer.join()
        config.write_text(clean)
    assert served + refused == 1000 and flips > 100
    assert refused > 0  # the guard saw the fsmonitor config in some windows
    assert not marker.fired(), f"{served} served, {refused} refused, marker written"


# -- defence in depth: the guard bypassed, the runner alone ---------------------------------------


def _raw(repo: Path, tail: list[str]) -> Any:
    return spawn_sync(str(repo / ".git"), str(repo), tail, roots=(), handle=Handle())


def test_overrides_alone_stop_fsmonitor_hooks_external_diff_textconv(
    tmp_path: Path, marker: Marker
) -> None:
    """Filters have no kill switch on git 2.39 (only the guard's refusal stops them); these do."""
    repo = make_repo(tmp_path / "ws")
    (repo / ".gitattributes").write_text("*.txt diff=evil\n")
    set_config(repo, "core.fsmonitor", str(marker.script(tmp_path / "fsmon")))
    marker.script(repo / ".git" / "hooks" / "post-index-change", exit_code=0)
    set_config(repo, "diff.external", str(marker.script(tmp_path / "ext")))
    set_config(repo, "diff.evil.textconv", str(marker.script(tmp_path / "conv")))
    (repo / "a.txt").write_text("changed\n")
    git(repo, "diff", check=False)
    assert marker.fired(), "positive control"
    marker.clear()
    for tail in (
        ["status", "--porcelain=v2", "-z"],
        ["diff", *DIFF_SAFETY],
        ["show", *DIFF_SAFETY, "HEAD"],
        ["log", "-p", *DIFF_SAFETY, "-1"],
    ):
        out = _raw(repo, tail)
        assert out.returncode == 0, (tail, out.stderr)
        assert not marker.fired(), tail
