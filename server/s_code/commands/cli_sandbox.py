"""``s-code sandbox [--network] [--cwd DIR] [--yes] -- CMD...``: preview, confirm, run.

The same projection as ``run_command`` and ``s-code/sandbox/preview``: the workspace is the current
directory, ``--cwd`` a directory inside it. On a terminal it asks; with no TTY it refuses unless
``--yes``. The exit status is the command's (125 when it was not run).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from s_code.protocol.errors import SCodeError

NOT_RUN = 125


def _session(workspace: str) -> Any:
    from s_code.tools.builtin import default_registry
    from s_code.tools.session import Session
    from s_code.workspace.folders import Folders

    return Session(folders=Folders.open([(workspace, None)]), registry=default_registry())


def _show(preview: dict[str, Any]) -> None:
    box = preview["sandbox"]
    out = sys.stderr
    out.write(f"command:  {' '.join(preview['argv'])}\n")
    out.write(f"sandbox:  tier {box['tier']} ({box['label']})\n")
    out.write(f"cwd:      {box['cwd']}\n")
    out.write(f"network:  {'REQUESTED' if box['network'] else 'off'}\n")
    out.write(f"readable: {', '.join(box['readable'])}\n")
    out.write(f"writable: {', '.join(box['writable'])}\n")
    if box["read_only"]:
        out.write(f"kept read-only: {', '.join(os.path.basename(p) for p in box['read_only'])}\n")
    if box["hidden"]:
        out.write(f"private (empty): {', '.join(box['hidden'])}\n")
    out.write(f"runtimes (read-only): {', '.join(box['runtimes']) or 'none'}\n")
    out.write(f"environment: {', '.join(box['env'])}\n")


def run(command: list[str], cwd: str | None, network: bool, yes: bool, as_json: bool) -> int:
    from s_code.commands.projection import project
    from s_code.tools.command_tools import execute, preview

    workspace = os.getcwd()
    rel = os.path.relpath(os.path.abspath(cwd), workspace) if cwd else None
    try:
        session = _session(workspace)
        shown = preview(session, command, rel, network)
    except SCodeError as err:
        sys.stderr.write(f"s-code sandbox: {err}\n")
        return NOT_RUN
    if as_json:
        sys.stdout.write(json.dumps(shown, indent=2) + "\n")
        return 0
    _show(shown)
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

    proj = project(session, command, rel, network)
    outcome, changed = asyncio.run(execute(session, proj, 24 * 3600, on_output))
    for path in changed:
        sys.stderr.write(f"s-code sandbox: {path} was changed; put back as it was (or removed)\n")
    return outcome.exit_code if outcome.exit_code is not None else NOT_RUN
