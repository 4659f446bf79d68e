"""The ``host_process`` card: what the user approves before a host process may ever run."""

from __future__ import annotations

from s_code.approvals.cards import Card, HostProcessDetails
from s_code.hostproc.entry import Canonical
from s_code.redaction import Redactor

KIND_WORDS = {"mcp": "MCP server", "hook": "hook", "terminal": "terminal"}


def host_card(entry: Canonical, redactor: Redactor, tools: tuple[str, ...] = ()) -> Card:
    """The preview of ``entry``: it says the process runs outside the sandbox with the user's
    account's access, and shows the exact argv, cwd, environment, handle names (never values),
    the layer and file, the program and script hashes, and the trust hash."""
    shown = redactor.redact_shown  # a card: known values and secret formats only
    details = HostProcessDetails(
        process_kind=entry.kind,
        name=entry.name,
        layer=entry.layer,
        file=entry.file,
        argv=tuple(shown(a) for a in entry.argv),
        cwd=entry.cwd,
        environment=tuple(shown(e) for e in entry.shown_env()),
        credential_handles=entry.handles,
        executable=entry.executable.path,
        executable_sha256=entry.executable.sha256,
        scripts=tuple(f"{path} sha256:{digest}" for path, digest in entry.scripts),
        hash=entry.hash,
        tools=tools,
        notes=entry.notes,
        code_scope=entry.scope.shown() if entry.scope is not None else (),
    )
    what = KIND_WORDS.get(entry.kind, entry.kind)
    title = f"Trust the {what} {entry.name!r} ({entry.layer} configuration)"
    if entry.kind == "terminal":  # one start, asked by the agent: nothing is remembered
        title = f"Start the background terminal {entry.name!r} (asked by the agent)"
    return Card("host_process", title[:190], f"{entry.kind}:{entry.layer}:{entry.name}", details)
