"""``initializationOptions``, typed: what a client may set when it starts a session.

Parsed once by the face that opened the session. A bad or unknown option never refuses the
session: it is dropped with a warning naming it (and the default used), so an editor with a
stale configuration still gets a working, fail-closed session.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from s_code.approvals.policy import Mode
from s_code.session.session import EditApplication, EditFormat


class SessionOptions(BaseModel):
    """The options of one session (camelCase on the wire, as LSP options are)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    permission_mode: Mode = Field("manual", alias="permissionMode")
    """The permission mode the session starts in (``s-code/permissionMode/set`` changes it)."""
    edit_application: EditApplication = Field("auto", alias="editApplication")
    """Where edits go: open buffers through the editor (``auto``), always ``disk``, or
    ``editor`` (every file opened in the editor first)."""
    protected_paths: tuple[str, ...] = Field((), alias="protectedPaths")
    """The user's own gitignore-style patterns, protected like ``.git/``."""
    edit_format: EditFormat | None = Field(None, alias="editFormat")
    """The apply_patch input form ``tools/list`` shows the model; None: every form."""


def parse_options(raw: Any) -> tuple[SessionOptions, list[str]]:
    """The options in ``raw`` (anything a client sent), and a warning per option dropped."""
    if raw is None:
        return SessionOptions(), []
    if not isinstance(raw, dict):
        return SessionOptions(), ["s-code: initializationOptions must be an object; ignored"]
    given = dict(raw)
    warnings: list[str] = []
    for _ in range(len(given) + 1):
        try:
            return SessionOptions.model_validate(given), warnings
        except ValidationError as exc:
            bad = exc.errors(include_url=False, include_input=False)[0]
            key = str(bad["loc"][0]) if bad["loc"] else ""
            if key not in given:  # cannot happen for a flat model; never loop on it
                break
            if bad["type"] == "extra_forbidden":
                warnings.append(f"s-code: unknown option {key!r}; ignored")
            else:
                warnings.append(f"s-code: option {key!r}: {bad['msg']}; using the default")
            del given[key]
    return SessionOptions(), warnings
