"""The git child environment is built from scratch (s_code.git.env) and the overrides are set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from s_code.git import env, keys, runner


def test_environment_is_exactly_the_hardened_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='x'",
        "GIT_EXTERNAL_DIFF": "/tmp/x",
        "GIT_DIR": "/tmp/x",
        "GIT_EXEC_PATH": "/tmp/x",
        "LD_PRELOAD": "/tmp/x.so",
        "LD_LIBRARY_PATH": "/tmp",
        "PAGER": "less",
        "LESSOPEN": "|x %s",
        "EDITOR": "vi",
        "VISUAL": "vi",
        "HOME": "/root",
    }.items():
        monkeypatch.setenv(name, value)
    built = env.build_env("/usr/bin")
    assert set(built) == {*env.FIXED, "HOME", "XDG_CONFIG_HOME", "PATH"}
    assert built["GIT_CONFIG_NOSYSTEM"] == "1"
    assert built["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert built["GIT_TERMINAL_PROMPT"] == "0"
    assert built["GIT_OPTIONAL_LOCKS"] == "0"
    assert built["GIT_ALLOW_PROTOCOL"] == ""
    assert built["GIT_NO_LAZY_FETCH"] == "1"
    assert built["GIT_PAGER"] == "cat" and built["LC_ALL"] == "C"
    assert built["HOME"] == built["XDG_CONFIG_HOME"] != "/root"
    assert env.leaked(built) == []
    assert env.leaked(dict(os.environ)) == sorted(
        [
            "GIT_CONFIG_PARAMETERS",
            "GIT_EXTERNAL_DIFF",
            "GIT_DIR",
            "GIT_EXEC_PATH",
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "PAGER",
            "LESSOPEN",
            "EDITOR",
            "VISUAL",
        ]
        + [
            k
            for k in os.environ
            if k.startswith(("GIT_", "LD_"))
            and k
            not in (
                "GIT_CONFIG_PARAMETERS",
                "GIT_EXTERNAL_DIFF",
                "GIT_DIR",
                "GIT_EXEC_PATH",
                "LD_PRELOAD",
                "LD_LIBRARY_PATH",
            )
        ]
    )


def test_private_home_is_empty_0700_and_replaced_when_touched() -> None:
    home = env.private_home()
    st = os.stat(home)
    assert st.st_mode & 0o777 == 0o700 and os.listdir(home) == []
    Path(home, ".gitconfig").write_text("[core]\n\tpager = x\n")
    fresh = env.private_home()
    assert fresh != home and os.listdir(fresh) == []


def test_child_path_skips_world_writable_and_workspace_dirs(tmp_path: Path) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    assert str(open_dir) not in env.child_path(str(open_dir)).split(":")
    ws = tmp_path / "ws" / "bin"
    ws.mkdir(parents=True)
    assert str(ws) not in env.child_path(str(ws), [str(tmp_path / "ws")]).split(":")
    assert "/usr/bin" in env.child_path("/usr/bin").split(":")


def test_global_argv_carries_every_override() -> None:
    argv = runner.global_argv("/usr/bin/git", "/r/.git", "/r")
    assert argv[:6] == [
        "/usr/bin/git",
        "--no-pager",
        "--literal-pathspecs",
        "--no-optional-locks",
        "--git-dir=/r/.git",
        "--work-tree=/r",
    ]
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    for needed in (
        "core.fsmonitor=",
        "core.hooksPath=/dev/null",
        "diff.external=",
        "gc.auto=0",
        "maintenance.auto=false",
        "submodule.recurse=false",
        "commit.gpgSign=false",
        "log.showSignature=false",
        "protocol.allow=never",
        "protocol.ext.allow=never",
        "safe.bareRepository=explicit",
    ):
        assert needed in pairs


@pytest.mark.parametrize(
    ("key", "value", "refused"),
    [
        ("core.fsmonitor", "/x", True),
        ("core.fsmonitor", "true", False),
        ("core.fsmonitor", None, False),
        ("Core.FSMonitor", "/x", True),
        ("diff.Evil.textconv", "x", True),
        ("diff.evil.xfuncname", "x", False),
        ("filter.a.b.clean", "x", True),
        ("alias.st", "!x", True),
        ("alias.st", "status", False),
        ("includeIf.gitdir:/x/.path", "/y", True),
        ("remote.o.url", "https://x", False),
        ("remote.o.url", "ext::sh", True),
        ("remote.o.url", "fd::3", True),
        ("url.ext::x.insteadOf", "https://", True),
        ("url.https://mirror/.insteadOf", "https://", False),
        ("gpg.x509.program", "x", True),
        ("gpg.format", "ssh", False),
        ("lfs.customtransfer.a.path", "x", True),
        ("lfs.url", "https://x", False),
        ("user.name", "x", False),
    ],
)
def test_key_table(key: str, value: str | None, refused: bool) -> None:
    assert (keys.dangerous(key, value) is not None) is refused
