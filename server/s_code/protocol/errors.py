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
    INTERNAL = "internal"


# JSON-RPC codes. invalid_params and cancelled use the standard codes; every other kind has its own
# code in the JSON-RPC server-error range (-32000..-32099), in the order of the enum above.
_STANDARD_CODES = {ErrorKind.INVALID_PARAMS: -32602, ErrorKind.CANCELLED: -32800}
ERROR_CODES: dict[ErrorKind, int] = {}
for _i, _kind in enumerate(k for k in ErrorKind if k not in _STANDARD_CODES):
    ERROR_CODES[_kind] = -32001 - _i
ERROR_CODES.update(_STANDARD_CODES)
ERROR_CODES[ErrorKind.INTERNAL] = -32603


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
