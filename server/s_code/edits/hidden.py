"""Edits of a file that holds a secret the agent is shown as ``[REDACTED]``.

``read_file``, ``search_text`` and the git tools hide the values the sidecar knows (a resolved
credential, its own secret variables) behind :data:`~s_code.redaction.MARK`, so the agent sees a
line ``API_TOKEN=[REDACTED]`` where the file holds the value. An edit made from that view must
never write the mark in the value's place. Two refusals, nothing written:

- a text edit or a patch hunk whose old text holds the mark, and that would match the file only
  as the agent was shown it: ``match_not_found`` (``redacted: true``), saying the line holds a
  hidden secret;
- an edit whose result holds the mark more often than the file did, in a file that holds a known
  value (a line edit or whole ``content`` that copies the shown line back): ``invalid_params``
  naming the field (``redacted: true``).

A line holding a secret may still be replaced whole by line number (or the file by ``content``)
with text that does not hold the mark, and every other line edited as usual. The revision
``read_file`` returns stays the hash of the real bytes: edits quote it as before (a hash reveals
nothing of the value).
"""

from __future__ import annotations

from s_code.edits.request import FilePlan
from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params
from s_code.redaction import MARK, Redactor


def compute_guarded(plan: FilePlan, original: str | None, redactor: Redactor, path: str) -> str:
    """``plan``'s new text for ``original``, refused (see the module) where it was made from the
    redacted view of a secret. Costs nothing more unless the redactor knows a value."""
    try:
        new = plan.compute(original)
    except SCodeError as err:
        if (
            err.kind is ErrorKind.MATCH_NOT_FOUND
            and original is not None
            and redactor.holds_known(original)
            and _matches_shown(plan, redactor.redact_known(original))
        ):
            raise _redacted_match(err, path) from None
        raise
    if (
        redactor.knows_values
        and original is not None
        and MARK in new
        and new.count(MARK) > original.count(MARK)
        and redactor.holds_known(original)
    ):
        raise _mark_written(plan, path)
    return new


def _matches_shown(plan: FilePlan, shown: str) -> bool:
    """Whether the edit applies to the text the agent was shown (the secrets as the mark)."""
    try:
        plan.compute(shown)
    except SCodeError:
        return False
    return True


def _redacted_match(err: SCodeError, path: str) -> SCodeError:
    where = err.data.get("field", "edit")
    data = {k: v for k, v in err.data.items() if k != "path"}
    return SCodeError(
        ErrorKind.MATCH_NOT_FOUND,
        f"{where}: the text to replace in {path!r} holds {MARK}, which stands for a secret "
        "s-code hides from the agent (a credential value); the file holds the value there, so "
        "the text does not match. A line holding a hidden secret cannot be edited through the "
        "agent: leave it as it is and edit around it, or replace it whole by line number "
        f"(start_line/end_line) with text that does not hold {MARK}",
        path=path,
        redacted=True,
        **data,
    )


def _mark_written(plan: FilePlan, path: str) -> SCodeError:
    return invalid_params(
        f"{_field(plan)}: the new text would write {MARK} into {path!r}, which holds a secret "
        f"s-code hides from the agent as {MARK}: the value would be replaced by the mark. Leave "
        "the lines that hold it as they are (edit around them), or give their full new text "
        f"without {MARK}",
        _field(plan),
        path=path,
        redacted=True,
    )


def _field(plan: FilePlan) -> str:
    """The field of the first edit whose new text holds the mark (or the content, the patch)."""
    prefix = f"{plan.field}." if plan.field not in ("", "path", "patch") else ""
    if plan.kind == "patch_update" or plan.field == "patch":
        return "patch"
    if plan.kind == "content":
        return f"{prefix}content"
    news = [e.new_text for e in plan.text_edits] or list(plan.line_columns[2])
    at = next((i for i, text in enumerate(news) if MARK in text), 0)
    return f"{prefix}edits.{at}.new_text"
