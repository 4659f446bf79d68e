"""``s-code sandbox [--network] [--cwd DIR] [--yes] -- CMD...``: preview, confirm, run.

The same projection as ``run_command`` and ``s-code/sandbox/preview``, and the same card text:
the workspace is the current directory, ``--cwd`` a directory inside it. On a terminal it asks;
with no TTY it refuses unless ``--yes``. The exit status is the command's (125 when it was not
run).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from s_code.protocol.display import shown
from s_code.protocol.errors import SCodeError

NOT_RUN = 125


def run(command: list[str], cwd: str | None, network: bool, yes: bool, as_json: bool) -> int:
    from s_code.commands.projection import project
    from s_code.commands.run import execute, preview
    from s_code.tools.host import open_session

    workspace = os.getcwd()
    rel = os.path.relpath(os.path.abspath(cwd), workspace) if cwd else None
    try:
        session = open_session([(workspace, None)], store=False)
        seen = preview(session, command, rel, network)
    except SCodeError as err:
        sys.stderr.write(f"s-code sandbox: {shown(err.message)}\n")
        return NOT_RUN
    if as_json:
        sys.stdout.write(json.dumps(seen, indent=2) + "\n")
        return 0
    card = seen["card"]
    assert isinstance(card, dict)
    sys.stderr.write(str(card["text"]))
    if not yes:
        if not sys.stdin.isatty():
            sys.stderr.write("s-code sandbox: not a terminal; pass --yes to run without asking\n")
            return NOT_RUN
        answer = input("Run it? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            sys.stderr.write("s-code sandbox: not run\n")
            return NOT_RUN

    def on_output(stream: str, text: str) -> None:
        (sys.stdout if stream == "stdout" else sys.stderr).write(text)
        (sys.stdout if stream == "stdout" else sys.stderr).flush()

    try:
        proj = project(session, command, rel, network)
        outcome, changed = asyncio.run(execute(session, proj, 24 * 3600, on_output))
    except SCodeError as err:
        sys.stderr.write(f"s-code sandbox: {shown(err.message)}\n")
        return NOT_RUN
    for path in changed:
        sys.stderr.write(
            f"s-code sandbox: {shown(path)} was changed; put back as it was (or removed)\n"
        )
    return outcome.exit_code if outcome.exit_code is not None else NOT_RUN
