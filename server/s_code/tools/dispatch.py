"""The one call path: every face calls a tool through :func:`call`.

LSP's typed methods and ``s-code/tools/call``, the CLI and the demo, code mode's child calls (and
next: an MCP face) all come here: find the tool, validate the raw arguments against its model or
JSON Schema (errors name the field path), fire the ``PreToolUse`` hooks (one that blocks, fails or
is pending stops the call here; one that asks goes through the approval prompt), run it (a tool
that changes anything goes through the approval gate inside its handler, with a card projected by
the server), pass its result through the session's redactor, and fire the ``PostToolUse`` hooks,
which see the result and may withhold it.

Redaction: a host process's result (an MCP tool) passes every rule; every other result, and every
error, passes the known values (a resolved credential, the sidecar's own secret variables), in
each encoding: a file a host process wrote a secret into is read, searched and diffed with the
value hidden, while a token-shaped test fixture stays readable. Code mode's child calls come here
too, so its JavaScript never holds a known value.
"""

from __future__ import annotations

from typing import Any

from s_code.approvals.caller import CALLER, Caller
from s_code.approvals.gate import check
from s_code.hooks.manager import hooks_for
from s_code.protocol.errors import SCodeError
from s_code.session.session import Session
from s_code.tools.registry import ToolDef


async def call(
    session: Session,
    name: str,
    raw_args: Any,
    *,
    field_prefix: str = "",
    caller: Caller | None = None,
) -> Any:
    """Run tool ``name`` with ``raw_args`` (JSON data from the client); its wire result.
    ``caller``: the attached agent that asked (None: the editor's own agent, or whoever asked
    the call this one is part of, as for code mode's child calls)."""
    if caller is None:
        return await _call(session, name, raw_args, field_prefix)
    token = CALLER.set(caller)
    try:
        return await _call(session, name, raw_args, field_prefix)
    finally:
        CALLER.reset(token)


async def _call(session: Session, name: str, raw_args: Any, field_prefix: str) -> Any:
    try:
        tool: ToolDef = session.registry.get(name)
        try:
            args = tool.parse(raw_args)
        except SCodeError as err:
            if field_prefix and "field" in err.data:
                err.data["field"] = f"{field_prefix}.{err.data['field']}".rstrip(".")
            raise
        hooks = hooks_for(session)
        asked = await hooks.before(name, raw_args)
        if asked is not None:  # a hook said "ask": the user decides, in every mode
            await check(session, "host_tool_destructive", hooks.ask_card(name, raw_args, asked))
        result = await tool.handler(session, args)
        wire = result if isinstance(result, dict) else result.to_wire()
        if tool.redact_result:
            wire = session.redactor.redact_json(wire)
        else:
            wire = session.redactor.redact_known_json(wire)
        asked = await hooks.after(name, raw_args, wire)
        if asked is not None:  # the tool ran: the user decides whether the agent gets its result
            card = hooks.ask_card(name, raw_args, asked, ran=True)
            await check(session, "host_tool_destructive", card)
        return wire
    except SCodeError as err:
        _hide_known(session, err)
        raise


def _hide_known(session: Session, err: SCodeError) -> None:
    """The known values hidden in an error too: its message or details may quote a file (and
    code mode hands a child call's error to its JavaScript)."""
    redactor = session.redactor
    if redactor.knows_values:
        err.message = redactor.redact_known(err.message)
        err.args = (err.message,)
        err.data = redactor.redact_known_json(err.data)
