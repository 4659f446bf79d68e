"""``s-code serve | mcp | demo | doctor | sandbox | secret``."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from s_code import __version__
from s_code.cli.mcp import add_arguments as add_mcp_arguments
from s_code.cli.mcp import cmd_mcp
from s_code.cli.serve import add_arguments, cmd_serve

LOG_LEVEL_ENV = "S_CODE_LOG"


def _setup_logging() -> None:
    level = os.environ.get(LOG_LEVEL_ENV, "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="s-code %(levelname)s %(name)s: %(message)s",
    )
    # pygls logs every message body at INFO: keep it quiet unless asked for DEBUG.
    # pygls also logs each failed request with a traceback; s-code logs the unexpected ones itself.
    if level != "DEBUG":
        logging.getLogger("pygls").setLevel(logging.WARNING)
        logging.getLogger("pygls.protocol.json_rpc").setLevel(logging.CRITICAL)


def cmd_demo(args: argparse.Namespace) -> int:
    from s_code.demo import run_demo

    return run_demo(keep=args.keep)


def cmd_doctor(args: argparse.Namespace) -> int:
    from s_code.doctor import run_doctor

    return run_doctor(as_json=args.json)


def cmd_sandbox(args: argparse.Namespace) -> int:
    from s_code.cli.sandbox import run

    command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not command:
        print("s-code sandbox: name a command after --", file=sys.stderr)
        return 2
    return run(command, args.cwd, args.network, args.yes, args.json)


def cmd_secret(args: argparse.Namespace) -> int:
    from s_code.cli.secret import run

    return run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="s-code", description=__doc__)
    parser.add_argument("--version", action="version", version=f"s-code {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="speak LSP over stdio (default), TCP or a unix socket")
    add_arguments(serve)
    serve.set_defaults(func=cmd_serve)
    mcp = sub.add_parser("mcp", help="serve s-code's tools over MCP (stdio) to an agent")
    add_mcp_arguments(mcp)
    mcp.set_defaults(func=cmd_mcp)
    demo = sub.add_parser("demo", help="drive a real server like an agent would, on samples/")
    demo.add_argument("--keep", action="store_true", help="keep the scratch workspace")
    demo.set_defaults(func=cmd_demo)
    doctor = sub.add_parser("doctor", help="report versions and what this machine supports")
    doctor.add_argument("--json", action="store_true")
    doctor.set_defaults(func=cmd_doctor)
    box = sub.add_parser(
        "sandbox", help="show the sandbox profile of a command, ask, and run it in the sandbox"
    )
    box.add_argument("--network", action="store_true", help="ask for network access")
    box.add_argument("--cwd", metavar="DIR", help="working directory inside the workspace (.)")
    box.add_argument("--yes", action="store_true", help="run without asking (needed with no TTY)")
    box.add_argument("--json", action="store_true", help="print the profile as JSON, run nothing")
    box.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD")
    box.set_defaults(func=cmd_sandbox)
    secret = sub.add_parser(
        "secret", help="store, list or delete keyring values for ${secret:keyring:...} handles"
    )
    actions = secret.add_subparsers(dest="action", required=True)
    actions.add_parser("set", help="store a value, read from the terminal (not echoed) or stdin")
    actions.add_parser("list", help="print the handles s-code stored (names, never values)")
    actions.add_parser("delete", help="delete a stored value")
    for action in ("set", "delete"):
        actions.choices[action].add_argument("name", metavar="SERVICE/ACCOUNT")
    secret.set_defaults(func=cmd_secret)
    return parser


INTERNAL_ERROR = 70  # EX_SOFTWARE


def main(argv: list[str] | None = None) -> int:
    """Every path ends in an exit code and, on failure, a message of one line: an unexpected
    exception too (its traceback is logged at DEBUG: ``S_CODE_LOG=DEBUG``)."""
    _setup_logging()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"s-code {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        logging.getLogger("s_code.cli").debug("unexpected error", exc_info=True)
        text = " ".join(f"{type(exc).__name__}: {exc}".split())
        print(
            f"s-code {args.command}: internal error: {text} (S_CODE_LOG=DEBUG shows where)",
            file=sys.stderr,
        )
        return INTERNAL_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
