"""The command line: --tcp parsing, loopback detection, a real TCP session, and doctor --json."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from s_code.cli import build_parser
from s_code.cli.serve import _is_loopback, parse_tcp
from s_code.tools.builtin import default_registry
from tests.serve_support import TIMEOUT, Conn, ServedChild, child_env, serve_argv

# -- parse_tcp ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7777", ("127.0.0.1", 7777)),
        ("0", ("127.0.0.1", 0)),
        ("65535", ("127.0.0.1", 65535)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("127.0.0.1:8080", ("127.0.0.1", 8080)),
        ("localhost:9000", ("localhost", 9000)),
        ("example.com:443", ("example.com", 443)),
        ("[::1]:9", ("::1", 9)),
        ("[::]:1234", ("::", 1234)),
        (":5000", ("127.0.0.1", 5000)),
    ],
)
def test_parse_tcp(value: str, expected: tuple[str, int]) -> None:
    assert parse_tcp(value) == expected


@pytest.mark.parametrize(
    "value", ["abc", "65536", "-1", "host:", "host:port", "127.0.0.1:99999", "", "1.5", "[::1]:"]
)
def test_parse_tcp_bad_ports(value: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_tcp(value)


def test_parser_uses_parse_tcp(capsys) -> None:
    args = build_parser().parse_args(["serve", "--tcp", "[::1]:9"])
    assert args.tcp == ("::1", 9)
    assert build_parser().parse_args(["serve"]).tcp is None
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["serve", "--tcp", "nope"])
    assert exc.value.code == 2
    assert "not a port" in capsys.readouterr().err


def test_token_file_goes_with_tcp(tmp_path: Path) -> None:
    done = subprocess.run(
        serve_argv("--socket", str(tmp_path / "s.sock"), "--token-file", str(tmp_path / "t")),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=child_env(tmp_path),
        timeout=TIMEOUT,
    )
    assert done.returncode == 2
    assert b"--token-file goes with --tcp" in done.stderr
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--tcp", "9", "--socket", "x"])


@pytest.mark.parametrize(("host", "warned"), [("0.0.0.0", True), ("127.0.0.1", False)])
def test_a_non_loopback_host_warns(monkeypatch, caplog, host: str, warned: bool) -> None:
    import s_code.lsp.listen

    monkeypatch.delenv("S_CODE_TOKEN", raising=False)
    served: list[tuple[str, int]] = []
    monkeypatch.setattr(
        s_code.lsp.listen, "serve_tcp", lambda _s, host, port, **_kw: served.append((host, port))
    )
    args = build_parser().parse_args(["serve", "--tcp", f"{host}:7"])
    args.func(args)
    assert served == [(host, 7)]
    assert ("non-loopback host" in caplog.text) is warned


# -- _is_loopback -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.10", False),
        ("10.0.0.1", False),
        ("example.com", False),
        ("localhost.example.com", False),
        ("", False),
    ],
)
def test_is_loopback(host: str, expected: bool) -> None:
    assert _is_loopback(host) is expected


# -- a real TCP session -------------------------------------------------------------------------


def test_serve_tcp_end_to_end(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hi\n")
    # Port 0: the kernel picks a free port, and the "listening on" line names it (no race).
    with ServedChild(serve_argv("--tcp", "127.0.0.1:0"), child_env(tmp_path)) as server:
        port = server.port()
        assert port > 0
        # The token is in a private file the server names on stderr, never on stderr itself.
        token_path = tmp_path / "run" / "s-code" / f"tcp-{port}.token"
        assert f"token in {token_path} " in server.stderr()
        assert token_path.stat().st_mode & 0o777 == 0o600
        token = token_path.read_text().strip()
        assert len(token) >= 32
        conn = Conn.tcp(port)
        init = conn.initialize(workspace, token=token)
        assert init is not None and "error" not in init, init
        result = init["result"]
        assert result["serverInfo"]["name"] == "s-code"
        s_code = result["capabilities"]["experimental"]["sCode"]
        assert s_code["protocolVersion"] == 1
        assert "s-code/tools/list" in s_code["methods"]
        assert "s-code/listFiles" in s_code["methods"]

        listed = conn.request(2, "s-code/tools/list", {})
        assert listed is not None and "error" not in listed, listed
        tools = listed["result"]["tools"]
        assert [t["name"] for t in tools] == [t.name for t in default_registry().core()]
        assert {
            "read_file",
            "list_files",
            "search_text",
            "update_plan",
            "tool_search",
        } <= {t["name"] for t in tools}
        for t in tools:
            assert t["inputSchema"]["type"] == "object"
            assert isinstance(t["description"], str) and t["description"]

        # The session really is on the workspace named by rootUri.
        files = conn.request(3, "s-code/listFiles", {"path": "."})
        assert files is not None
        assert files["result"]["entries"] == [{"path": "hello.txt", "type": "file", "size": 3}]

        shutdown = conn.request(4, "shutdown", None)
        assert shutdown == {"jsonrpc": "2.0", "id": 4, "result": None}
        conn.send({"jsonrpc": "2.0", "method": "exit"})
        assert server.proc.wait(timeout=TIMEOUT) == 0
        # The server closed its end.
        assert conn.next_frame() is None
        conn.close()
        # The session took the token out of its options (no "unknown option" warning), and the
        # token file goes with the server.
        assert not any(n["method"] == "window/showMessage" for n in conn.notifications)
        assert not token_path.exists()
        assert token not in server.finish()
        # stdout carries protocol only, and with TCP there is none.
        assert server.stdout == b""


def test_serve_tcp_refuses_a_busy_port(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "s_code", "serve", "--tcp", f"127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=child_env(tmp_path),
            timeout=TIMEOUT,
        )
    assert done.returncode != 0
    assert done.stdout == b""
    assert b"address already in use" in done.stderr
    # A clear one-line refusal, not a Python traceback.
    assert b"Traceback" not in done.stderr


# -- doctor -------------------------------------------------------------------------------------


def _s_code_argv() -> list[str]:
    script = os.path.join(sysconfig.get_path("scripts"), "s-code")
    return [script] if os.access(script, os.X_OK) else [sys.executable, "-m", "s_code"]


def test_doctor_json(tmp_path: Path) -> None:
    done = subprocess.run(
        [*_s_code_argv(), "doctor", "--json"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=child_env(tmp_path),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    for key in ("ripgrep", "git", "landlock_abi", "openat2"):
        assert key in report, key
    assert set(report["ripgrep"]) == {"path", "version"}
    assert report["ripgrep"]["path"] and os.path.isabs(report["ripgrep"]["path"])
    assert report["ripgrep"]["version"].startswith("ripgrep ")
    assert set(report["git"]) == {"path", "version"}
    assert isinstance(report["openat2"], bool)
    assert report["landlock_abi"] is None or (
        isinstance(report["landlock_abi"], int) and report["landlock_abi"] >= 1
    )
    assert report["state_db"] == os.path.join(str(tmp_path / "state"), "state.sqlite3")
    assert report["exec_helper"]["origin"] in ("shipped", "compiled", "none")


def test_an_unexpected_error_is_one_line_and_an_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import s_code.cli as cli

    def broken(args: argparse.Namespace) -> int:
        raise RuntimeError("the disk\nis on fire")

    monkeypatch.setattr(cli, "cmd_doctor", broken)
    assert cli.main(["doctor"]) == cli.INTERNAL_ERROR
    err = capsys.readouterr().err
    assert err == (
        "s-code doctor: internal error: RuntimeError: the disk is on fire "
        "(S_CODE_LOG=DEBUG shows where)\n"
    )
