"""The one error taxonomy: every failure the client sees is an :class:`SCodeError` with a kind.

``kind`` is the stable contract (PROTOCOL.md, "Errors"); codes are documented in docs/protocol.md.
Domain code raises these; the LSP adapter turns them into JSON-RPC errors whose ``data.kind`` is the
kind and whose other ``data`` fields are the error's details.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorKind(StrEnum):
    INVALID_PARAMS = "invalid_params"
    UNKNOWN_TOOL = "unknown_tool"
    NOT_FOUND = "not_found"
    PATH_ESCAPE = "path_escape"
    PROTECTED_PATH = "protected_path"
    STALE_REVISION = "stale_revision"
    ALIAS_CONFLICT = "alias_conflict"
    LIMIT_EXCEEDED = "limit_exceeded"
    MATCH_NOT_FOUND = "match_not_found"
    MATCH_AMBIGUOUS = "match_ambiguous"
    OVERLAPPING_EDITS = "overlapping_edits"
    MIXED_EDIT_KINDS = "mixed_edit_kinds"
    PATCH_SYNTAX = "patch_syntax"
    UNSUPPORTED_PATCH_OP = "unsupported_patch_op"
    UNSUPPORTED_ENCODING = "unsupported_encoding"
    RESERVATION_CONFLICT = "reservation_conflict"
    PARTIALLY_APPLIED = "partially_applied"
    DURABILITY_UNCONFIRMED = "durability_unconfirmed"
    APPROVAL_DENIED = "approval_denied"
    SANDBOX_UNAVAILABLE = "sandbox_unavailable"
    GIT_CONFIG_REJECTED = "git_config_rejected"
    GIT_ARGUMENT_REJECTED = "git_argument_rejected"
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"
    HOST_PROCESS_UNTRUSTED = "host_process_untrusted"
    HOST_PROCESS_FAILED = "host_process_failed"
    HOOK_BLOCKED = "hook_blocked"
    SECRET_UNAVAILABLE = "secret_unavailable"
    CODE_ERROR = "code_error"
    TOOL_NOT_READ_ONLY = "tool_not_read_only"
    INTERNAL = "internal"


# The JSON-RPC code of every kind: a fixed table, written out (docs/protocol.md prints it, and a
# test holds each entry to its number). A new kind takes the next free number; no code is ever
# reused or renumbered. invalid_params, cancelled and internal use JSON-RPC's own codes; every
# other kind has its own code in the server-error range (-32000..-32099).
ERROR_CODES: dict[ErrorKind, int] = {
    ErrorKind.INVALID_PARAMS: -32602,
    ErrorKind.UNKNOWN_TOOL: -32001,
    ErrorKind.NOT_FOUND: -32002,
    ErrorKind.PATH_ESCAPE: -32003,
    ErrorKind.PROTECTED_PATH: -32004,
    ErrorKind.STALE_REVISION: -32005,
    ErrorKind.ALIAS_CONFLICT: -32006,
    ErrorKind.LIMIT_EXCEEDED: -32007,
    ErrorKind.MATCH_NOT_FOUND: -32008,
    ErrorKind.MATCH_AMBIGUOUS: -32009,
    ErrorKind.OVERLAPPING_EDITS: -32010,
    ErrorKind.MIXED_EDIT_KINDS: -32011,
    ErrorKind.PATCH_SYNTAX: -32012,
    ErrorKind.UNSUPPORTED_PATCH_OP: -32013,
    ErrorKind.UNSUPPORTED_ENCODING: -32014,
    ErrorKind.RESERVATION_CONFLICT: -32015,
    ErrorKind.PARTIALLY_APPLIED: -32016,
    ErrorKind.DURABILITY_UNCONFIRMED: -32017,
    ErrorKind.APPROVAL_DENIED: -32018,
    ErrorKind.SANDBOX_UNAVAILABLE: -32019,
    ErrorKind.GIT_CONFIG_REJECTED: -32020,
    ErrorKind.GIT_ARGUMENT_REJECTED: -32021,
    ErrorKind.TIMEOUT: -32022,
    ErrorKind.HOST_PROCESS_UNTRUSTED: -32023,
    ErrorKind.HOST_PROCESS_FAILED: -32024,
    ErrorKind.HOOK_BLOCKED: -32025,
    ErrorKind.SECRET_UNAVAILABLE: -32026,
    ErrorKind.CODE_ERROR: -32027,
    ErrorKind.TOOL_NOT_READ_ONLY: -32028,
    ErrorKind.CANCELLED: -32800,
    ErrorKind.INTERNAL: -32603,
}


class SCodeError(Exception):
    """A failure with a stable ``kind`` and JSON-serialisable details."""

    def __init__(self, kind: ErrorKind, message: str, **data: Any) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.data = data

    @property
    def code(self) -> int:
        return ERROR_CODES[self.kind]

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind.value, **self.data}

    def __repr__(self) -> str:
        return f"SCodeError({self.kind.value!r}, {self.message!r}, {self.data!r})"


def invalid_params(message: str, field: str | None = None, **data: Any) -> SCodeError:
    """An ``invalid_params`` error naming the offending field path (dotted, ``files.0.path``)."""
    if field is not None:
        data["field"] = field
    return SCodeError(ErrorKind.INVALID_PARAMS, message, **data)
