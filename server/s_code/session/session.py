"""The session: everything a tool, a domain or a face may use while one client is connected.

Typed fields, no untyped state: the workspace folders, the tool table, the store, the editor's
buffers and bridge, the approver, the permission mode, the protected set, the turn and the plan,
the redactor, the command/git lock. Nothing here knows LSP or the tool layer: a face builds the
session (``s_code.tools.host.open_session``) and hands it to the one dispatch. The defaults fail
closed: no editor bridge (edits go to disk), and an approver that denies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from s_code.approvals.approver import Approver, DenyAll
from s_code.approvals.policy import Mode
from s_code.redaction import Redactor, secret_env_values
from s_code.session.host_code import HostCode
from s_code.session.locks import CommandGitLock
from s_code.state.store import WorkspaceStore
from s_code.workspace.documents import Documents, OpenDocument, no_overlay
from s_code.workspace.folders import Folders, Located
from s_code.workspace.gitdirs import TreeIndex
from s_code.workspace.protected import ProtectedPaths

Notify = Callable[[str, dict[str, Any]], None]
EditApplication = Literal["auto", "disk", "editor"]
EditFormat = Literal["lines", "text", "patch"]
EDIT_FORMATS: tuple[EditFormat, ...] = ("lines", "text", "patch")


class EditorBridge(Protocol):
    """Edits an open buffer through the editor (``workspace/applyEdit``), and saves buffers
    (``s-code/documents/save``) for a client that offers it."""

    can_apply_edit: bool
    can_save: bool

    async def apply_edit(self, doc: OpenDocument, new_text: str, label: str) -> bool: ...

    async def save(self, uris: list[str]) -> None: ...


class NoEditor:
    can_apply_edit = False
    can_save = False

    async def apply_edit(self, doc: OpenDocument, new_text: str, label: str) -> bool:
        return False

    async def save(self, uris: list[str]) -> None:
        return None


class ToolTable(Protocol):
    """The session's tools as the core sees them (the registry lives in the tool layer)."""

    def get(self, name: str) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...


def _drop(_method: str, _params: dict[str, Any]) -> None:
    return None


def default_redactor() -> Redactor:
    """Token rules plus the values of the sidecar's own secret-looking variables."""
    return Redactor(secret_env_values())


@dataclass(eq=False)
class Session:
    folders: Folders
    registry: ToolTable
    store: WorkspaceStore | None = None
    overlay: Documents = no_overlay
    notify: Notify = _drop
    mode: Mode = "manual"
    edit_application: EditApplication = "auto"
    edit_format: EditFormat | None = None
    """The apply_patch form tools/list shows the model; None: every form."""
    editor: EditorBridge = field(default_factory=NoEditor)
    approver: Approver = field(default_factory=DenyAll)
    protected: ProtectedPaths = field(default_factory=ProtectedPaths)
    redactor: Redactor = field(default_factory=default_redactor)
    turn: str | None = None
    """The turn begun with ``s-code/turn/begin`` that edits join; None: each edit its own."""
    plan: dict[str, Any] | None = None
    """The plan as last set by update_plan (its wire form)."""
    trees: dict[str, TreeIndex] = field(default_factory=dict)
    """Per workspace root: its directories and git directories (refreshed per command)."""
    lock: CommandGitLock = field(default_factory=CommandGitLock)
    agent_edited: dict[str, Located] = field(default_factory=dict)
    """Open buffers (by URI) the agent edited through the editor: their text may not be on disk,
    where commands and git read (``edits/unsaved.py``)."""
    loaded_tools: set[str] = field(default_factory=set)
    """Names of the tools tool_search returned: tools/list shows those still registered beside
    the core profile."""
    host_code: HostCode = field(default_factory=HostCode)
    """The code scopes of the approved host processes (edits of them ask in every mode)."""
    on_close: list[Callable[[], None]] = field(default_factory=list)
    """What a domain started for the session and ends with it (code mode's spare worker)."""

    def tree(self, workspace: str) -> TreeIndex:
        """The index of a workspace root's directories (made on first use)."""
        index = self.trees.get(workspace)
        if index is None:
            index = self.trees[workspace] = TreeIndex(workspace)
        return index

    def close(self) -> None:
        for end in self.on_close:
            end()
        self.on_close.clear()
        self.lock.close()
        self.folders.close()
        if self.store is not None:
            self.store.store.close()
