"""A head-and-tail output buffer addressed by byte cursors.

Everything a terminal prints (already redacted, UTF-8) is numbered from byte 0. The buffer keeps
the first ``head`` bytes and the last ``tail`` bytes; what falls between is dropped and only
counted. A read from a cursor returns what is kept from there on (at most ``max_bytes``, cut at a
character boundary), the cursor to read from next, whether more is waiting (``truncated``), and
how many bytes were skipped because they were dropped (``omitted_bytes``). Thread-safe: the
reader thread appends, tool calls read.

What is kept was redacted as it streamed; a value the redactor learned later is hidden by the
known-value pass over each read, but only whole: so a read given the known values never starts or
ends inside one, and what the drop left of one (the end of the head, the start of the tail) is
skipped as dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from s_code.redaction import MARK
from s_code.redaction.cuts import crossing, cut_end, cut_start

HEAD_BYTES = 256 * 1024
TAIL_BYTES = 768 * 1024


@dataclass(frozen=True)
class Slice:
    output: str
    cursor: int
    truncated: bool
    omitted_bytes: int


def _boundary_back(data: bytes | bytearray, end: int) -> int:
    """``end`` moved back so it does not split a UTF-8 character of ``data``."""
    j = end - 1
    while j >= 0 and end - j <= 4 and (data[j] & 0xC0) == 0x80:
        j -= 1
    if j < 0:
        return end
    lead = data[j]
    need = (
        2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4 if lead >> 3 == 0b11110 else 1
    )
    return j if end - j < need else end


def _boundary_forward(data: bytes | bytearray, start: int) -> int:
    i = start
    while i < len(data) and i < start + 3 and (data[i] & 0xC0) == 0x80:
        i += 1
    return i


class HeadTail:
    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.head_limit = head
        self.tail_limit = tail
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0  # bytes ever appended
        self._lock = threading.Lock()

    def append(self, data: bytes) -> None:
        with self._lock:
            self.total += len(data)
            room = self.head_limit - len(self._head)
            if room > 0:
                self._head += data[:room]
                data = data[room:]
            if len(data) >= self.tail_limit:
                self._tail = bytearray(data[-self.tail_limit :])
            elif data:
                self._tail += data
                # trim in steps of a quarter of the tail, not on every append (a memmove each)
                if len(self._tail) > self.tail_limit + self.tail_limit // 4:
                    del self._tail[: len(self._tail) - self.tail_limit]

    def _tail_view(self) -> tuple[bytearray, int]:
        """The kept tail (at most ``tail_limit`` bytes) as the buffer and its offset in it."""
        return self._tail, max(0, len(self._tail) - self.tail_limit)

    @property
    def dropped(self) -> int:
        """Bytes dropped from the middle so far."""
        return self.total - len(self._head) - min(len(self._tail), self.tail_limit)

    def read(self, cursor: int, max_bytes: int, known: Sequence[bytes] = ()) -> Slice:
        """What is kept from ``cursor`` on, at most ``max_bytes`` (see the module's docstring).
        ``known``: the known values (UTF-8); a read neither starts nor ends inside one (a value
        it would start in shows as the mark, one it would end in is left for the next read, or
        read whole when it starts there), and what the drop left of one is skipped."""
        with self._lock:
            kept = _Kept(self._head, *self._tail_view(), self.total)
            head_end, tail_start, total = len(self._head), kept.tail_start, self.total
            gap = tail_start > head_end
            longest = max(map(len, known), default=0)
            cursor = max(0, min(cursor, total))
            # where the kept head ends and the kept tail begins: not inside a value cut by the drop
            head_stop, tail_from = head_end, tail_start
            if gap and known:
                at = max(0, head_end - 2 * longest)
                head_stop = at + cut_end(kept.get(at, head_end), known)
            omitted = 0
            if head_stop <= cursor < tail_start:
                omitted = tail_start - cursor
                cursor = tail_start
            if cursor >= tail_start:
                start = kept.base + cursor - tail_start
                skip = _boundary_forward(kept.tail, start) - start  # a character cut by the drop
                omitted += skip
                cursor += skip
                if gap and known:
                    tail_from += _boundary_forward(kept.tail, kept.base) - kept.base
                    tail_from += cut_start(kept.get(tail_from, tail_from + 2 * longest), known)
                if cursor < tail_from:
                    omitted += tail_from - cursor
                    cursor = tail_from
            in_head = cursor < head_end
            low, high = (0, head_end) if in_head and gap else (tail_start if gap else 0, total)
            marked = False
            if known and cursor > low:  # a read starting inside a value starts after it
                begin, end = _crossing(kept, cursor, low, high, known, longest)
                if begin < cursor:
                    cursor, marked = end, True
                    in_head = cursor < head_end
            limit = head_stop if in_head else total
            stop = min(limit, cursor + max(1, max_bytes))
            if stop < limit:
                at = max(low, stop - 5)
                stop = max(cursor + 1, at + _boundary_back(kept.get(at, stop), stop - at))
            if known and stop < high:  # nor ends inside one: left for the next read, or whole
                begin, end = _crossing(kept, stop, low, high, known, longest)
                if begin < stop:
                    stop = begin if begin > cursor else end
            chunk = kept.get(cursor, stop) if stop > cursor else b""
            return Slice(
                output=(MARK if marked else "") + chunk.decode("utf-8", "replace"),
                cursor=cursor + len(chunk),
                truncated=cursor + len(chunk) < total,
                omitted_bytes=omitted,
            )


@dataclass(frozen=True)
class _Kept:
    """The kept bytes addressed by stream position: the head, then the tail from ``base``."""

    head: bytearray
    tail: bytearray
    base: int
    total: int

    @property
    def tail_start(self) -> int:
        return self.total - (len(self.tail) - self.base)

    def get(self, low: int, high: int) -> bytes:
        """The bytes at stream positions ``low`` to ``high`` (kept ones, in one run)."""
        out = bytes(self.head[low : max(low, min(high, len(self.head)))])
        start = self.tail_start
        if high > start:
            out += bytes(self.tail[self.base + max(low, start) - start : self.base + high - start])
        return out


def _crossing(
    kept: _Kept, at: int, low: int, high: int, known: Sequence[bytes], longest: int
) -> tuple[int, int]:
    """:func:`crossing` at stream position ``at``, in the kept run from ``low`` to ``high``."""
    first = max(low, at - 2 * longest)
    begin, end = crossing(kept.get(first, min(high, at + 2 * longest)), at - first, known)
    return first + begin, first + end
