"""The audit log: every decision on a card (asked, allowed by the mode, rejected), and what ran.

Rows live in the state store (table ``audit_log``, one namespace per workspace). A row is written
when the decision is made; ``finish`` adds what then ran (paths written, argv and exit code).
Everything stored is what the card showed, already redacted.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from s_code.approvals.cards import Card
    from s_code.state.store import WorkspaceStore


def record(store: WorkspaceStore | None, card: Card, decision: str, mode: str) -> int | None:
    if store is None:
        return None
    rows = store.store.execute(
        "INSERT INTO audit_log (workspace_id, at, card_id, digest, kind, title, target, "
        "decision, mode) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            store.id,
            time.time(),
            card.id,
            card.digest,
            card.kind,
            card.title,
            card.target,
            decision,
            mode,
        ),
    )
    return int(rows[0][0])


def finish(store: WorkspaceStore | None, row: int | None, ran: dict[str, Any]) -> None:
    if store is None or row is None:
        return
    store.store.execute(
        "UPDATE audit_log SET ran_json = ?, finished_at = ? WHERE id = ? AND workspace_id = ?",
        (json.dumps(ran, sort_keys=True), time.time(), row, store.id),
    )


def rows(store: WorkspaceStore, limit: int = 100) -> list[dict[str, Any]]:
    found = store.store.execute(
        "SELECT id, at, card_id, digest, kind, title, target, decision, mode, ran_json, "
        "finished_at FROM audit_log WHERE workspace_id = ? ORDER BY id DESC LIMIT ?",
        (store.id, limit),
    )
    keys = ("id", "at", "card_id", "digest", "kind", "title", "target", "decision", "mode")
    out = []
    for row in found:
        item = dict(zip(keys, row[:9], strict=True))
        item["ran"] = json.loads(row[9]) if row[9] else None
        item["finished_at"] = row[10]
        out.append(item)
    return out
