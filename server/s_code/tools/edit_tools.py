"""apply_patch: the one write tool (three formats and the legacy single-file form)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from s_code.edits.engine import apply_patch
from s_code.edits.request import ApplyPatchArgs
from s_code.protocol.models import Result
from s_code.session.session import Session
from s_code.tools.registry import ToolDef


class AppliedFile(Result):
    path: str
    revision: str = Field(description="The file's new revision (quote it for the next edit).")
    sha256: str
    created: bool
    via: str = Field(description="`editor`: applied to the open buffer (unsaved); `disk`.")


class ApplyPatchResult(Result):
    applied: list[AppliedFile]
    turn_id: str = Field(description="The turn the change belongs to (s-code/turn/undo).")

    def to_wire(self) -> dict[str, Any]:
        # no aliases and no optional fields: the plain field values are the wire form
        return {"applied": [dict(a.__dict__) for a in self.applied], "turn_id": self.turn_id}


async def _apply_patch(session: Session, args: ApplyPatchArgs) -> ApplyPatchResult:
    done = await apply_patch(session, args)
    # Every value comes from the engine itself: constructed without re-validation.
    return ApplyPatchResult.model_construct(
        applied=[AppliedFile.model_construct(**entry) for entry in done["applied"]],
        turn_id=done["turn_id"],
    )


TOOLS = (
    ToolDef(
        name="apply_patch",
        title="Edit files",
        destructive=True,
        args=ApplyPatchArgs,
        result=ApplyPatchResult,
        handler=_apply_patch,
        read_only=False,
        description=(
            "Edit workspace files, all or nothing. Forms: `files` (per file: expected_revision "
            "from read_file, or null for a new file; line edits {start_line, end_line, new_text} "
            "or exact text edits {old_text, new_text}, or whole `content`), `patch` ('*** Begin "
            "Patch' with Add/Update File and bare @@ hunks) with `revisions`, or legacy `path`. "
            "Open editor buffers are edited in the editor; unsaved user text is never lost."
        ),
    ),
)
