"""Waiting for a state instead of sleeping for a while: poll until it holds, with a generous
deadline that only a hang reaches. No test asserts how long something took (that is what the
benchmarks in tests/benchmarks/ measure); a deadline here says "it must happen at all"."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

DEADLINE_S = 60.0
"""The most a state may take to come before the test fails (a hang is a failure, not a wait)."""


def until(check: Callable[[], T], within_s: float = DEADLINE_S, what: str = "") -> T:
    """Poll ``check()`` until it returns something true, and return that; AssertionError naming
    ``what`` if ``within_s`` passed first."""
    deadline = time.monotonic() + within_s
    while not (found := check()):
        assert time.monotonic() < deadline, f"{what or 'the state'} never came"
        time.sleep(0.02)
    return found


async def until_async(check: Callable[[], T], within_s: float = DEADLINE_S, what: str = "") -> T:
    """:func:`until` without blocking the event loop (the state may come from it)."""
    deadline = time.monotonic() + within_s
    while not (found := check()):
        assert time.monotonic() < deadline, f"{what or 'the state'} never came"
        await asyncio.sleep(0.01)
    return found
