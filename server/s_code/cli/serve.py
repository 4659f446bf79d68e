"""``s-code serve``: LSP over stdio, over TCP guarded by a token, or over a private unix socket.

The token and socket files are made in private_files.py; listening and admission are in
``lsp/listen.py``. Every face serves one session, and the server ends with it.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import sys

from s_code.cli.private_files import (
    TOKEN_ENV,
    OwnedPath,
    PrivateFileError,
    bind_unix,
    default_token_path,
    take_token,
    write_token,
)

log = logging.getLogger("s_code")


def parse_tcp(value: str) -> tuple[str, int]:
    """``PORT`` or ``HOST:PORT``; without a host, loopback. A named host is used as given."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "127.0.0.1", value
    if ":" in host and not (host.startswith("[") and host.endswith("]")):
        raise argparse.ArgumentTypeError(f"write an IPv6 host in brackets: [{host}]:{port}")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port: {port!r}") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {number}")
    return host, number


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def add_arguments(serve: argparse.ArgumentParser) -> None:
    face = serve.add_mutually_exclusive_group()
    face.add_argument(
        "--tcp",
        type=parse_tcp,
        metavar="[HOST:]PORT",
        help="listen on TCP instead of stdio (loopback unless HOST is named); a client presents "
        "the token as initializationOptions.token in its initialize request",
    )
    face.add_argument(
        "--socket",
        metavar="PATH",
        help="listen on a unix socket made 0600 at PATH; only this user may connect",
    )
    serve.add_argument(
        "--token-file",
        metavar="PATH",
        help="with --tcp: write the token here (default: tcp-PORT.token in "
        f"$XDG_RUNTIME_DIR/s-code/); {TOKEN_ENV} gives the token instead of making one",
    )


def _fail(message: str) -> int:
    sys.stderr.write(f"s-code: {message}\n")
    return 2


def cmd_serve(args: argparse.Namespace) -> int:
    from s_code.lsp.handlers import create_server
    from s_code.lsp.transport import serve_stdio

    if args.token_file is not None and args.tcp is None:
        return _fail("--token-file goes with --tcp")
    if args.socket is not None:
        return _serve_socket(args.socket)
    if args.tcp is None:
        return serve_stdio(create_server())
    return _serve_tcp(args.tcp, args.token_file)


def _serve_socket(path: str) -> int:
    from s_code.lsp.handlers import create_server
    from s_code.lsp.listen import serve_unix

    try:
        sock, owned = bind_unix(path)
    except (PrivateFileError, OSError) as exc:
        return _fail(f"cannot listen on {path}: {exc}")
    try:
        return serve_unix(create_server(), sock)
    finally:
        owned.remove()


def _serve_tcp(address: tuple[str, int], token_file: str | None) -> int:
    from s_code.lsp.handlers import create_server
    from s_code.lsp.listen import serve_tcp, token_admission

    host, port = address
    try:
        token, given = take_token()
    except PrivateFileError as exc:
        return _fail(str(exc))
    if not _is_loopback(host):
        log.warning(
            "serving on non-loopback host %s: the token crosses the network in clear text; "
            "anyone who can read that traffic can drive the agent",
            host,
        )
    written: list[OwnedPath] = []

    def on_listening(bound: int) -> None:
        if given and token_file is None:
            sys.stderr.write(f"s-code: the token is the one in {TOKEN_ENV}\n")
            return
        try:
            written.append(write_token(token_file or default_token_path(bound), token))
        except (PrivateFileError, OSError) as exc:
            sys.stderr.write(f"s-code: cannot write the token file: {exc}\n")
            raise SystemExit(2) from None
        sys.stderr.write(
            f"s-code: token in {written[0].path} (send it as initializationOptions.token)\n"
        )

    try:
        return serve_tcp(
            create_server(), host, port, admit=token_admission(token), on_listening=on_listening
        )
    finally:
        for owned in written:
            owned.remove()
