"""Cuts that leave no piece of a known value: where a bounded text may end, or start.

Every tool result passes the known-value redactor after its tool returns, and it hides a value
only whole. A producer that bounds its text before that (git's ``max_bytes``, a command's head and
tail, a search's long line, a terminal read from a cursor) would leave the part of a value that
straddles its cut, which the later pass no longer recognises. These move a cut off such a value,
for text (``str``) and bytes alike (with the values' UTF-8 forms):

- :func:`cut_end`: what is cut after ``text`` is gone; where ``text`` must end instead, before a
  trailing piece that is the start of a known value (in one of its encodings, :func:`open_end`);
- :func:`cut_start`: what is cut before ``text`` is gone; where it must start instead, after a
  leading piece that is the end of one (:func:`open_start`);
- :func:`crossing`: the whole text is at hand; the span of the values that cross a cut there.

A value wholly on one side of a cut is left for the later pass, and the cut moved off a piece
never falls inside a whole value (whose last character may start another value's encoding). A
piece too short to say whether it is a value's (one character that starts one) is left out too:
the cut is then a little early.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import AnyStr


def open_end(text: AnyStr, values: Iterable[AnyStr]) -> int:
    """The first position from which the end of ``text`` is the start (shorter than the whole)
    of one of ``values``, or ``len(text)``: what a cut after ``text`` leaves of a value there."""
    end = best = len(text)
    for v in values:
        first = v[:1]
        at = text.find(first, max(0, end - len(v) + 1), best)
        while at >= 0:
            if v.startswith(text[at:]):
                best = at
                break
            at = text.find(first, at + 1, best)
    return best


def open_start(text: AnyStr, values: Iterable[AnyStr]) -> int:
    """The last position up to which the start of ``text`` is the end (shorter than the whole)
    of one of ``values``, or 0: what a cut before ``text`` leaves of a value there."""
    best = 0
    for v in values:
        last = v[-1:]
        at = text.rfind(last, best, min(len(v) - 1, len(text)))  # the piece's last character
        while at >= 0:
            if v.endswith(text[: at + 1]):
                best = at + 1
                break
            at = text.rfind(last, best, at)
    return best


def crossing(text: AnyStr, at: int, values: Iterable[AnyStr]) -> tuple[int, int]:
    """The span of the occurrences of ``values`` in ``text`` that cross position ``at`` (begin
    before it and end after it), grown until none crosses its ends; ``(at, at)`` when none does.
    A cut at either end of it leaves every value whole on one side."""
    values = tuple(values)
    start = end = at
    grown = True
    while grown:
        grown = False
        for v in values:
            n = len(v)
            for edge in (start, end):
                # an occurrence found in [edge - n + 1, edge + n - 1) holds edge - 1 and edge
                i = text.find(v, max(0, edge - n + 1), edge + n - 1)
                while i >= 0:
                    if i < start:
                        start, grown = i, True
                    if i + n > end:
                        end, grown = i + n, True
                    i = text.find(v, i + 1, edge + n - 1)
    return start, end


def cut_end(text: AnyStr, values: Iterable[AnyStr]) -> int:
    """Where ``text``, cut after its end, must end: before a trailing piece that starts one of
    ``values`` (:func:`open_end`), and not inside a whole one."""
    values = tuple(values)
    return crossing(text, open_end(text, values), values)[0]


def cut_start(text: AnyStr, values: Iterable[AnyStr]) -> int:
    """Where ``text``, cut before its start, must start: after a leading piece that ends one of
    ``values`` (:func:`open_start`), and not inside a whole one."""
    values = tuple(values)
    return crossing(text, open_start(text, values), values)[1]
