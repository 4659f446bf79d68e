"""Running commands through the real sandbox path (projection, exec helper, bubblewrap) in-process,
at a chosen tier, and the positive controls: the same command unconfined, or in the same sandbox
with one defence switched off (the check after the run, a seccomp rule); a host socket a command
may reach; and the environment of a server child process forced to a tier."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from s_code.commands import run as command_run
from s_code.commands.projection import project
from s_code.commands.run import execute
from s_code.sandbox import process, seccomp_filter, tiers
from s_code.session.session import Session
from s_code.tools.builtin import default_registry
from s_code.workspace.folders import Folders

PY = sys.executable


@dataclass
class Box:
    """A workspace and a place outside it, and a way to run commands at one tier."""

    tier: int
    workspace: Path
    outside: (
        Path  # on a path tier 1 leaves visible (read-only), so Landlock and the mounts both act
    )
    session: Session

    def run(self, argv: list[str], timeout_s: float = 30) -> tuple[process.Outcome, list[str]]:
        chunks: list[tuple[str, str]] = []
        proj = project(self.session, argv, None, False)
        assert proj.profile.tier == self.tier
        outcome, changed = asyncio.run(
            execute(self.session, proj, timeout_s, lambda s, t: chunks.append((s, t)))
        )
        return outcome, changed

    def sh(self, script: str) -> tuple[process.Outcome, list[str]]:
        return self.run(["sh", "-c", script])

    def py(self, code: str) -> process.Outcome:
        return self.run([PY, "-I", "-S", "-c", code])[0]

    def unconfined(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        """The positive control: the same command with no sandbox."""
        return subprocess.run(
            argv, cwd=self.workspace, capture_output=True, text=True, timeout=30, check=False
        )

    @contextlib.contextmanager
    def unchecked(self) -> Iterator[None]:
        """A positive control: commands run in the block (same tier, same sandbox) are not
        checked after they end, so nothing they planted in a watched path is put back."""
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(command_run, "_check_after", lambda session, workspace, before: [])
            yield

    @contextlib.contextmanager
    def seccomp_with(
        self,
        *,
        network_rules: bool | None = None,
        shared_namespace_rules: bool | None = None,
        **constants: object,
    ) -> Iterator[None]:
        """A positive control: commands run in the block load a seccomp program built with these
        constants of :mod:`s_code.sandbox.seccomp_filter` changed (one rule switched off), and
        with the socket rules of a networked command or the rules of a shared namespace (tier
        2) if asked; the command's profile, and so tier 1's namespaces, stay as they are. The
        program is kept in a folder of its own (outside, readable in both tiers): no program of
        the real rules is replaced."""
        for name in constants:
            assert hasattr(seccomp_filter, name), name
        where = self.outside / f"seccomp-{uuid.uuid4().hex[:8]}"
        original = seccomp_filter.program

        def program(cache: Path, network: bool, host_namespaces: bool) -> Path:
            if network_rules is not None:
                network = network_rules
            if shared_namespace_rules is not None:
                host_namespaces = shared_namespace_rules
            return original(where, network, host_namespaces)

        with pytest.MonkeyPatch.context() as mp:
            for name, value in constants.items():
                mp.setattr(seccomp_filter, name, value)
            mp.setattr(seccomp_filter, "program", program)
            yield


def forced(tier: int) -> tiers.TierReport:
    return tiers.TierReport(tier, tiers.landlock_abi(), shutil.which("bwrap"), ["forced by test"])


def available_tiers() -> list[int]:
    best = tiers.current().tier
    return [t for t in (1, 2) if t >= best]


def tier_env(tier: int | None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a server (a child process) whose commands run at ``tier``: tier 2 is
    forced by switching bubblewrap off (``S_CODE_SANDBOX_DISABLE=bwrap``, what a machine without
    it gives), tier 1 is the detected best with nothing switched off; None leaves ``env`` as it
    is (the detected tier)."""
    out = dict(os.environ if env is None else env)
    if tier is not None:
        out.pop(tiers.DISABLE_ENV, None)
    if tier == 2:
        out[tiers.DISABLE_ENV] = "bwrap"
    return out


def each_tier(fixture: str) -> pytest.MarkDecorator:
    """Run a test once per sandbox tier this machine has, through ``fixture``: it gets the tier
    as its ``request.param`` (see :func:`tier_of`)."""
    return pytest.mark.parametrize(
        fixture, available_tiers() or [0], ids=lambda t: f"tier{t}", indirect=True
    )


def tier_of(request: pytest.FixtureRequest) -> int | None:
    """The tier :func:`each_tier` gave a fixture (it skips when the machine has none), or None
    for a test not run per tier."""
    tier: int | None = getattr(request, "param", None)
    if tier == 0:
        pytest.skip("no sandbox tier is available on this machine")
    return tier


@pytest.fixture(params=available_tiers() or [0], ids=lambda t: f"tier{t}")
def box(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Box]:
    tier = request.param
    if tier == 0:
        pytest.skip("no sandbox tier is available on this machine")
    monkeypatch.setattr(tiers, "current", lambda refresh=False: forced(tier))
    monkeypatch.setenv("S_CODE_TOOL_CACHE_DIR", str(tmp_path / "caches"))
    workspace = tmp_path / "ws"
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n\tbare = false\n")
    outside = Path("/var/cache") / f"s-code-test-{uuid.uuid4().hex[:10]}"
    outside.mkdir()
    folders = Folders.open([(str(workspace), None)])
    session = Session(folders=folders, registry=default_registry(), mode="workspace")
    try:
        yield Box(tier, workspace, outside, session)
    finally:
        folders.close()
        shutil.rmtree(outside, ignore_errors=True)


def alive(marker: str) -> list[int]:
    """Processes whose command line holds ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and int(pid) != os.getpid():
            found.append(int(pid))
    return found


def lowered(monkeypatch: pytest.MonkeyPatch, **change: object) -> None:
    """Every command of the test gets the shipped limits with ``change`` applied."""
    from s_code.sandbox import limits

    original = limits.for_command

    def patched(workspace: str, cache_root: str) -> limits.Limits:
        base = original(workspace, cache_root)
        return limits.Limits(**{**base.__dict__, **change})  # type: ignore[arg-type]

    monkeypatch.setattr(limits, "for_command", patched)


def reached(address: str, run: Callable[[], object], kind: int = socket.SOCK_STREAM) -> bool:
    """Whether ``run`` (a command, ended when it returns) sent ``pwned`` to a host unix socket
    (stream: listening; datagram: bound) at ``address``. What a command sent before it ended
    is queued there by then, so nothing is waited for."""
    with socket.socket(socket.AF_UNIX, kind) as host:
        host.bind(address)
        if kind == socket.SOCK_STREAM:
            host.listen()
        host.setblocking(False)
        try:
            run()
            try:
                if kind != socket.SOCK_STREAM:
                    return host.recv(5) == b"pwned"
                conn, _ = host.accept()
            except BlockingIOError:
                return False
            with conn:
                conn.settimeout(5)
                return conn.recv(5) == b"pwned"
        finally:
            os.unlink(address)
