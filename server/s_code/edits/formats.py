"""The model editing configuration: which apply_patch form the model is shown, and how to use it.

``tools/list`` shows apply_patch's input schema for the session's edit format (``lines``,
``text`` or ``patch``) with the system instructions for that format. Only what the model is
shown changes: every form (and the legacy single-file form) stays accepted whatever the
selection, and the form never changes approvals or the sandbox. Each instruction text carries a
worked example that a test validates against the schema it sits beside and applies.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from s_code.edits.request import MAX_PATHS, LineEditArgs, TextEditArgs
from s_code.protocol.models import Args

_PATH = Field(description="Workspace-relative path.")
_REV = Field(description="The revision read_file returned; null for a file that must not exist.")
_CONTENT = Field(None, description="The whole new text (creates or replaces the file).")
_TURN = Field(None, description="Attach to this begun turn (default: the current one).")


class _LinesFile(Args):
    path: str = _PATH
    expected_revision: str | None = _REV
    edits: list[LineEditArgs] | None = Field(
        None, description="Line edits on the numbered content read_file returned; no overlaps."
    )
    content: str | None = _CONTENT


class LinesForm(Args):
    files: list[_LinesFile] = Field(max_length=MAX_PATHS, description="One entry per file.")
    turn_id: str | None = _TURN


class _TextFile(Args):
    path: str = _PATH
    expected_revision: str | None = _REV
    edits: list[TextEditArgs] | None = Field(
        None, description="Exact text replacements, applied in order; each old_text once."
    )
    content: str | None = _CONTENT


class TextForm(Args):
    files: list[_TextFile] = Field(max_length=MAX_PATHS, description="One entry per file.")
    turn_id: str | None = _TURN


class PatchForm(Args):
    patch: str = Field(description="'*** Begin Patch' … '*** End Patch': Add File, Update File.")
    revisions: dict[str, str | None] = Field(
        description="Each path the patch names → its revision (null for files it adds)."
    )
    turn_id: str | None = _TURN


FORMS: dict[str, type[Args]] = {"lines": LinesForm, "text": TextForm, "patch": PatchForm}

_COMMON = (
    "Edits are all or nothing: if any file fails its check, nothing is written. Quote the "
    "revision read_file gave you for every existing file; a file changed since is refused "
    "(stale_revision): read it again and redo the edit. Use null as the revision of a new file. "
    "Paths are workspace-relative. Protected paths (.git/, editor and tool configuration) are "
    "never written."
)

INSTRUCTIONS: dict[str, str] = {
    "lines": (
        "Edit files with apply_patch using line edits. Each edit replaces lines start_line to "
        "end_line (1-based, inclusive) of the numbered content read_file returned with new_text; "
        "line numbers always refer to the file as you read it, not after earlier edits, and "
        "ranges in one file must not overlap. new_text is whole lines, each ending in a newline; "
        "'' deletes the range; end_line = start_line - 1 inserts before start_line. Give "
        "content instead of edits to create or replace a whole file. " + _COMMON + "\n\n"
        "Example:\n```json\n"
        '{"files": [{"path": "src/app.py", "expected_revision": "<revision>", '
        '"edits": [{"start_line": 2, "end_line": 2, "new_text": "    return 42\\n"}]}]}\n```'
    ),
    "text": (
        "Edit files with apply_patch using exact text replacements. Each edit replaces old_text, "
        "which must occur exactly once in the file (include enough surrounding lines to make it "
        "unique), with new_text; edits apply in order and later ones see earlier replacements. "
        "Copy old_text exactly, whitespace included, from read_file's text (without the line "
        "numbers). Give content instead of edits to create or replace a whole file. "
        + _COMMON
        + "\n\nExample:\n```json\n"
        '{"files": [{"path": "src/app.py", "expected_revision": "<revision>", '
        '"edits": [{"old_text": "    return 1\\n", "new_text": "    return 42\\n"}]}]}\n```'
    ),
    "patch": (
        "Edit files with apply_patch using a patch: '*** Begin Patch', then for each file "
        "'*** Add File: <path>' followed by its lines each prefixed with '+', or '*** Update "
        "File: <path>' followed by hunks, each starting with a bare '@@' line and made of lines "
        "prefixed with ' ' (context), '-' (removed) or '+' (added); then '*** End Patch'. Each "
        "hunk's context and removed lines must match complete lines exactly once, after the "
        "previous hunk. Numbered or named hunk headers, deleting or moving files and '*** End of "
        "File' are not supported. Give revisions: each path → its revision (null for an added "
        "file). " + _COMMON + "\n\nExample:\n```json\n"
        '{"patch": "*** Begin Patch\\n*** Update File: src/app.py\\n@@\\n def answer():\\n'
        '-    return 1\\n+    return 42\\n*** End Patch", '
        '"revisions": {"src/app.py": "<revision>"}}\n```'
    ),
}

GENERAL = (
    "Edit files with apply_patch in any of its forms: files with line edits, files with exact "
    "text edits, whole content, or a patch with revisions. " + _COMMON
)


def input_schema(edit_format: str | None) -> dict[str, Any] | None:
    """apply_patch's schema as the model is shown it; None: the full schema of every form."""
    form = FORMS.get(edit_format or "")
    return None if form is None else form.model_json_schema(by_alias=True)


def instructions(edit_format: str | None) -> str:
    return INSTRUCTIONS.get(edit_format or "", GENERAL)
