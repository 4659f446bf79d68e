"""Redaction of a stream chunk by chunk: what it emits is as safe as the whole text redacted.

However a stream is cut into chunks and pauses (:meth:`StreamRedactor.feed`,
:meth:`~StreamRedactor.flush_idle` and :meth:`~StreamRedactor.flush` in any order), what it emits,
joined, holds no known value in any of its encodings and no secret that
:meth:`~s_code.redaction.Redactor.redact` hides in the whole text. A head is emitted only up to a
*safe cut*, a point no secret can straddle whatever comes next; the rest is held:

- a tail that is the start of a known value in one of its encodings (looked for anywhere in the
  held text: a value may hold spaces or newlines), seen without colour codes (:mod:`.plain`),
  and an escape sequence not finished yet;
- an unfinished private-key block (PEM, PuTTY: the only rules that span lines) until its end
  line, within a bound;
- every secret found in what is held: the cut never falls inside one;
- while the stream flows (``feed``): the current line, up to ``carry`` characters, and the run of
  non-space characters that ends it (a token; at most ``_MAX_TOKEN`` long);
- when it pauses (``flush_idle``: a prompt waiting for its answer): the run of token characters
  at the end (a token could go on, or a name become one), and the current line from the word of
  the first rule anchor on it (a secret's name, whose value may follow).

What is held is matched again later as the start of a text. No rule needs what came before a cut:
a cut follows whitespace or a character no token holds, or starts a match. Bounds: a run of
non-space characters longer than ``_MAX_TOKEN`` flows from its last anchor on, and a quoted
value that holds spaces may be cut while it flows on a line longer than ``carry``.
"""

from __future__ import annotations

import re

from s_code.redaction.cuts import open_end
from s_code.redaction.plain import Plain, Span
from s_code.redaction.redactor import Redactor, hide
from s_code.redaction.rules import ANCHORS, PEM, PUTTY

# How far back a secret may start before a chunk boundary and still be caught: the longest
# non-PEM token, plus slack. A PEM block is held until its END line (bounded by the rule).
CARRY = 512
_MAX_TOKEN = 16384
_BLOCK_HOLD = 20000
# The rules that span lines: the words a block starts with, and its pattern.
_BLOCKS = (("-----BEGIN", PEM), ("PuTTY-User-Key-File-", PUTTY))
# Besides letters and digits, what a token (or a secret's name before its anchor) is made of.
_TOKEN_PUNCT = frozenset("_-.+/=:@'\"\\")
_ESCAPE_START = re.compile(r"\x1b(?:\[[0-?]*[ -/]*)?")  # a CSI sequence without its final byte


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


def _is_token(ch: str) -> bool:
    return ch.isalnum() or ch in _TOKEN_PUNCT


def _token_run(text: str) -> int:
    """Where the run of token characters that ends ``text`` begins (``len(text)`` if none)."""
    at = len(text)
    while at > 0 and _is_token(text[at - 1]):
        at -= 1
    return at


def _word_start(text: str, at: int, floor: int) -> int:
    """The start of the word (run of non-space characters) holding position ``at``."""
    while at > floor and not text[at - 1].isspace():
        at -= 1
    return at


def _before_escape(buf: str, plain: Plain) -> str:
    """The text without colour codes, up to an escape sequence at the end of ``buf`` that has
    not ended yet (held: its final byte may come next, and a secret go on after it)."""
    at = buf.rfind("\x1b")
    if at >= 0 and _ESCAPE_START.fullmatch(buf, at):
        return plain.text[: len(plain.text) - (len(buf) - at)]
    return plain.text


def _outside_escape(buf: str, cut: int) -> int:
    """``cut``, or the start of the escape sequence it falls inside."""
    at = buf.rfind("\x1b", 0, cut)
    if at >= 0 and (m := _ESCAPE_START.match(buf, at)) is not None and cut <= m.end():
        return at
    return cut


def _unfinished_block(plain: Plain, cut: int) -> int | None:
    """Where the last private-key block starting before ``cut`` begins, if its end has not
    arrived (positions in the original; the block is found in the text without colour codes)."""
    text = plain.text
    found: int | None = None
    for start, pattern in _BLOCKS:
        end = len(text)
        while (begin := text.rfind(start, 0, end)) >= 0:
            at = plain.back((begin, begin + 1))[0]
            if at < cut:
                unfinished = pattern.match(text, begin) is None and len(text) - begin < _BLOCK_HOLD
                if unfinished and cut - at <= _BLOCK_HOLD:
                    found = at if found is None else min(found, at)
                break
            end = begin
    return found


