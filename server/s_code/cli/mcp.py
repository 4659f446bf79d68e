"""``s-code mcp``: s-code's tools over MCP on stdio, for the agents people already run.

Attached when an editor's sidecar serves the workspace (its session, its approvals), else
standalone on ``--workspace`` in ``--mode``; ``--print-config CLIENT`` prints how to add it to a
client and exits (the workspace named only when ``--workspace`` is given, or where the client
does not start the server in the project's folder).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

CLIENTS = ("claude", "codex", "gemini", "vscode", "zed", "acp")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        default=None,
        help="the workspace (default: the current folder)",
    )
    parser.add_argument(
        "--mode",
        choices=("manual", "accept-edits", "workspace"),
        default="manual",
        help="the permission mode of a standalone session (attached: the editor's)",
    )
    parser.add_argument(
        "--print-config", choices=CLIENTS, metavar="CLIENT", help=f"one of {', '.join(CLIENTS)}"
    )
    parser.add_argument(
        "--standalone", action="store_true", help="never attach to an editor's session"
    )


def cmd_mcp(args: argparse.Namespace) -> int:
    if args.print_config:
        from s_code.mcp_face.configs import snippet

        pinned = os.path.realpath(args.workspace) if args.workspace else None
        print(snippet(args.print_config, pinned, os.path.realpath(os.getcwd())), end="")
        return 0
    workspace = os.path.realpath(args.workspace or os.getcwd())
    if not os.path.isdir(workspace):
        print(f"s-code mcp: {workspace} is not a folder", file=sys.stderr)
        return 2
    if not args.standalone:
        from s_code.mcp_face import link
        from s_code.mcp_face.relay import attach

        try:
            attached = attach(workspace)
        except link.Refused as exc:
            print(f"s-code mcp: {exc}", file=sys.stderr)
            return 2
        if attached is not None:  # the editor's session serves it: hand the stream over
            return attached.serve()
    return asyncio.run(_serve(workspace, args.mode))


async def _serve(workspace: str, mode: str) -> int:
    from s_code.mcp_face.local import LocalBackend
    from s_code.mcp_face.server import Face

    backend = LocalBackend(workspace, mode)
    await backend.start()
    try:
        await Face(backend).serve()
    finally:
        await backend.close()
    return 0
