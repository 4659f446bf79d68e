"""Approval cards: what the user is asked to approve, frozen before anything runs.

A card is built from the server's own projection of the operation (never from the agent's words),
has a digest over its canonical JSON, and is consumed by exactly one operation: after approval the
operation is projected again and must give the same digest, or the user is asked again.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Card:
    kind: str  # "edit", "command", ...
    title: str  # one line, well under 200 characters
    target: str  # edits: a JSON array of paths (a batch) or the plain path (legacy form)
    details: dict[str, Any]
    id: str = field(default_factory=lambda: "a-" + uuid.uuid4().hex[:12])

    @property
    def digest(self) -> str:
        body = json.dumps(
            {"kind": self.kind, "target": self.target, "details": self.details},
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(body.encode()).hexdigest()

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "target": self.target,
            "details": self.details,
            "digest": self.digest,
        }
