"""Who asked for the call being served: the editor's own agent, or an agent attached over MCP.

A face sets :data:`CALLER` for the duration of one tool call (``dispatch.call(..., caller=)``);
the layers below read it only where the asker matters to the user or to other askers: the
approval gate puts the agent's name on the card, edits of an attached agent are turns of their
own, terminals belong to the agent that started them, and a command's output also streams to
the agent that asked (:attr:`Caller.notify`). The approval, edit and turn code learns nothing
of MCP: an agent is a name, an id and a sink.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


def _drop(_method: str, _params: dict[str, Any]) -> None:
    return None


@dataclass(frozen=True)
class Caller:
    id: str
    """Unique per attached agent (per connection): what it owns (terminals) is keyed on it."""
    name: str
    """The agent's own name (MCP ``clientInfo.name``), shown on the cards of its calls."""
    notify: Callable[[str, dict[str, Any]], None] = field(default=_drop, compare=False)
    """Where the notifications of this agent's own calls also go (command output)."""


CALLER: ContextVar[Caller | None] = ContextVar("s_code_caller", default=None)


def current() -> Caller | None:
    return CALLER.get()
