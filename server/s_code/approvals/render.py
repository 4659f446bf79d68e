"""A card as text, rendered once: the one-line question and the whole-card document.

Every face shows exactly this: the LSP prompt (``window/showMessageRequest``), the details
document (``window/showDocument`` and ``s-code/approval/details``), ``s-code sandbox`` on a
terminal, and the VS Code and Neovim integrations (they receive ``message`` and ``text`` with
the card). Each face renders the card's shown form (:attr:`~s_code.approvals.cards.Card.shown`),
where every string the card holds is already escaped, once: no control, bidi or invisible
character reaches the user raw, and nothing here escapes (or forgets to) on its own.
"""

from __future__ import annotations

import os
from typing import Any

from s_code.approvals.cards import (
    Card,
    CommandDetails,
    EditDetails,
    EditFile,
    HostProcessDetails,
    ShownCard,
    ToolCallDetails,
)
from s_code.protocol.display import head_tail, one_line

MESSAGE_LIMIT = 160  # characters of the prompt line before its middle is elided
_FILES_IN_MESSAGE = 3


def _counts(f: EditFile) -> str:
    if f.created:
        return f"new, {f.lines_after} line{'s' if f.lines_after != 1 else ''}"
    if f.added is not None and f.removed is not None:
        return f"+{f.added} -{f.removed}"
    return f"{f.lines_before} → {f.lines_after} lines"


def message(card: Card) -> str:
    """The question, on one line: what, where, and what the user most needs to weigh."""
    return _message(card.shown)


def _message(card: ShownCard) -> str:
    text = _question(card)
    if card.requested_by is not None:  # an attached agent asks: say which
        text = f"s-code, for the agent {card.requested_by}:" + text.removeprefix("s-code:")
    return text


