"""A real system keyring for the credential tests: a private D-Bus session bus and an unlocked
GNOME Keyring (Debian's ``dbus`` and ``gnome-keyring``, installed by .ci/run).

``secret_service`` starts ``dbus-daemon --session`` and ``gnome-keyring-daemon --foreground
--unlock --components=secrets`` (the login keyring's password on its stdin) in a scratch HOME,
waits until the bus has an owner for ``org.freedesktop.secrets`` (so D-Bus activation can never
start a second, locked daemon), and yields the environment of a child that uses them: keyring
picks its Secret Service backend, which stores into the daemon's encrypted keyring file. Both
daemons are stopped at the end. ``no_bus`` is the same scratch environment without a bus: what a
headless machine looks like. Without the daemons installed the tests skip, or fail under CI=true.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

TIMEOUT = 30
KEYRING_PASSWORD = "login-keyring-password"


@dataclass
class Keyring:
    """A scratch user: its environment, home and s-code state directory."""

    env: dict[str, str]
    home: Path
    state: Path

    def cli(
        self, *args: str, input: str | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """``s-code secret ARGS`` as this user, stdin from ``input`` (never a terminal)."""
        return subprocess.run(
            [sys.executable, "-m", "s_code", "secret", *args],
            input="" if input is None else input,
            capture_output=True,
            text=True,
            env={**self.env, **env},
            timeout=TIMEOUT,
        )

    def resolve(self, entry: dict[str, str], **env: str) -> dict[str, object]:
        """``resolve`` of an entry's ``env`` in a fresh process of this user: the result
        (``env``, ``values``, ``handles``) or ``{"error": kind, "data": ...}``."""
        done = subprocess.run(
            [sys.executable, "-c", _RESOLVE],
            input=json.dumps(entry),  # the env to resolve
            capture_output=True,
            text=True,
            env={**self.env, **env},
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        result: dict[str, object] = json.loads(done.stdout)
        return result

    def files(self) -> dict[Path, bytes]:
        """Every file this user has: what a secret value must never be in, in clear."""
        return {
            p: p.read_bytes()
            for root in (self.home, self.state)
            for p in root.rglob("*")
            if p.is_file()
        }


_RESOLVE = """
import json, sys
from s_code.credentials import resolve
from s_code.protocol.errors import SCodeError
entry = json.load(sys.stdin)
try:
    r = resolve(entry)
except SCodeError as err:
    print(json.dumps({"error": err.kind.value, "message": err.message, "data": err.data}))
else:
    print(json.dumps({"env": r.env, "values": r.values, "handles": r.handles}))
"""


def _scratch(tmp_path: Path) -> Keyring:
    home = tmp_path / "home"
    runtime = tmp_path / "run"
    state = tmp_path / "state"
    for d in (home, runtime):
        d.mkdir(mode=0o700)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "S_CODE_STATE_DIR": str(state),
        # no bus unless the fixture starts one: jeepney would look for $XDG_RUNTIME_DIR/bus
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={runtime}/no-bus",
    }
    return Keyring(env, home, state)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _require(*tools: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        why = f"{', '.join(missing)} not installed (Debian's dbus and gnome-keyring: .ci/run)"
        if in_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)


def _has_owner(address: str, name: str) -> bool:
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    bus = DBusAddress("/org/freedesktop/DBus", "org.freedesktop.DBus", "org.freedesktop.DBus")
    with open_dbus_connection(address) as conn:
        reply = conn.send_and_get_reply(new_method_call(bus, "NameHasOwner", "s", (name,)))
    return bool(reply.body[0])


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture
def no_bus(tmp_path: Path) -> Keyring:
    return _scratch(tmp_path)


@pytest.fixture
def secret_service(tmp_path: Path) -> Iterator[Keyring]:
    _require("dbus-daemon", "gnome-keyring-daemon")
    user = _scratch(tmp_path)
    with contextlib.ExitStack() as stack:
        bus = subprocess.Popen(
            ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=user.env,
            text=True,
        )
        stack.callback(_stop, bus)
        assert bus.stdout is not None
        address = bus.stdout.readline().strip()
        assert address.startswith("unix:"), "dbus-daemon printed no address"
        user.env["DBUS_SESSION_BUS_ADDRESS"] = address
        daemon = subprocess.Popen(
            ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=user.env,
            text=True,
        )
        stack.callback(_stop, daemon)
        assert daemon.stdin is not None
        daemon.stdin.write(KEYRING_PASSWORD)
        daemon.stdin.close()
        deadline = time.monotonic() + TIMEOUT
        while not _has_owner(address, "org.freedesktop.secrets"):
            assert daemon.poll() is None, "gnome-keyring-daemon exited"
            assert time.monotonic() < deadline, "gnome-keyring-daemon never took its bus name"
            time.sleep(0.02)
        yield user
