"""The JSON-RPC code of every error kind is fixed: written out here, once, by hand.

Clients switch on ``error.data.kind`` but may log or match codes; a code that moved would break
them silently. This table is not computed from the enum (it was, by order, until a new kind
renumbered every later one): change a code and this fails.
"""

from __future__ import annotations

from pathlib import Path

from s_code.protocol.errors import ERROR_CODES, ErrorKind

FIXED = {
    "invalid_params": -32602,
    "unknown_tool": -32001,
    "not_found": -32002,
    "path_escape": -32003,
    "protected_path": -32004,
    "stale_revision": -32005,
    "alias_conflict": -32006,
    "limit_exceeded": -32007,
    "match_not_found": -32008,
    "match_ambiguous": -32009,
    "overlapping_edits": -32010,
    "mixed_edit_kinds": -32011,
    "patch_syntax": -32012,
    "unsupported_patch_op": -32013,
    "unsupported_encoding": -32014,
    "reservation_conflict": -32015,
    "partially_applied": -32016,
    "durability_unconfirmed": -32017,
    "approval_denied": -32018,
    "sandbox_unavailable": -32019,
    "git_config_rejected": -32020,
    "git_argument_rejected": -32021,
    "timeout": -32022,
    "host_process_untrusted": -32023,
    "host_process_failed": -32024,
    "hook_blocked": -32025,
    "secret_unavailable": -32026,
    "code_error": -32027,
    "tool_not_read_only": -32028,
    "cancelled": -32800,
    "internal": -32603,
}


def test_every_kind_has_its_fixed_code() -> None:
    assert {k.value: c for k, c in ERROR_CODES.items()} == FIXED


def test_every_kind_has_a_code_and_codes_are_unique() -> None:
    assert set(ERROR_CODES) == set(ErrorKind)
    assert len(set(ERROR_CODES.values())) == len(ERROR_CODES)


def test_the_documented_table_is_the_fixed_one() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()
    for kind, code in FIXED.items():
        assert f"| `{kind}` | {code} |" in doc
