"""S15: package managers with the network off fail cleanly and never touch the host's caches or
credentials; the per-workspace caches are where their variables point, and writable."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.security.sandbox_support import Box, box

from s_code.protocol.errors import SCodeError
from s_code.sandbox import caches

__all__ = ["box"]


def test_cache_variables_point_into_the_workspace_cache(box: Box, tmp_path: Path) -> None:
    names = ["CARGO_HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "npm_config_cache"]
    script = "; ".join(f'echo {n}=${n}; touch "${n}/probe"' for n in names)
    outcome, _ = box.sh(script + "; echo GOFLAGS=$GOFLAGS GOTOOLCHAIN=$GOTOOLCHAIN")
    assert outcome.exit_code == 0, outcome.output
    root = tmp_path / "caches"
    for n in names:
        line = next(x for x in outcome.output.splitlines() if x.startswith(n + "="))
        path = Path(line.split("=", 1)[1])
        assert root in path.parents
        assert (path / "probe").exists()  # writable
    assert "GOFLAGS=-modcacherw GOTOOLCHAIN=local" in outcome.output


def test_the_sidecars_secrets_are_not_in_the_environment(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/agent.sock")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "x" * 36)
    monkeypatch.setenv("DOCKER_HOST", "unix:///run/docker.sock")
    outcome, _ = box.run(["env"])
    for name in ("SSH_AUTH_SOCK", "GITHUB_TOKEN", "DOCKER_HOST", "S_CODE_STATE_DIR"):
        assert f"{name}=" not in outcome.output


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_ignores_the_host_npmrc_and_fails_cleanly_offline(
    box: Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = Path(os.path.expanduser("~"))
    host_cache = home / ".npm"
    before = sorted(os.listdir(host_cache)) if host_cache.exists() else None
    token_file = tmp_path / "host-npmrc"
    token_file.write_text("//registry.npmjs.org/:_authToken=npm_HOSTTOKENHOSTTOKEN\n")
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(token_file))  # not passed in: allowlist
    outcome, _ = box.run(["npm", "config", "get", "//registry.npmjs.org/:_authToken"])
    assert "HOSTTOKEN" not in outcome.output
    outcome, _ = box.run(["npm", "view", "left-pad", "version", "--fetch-retries=0"])
    assert outcome.exit_code != 0
    assert "npm error" in outcome.output.lower() or "npm err!" in outcome.output.lower()
    after = sorted(os.listdir(host_cache)) if host_cache.exists() else None
    assert after == before


def _cargo_reachable() -> bool:
    """cargo is installed where a sandboxed command finds it: outside every home, or in this
    user's (a cargo under another home, e.g. HOME moved for a test run, is hidden)."""
    found = shutil.which("cargo")
    if found is None:
        return False
    real, home = os.path.realpath(found), os.path.realpath(os.path.expanduser("~"))
    in_a_home = real.startswith(("/root/", "/home/"))
    return not in_a_home or real.startswith(home + "/")


@pytest.mark.skipif(not _cargo_reachable(), reason="cargo is not installed where a command sees it")
def test_cargo_fails_cleanly_offline_in_its_own_home(box: Box) -> None:
    outcome, _ = box.run(["cargo", "search", "serde", "--limit", "1", "--config", "net.retry=0"])
    assert outcome.exit_code not in (0, None)
    assert "panicked" not in outcome.output
    assert "resolve" in outcome.output or "download" in outcome.output  # the network, not a crash


def test_cache_dir_override_must_be_absolute_and_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv(caches.CACHE_ENV, "relative/dir")
    with pytest.raises(SCodeError, match="absolute"):
        caches.cache_root(ws)
    monkeypatch.setenv(caches.CACHE_ENV, str(ws / "inside"))
    with pytest.raises(SCodeError, match="outside the workspace"):
        caches.cache_root(ws)
    monkeypatch.setenv(caches.CACHE_ENV, str(tmp_path / "elsewhere"))
    assert caches.cache_root(ws) == tmp_path / "elsewhere"


def test_default_cache_root_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(caches.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert caches.cache_root(tmp_path) == tmp_path / "xdg" / "s-code" / "tool-dependencies"
    a = caches.for_workspace(tmp_path / "a")
    b = caches.for_workspace(tmp_path / "b")
    assert a.root != b.root  # one cache per canonical workspace
