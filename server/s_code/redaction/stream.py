"""Redaction of a stream chunk by chunk, holding back a tail that could be the start of a secret."""

from __future__ import annotations

from s_code.redaction.plain import Plain, Span
from s_code.redaction.redactor import Redactor, hide
from s_code.redaction.rules import ANCHORS, PEM

# How far back a secret may start before a chunk boundary and still be caught: the longest
# non-PEM token, plus slack. A PEM block is held until its END line (bounded by the rule).
CARRY = 512
_MAX_TOKEN = 16384
_PEM_HOLD = 20000


def _last_anchor(text: str, start: int) -> int:
    """The last position at or after ``start`` where a rule's anchor begins, or -1."""
    lower = text[start:].lower()
    found = [start + (lower.rfind(a) if a.islower() else text[start:].rfind(a)) for a in ANCHORS]
    return max((f for f in found if f >= start), default=-1)


def _first_anchor(text: str, start: int) -> int:
    """The first position at or after ``start`` where a rule's anchor begins, or -1."""
    lower = text[start:].lower()
    found = [(lower.find(a) if a.islower() else text[start:].find(a)) for a in ANCHORS]
    hits = [start + f for f in found if f >= 0]
    return min(hits, default=-1)


def _unfinished_pem(plain: Plain, cut: int) -> int | None:
    """Where the last PEM block starting before ``cut`` begins, if its END line has not arrived
    (positions in the original; the block is found in the text without colour codes)."""
    text, end = plain.text, len(plain.text)
    while (begin := text.rfind("-----BEGIN", 0, end)) >= 0:
        at = plain.back((begin, begin + 1))[0]
        if at < cut:
            unfinished = PEM.match(text, begin) is None and len(text) - begin < _PEM_HOLD
            return at if unfinished and cut - at <= _PEM_HOLD else None
        end = begin
    return None


def _settle(plain: Plain, cut: int, found: list[tuple[Span, Span]]) -> int:
    """``cut`` moved back until it falls inside no match and after no unfinished PEM block."""
    while True:
        before = cut
        for (start, end), _ in found:
            if start < cut < end:
                cut = start
        begin = _unfinished_pem(plain, cut)
        if begin is not None:
            cut = begin  # hold the block until its END line arrives
        if cut == before:
            return cut


class StreamRedactor:
    """Redacts a stream: ``feed`` returns what is safe to emit now, ``flush`` the rest at the end.

    What follows the last newline, up to ``carry`` characters, is held back (a secret may start
    there and continue in the next chunk); the cut never falls inside a secret found in what is
    buffered, and an unfinished PEM block is held until its END line.
    """

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.carry = max(CARRY, redactor.longest_known)
        self._pending = ""

    def feed(self, chunk: str) -> str:
        buf = self._pending + chunk
        if len(buf) <= self.carry and "\n" not in chunk:
            self._pending = buf
            return ""
        # Safe cut points: ``carry`` characters back (a secret starting earlier has ended), or
        # after the last newline (no rule but PEM spans lines), whichever lets more out now.
        cut = max(len(buf) - self.carry, buf.rfind("\n") + 1)
        # ... but never inside the run of non-space characters at the end: a token (a JWT can be
        # kilobytes long) may be open there; bounded so a stream without spaces still flows
        run_start = max(buf.rfind(" "), buf.rfind("\n"), buf.rfind("\t")) + 1
        if len(buf) - run_start <= _MAX_TOKEN:
            cut = min(cut, run_start)
        else:  # a long run: hold from the last place a token could start in it
            anchor = _last_anchor(buf, max(run_start, len(buf) - _MAX_TOKEN))
            if anchor >= 0:
                cut = min(cut, anchor)
        plain = Plain(buf)
        found = self.redactor.found(plain)  # one pass of the rules over what is buffered
        cut = _settle(plain, cut, found)
        head, self._pending = buf[:cut], buf[cut:]
        return hide(head, [part for (_, end), part in found if end <= cut])

    def flush_idle(self) -> str:
        """What may be shown now that the stream paused (a prompt waiting for its answer):
        what is held, except a tail that could still grow into a secret, which waits for more
        (or for :meth:`flush`): from an anchor on the current line (a token, or a secret's name
        whose value may follow), or from where the end of the text could begin a known value in
        one of its encodings, or an anchor."""
        buf = self._pending
        if not buf:
            return ""
        line_start = buf.rfind("\n") + 1
        cut = len(buf)
        anchor = _last_anchor(buf, line_start)
        if anchor >= 0:  # from the start of the word the first anchor is in
            first = _first_anchor(buf, line_start)
            cut = max(buf.rfind(" ", line_start, first), buf.rfind("\t", line_start, first)) + 1
            cut = max(cut, line_start)
        for candidate in (*self.redactor.known_values, *ANCHORS):
            for length in range(min(len(candidate) - 1, len(buf) - line_start), 0, -1):
                if buf.endswith(candidate[:length]) or (
                    candidate.islower() and buf.lower().endswith(candidate[:length])
                ):
                    cut = min(cut, len(buf) - length)
                    break
        head, self._pending = buf[:cut], buf[cut:]
        return self.redactor.redact(head) if head else ""

    def flush(self) -> str:
        rest, self._pending = self._pending, ""
        return self.redactor.redact(rest)
