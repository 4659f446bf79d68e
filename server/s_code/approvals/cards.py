"""Approval cards: what the user is asked to approve, frozen before anything runs.

A card is built from the server's own projection of the operation (never from the agent's words),
has a digest over its canonical JSON, and is consumed by exactly one operation: after approval the
operation is projected again and must give the same digest, or the user is asked again. Its
details are typed, one model per kind; :mod:`s_code.approvals.render` turns a card into the text
every face shows (the prompt line, the details document, the CLI) and into its wire form, so no
client renders one.

A card holds the real values (redacted, never escaped): its digest, the gate's re-projection and
the audit log compare and record what runs. What the user sees is :attr:`Card.shown`, the same
card with every string it holds escaped (:func:`s_code.protocol.display.shown`) -- its title, its
target, each field of its details, nested lists, dict keys and values, whatever a new field adds --
and every face renders only that, so no string reaches a user raw (SECURITY.md A1).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, TypeVar, cast

from s_code.protocol.display import shown as display

CardKind = Literal["edit", "command", "host_process", "tool_call"]
# A field of several lines (a diff, indented JSON): escaped line by line, its line ends kept.
LINES = {"lines": True}


@dataclass(frozen=True)
class EditFile:
    """One file of an edit batch."""

    path: str
    created: bool
    via: str  # "disk" or "editor" (an open buffer)
    lines_before: int
    lines_after: int
    sha_before: str | None
    sha_after: str
    added: int | None = None  # +/- lines, counted from the diff when the user is asked
    removed: int | None = None
    diff: str | None = field(default=None, metadata=LINES)  # the unified diff, redacted, bounded


@dataclass(frozen=True)
class EditDetails:
    files: tuple[EditFile, ...]
    host_code: tuple[str, ...] = ()
    """Files of the batch that are code an approved host process runs, and who runs them."""


@dataclass(frozen=True)
class SandboxShown:
    """The effective sandbox of a command, as the card shows it."""

    tier: int
    label: str
    workspace: str
    cwd: str
    network: bool
    readable: tuple[str, ...]
    writable: tuple[str, ...]
    read_only: tuple[str, ...]
    hidden: tuple[str, ...]
    runtimes: tuple[str, ...]
    caches: dict[str, str]
    env: tuple[str, ...]
    limits: dict[str, str] = field(default_factory=dict)
    not_prevented: tuple[str, ...] = ()  # what this tier cannot stop, in plain words
    unreadable: tuple[str, ...] = ()  # left out of what it can read


@dataclass(frozen=True)
class CommandDetails:
    argv: tuple[str, ...]
    cwd: str
    network: bool
    sandbox: SandboxShown


@dataclass(frozen=True)
class HostProcessDetails:
    """A full-authority process (an MCP server, a hook, a terminal) the user is asked to trust."""

    process_kind: str
    name: str
    layer: str
    file: str
    argv: tuple[str, ...]
    cwd: str
    environment: tuple[str, ...]  # NAME=value as shown (handles as handles, secrets hidden)
    credential_handles: tuple[str, ...]
    executable: str | None
    executable_sha256: str | None
    scripts: tuple[str, ...]  # files the arguments name, with their SHA-256
    hash: str
    tools: tuple[str, ...] = ()  # an MCP server's tools as approved (name: description)
    notes: tuple[str, ...] = ()
    code_scope: tuple[str, ...] = ()  # what its trust covers beyond argv (hostproc/scope.py)


@dataclass(frozen=True)
class ToolCallDetails:
    """A call to a tool of a host process (an MCP server): its arguments, as the server gets
    them."""

    server: str
    tool: str
    arguments: str = field(metadata=LINES)  # JSON, indented and redacted
    annotations: dict[str, object]


Details = EditDetails | CommandDetails | HostProcessDetails | ToolCallDetails


def _wire(value: Any) -> Any:
    """A details object as plain JSON data (tuples as lists)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _wire(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_wire(v) for v in value]
    if isinstance(value, dict):
        return {k: _wire(v) for k, v in value.items()}
    return value


T = TypeVar("T")


def _escaped(value: T, *, lines: bool = False) -> T:
    """``value`` with every string in it escaped: dataclass fields (those marked :data:`LINES`
    line by line), tuples, lists, dict keys and values; anything else as it is."""
    out: Any = value
    if isinstance(value, str):
        out = display(value, keep_newlines=lines)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = dataclasses.replace(
            value,
            **{
                f.name: _escaped(getattr(value, f.name), lines=bool(f.metadata.get("lines")))
                for f in dataclasses.fields(value)
                if f.init
            },
        )
    elif isinstance(value, tuple | list):
        out = type(value)(_escaped(v) for v in value)
    elif isinstance(value, dict):
        out = {_escaped(k): _escaped(v) for k, v in value.items()}
    return cast(T, out)


@dataclass(frozen=True)
class ShownCard:
    """A card as the user sees it: every string escaped; its identity (id, kind, digest) the
    card's own. Built only by :attr:`Card.shown`."""

    id: str
    kind: CardKind
    digest: str
    title: str
    target: str
    details: Details
    requested_by: str | None = None

    @cached_property
    def details_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = _wire(self.details)
        return wire


@dataclass(frozen=True, eq=False)
class Card:
    kind: CardKind
    title: str  # one line, well under 200 characters; escaped when shown
    target: str  # edits: a JSON array of paths (a batch) or the plain path (legacy form)
    details: Details
    id: str = field(default_factory=lambda: "a-" + uuid.uuid4().hex[:12])
    requested_by: str | None = None
    """The attached agent that asked (its own name), when not the editor's own agent."""

    @cached_property
    def details_wire(self) -> dict[str, Any]:
        """The details as JSON data, the real values: for the digest and the tool results."""
        wire: dict[str, Any] = _wire(self.details)
        return wire

    @cached_property
    def digest(self) -> str:
        body = json.dumps(
            {"kind": self.kind, "target": self.target, "details": self.details_wire},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(body.encode()).hexdigest()

    @cached_property
    def shown(self) -> ShownCard:
        """The card every face shows (the prompt, the details document, the wire form): each
        string escaped, once. A batch edit's target stays a JSON array: of the escaped paths."""
        details = _escaped(self.details)
        target = display(self.target)
        if (
            isinstance(self.details, EditDetails)
            and isinstance(details, EditDetails)
            and self.target == json.dumps([f.path for f in self.details.files])
        ):
            target = json.dumps([f.path for f in details.files])
        agent = display(self.requested_by) if self.requested_by is not None else None
        return ShownCard(
            self.id, self.kind, self.digest, display(self.title), target, details, agent
        )