def _question(card: ShownCard) -> str:
    d = card.details
    if isinstance(d, EditDetails):
        files = [f"{f.path} ({_counts(f)})" for f in d.files[:_FILES_IN_MESSAGE]]
        more = len(d.files) - _FILES_IN_MESSAGE
        listed = ", ".join(files) + (f" and {more} more" if more > 0 else "")
        verb = "Edit" if len(d.files) == 1 else f"Edit {len(d.files)} files:"
        warning = (
            " It is code that runs OUTSIDE the sandbox with your account's full access "
            f"({d.host_code[0]}{' ...' if len(d.host_code) > 1 else ''})."
            if d.host_code
            else ""
        )
        return f"s-code: {verb} {head_tail(listed, MESSAGE_LIMIT)}?{warning}"
    if isinstance(d, CommandDetails):
        box = d.sandbox
        net = "NETWORK REQUESTED" if d.network else "no network"
        scope = "unsandboxed: your full access" if box.tier == 3 else "writes only the workspace"
        return f"s-code: {card.title}? ({net}; {scope})"
    if isinstance(d, HostProcessDetails):
        return (
            f"s-code: {card.title}? It runs outside the sandbox with your account's "
            "filesystem and network access."
        )
    if isinstance(d, ToolCallDetails):
        args = head_tail(one_line(d.arguments), MESSAGE_LIMIT // 2)
        return f"s-code: {card.title} {args}? (outside the sandbox, your access)"
    return f"s-code: {card.title}?"


def _edit_lines(d: EditDetails) -> list[str]:
    lines = [f"Files ({len(d.files)}):"]
    for f in d.files:
        mark = "A" if f.created else "M"
        lines.append(f"  {mark} {f.path}  ({_counts(f)}, via {f.via})")
    if d.host_code:
        lines += [
            "",
            "Code that runs OUTSIDE the sandbox with your account's filesystem and network "
            "access (approving the edit makes each of these pending until you approve it again):",
            *(f"  {h}" for h in d.host_code),
        ]
    diffs = [f.diff for f in d.files if f.diff]
    if diffs:
        lines += ["", "Changes:", "", "```diff", *diffs]
        lines.append("```")
    return lines


def _list(paths: tuple[str, ...]) -> str:
    return ", ".join(paths) or "-"


def _relative(paths: tuple[str, ...], workspace: str) -> str:
    """Paths inside the workspace as workspace-relative, others as they are."""
    out = []
    for p in paths:
        rel = os.path.relpath(p, workspace) if p.startswith(workspace.rstrip("/") + "/") else p
        out.append(rel)
    return ", ".join(out) or "-"


def _command_lines(d: CommandDetails) -> list[str]:
    box = d.sandbox
    lines = [
        "Command (exactly what runs, one argument per line):",
        *(f"  [{i}] {a}" for i, a in enumerate(d.argv)),
        "",
        f"Working directory: {d.cwd}",
        f"Network: {'REQUESTED' if d.network else 'off'}",
        f"Sandbox: tier {box.tier} ({box.label})",
        "Can read: "
        + (
            f"everything except {_list(box.unreadable)}; of those, only the runtimes below"
            if box.unreadable
            else _list(box.readable)
        ),
        f"Can write: {_list(box.writable)}",
        f"Kept read-only: {_relative(box.read_only, box.workspace)}",
        f"Private (empty): {_list(box.hidden)}",
        f"Runtimes (read-only): {_list(box.runtimes)}",
        "Dependency caches: "
        + (", ".join(f"{k}={v}" for k, v in sorted(box.caches.items())) or "-"),
        f"Environment: {_list(box.env)}",
    ]
    for name, limit in sorted(box.limits.items()):
        lines.append(f"Limit on {name}: {limit}")
    for note in box.not_prevented:
        lines.append(f"Not prevented in this tier: {note}")
    return lines


def _host_lines(d: HostProcessDetails) -> list[str]:
    lines = [
        "This process runs OUTSIDE the sandbox with your account's filesystem and network access.",
        "",
        f"Kind: {d.process_kind}",
        f"Name: {d.name}",
        f"Configured in: {d.file} ({d.layer} layer)",
        "Command (exactly what runs, one argument per line):",
        *(f"  [{i}] {a}" for i, a in enumerate(d.argv)),
        f"Program: {d.executable or '(not found)'}",
        f"Program SHA-256: {d.executable_sha256 or '-'}",
        f"Working directory: {d.cwd}",
        "Environment:",
        *(f"  {e}" for e in d.environment),
        f"Credential handles (values never shown): {_list(d.credential_handles)}",
    ]
    lines += [f"Script: {s}" for s in d.scripts]
    if d.code_scope:
        lines += [
            "Code scope (a change to any of it asks again; the agent's edits of it ask first):",
            *(f"  {c}" for c in d.code_scope),
        ]
    if d.tools:
        lines += ["Tools:", *(f"  {t}" for t in d.tools)]
    lines.append(f"Trust hash: {d.hash}")
    lines += [f"Note: {n}" for n in d.notes]
    return lines


def _tool_call_lines(d: ToolCallDetails) -> list[str]:
    hints = ", ".join(f"{k}={v}" for k, v in sorted(d.annotations.items())) or "none"
    return [
        f"The MCP server {d.server} runs this tool with your account's filesystem and "
        "network access (outside the sandbox).",
        "",
        f"Tool: {d.tool}",
        f"Annotations (the server's own claims): {hints}",
        "Arguments:",
        *(f"  {line}" for line in d.arguments.split("\n")),
    ]


def document(card: Card) -> str:
    """The whole card: every target, every argument, the scope; plain text that also reads as
    Markdown."""
    return _document(card.shown)


def _document(card: ShownCard) -> str:
    d = card.details
    lines = [
        f"# s-code asks: {card.title}",
        "",
        f"kind: {card.kind} · digest: {card.digest}",
    ]
    if card.requested_by is not None:
        lines.append(f"asked by the agent: {card.requested_by} (attached over MCP)")
    if card.kind == "edit" and not card.target.startswith("["):
        lines.append(f"target: {card.target}")
    lines.append("")
    if isinstance(d, EditDetails):
        lines += _edit_lines(d)
    elif isinstance(d, CommandDetails):
        lines += _command_lines(d)
    elif isinstance(d, HostProcessDetails):
        lines += _host_lines(d)
    elif isinstance(d, ToolCallDetails):
        lines += _tool_call_lines(d)
    lines.append("")
    return "\n".join(lines)


def wire(card: Card) -> dict[str, Any]:
    """The card as clients receive it, every string escaped, with its rendering: ``message``
    (the one-line question) and ``text`` (the whole card), which every client shows as they
    are."""
    shown = card.shown
    return {
        "id": shown.id,
        "kind": shown.kind,
        "title": shown.title,
        "target": shown.target,
        "details": shown.details_wire,
        "digest": shown.digest,
        **({"requestedBy": shown.requested_by} if shown.requested_by is not None else {}),
        "message": _message(shown),
        "text": _document(shown),
    }
