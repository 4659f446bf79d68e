"""SECURITY.md T2: ``serve --tcp`` and ``serve --socket`` admit only the user who started them.

The attacker is another local user who connects first and names a ``rootUri`` of their choosing
(a directory holding a private file, 0600, of the user who runs the sidecar), then asks for that
file with ``s-code/readFile``. Each refusal has a positive control: the same client against the
same server with its admission check swapped for ``admit_anyone`` (the test-only seam in
``lsp/listen.py``, which is what ``serve --tcp`` was before the token) reads the file.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.serve_support import TIMEOUT, Conn, ServedChild, child_env, serve_argv

from s_code.protocol import methods

SECRET = "S-CODE-PRIVATE-9d41\n"
NOBODY = 65534


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A directory with a file only its owner (the sidecar's user) may read."""
    root = tmp_path / "victim"
    root.mkdir()
    secret = root / "secret.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    return root


def steal(conn: Conn, root: Path, **options: Any) -> str | None:
    """What an attacker's session gets of ``secret.txt`` in ``root``; None if refused."""
    if conn.initialize(root, **options) is None:
        return None
    reply = conn.request(2, methods.READ_FILE, {"path": "secret.txt"})
    if reply is None:
        return None
    assert "error" not in reply, reply
    return str(reply["result"]["numbered_content"])


def unguarded(kind: str, where: str) -> list[str]:
    """A server whose admission check is ``admit_anyone`` (the positive control)."""
    if kind == "tcp":
        body = (
            "from s_code.lsp.listen import serve_tcp, admit_anyone\n"
            "raise SystemExit(serve_tcp(create_server(), '127.0.0.1', 0, admit=admit_anyone))\n"
        )
    else:
        body = (
            "from s_code.cli.private_files import bind_unix\n"
            "from s_code.lsp.listen import serve_unix, admit_anyone\n"
            f"sock, _ = bind_unix({where!r})\n"
            "raise SystemExit(serve_unix(create_server(), sock, admit=admit_anyone))\n"
        )
    return [sys.executable, "-c", f"from s_code.lsp.handlers import create_server\n{body}"]


def token_of(tmp_path: Path, port: int) -> str:
    return (tmp_path / "run" / "s-code" / f"tcp-{port}.token").read_text().strip()


# -- TCP: the token -----------------------------------------------------------------------------

WRONG_FIRST_MESSAGES: dict[str, dict[str, Any]] = {
    "no options": {},
    "no token": {"permissionMode": "workspace"},
    "wrong token": {"token": "x" * 43},
    "token not a string": {"token": ["x"]},
}


def test_tcp_without_the_token_reads_nothing_and_the_right_client_still_gets_in(
    tmp_path: Path, victim: Path
) -> None:
    # Positive control: the unguarded server serves the first client, whoever it is.
    with ServedChild(unguarded("tcp", ""), child_env(tmp_path)) as server:
        attacker = Conn.tcp(server.port())
        assert steal(attacker, victim) == f"     1\t{SECRET}"
        attacker.close()

    with ServedChild(serve_argv("--tcp", "127.0.0.1:0"), child_env(tmp_path)) as server:
        port = server.port()
        for name, options in WRONG_FIRST_MESSAGES.items():
            attacker = Conn.tcp(port)
            assert steal(attacker, victim, **options) is None, name
            assert attacker.frames == [], name
            attacker.close()
        # Anything before initialize, even a request that would be answered, is not processed.
        attacker = Conn.tcp(port)
        attacker.send({"jsonrpc": "2.0", "id": 7, "method": "shutdown"})
        assert attacker.next_frame() is None
        attacker.close()
        # Not JSON at all.
        attacker = Conn.tcp(port)
        attacker.send(b"{nope")
        assert attacker.next_frame() is None
        attacker.close()
        # Before admission a message may not be large, even with the token (1 MiB at most).
        attacker = Conn.tcp(port)
        padded = steal(attacker, victim, token=token_of(tmp_path, port), pad="x" * (1 << 20))
        assert padded is None
        attacker.close()
        # The right client, after all of that, is served.
        client = Conn.tcp(port)
        assert steal(client, victim, token=token_of(tmp_path, port)) == f"     1\t{SECRET}"
        client.close()
        log = server.finish()
    assert log.count("refused a connection from ('127.0.0.1'") == len(WRONG_FIRST_MESSAGES) + 3