def _settle(plain: Plain, cut: int, found: list[tuple[Span, Span]]) -> int:
    """``cut`` moved back until it falls inside no match and after no unfinished block."""
    while True:
        before = cut
        for (start, end), _ in found:
            if start < cut < end:
                cut = start
        begin = _unfinished_block(plain, cut)
        if begin is not None:
            cut = begin  # hold the block until its end line arrives
        if cut == before:
            return cut


def _original(plain: Plain, at: int) -> int:
    """Position ``at`` of the text without colour codes in the original (before the plain
    character there, after the sequences before it)."""
    if at >= len(plain.text):
        return len(plain.original)
    return plain.back((at, at + 1))[0]


class StreamRedactor:
    """Redacts a stream: ``feed`` returns what is safe to emit now, ``flush_idle`` what may be
    shown when it pauses, ``flush`` the rest at the end (see the module's docstring)."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._pending = ""
        self._quiet: str | None = None  # what was held at the last pause that let nothing out
        self._spaced: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    @property
    def carry(self) -> int:
        """How much of a line is held while the stream flows: a token's length, or a known
        value's (the redactor may learn one while the stream runs)."""
        return max(CARRY, self.redactor.longest_known)

    def feed(self, chunk: str) -> str:
        buf, carry = self._pending + chunk, self.carry
        if len(buf) <= carry and "\n" not in chunk:
            self._pending = buf
            return ""
        # Safe cut points: ``carry`` characters back (a token starting earlier has ended), or
        # after the last newline (no rule but a private-key block spans lines), whichever lets
        # more out now.
        cut = max(len(buf) - carry, buf.rfind("\n") + 1)
        # ... but never inside the run of non-space characters at the end: a token (a JWT can be
        # kilobytes long) may be open there; bounded so a stream without spaces still flows
        run_start = max(buf.rfind(" "), buf.rfind("\n"), buf.rfind("\t")) + 1
        long_run = len(buf) - run_start > _MAX_TOKEN
        if not long_run:
            cut = min(cut, run_start)
        else:  # a long run: hold from the last place a token could start in it
            anchor = _last_anchor(buf, max(run_start, len(buf) - _MAX_TOKEN))
            if anchor >= 0:
                cut = min(cut, anchor)
        plain = Plain(buf)
        # A known value open at the end can reach back past this cut only across a space, tab or
        # newline (``carry`` covers its length), unless colour codes lengthen it or the cut is
        # inside a long run: look only for the values that hold one, unless so.
        every = long_run or plain.stripped
        return self._emit(buf, plain, cut, self._known(every))

    def flush_idle(self) -> str:
        """What may be shown now that the stream paused (a prompt waiting for its answer): what
        is held, except what could still grow into a secret, which waits for more (or for
        :meth:`flush`): the run of token characters at the end, the current line from the word
        of its first anchor, the start of a known value."""
        buf = self._pending
        if not buf or buf is self._quiet:
            return ""
        plain = Plain(buf)
        text = _before_escape(buf, plain)
        line = text.rfind("\n") + 1
        cut = _token_run(text)
        anchor = _first_anchor(text, line)
        if anchor >= 0:
            cut = min(cut, _word_start(text, anchor, line))
        out = self._emit(buf, plain, _original(plain, cut), self.redactor.known_values)
        self._quiet = None if out else self._pending
        return out

    def flush(self) -> str:
        rest, self._pending = self._pending, ""
        return self.redactor.redact(rest)

    def _known(self, every: bool) -> tuple[str, ...]:
        """The known values (in each encoding), or only those holding a space, tab or newline."""
        values = self.redactor.known_values
        if every:
            return values
        if self._spaced[0] is not values:
            self._spaced = (values, tuple(v for v in values if any(c in v for c in " \t\n")))
        return self._spaced[1]

    def _emit(self, buf: str, plain: Plain, cut: int, values: tuple[str, ...]) -> str:
        """Emit ``buf`` up to ``cut``, moved back to a safe cut; hold the rest (from where the end
        could begin one of ``values``, among others)."""
        text = _before_escape(buf, plain)
        known = open_end(text, values) if values else len(text)
        cut = _outside_escape(buf, min(cut, _original(plain, known)))
        found = self.redactor.found(plain)  # one pass of the rules over what is held
        cut = _settle(plain, cut, found)
        head, self._pending = buf[:cut], buf[cut:]
        return hide(head, [part for (_, end), part in found if end <= cut])
