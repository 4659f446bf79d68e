"""A text seen without its terminal control sequences, and the way back to the text itself.

Colour codes and cursor moves (CSI sequences: ``ESC [`` parameters, a final byte) can fall in the
middle of a secret (``ghp_abc\\x1b[0mdef…``, a ``grep --color`` match inside a token), where no rule
would see it. The rules run on :attr:`Plain.text`; what they find is mapped back and hidden in
the original, and the sequences inside a hidden span are kept after the mark (they hold only
digits and separators, and the terminal's state stays as the program left it). Other escapes
(OSC hyperlinks, which hold text) stay in the text the rules see.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
Span = tuple[int, int]


class Plain:
    """``text``: the original without its CSI sequences; ``back`` maps a span of it back."""

    def __init__(self, text: str) -> None:
        self.original = text
        self.text = _CSI.sub("", text) if "\x1b[" in text else text
        self.stripped = len(self.text) != len(text)
        self._at: list[int] | None = None  # plain position of each sequence (built when needed)
        self._removed: list[int] = []  # characters removed up to and including each one

    def _index(self) -> tuple[list[int], list[int]]:
        if self._at is None:
            found = [m.span() for m in _CSI.finditer(self.original)]
            self._removed = list(accumulate(end - start for start, end in found))
            before = [0, *self._removed[:-1]]
            self._at = [start - gone for (start, _), gone in zip(found, before, strict=True)]
        return self._at, self._removed

    def _original(self, pos: int) -> int:
        """Where the plain character at ``pos`` is in the original (after the sequences that
        precede it)."""
        at, removed = self._index()
        i = bisect_right(at, pos)
        return pos + (removed[i - 1] if i else 0)

    def back(self, span: Span) -> Span:
        """A span of :attr:`text` in the original: from its first character to its last, with the
        sequences between them (those just outside it stay outside)."""
        start, end = span
        if not self.stripped:
            return span
        first = self._original(start)
        return first, (self._original(end - 1) + 1 if end > start else first)


def kept(hidden: str) -> str:
    """The control sequences inside a hidden span, to be written after the mark."""
    return "".join(_CSI.findall(hidden)) if "\x1b[" in hidden else ""
