"""A tool's wire result, or its error, as an MCP ``tools/call`` result.

``structuredContent`` is the tool's wire result exactly (what the LSP face returns); ``content``
is a compact text the model can read: for ``read_file`` the numbered content and its revision,
for ``run_command`` the exit and the output, else the result as compact JSON. A tool error is a
result with ``isError: true`` whose structured part is ``{kind, message, ...data}`` (the LSP
face's ``error.data``) and whose text says the same in a line. Protocol faults stay JSON-RPC
errors (the server's business, not this module's).
"""

from __future__ import annotations

import json
from typing import Any

from s_code.protocol.errors import SCodeError


def _text(name: str, wire: dict[str, Any]) -> str:
    if name == "read_file" and isinstance(wire.get("numbered_content"), str):
        facts = (
            f"{wire.get('path')}: revision {wire.get('revision')}, {wire.get('line_count')} lines"
        )
        numbered = wire["numbered_content"].rstrip("\n")
        return f"{numbered}\n({facts}; sha256 {wire.get('sha256')})"
    if name == "run_command" and isinstance(wire.get("output"), str):
        ended = "timed out" if wire.get("timed_out") else f"exit code {wire.get('exit_code')}"
        cut = " (output cut: head and tail kept)" if wire.get("truncated") else ""
        return f"{ended}{cut}\n{wire['output']}"
    return json.dumps(wire, ensure_ascii=False, separators=(",", ":"))


def success(name: str, wire: Any) -> dict[str, Any]:
    """The MCP result of a call that returned ``wire`` (a JSON object for every s-code tool)."""
    if not isinstance(wire, dict):
        wire = {"result": wire}
    return {"content": [{"type": "text", "text": _text(name, wire)}], "structuredContent": wire}


def failure(err: SCodeError) -> dict[str, Any]:
    """The MCP result of a call that failed with ``err`` (a tool error, not a protocol one)."""
    data = {"kind": err.kind.value, "message": err.message, **err.data}
    data["kind"] = err.kind.value  # err.data never renames the kind
    where = f" (field {data['field']})" if data.get("field") else ""
    line = f"error {err.kind.value}{where}: {err.message}"
    return {"content": [{"type": "text", "text": line}], "structuredContent": data, "isError": True}
