"""Credential handles against a real keyring (GNOME Keyring on a private D-Bus, see
tests/keyring_support.py) and the real plaintext backend of keyrings.alt.

H4 (no value in files or output, in any encoding), H5 (a plaintext keyring backend is refused
unless the user opts in, with the positive control: opted in, the value sits in a file anyone
with the user's read access can decode), R4 (configuration keeps its handles; resolution never
writes values back), and ``s-code secret set|list|delete`` from stdin and from a terminal.
"""

from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.keyring_support import TIMEOUT, Keyring

from s_code.redaction import variants

VALUE = "s3cret-Value/with+odd=chars"
PLAINTEXT = "keyrings.alt.file.PlaintextKeyring"
ALLOW = {"S_CODE_ALLOW_PLAINTEXT_KEYRING": "1"}


def _leaks(text: str | bytes, value: str = VALUE) -> list[str]:
    data = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return [v for v in variants(value) if v in data]


def _quiet(done: subprocess.CompletedProcess[str], value: str = VALUE) -> str:
    """The one line the CLI said, after checking it said no value in any encoding."""
    assert _leaks(done.stdout + done.stderr, value) == []
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s-code secret: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def _plaintext_file(user: Keyring) -> Path:
    return user.home / ".local" / "share" / "python_keyring" / "keyring_pass.cfg"


# -- the real keyring ---------------------------------------------------------------------------


def test_set_from_stdin_then_resolve(secret_service: Keyring) -> None:
    user = secret_service
    done = user.cli("set", "github/me", input=VALUE + "\n")
    assert done.returncode == 0
    assert "stored ${secret:keyring:github/me} in keyring.backends.SecretService" in _quiet(done)
    env = {
        "GH": "${secret:keyring:github/me}",
        "AUTH": "Bearer ${secret:keyring:github/me}",
        "FROM_ENV": "${secret:env:SIDECAR_TOKEN}",
    }
    got = user.resolve(env, SIDECAR_TOKEN="env-value-123")
    assert got["env"] == {
        "GH": VALUE,  # the trailing newline was dropped
        "AUTH": f"Bearer {VALUE}",
        "FROM_ENV": "env-value-123",
    }
    assert got["values"] == [VALUE, "env-value-123"]
    assert got["handles"] == ["${secret:env:SIDECAR_TOKEN}", "${secret:keyring:github/me}"]


def test_no_value_in_any_file_or_output(secret_service: Keyring) -> None:
    """H4: the value goes to the daemon's encrypted keyring; nothing the user has holds it in
    clear, base64, hex, URL or JSON form, and no command prints it."""
    user = secret_service
    _quiet(user.cli("set", "svc/acct", input=VALUE))
    listed = user.cli("list")
    _quiet(listed)
    assert user.resolve({"T": "${secret:keyring:svc/acct}"})["env"] == {"T": VALUE}
    files = user.files()
    assert any(p.suffix == ".keyring" for p in files), "gnome-keyring wrote no keyring file"
    assert {str(p): _leaks(data) for p, data in files.items() if _leaks(data)} == {}
    _quiet(user.cli("delete", "svc/acct"))


def test_list_shows_names_only_and_delete_removes(secret_service: Keyring) -> None:
    user = secret_service
    assert user.cli("list").stdout == ""
    for name, value in (("svc/b", "value-of-b-1234"), ("svc/a", "value-of-a-1234")):
        assert user.cli("set", name, input=value).returncode == 0
    listed = user.cli("list")
    assert listed.returncode == 0
    assert listed.stdout == "${secret:keyring:svc/a}\n${secret:keyring:svc/b}\n"
    assert "2 secrets stored by s-code" in _quiet(listed, "value-of-a-1234")
    assert "value-of-b" not in listed.stdout + listed.stderr
    index = user.state / "secrets.json"
    assert index.stat().st_mode & 0o777 == 0o600
    assert json.loads(index.read_text()) == {"version": 1, "keyring": ["svc/a", "svc/b"]}

    done = user.cli("delete", "svc/a")
    assert (done.returncode, _quiet(done)) == (0, "s-code secret: deleted ${secret:keyring:svc/a}")
    assert user.cli("list").stdout == "${secret:keyring:svc/b}\n"
    gone = user.resolve({"A": "${secret:keyring:svc/a}"})
    assert gone["error"] == "secret_unavailable"
    assert gone["data"] == {"handle": "${secret:keyring:svc/a}", "field": "env.A"}
    assert "s-code secret set svc/a" in str(gone["message"])
    again = user.cli("delete", "svc/a")
    assert again.returncode == 1
    assert "nothing is stored under svc/a" in _quiet(again)
    assert user.resolve({"B": "${secret:keyring:svc/b}"})["env"] == {"B": "value-of-b-1234"}