def test_a_silent_connection_does_not_keep_the_right_client_out(
    tmp_path: Path, victim: Path
) -> None:
    with ServedChild(serve_argv("--tcp", "127.0.0.1:0"), child_env(tmp_path)) as server:
        port = server.port()
        squatter = Conn.tcp(port)  # connects first and says nothing
        client = Conn.tcp(port)
        assert steal(client, victim, token=token_of(tmp_path, port)) == f"     1\t{SECRET}"
        # Once a client is admitted, nobody else is, even with the token.
        late = Conn.tcp(port)
        assert steal(late, victim, token=token_of(tmp_path, port)) is None
        squatter.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        assert squatter.next_frame() is None
        for conn in (squatter, client, late):
            conn.close()


def test_the_token_is_in_no_log_and_no_reply(tmp_path: Path, victim: Path) -> None:
    # At DEBUG pygls logs every message body: the control is that the initialize body is there.
    env = child_env(tmp_path, S_CODE_LOG="DEBUG")
    with ServedChild(serve_argv("--tcp", "127.0.0.1:0"), env) as server:
        port = server.port()
        token_file = tmp_path / "run" / "s-code" / f"tcp-{port}.token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
        token = token_of(tmp_path, port)
        client = Conn.tcp(port)
        assert steal(client, victim, token=token) == f"     1\t{SECRET}"
        # An option the session does not know would be named in a warning: the token is not.
        assert client.notifications == []
        client.request(3, methods.READ_FILE, {"path": "nope.txt"})
        client.close()
        log = server.finish()
    assert victim.as_uri() in log  # the control: message bodies are logged
    assert token not in log
    assert not any(token.encode() in body for body in client.frames)
    assert client.frames  # the replies were there to search


def test_a_token_from_the_environment(tmp_path: Path, victim: Path) -> None:
    token = "editor-made-token-" + "k" * 20
    env = child_env(tmp_path, S_CODE_TOKEN=token)
    with ServedChild(serve_argv("--tcp", "127.0.0.1:0"), env) as server:
        port = server.port()
        assert "the token is the one in S_CODE_TOKEN" in server.stderr()
        assert not (tmp_path / "run" / "s-code").exists()  # no file needed
        attacker = Conn.tcp(port)
        assert steal(attacker, victim, token=token[:-1] + "j") is None
        client = Conn.tcp(port)
        assert steal(client, victim, token=token) == f"     1\t{SECRET}"
        attacker.close()
        client.close()
        assert token not in server.finish()


def test_a_short_token_from_the_environment_is_refused(tmp_path: Path) -> None:
    env = child_env(tmp_path, S_CODE_TOKEN="short")
    with ServedChild(serve_argv("--tcp", "127.0.0.1:0"), env) as server:
        assert server.proc.wait(timeout=TIMEOUT) == 2
        assert "at least 16 characters" in server.finish()


def test_token_file_is_private_and_its_directory_must_be(tmp_path: Path, victim: Path) -> None:
    private = tmp_path / "mine"
    private.mkdir(mode=0o700)
    chosen = private / "token"
    with ServedChild(
        serve_argv("--tcp", "127.0.0.1:0", "--token-file", str(chosen)), child_env(tmp_path)
    ) as server:
        port = server.port()
        assert f"token in {chosen} " in server.stderr()
        assert stat.S_IMODE(chosen.stat().st_mode) == 0o600
        client = Conn.tcp(port)
        assert steal(client, victim, token=chosen.read_text().strip()) == f"     1\t{SECRET}"
        client.close()
        assert server.proc.wait(timeout=TIMEOUT) == 0  # the session ended: so does the server
    assert not chosen.exists()  # removed at exit
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with ServedChild(
        serve_argv("--tcp", "127.0.0.1:0", "--token-file", str(shared / "token")),
        child_env(tmp_path),
    ) as server:
        assert server.proc.wait(timeout=TIMEOUT) == 2
        assert "may be written by another user" in server.finish()
    assert list(shared.iterdir()) == []


