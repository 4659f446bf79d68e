"""What a tool handler may use: the workspace, the editor, the store, the approver, a notifier.

Nothing here knows LSP: the LSP adapter builds a Session and hands it to the handlers. The
defaults fail closed: no editor bridge (edits go to disk), and an approver that denies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from s_code.workspace.documents import Documents, OpenDocument, no_overlay
from s_code.workspace.folders import Folders

if TYPE_CHECKING:
    from s_code.approvals.cards import Card
    from s_code.edits.protected import ProtectedPaths
    from s_code.state.store import WorkspaceStore
    from s_code.tools.registry import Registry

Notify = Callable[[str, dict[str, Any]], None]


class EditorBridge(Protocol):
    """Edits an open buffer through the editor (``workspace/applyEdit``)."""

    can_apply_edit: bool

    async def apply_edit(self, doc: OpenDocument, new_text: str, label: str) -> bool: ...


class Approver(Protocol):
    """Asks the user about one card; True only for an explicit approval."""

    async def ask(self, card: Card) -> bool: ...


class NoEditor:
    can_apply_edit = False

    async def apply_edit(self, doc: OpenDocument, new_text: str, label: str) -> bool:
        return False


class DenyAll:
    """The approver of a client that cannot show prompts: fail closed."""

    async def ask(self, card: Card) -> bool:
        return False


def _drop(_method: str, _params: dict[str, Any]) -> None:
    return None


def _default_protected() -> ProtectedPaths:
    from s_code.edits.protected import ProtectedPaths

    return ProtectedPaths()


@dataclass
class Session:
    folders: Folders
    registry: Registry
    store: WorkspaceStore | None = None
    overlay: Documents = no_overlay
    notify: Notify = _drop
    permission_mode: str = "manual"
    edit_application: str = "auto"
    editor: EditorBridge = field(default_factory=NoEditor)
    approver: Approver = field(default_factory=DenyAll)
    protected: ProtectedPaths = field(default_factory=_default_protected)
    state: dict[str, Any] = field(default_factory=dict)
