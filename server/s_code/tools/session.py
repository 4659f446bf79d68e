"""What a tool handler may use: the workspace, the editor overlay, the store, a notifier.

Nothing here knows LSP: the LSP adapter builds a Session and hands it to the handlers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from s_code.workspace.documents import Overlay, no_overlay
from s_code.workspace.folders import Folders

if TYPE_CHECKING:
    from s_code.state.store import WorkspaceStore
    from s_code.tools.registry import Registry

Notify = Callable[[str, dict[str, Any]], None]


def _drop(_method: str, _params: dict[str, Any]) -> None:
    return None


@dataclass
class Session:
    folders: Folders
    registry: Registry
    store: WorkspaceStore | None = None
    overlay: Overlay = no_overlay
    notify: Notify = _drop
    permission_mode: str = "manual"
    state: dict[str, Any] = field(default_factory=dict)