def test_a_missing_secret_names_its_handle(secret_service: Keyring) -> None:
    user = secret_service
    for entry, handle, field in (
        ({"N": "${secret:keyring:nobody/none}"}, "keyring:nobody/none", "env.N"),
        ({"T": "x${secret:env:UNSET_NAME}"}, "env:UNSET_NAME", "env.T"),
    ):
        got = user.resolve(entry)
        assert got["error"] == "secret_unavailable"
        assert got["data"] == {"handle": f"${{secret:{handle}}}", "field": field}


@pytest.mark.parametrize(
    ("args", "status", "said"),
    [
        (("set", "no-slash"), 2, "SERVICE/ACCOUNT: a keyring secret is named"),
        (("set", "a/b/c"), 2, "SERVICE/ACCOUNT: a keyring secret is named"),
        (("delete", "a b/c"), 2, "SERVICE/ACCOUNT: a keyring secret is named"),
    ],
)
def test_bad_names_end_in_one_line(
    secret_service: Keyring, args: tuple[str, ...], status: int, said: str
) -> None:
    done = secret_service.cli(*args, input=VALUE)
    assert done.returncode == status
    assert said in _quiet(done)


@pytest.mark.parametrize(
    ("given", "said"),
    [("", "the value is empty"), ("\n", "the value is empty"), ("a\0b", "NUL")],
)
def test_bad_values_are_not_stored(secret_service: Keyring, given: str, said: str) -> None:
    done = secret_service.cli("set", "svc/bad", input=given)
    assert (done.returncode, said in _quiet(done)) == (2, True)
    assert secret_service.cli("list").stdout == ""


def _read_until(fd: int, wanted: bytes, deadline: float) -> bytes:
    seen = b""
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            seen += chunk
    return seen


def _on_a_terminal(user: Keyring, argv: list[str], typed: str, prompt: bytes) -> bytes:
    """Run ``argv`` with a pseudo-terminal as stdin, stdout and stderr; type ``typed`` once it
    shows ``prompt``; everything the terminal showed."""
    master, slave = os.openpty()
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=user.env, start_new_session=True
    )
    os.close(slave)
    try:
        deadline = time.monotonic() + TIMEOUT
        shown = _read_until(master, prompt, deadline)
        assert prompt in shown, shown
        os.write(master, typed.encode() + b"\n")
        shown += _read_until(master, b"\0never", deadline)
        assert proc.wait(timeout=TIMEOUT) == 0, shown
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return shown


def test_set_from_a_terminal_does_not_echo(secret_service: Keyring) -> None:
    user = secret_service
    cli = [sys.executable, "-m", "s_code", "secret", "set", "tty/acct"]
    shown = _on_a_terminal(user, cli, VALUE, b"(not echoed): ")
    assert b"Value for ${secret:keyring:tty/acct} (not echoed): " in shown
    assert b"stored ${secret:keyring:tty/acct}" in shown
    assert _leaks(shown) == []
    assert user.resolve({"T": "${secret:keyring:tty/acct}"})["env"] == {"T": VALUE}
    # Positive control: the same terminal echoes what a plain input() reads.
    echoing = [sys.executable, "-c", "input('say: ')"]
    assert VALUE.encode() in _on_a_terminal(user, echoing, VALUE, b"say: ")


# -- H5: plaintext and failing backends ---------------------------------------------------------


def test_headless_keyring_picks_plaintext_silently_and_s_code_refuses(no_bus: Keyring) -> None:
    """With keyrings.alt installed and no Secret Service, keyring itself picks PlaintextKeyring
    without a word (the control); s-code refuses it, stores nothing, and says how to fix it."""
    user = no_bus
    picked = subprocess.run(
        [sys.executable, "-c", "import keyring; print(keyring.get_keyring())"],
        capture_output=True,
        text=True,
        env=user.env,
        timeout=TIMEOUT,
    )
    assert picked.stdout.startswith(PLAINTEXT)
    done = user.cli("set", "svc/acct", input=VALUE)
    assert done.returncode == 1
    said = _quiet(done)
    assert f"the keyring backend {PLAINTEXT} keeps values in a file" in said
    assert "S_CODE_ALLOW_PLAINTEXT_KEYRING=1" in said
    assert not _plaintext_file(user).exists()
    assert user.cli("list").stdout == ""