# -- the unix socket: mode 0600 and the peer's uid ----------------------------------------------


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    """A directory others may enter but not write (tmp_path's parents are 0700: nobody could
    not reach a socket there whatever its mode)."""
    path = Path(tempfile.mkdtemp(prefix="s-code-sock-"))
    path.chmod(0o755)
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


def as_nobody(path: Path, root: Path) -> dict[str, Any]:
    """Connect to ``path`` from a child running as uid/gid 65534 and try to steal the secret."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only simple calls, then _exit
        outcome: dict[str, Any]
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            try:
                conn = Conn.unix(str(path))
            except OSError as exc:
                outcome = {"connect": exc.errno}
            else:
                outcome = {"connect": 0, "stolen": steal(conn, root)}
        except BaseException as exc:
            outcome = {"error": repr(exc)}
        os.write(write_end, json.dumps(outcome).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return dict(json.loads(data))


def wait_for_socket(server: ServedChild, path: Path) -> None:
    server.wait_for("listening on")
    assert stat.S_ISSOCK(path.lstat().st_mode)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to act as another uid")
def test_socket_is_0600_and_another_uid_is_refused(
    tmp_path: Path, victim: Path, sock_dir: Path
) -> None:
    path = sock_dir / "s.sock"
    # Positive control: a socket anyone may open, with no peer check, serves another uid.
    with ServedChild(unguarded("unix", str(path)), child_env(tmp_path)) as server:
        wait_for_socket(server, path)
        path.chmod(0o666)
        assert as_nobody(path, victim) == {"connect": 0, "stolen": f"     1\t{SECRET}"}

    with ServedChild(serve_argv("--socket", str(path)), child_env(tmp_path)) as server:
        wait_for_socket(server, path)
        info = path.lstat()
        assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
        # The file mode alone keeps another uid out...
        assert as_nobody(path, victim) == {"connect": errno.EACCES}
        # ...and were it looser, the peer check still would (nothing read, a line logged).
        path.chmod(0o666)
        assert as_nobody(path, victim) == {"connect": 0, "stolen": None}
        server.wait_for(f"refused a connection from the socket: the peer runs as uid {NOBODY}")
        # The server's own user is served, no token needed.
        client = Conn.unix(str(path))
        assert steal(client, victim) == f"     1\t{SECRET}"
        client.close()
        assert server.proc.wait(timeout=TIMEOUT) == 0
    assert not path.exists()  # removed at exit


def test_socket_refuses_what_is_already_at_its_path(tmp_path: Path, sock_dir: Path) -> None:
    plain = sock_dir / "plain"
    plain.write_text("keep me\n")
    link = sock_dir / "link"
    link.symlink_to(plain)
    for taken in (plain, link):
        done = ServedChild(serve_argv("--socket", str(taken)), child_env(tmp_path))
        assert done.proc.wait(timeout=TIMEOUT) == 2
        assert "exists and is not a socket of this user" in done.finish()
    assert plain.read_text() == "keep me\n" and link.is_symlink()
    # A live socket is another server's: refused. A stale one of ours is replaced.
    live = sock_dir / "live.sock"
    with socket.socket(socket.AF_UNIX) as other:
        other.bind(str(live))
        other.listen()
        done = ServedChild(serve_argv("--socket", str(live)), child_env(tmp_path))
        assert done.proc.wait(timeout=TIMEOUT) == 2
        assert "in use by another server" in done.finish()
    assert stat.S_ISSOCK(live.lstat().st_mode)  # closed now: stale
    with ServedChild(serve_argv("--socket", str(live)), child_env(tmp_path)) as server:
        wait_for_socket(server, live)
        Conn.unix(str(live)).close()


def test_socket_refuses_a_directory_others_may_write(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    done = ServedChild(serve_argv("--socket", str(shared / "s.sock")), child_env(tmp_path))
    assert done.proc.wait(timeout=TIMEOUT) == 2
    assert "may be written by another user" in done.finish()
    assert list(shared.iterdir()) == []
