"""A head-and-tail output buffer addressed by byte cursors.

Everything a terminal prints (already redacted, UTF-8) is numbered from byte 0. The buffer keeps
the first ``head`` bytes and the last ``tail`` bytes; what falls between is dropped and only
counted. A read from a cursor returns what is kept from there on (at most ``max_bytes``, cut at a
character boundary), the cursor to read from next, whether more is waiting (``truncated``), and
how many bytes were skipped because they were dropped (``omitted_bytes``). Thread-safe: the
reader thread appends, tool calls read.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

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

    def read(self, cursor: int, max_bytes: int) -> Slice:
        with self._lock:
            cursor = max(0, min(cursor, self.total))
            head_end = len(self._head)
            tail, base = self._tail_view()  # what is kept of the tail starts at tail[base]
            tail_start = self.total - (len(tail) - base)
            omitted = 0
            if cursor < head_end:
                source, offset, end = self._head, cursor, head_end
            else:
                if cursor < tail_start:
                    omitted = tail_start - cursor
                    cursor = tail_start
                start = base + cursor - tail_start
                skip = _boundary_forward(tail, start) - start  # a character cut by the drop
                omitted += skip
                cursor += skip
                source, offset, end = tail, base + cursor - tail_start, len(tail)
            stop = min(end, offset + max(1, max_bytes))
            if stop < end:
                stop = max(offset + 1, _boundary_back(source, stop))
            chunk = bytes(source[offset:stop])
            next_cursor = cursor + len(chunk)
            return Slice(
                output=chunk.decode("utf-8", "replace"),
                cursor=next_cursor,
                truncated=next_cursor < self.total,
                omitted_bytes=omitted,
            )
