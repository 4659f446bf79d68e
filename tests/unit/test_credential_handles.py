"""Credential handles: strict syntax with field paths, names for previews, refused in every
argument, resolution of an env from an environment and a keyring getter, and the keyring backend
verdicts (no daemon needed here; the real keyring is in tests/security/test_credentials.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from keyring.backends import chainer, fail, null
from keyrings.alt.file import PlaintextKeyring

from s_code.credentials import (
    entry_handles,
    handle_names,
    keystore,
    literal_secrets,
    require_handles_only,
    resolve,
)
from s_code.credentials.handles import (
    Handle,
    keyring_handle,
    refuse_handles,
    refuse_in_args,
    refuse_in_command,
)
from s_code.protocol.errors import ErrorKind, SCodeError

TOKEN = "ghp_" + "A1b2C3d4" * 5  # a GitHub token shape the redactor's rules know


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("${secret:keyring:github/me}", [Handle("keyring", "github/me")]),
        ("${secret:env:API_TOKEN}", [Handle("env", "API_TOKEN")]),
        ("--token=${secret:env:_T9}", [Handle("env", "_T9")]),
        ("Bearer ${secret:keyring:a.b@c+d-e_f/x.y}", [Handle("keyring", "a.b@c+d-e_f/x.y")]),
        (
            "${secret:env:A}:${secret:keyring:s/a}",
            [Handle("env", "A"), Handle("keyring", "s/a")],
        ),
        ("no handle, ${HOME}, ${secretary}, $secret:env:X", []),
    ],
)
def test_good_handles_are_found(text: str, found: list[Handle]) -> None:
    assert [h for _, h in entry_handles({"T": text})] == found


@pytest.mark.parametrize(
    "text",
    [
        "${secret:keyring:github}",  # no account
        "${secret:keyring:a/b/c}",  # two slashes
        "${secret:keyring:/b}",
        "${secret:keyring:a b/c}",
        "${secret:keyring:a/b",  # unterminated
        "${secret:env:9LIVES}",
        "${secret:env:A-B}",
        "${secret:env:}",
        "${secret:vault:x}",  # unknown source
        "${SECRET:env:A}",  # another spelling is an error, never literal text
        "${ secret:env:A}",
        "ok ${secret:env:A} then ${secret:env:B C}",
    ],
)
def test_malformed_handles_name_the_field(text: str) -> None:
    with pytest.raises(SCodeError) as err:
        entry_handles({"PLAIN": "1", "API_KEY": text}, field="mcpServers.gh")
    assert err.value.kind == ErrorKind.INVALID_PARAMS
    assert err.value.data["field"] == "mcpServers.gh.env.API_KEY"
    assert err.value.message.startswith("mcpServers.gh.env.API_KEY: malformed credential handle")
    with pytest.raises(SCodeError) as err:
        handle_names({"A": "a", "B": text})
    assert err.value.data["field"] == "env.B"
    # in an argument, malformed or not, it is refused as an argument
    with pytest.raises(SCodeError) as err:
        refuse_in_args(["a", text], "command")
    assert err.value.data["field"] == "command.1"


def test_handles_stand_only_in_env_values() -> None:
    with pytest.raises(SCodeError) as err:
        handle_names({"${secret:env:A}": "x"})
    assert err.value.data["field"] == "env"
    with pytest.raises(SCodeError) as err:
        refuse_handles("/srv/${secret:env:A}", "cwd")
    assert (err.value.kind, err.value.data["field"]) == (ErrorKind.INVALID_PARAMS, "cwd")
    refuse_handles("/srv", "cwd")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["/usr/bin/${secret:env:A}"], "mcpServers.gh.args.0"),
        (["stdio", "--token", "${secret:keyring:github/me}"], "mcpServers.gh.args.2"),
        (["--header", "Authorization: Bearer ${secret:keyring:github/me}"], "mcpServers.gh.args.1"),
        (["T=${secret:env:T}", "./x.py"], "mcpServers.gh.args.0"),  # the env wrapper's form
        (["${SECRET:env:T}"], "mcpServers.gh.args.0"),  # any spelling
    ],
)
def test_a_handle_in_an_argument_is_refused_with_the_fix(args: list[str], field: str) -> None:
    with pytest.raises(SCodeError) as err:
        refuse_in_args(args, "mcpServers.gh.args")
    assert (err.value.kind, err.value.data["field"]) == (ErrorKind.INVALID_PARAMS, field)
    assert err.value.message.startswith(f"{field}: a credential handle may not stand")
    assert (
        "/proc/PID/cmdline" in err.value.message and "pass the secret in env" in err.value.message
    )
    refuse_in_args(["stdio", "--token-env", "GITHUB_TOKEN", "${HOME}/x"], "args")
    with pytest.raises(SCodeError) as err:
        refuse_in_command("./x.sh --token ${secret:env:T}", "hooks.PreToolUse.0.hooks.0.command")
    assert err.value.data["field"] == "hooks.PreToolUse.0.hooks.0.command"


def test_handle_names_are_canonical_sorted_and_distinct() -> None:
    env = {
        "T": "${secret:env:TOKEN}",
        "U": "Bearer ${secret:keyring:svc/acct}",
        "V": "${secret:env:TOKEN}",
    }
    assert handle_names(env) == ["${secret:env:TOKEN}", "${secret:keyring:svc/acct}"]


def test_keyring_names_for_the_cli() -> None:
    assert keyring_handle("svc/acct") == Handle("keyring", "svc/acct")
    assert keyring_handle("${secret:keyring:svc/acct}").service_account == ("svc", "acct")
    for bad in ("svc", "svc/", "a/b/c", "${secret:env:X}", "svc/acct\n", "svc/ac ct"):
        with pytest.raises(SCodeError) as err:
            keyring_handle(bad)
        assert err.value.kind == ErrorKind.INVALID_PARAMS


def test_resolve_substitutes_values_and_changes_nothing_given() -> None:
    env = {
        "A": "x-${secret:keyring:svc/acct}-y",
        "B": "keep",
        "C": "--token=${secret:env:TOK}",
        "D": "${secret:keyring:svc/acct}",
    }
    before = dict(env)
    asked: list[tuple[str, str]] = []

    def get(service: str, account: str) -> str | None:
        asked.append((service, account))
        return "from-the-keyring"

    done = resolve(env, environ={"TOK": "from-the-env"}, keyring_get=get)
    assert done.env == {
        "A": "x-from-the-keyring-y",
        "B": "keep",
        "C": "--token=from-the-env",
        "D": "from-the-keyring",
    }
    assert done.values == ["from-the-keyring", "from-the-env"]
    assert done.handles == ["${secret:env:TOK}", "${secret:keyring:svc/acct}"]
    assert asked == [("svc", "acct")]  # each handle read once
    assert env == before
    assert "from-the" not in repr(done)  # a log line or traceback shows names only


@pytest.mark.parametrize(
    ("environ", "stored", "handle", "field"),
    [
        ({}, "v", "${secret:env:TOK}", "gh.env.A"),
        ({"TOK": ""}, "v", "${secret:env:TOK}", "gh.env.A"),
        ({"TOK": "t"}, None, "${secret:keyring:svc/acct}", "gh.env.K"),
        ({"TOK": "t"}, "", "${secret:keyring:svc/acct}", "gh.env.K"),
    ],
)
def test_a_missing_secret_names_its_handle(
    environ: dict[str, str], stored: str | None, handle: str, field: str
) -> None:
    with pytest.raises(SCodeError) as err:
        resolve(
            {"A": "${secret:env:TOK}", "K": "${secret:keyring:svc/acct}"},
            field="gh",
            environ=environ,
            keyring_get=lambda s, a: stored,
        )
    assert err.value.kind == ErrorKind.SECRET_UNAVAILABLE
    assert err.value.data == {"handle": handle, "field": field}
    assert handle in err.value.message


def test_a_refused_keyring_is_secret_unavailable() -> None:
    def refused(service: str, account: str) -> str | None:
        raise keystore.KeyringUnavailable("the keyring backend X keeps values in a file", "refused")

    with pytest.raises(SCodeError) as err:
        resolve({"K": "${secret:keyring:svc/acct}"}, keyring_get=refused)
    assert err.value.kind == ErrorKind.SECRET_UNAVAILABLE
    assert err.value.data["handle"] == "${secret:keyring:svc/acct}"
    assert "keeps values in a file" in err.value.message


def test_a_malformed_handle_fails_before_any_secret_is_read() -> None:
    def never(service: str, account: str) -> str | None:
        raise AssertionError("read a secret of an invalid entry")

    with pytest.raises(SCodeError) as err:
        resolve({"A": "${secret:keyring:a/b}", "X": "${secret:env:}"}, keyring_get=never)
    assert err.value.data["field"] == "env.X"


def test_literal_secrets_are_found_by_field_never_by_value() -> None:
    args = [
        "--port=8080",
        f"--token={TOKEN}",
        "--token=${secret:env:T}",
        "--password=hunter22",
        "Authorization: Bearer ${secret:keyring:github/me}",
        "Authorization: Bearer abcdef123456",
    ]
    env = {
        "GITHUB_TOKEN": "${secret:keyring:github/me}",
        "AUTH": "Bearer ${secret:keyring:github/me}",
        "DB_PASSWORD": "correct-horse-battery",
        "API_KEY_FILE": "/home/me/.config/key.txt",
        "OTHER": TOKEN,
        "LOG_LEVEL": "debug",
    }
    found = literal_secrets(args, env, field="mcpServers.gh")
    assert found == [
        "mcpServers.gh.args.1",
        "mcpServers.gh.args.3",
        "mcpServers.gh.args.5",
        "mcpServers.gh.env.DB_PASSWORD",
        "mcpServers.gh.env.OTHER",
    ]
    with pytest.raises(SCodeError) as err:
        require_handles_only([], {"DB_PASSWORD": "correct-horse-battery"})
    assert err.value.data["field"] == "env.DB_PASSWORD"
    assert "correct-horse" not in err.value.message
    require_handles_only(args[:1], {"GITHUB_TOKEN": "${secret:keyring:github/me}"})


# -- keyring backends: refused by class, module and priority ------------------------------------


def test_backend_verdicts() -> None:
    assert keystore.classify(fail.Keyring()) == "none"
    assert keystore.classify(null.Keyring()) == "none"
    assert keystore.classify(PlaintextKeyring()) == "weak"
    from keyring.backends.SecretService import Keyring as SecretService

    assert keystore.classify(SecretService()) == "system"


@pytest.mark.parametrize("allow", [False, True])
def test_failing_and_null_backends_are_refused_even_when_allowed(allow: bool) -> None:
    for backend in (fail.Keyring(), null.Keyring()):
        with pytest.raises(keystore.KeyringUnavailable) as err:
            keystore.choose(backend, allow_weak=allow)
        assert err.value.reason == "no_keyring"
        assert "D-Bus" in err.value.message


def test_a_plaintext_backend_is_refused_unless_allowed() -> None:
    plain = PlaintextKeyring()
    with pytest.raises(keystore.KeyringUnavailable) as err:
        keystore.choose(plain, allow_weak=False)
    assert err.value.reason == "refused"
    assert "keyrings.alt.file.PlaintextKeyring" in err.value.message
    assert f"{keystore.ALLOW_ENV}=1" in err.value.message
    assert keystore.choose(plain, allow_weak=True) is plain


def test_an_unknown_backend_is_refused_unless_allowed() -> None:
    class Vendor(PlaintextKeyring):  # another module, another class: not one s-code vouches for
        priority = 3  # type: ignore[assignment]

    vendor = Vendor()
    with pytest.raises(keystore.KeyringUnavailable) as err:
        keystore.choose(vendor, allow_weak=False)
    assert "is not a system keyring s-code knows" in err.value.message
    assert keystore.choose(vendor, allow_weak=True) is vendor


def test_a_chain_uses_its_system_keyring_and_never_the_file(monkeypatch) -> None:
    from keyring.backends.SecretService import Keyring as SecretService

    system, plain = SecretService(), PlaintextKeyring()
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [plain, system])
    assert keystore.choose(chainer.ChainerBackend(), allow_weak=False) is system
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [plain])
    with pytest.raises(keystore.KeyringUnavailable):
        keystore.choose(chainer.ChainerBackend(), allow_weak=False)
    assert keystore.choose(chainer.ChainerBackend(), allow_weak=True) is plain
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [])
    with pytest.raises(keystore.KeyringUnavailable) as err:
        keystore.choose(chainer.ChainerBackend(), allow_weak=True)
    assert err.value.reason == "no_keyring"


def test_the_opt_in_is_exactly_one(monkeypatch) -> None:
    for value, allowed in (("1", True), (" 1 ", True), ("0", False), ("yes", False), ("", False)):
        monkeypatch.setenv(keystore.ALLOW_ENV, value)
        assert keystore.allowed_weak() is allowed
    monkeypatch.delenv(keystore.ALLOW_ENV)
    assert keystore.allowed_weak() is False


# -- docs/host-processes.md: what it shows, parses ------------------------------------------------


def _doc_blocks(language: str) -> list[str]:
    """The fenced blocks of docs/host-processes.md whose fence names ``language``."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "host-processes.md").read_text()
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        if line.startswith("```"):
            if fence is None:
                fence, current = line[3:].strip(), []
            else:
                if fence == language:
                    blocks.append("\n".join(current))
                fence = None
        elif fence is not None:
            current.append(line)
    return blocks


