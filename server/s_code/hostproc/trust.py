"""Trust records: which host-process entry the user approved, bound to its hash.

Kept in the user's state database, never in the workspace (a repository cannot ship its own
approval). A record matches only the same kind, layer, name and scope (the user layer, or one
workspace), and only while the entry's hash is the one approved: any change to what runs makes
the entry pending again. For an MCP server the record also keeps a hash of each tool's definition
as it was approved; a tool that appears or changes later stays hidden until approved again.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from s_code.state.store import Store


@dataclass(frozen=True)
class Record:
    hash: str
    tools: dict[str, str] | None  # tool name -> definition hash, for MCP servers
    approved_at: float


def tool_hash(definition: dict[str, Any]) -> str:
    """The hash of a tool's definition as the model would see it."""
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class TrustStore:
    def __init__(self, store: Store, workspace: str) -> None:
        self.store = store
        self.workspace = workspace

    def _scope(self, layer: str) -> str:
        return "" if layer == "user" else self.workspace

    def get(self, kind: str, layer: str, name: str) -> Record | None:
        rows = self.store.execute(
            "SELECT hash, tools_json, approved_at FROM host_trust "
            "WHERE scope = ? AND kind = ? AND layer = ? AND name = ?",
            (self._scope(layer), kind, layer, name),
        )
        if not rows:
            return None
        h, tools, at = rows[0]
        return Record(str(h), json.loads(tools) if tools else None, float(at))

    def trust(
        self, kind: str, layer: str, name: str, digest: str, tools: dict[str, str] | None = None
    ) -> None:
        self.store.execute(
            "INSERT INTO host_trust (scope, kind, layer, name, hash, tools_json, approved_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scope, kind, layer, name) DO UPDATE SET "
            "hash = excluded.hash, tools_json = excluded.tools_json, "
            "approved_at = excluded.approved_at",
            (
                self._scope(layer),
                kind,
                layer,
                name,
                digest,
                json.dumps(tools, sort_keys=True) if tools is not None else None,
                time.time(),
            ),
        )

    def revoke(self, kind: str, layer: str, name: str) -> bool:
        rows = self.store.execute(
            "DELETE FROM host_trust WHERE scope = ? AND kind = ? AND layer = ? AND name = ? "
            "RETURNING id",
            (self._scope(layer), kind, layer, name),
        )
        return bool(rows)
