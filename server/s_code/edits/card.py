"""The approval card of an edit batch: its files, and (when the user is asked) their diffs."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from typing import Any

from s_code.approvals.cards import Card
from s_code.edits.preflight import Target
from s_code.redaction import Redactor

DIFF_LINES = 400  # per file, in the card's details (the whole change is on disk after approval)


def _diff(t: Target, shown: Callable[[str], str]) -> str:
    before = (t.before or b"").decode("utf-8", "replace").splitlines()
    after = t.after.decode("utf-8", "replace").splitlines()
    name = t.loc.display
    lines = list(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}", lineterm="", n=2))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more diff lines"]
    return shown("\n".join(lines))


def edit_card(
    targets: list[Target],
    legacy: bool,
    redactor: Redactor | None = None,
    with_diff: bool = False,
) -> Card:
    """The card of a batch; ``with_diff`` (only when the user will be asked) adds each file's
    unified diff, redacted and bounded."""
    shown = redactor.redact if redactor is not None else str
    paths = [t.loc.display for t in targets]
    if redactor is not None:
        paths = redactor.redact_all(paths)
    files = []
    for t, path in zip(targets, paths, strict=True):
        entry: dict[str, Any] = {
            "path": path,
            "created": t.created,
            "via": t.via,
            "lines_before": (t.before or b"").count(b"\n") + 1,
            "lines_after": t.after.count(b"\n") + 1,
            "sha_before": t.sha_before,
            "sha_after": t.sha_after,
        }
        if with_diff:
            entry["diff"] = _diff(t, shown)
        files.append(entry)
    where = paths[0] if len(paths) == 1 else f"{len(paths)} files"
    title = f"Edit {where}"[:150]
    target = paths[0] if legacy else json.dumps(paths)
    return Card("edit", title, target, {"files": files})