def test_the_docs_sample_holds_handles_only() -> None:
    (sample,) = [b for b in _doc_blocks("json") if '"github"' in b]
    servers = json.loads(sample)["mcpServers"]
    entry = servers["github"]
    refuse_in_args(entry["args"], "mcpServers.github.args")
    assert handle_names(entry["env"], "mcpServers.github") == [
        "${secret:env:SENTRY_TOKEN}",
        "${secret:keyring:github/me}",
    ]
    assert literal_secrets(entry["args"], entry["env"], "mcpServers.github") == []
    done = resolve(
        entry["env"],
        environ={"SENTRY_TOKEN": "sentry-value"},
        keyring_get=lambda s, a: f"{s}-{a}-value",
    )
    assert done.env["GITHUB_PERSONAL_ACCESS_TOKEN"] == "github-me-value"
    assert done.env["SENTRY_TOKEN"] == "sentry-value"


def test_the_docs_commands_are_the_cli() -> None:
    from s_code.cli import build_parser

    (commands,) = [b for b in _doc_blocks("") if "s-code secret" in b]
    for line in commands.splitlines():
        argv = line.split("#")[0].split("|")[-1].split()
        assert argv[:2] == ["s-code", "secret"], line
        args = build_parser().parse_args(argv[1:])
        assert args.action == argv[2]


def test_the_docs_configuration_example_is_a_valid_entry() -> None:
    """docs/host-processes.md's configuration example parses as s-code parses mcp.json."""
    from s_code.hostproc.config import parse_mcp

    (sample,) = [b for b in _doc_blocks("json") if '"notes"' in b]
    (entry,) = parse_mcp(sample.encode(), "workspace", "mcp.json")
    assert entry.problem is None and entry.enabled_tools == ("search_notes", "read_note")
