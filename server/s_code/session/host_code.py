"""The code approved host processes run, as the session's edits and commands see it.

Each approved entry (an MCP server, a hook) publishes the predicate of its code scope here
(:mod:`s_code.hostproc.scope` makes the scope): an edit of a file it holds is an edit of code that
runs with the user's full authority, and asks in every mode. ``changes`` counts what may have
changed a scope behind the entries' backs (a sandboxed command ended, an edit of scoped code was
written): the entries check their scope again before anything of theirs runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    label: str
    """Who runs the code, for the card: ``the MCP server 'srv' (workspace layer)``."""
    holds: Callable[[str], bool]
    """Does a change of this real path change what the entry runs?"""


class HostCode:
    def __init__(self) -> None:
        self._by_kind: dict[str, tuple[Bound, ...]] = {}
        self.changes = 0

    def publish(self, kind: str, bounds: tuple[Bound, ...]) -> None:
        """The approved entries of ``kind`` now (replacing what that kind published before)."""
        self._by_kind[kind] = bounds

    def owners(self, path: str) -> tuple[str, ...]:
        """The entries whose code ``path`` (a real path) is part of."""
        return tuple(b.label for bounds in self._by_kind.values() for b in bounds if b.holds(path))

    def changed(self) -> None:
        """Something may have changed a code scope: every entry checks its own again."""
        self.changes += 1