def test_plaintext_opt_in_positive_control(no_bus: Keyring) -> None:
    """Opted in, the value lands in a file in base64: the exposure the refusal prevents."""
    user = no_bus
    done = user.cli("set", "svc/acct", input=VALUE, **ALLOW)
    assert done.returncode == 0
    assert f"in {PLAINTEXT} (allowed by S_CODE_ALLOW_PLAINTEXT_KEYRING=1" in _quiet(done)
    stored = _plaintext_file(user).read_text()
    encoded = stored.split("acct =", 1)[1].split()[0]
    assert base64.b64decode(encoded).decode() == VALUE  # anyone who reads the file has it
    assert _leaks(stored) != []
    # resolving it is refused without the opt-in too, though the file holds the value
    entry = {"T": "${secret:keyring:svc/acct}"}
    refused = user.resolve(entry)
    assert refused["error"] == "secret_unavailable"
    assert PLAINTEXT in str(refused["message"])
    assert user.resolve(entry, **ALLOW)["env"] == {"T": VALUE}


def test_a_named_plaintext_backend_is_refused_beside_a_running_keyring(
    secret_service: Keyring,
) -> None:
    user = secret_service
    done = user.cli("set", "svc/acct", input=VALUE, PYTHON_KEYRING_BACKEND=PLAINTEXT)
    assert done.returncode == 1
    assert "keeps values in a file" in _quiet(done)
    assert not _plaintext_file(user).exists()


def test_a_chain_with_a_plaintext_member_stores_in_the_system_keyring(
    secret_service: Keyring,
) -> None:
    """keyring's own choice here is a chain of Secret Service and the plaintext file (the
    control); s-code writes to the Secret Service only."""
    user = secret_service
    picked = subprocess.run(
        [
            sys.executable,
            "-c",
            "import keyring; k = keyring.get_keyring(); print(k, [str(b) for b in k.backends])",
        ],
        capture_output=True,
        text=True,
        env=user.env,
        timeout=TIMEOUT,
    )
    assert picked.stdout.startswith("keyring.backends.chainer.ChainerBackend"), picked.stdout
    assert PLAINTEXT in picked.stdout
    assert user.cli("set", "svc/acct", input=VALUE).returncode == 0
    assert not _plaintext_file(user).exists()
    assert _leaks(b"".join(user.files().values())) == []


@pytest.mark.parametrize(
    "backend", ["keyring.backends.fail.Keyring", "keyring.backends.null.Keyring"]
)
def test_failing_and_null_backends_are_refused_even_opted_in(no_bus: Keyring, backend: str) -> None:
    for env in ({}, ALLOW):
        done = no_bus.cli("set", "svc/acct", input=VALUE, PYTHON_KEYRING_BACKEND=backend, **env)
        assert done.returncode == 1
        assert "DBUS_SESSION_BUS_ADDRESS" in _quiet(done)
    got = no_bus.resolve({"T": "${secret:keyring:svc/acct}"}, PYTHON_KEYRING_BACKEND=backend)
    assert got["error"] == "secret_unavailable"


def test_a_named_backend_that_cannot_load_is_a_clear_message(no_bus: Keyring) -> None:
    """The Secret Service named in PYTHON_KEYRING_BACKEND, with no bus to reach it."""
    done = no_bus.cli(
        "delete", "svc/acct", PYTHON_KEYRING_BACKEND="keyring.backends.SecretService.Keyring"
    )
    assert done.returncode == 1
    assert "could not be loaded" in _quiet(done)


# -- R4: configuration keeps handles --------------------------------------------------------------


def test_resolution_never_writes_values_back(secret_service: Keyring, tmp_path: Path) -> None:
    user = secret_service
    _quiet(user.cli("set", "github/me", input=VALUE))
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "gh": {
                        "command": "/usr/bin/server",
                        "args": ["--stdio"],
                        "env": {"GITHUB_TOKEN": "${secret:keyring:github/me}"},
                    }
                }
            }
        )
    )
    before = config.read_bytes()
    entry = json.loads(before)["mcpServers"]["gh"]
    got = user.resolve(entry["env"])
    assert got["env"] == {"GITHUB_TOKEN": VALUE}
    assert config.read_bytes() == before
    assert _leaks(before) == []
    # and what s-code would save is checked: a value in clear is refused by field, not shown
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys\n"
            "from s_code.credentials import literal_secrets\n"
            "e = json.load(sys.stdin)\n"
            "print(json.dumps(literal_secrets(e['args'], e['env'], 'mcpServers.gh')))",
        ],
        input=json.dumps({"args": entry["args"], "env": {**entry["env"], "DB_PASSWORD": VALUE}}),
        capture_output=True,
        text=True,
        env=user.env,
        timeout=TIMEOUT,
    )
    assert json.loads(check.stdout) == ["mcpServers.gh.env.DB_PASSWORD"]
    assert entry["env"] == {"GITHUB_TOKEN": "${secret:keyring:github/me}"}
