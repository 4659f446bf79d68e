"""The approval card of an edit batch: its files, and (when the user is asked) their diffs.

Paths and diffs hide only known secret values and secret-format tokens
(:meth:`~s_code.redaction.Redactor.redact_shown`): a line ``API_TOKEN=$(curl …|sh)`` is shown as
it will be written."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable

from s_code.approvals.cards import Card, EditDetails, EditFile
from s_code.edits.preflight import Target
from s_code.protocol.display import shown as display
from s_code.redaction import Redactor

DIFF_LINES = 400  # per file, in the card's details (the whole change is on disk after approval)


def line_count(data: bytes) -> int:
    """Lines as an editor numbers them: ``a\\nb\\n`` and ``a\\nb`` have 2, an empty file 0."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _diff(t: Target, shown: Callable[[str], str]) -> tuple[str, int, int]:
    """The unified diff (redacted, bounded) and the counts of added and removed lines."""
    # lines as editors count them (LF only): a U+2028 or a lone CR stays in its line, escaped
    before = (t.before or b"").decode("utf-8", "replace").split("\n")
    after = t.after.decode("utf-8", "replace").split("\n")
    name = display(t.loc.display)  # a name with a newline must not split the diff's lines
    lines = list(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}", lineterm="", n=2))
    body = lines[2:]
    added = sum(1 for x in body if x.startswith("+"))
    removed = sum(1 for x in body if x.startswith("-"))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more diff lines"]
    return shown("\n".join(lines)), added, removed


def edit_card(
    targets: list[Target],
    legacy: bool,
    redactor: Redactor | None = None,
    with_diff: bool = False,
    host_code: tuple[str, ...] = (),
) -> Card:
    """The card of a batch; ``with_diff`` (only when the user will be asked) adds each file's
    unified diff, redacted and bounded, and its +/- line counts."""
    shown = redactor.redact_shown if redactor is not None else str
    paths = [shown(t.loc.display) for t in targets]
    files = []
    for t, path in zip(targets, paths, strict=True):
        diff, added, removed = _diff(t, shown) if with_diff else (None, None, None)
        files.append(
            EditFile(
                path=path,
                created=t.created,
                via=t.via,
                lines_before=line_count(t.before or b""),
                lines_after=line_count(t.after),
                sha_before=t.sha_before,
                sha_after=t.sha_after,
                added=added,
                removed=removed,
                diff=diff,
            )
        )
    where = paths[0] if len(paths) == 1 else f"{len(paths)} files"
    title = f"Edit {where}"[:150]
    if host_code:
        title = f"Edit code a host process runs: {where}"[:150]
    target = paths[0] if legacy else json.dumps(paths)
    return Card("edit", title, target, EditDetails(tuple(files), host_code))
