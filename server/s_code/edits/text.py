"""Pure text operations of the edit engine: line edits, exact text edits, line endings.

Lines are counted as ``read_file`` counts them (split on LF; a final newline opens no new line).
Every function here is pure: it takes the original text and returns the new text or raises an
:class:`SCodeError` naming the edit at fault.
"""

from __future__ import annotations

import operator
import re
from collections import deque
from itertools import repeat
from typing import NamedTuple

from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params

# read_file's display prefix: right-aligned number, then a tab.
_NUMBERED = re.compile(r"^\s*\d+\t")


class LineEdit(NamedTuple):
    start_line: int
    end_line: int  # start_line - 1 means "insert before start_line"
    new_text: str
    position: int  # in the request's edits array (errors name "<prefix>edits.<position>")


# Well-formed line edits as columns (start lines, end lines, new texts); positions are indexes.
LineColumns = tuple[tuple[int, ...], tuple[int, ...], tuple[str, ...]]


def line_edits_of(columns: LineColumns) -> list[LineEdit]:
    return [LineEdit(s, e, t, i) for i, (s, e, t) in enumerate(zip(*columns, strict=True))]


class TextEdit(NamedTuple):
    old_text: str
    new_text: str
    position: int


def edit_field(prefix: str, index: int) -> str:
    """The field path of an edit: ``files.2.edits.7`` (prefix ``files.2.``), or ``edits.7``."""
    return f"{prefix}edits.{index}"


def newline_of(text: str) -> str:
    """The file's line ending: CRLF when its first line break is CRLF, else LF."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def to_newline(text: str, newline: str) -> str:
    """Rewrite the line breaks of ``text`` (LF or CRLF) as ``newline``."""
    if "\r\n" not in text:
        return text if newline == "\n" else text.replace("\n", "\r\n")
    lf = text.replace("\r\n", "\n")
    return lf if newline == "\n" else lf.replace("\n", "\r\n")


def check_not_numbered(new_text: str, field: str) -> None:
    """Refuse text that still carries read_file's ``   12\\t`` prefixes on every line."""
    if "\t" not in new_text:  # every prefix ends with a tab
        return
    lines = [line for line in new_text.split("\n") if line.strip()]
    if lines and all(_NUMBERED.match(line) for line in lines):
        raise invalid_params(
            f"{field}: new_text carries read_file's line-number prefixes ('  12<TAB>'); "
            "send the file's text without them",
            field,
        )


_RANGE = operator.itemgetter(0, 1)


def _lf_split(text: str) -> list[str]:
    """The lines of ``text`` split on LF only, each keeping its line break."""
    if _only_lf_breaks(text):
        return text.splitlines(keepends=True)  # the same split, at C speed
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _only_lf_breaks(text: str) -> bool:
    """Whether str.splitlines would split ``text`` exactly where LF does: no other character it
    breaks at (a CR is harmless right before an LF). Substring scans: faster than a regex."""
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return False
    others = "\x0b\x0c\x1c\x1d\x1e" if text.isascii() else "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    return not any(c in text for c in others)


def _overlap(a: LineEdit, b: LineEdit, prefix: str) -> SCodeError:
    fa, fb = edit_field(prefix, a.position), edit_field(prefix, b.position)
    return SCodeError(
        ErrorKind.OVERLAPPING_EDITS,
        f"{fa} (lines {a.start_line}-{a.end_line}) and {fb} "
        f"(lines {b.start_line}-{b.end_line}) overlap",
        edits=[fa, fb],
    )


def _bad_range(start: int, end: int, field: str, count: int) -> SCodeError:
    if start < 1:
        return invalid_params("start_line must be 1 or more", f"{field}.start_line")
    if end < start - 1:
        return invalid_params(
            "end_line is before start_line (use end_line = start_line - 1 to insert)",
            f"{field}.end_line",
        )
    return invalid_params(
        f"lines {start}-{end} are past the end of the file ({count} lines)",
        f"{field}.end_line" if end > count else f"{field}.start_line",
    )


def apply_line_edits(original: str, edits: list[LineEdit], prefix: str = "") -> str:
    """Replace 1-based inclusive line ranges of the original; ranges must not overlap.

    One pass over the edits in line order validates each (its range, its overlap with the one
    before, numbered text) and builds the result. (A batch can hold 3,200 edits: the loop keeps
    to locals and one combined range test.)
    """
    lines = _lf_split(original)
    count = len(lines)
    newline = newline_of(original)
    last_open = count > 0 and not lines[-1].endswith("\n")  # no final line break
    lf_only = newline == "\n"
    out: list[str] = []
    cursor = 0  # index into lines of the next original line to copy
    prev: LineEdit | None = None
    prev_start, prev_end = 0, -1
    for e in sorted(edits, key=_RANGE):
        start, end, text, position = e
        if start < 1 or end < start - 1 or end > count or start > count + 1:
            raise _bad_range(start, end, edit_field(prefix, position), count)
        # A range reaching into the next one, or two insertions at one point, overlap.
        if start <= prev_end or (start == prev_start and prev_end < start and end < start):
            assert prev is not None
            raise _overlap(prev, e, prefix)
        prev, prev_start, prev_end = e, start, end
        if "\t" in text:
            check_not_numbered(text, f"{edit_field(prefix, position)}.new_text")
        if start - 1 > cursor:
            out += lines[cursor : start - 1]
        if start > count and text:
            # Appending after the end: an unterminated last line gets its line break first.
            # (Before the end every chunk so far ends with one: only the file's last line, or
            # text replacing it, can lack it.)
            idx = next((i for i in range(len(out) - 1, -1, -1) if out[i]), None)
            if idx is not None and not out[idx].endswith("\n"):
                out[idx] += newline
        if not lf_only or "\r" in text:
            text = to_newline(text, newline)
        # New text gets a line break, unless it replaces an unterminated last line.
        if text and text[-1] != "\n" and not (last_open and end == count and end >= start):
            text += newline
        out.append(text)
        if end > cursor:
            cursor = end
    out += lines[cursor:]
    return "".join(out)


def apply_plain_line_edits(original: str, columns: LineColumns) -> str | None:
    """The common case of :func:`apply_line_edits` with C-level passes, or None when ``columns``
    are not that case (then :func:`apply_line_edits` applies them, or names what is wrong).

    The case: an LF file whose last line ends with a line break; replacements only (no
    insertions, nothing past the end), in line order, not overlapping, new text without tabs
    (so nothing to check for numbered lines) or CRs. Each replaced range's first line becomes
    its new text (with a line break added when it has none), its other lines become empty.
    """
    starts, ends, texts = columns
    if not starts or "\r" in original or not _only_lf_breaks(original):
        return None
    joined = "".join(texts)
    if "\t" in joined or "\r" in joined:
        return None
    lines = original.splitlines(keepends=True)
    count = len(lines)
    if (
        not count
        or lines[-1][-1] != "\n"
        or starts[0] < 1
        or ends[-1] > count
        or not all(map(operator.le, starts, ends))
        or not all(map(operator.lt, ends, starts[1:]))
    ):
        return None
    pieces = [t + "\n" if t and t[-1] != "\n" else t for t in texts]
    firsts = list(map(operator.sub, starts, repeat(1)))  # 0-based first lines
    if starts != ends:  # some range spans several lines: empty all but its first
        for first, end in zip(firsts, ends, strict=True):
            lines[first + 1 : end] = repeat("", end - first - 1)
    deque(map(lines.__setitem__, firsts, pieces), maxlen=0)  # the assignments, at C speed
    return "".join(lines)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def apply_text_edits(original: str, edits: list[TextEdit], prefix: str = "") -> str:
    """Replace each ``old_text`` (exactly one occurrence) in array order."""
    text = original
    newline = newline_of(original)
    for e in edits:
        field = edit_field(prefix, e.position)
        if not e.old_text:
            raise invalid_params("old_text is empty", f"{field}.old_text")
        check_not_numbered(e.new_text, f"{field}.new_text")
        old = to_newline(e.old_text, newline)
        new = to_newline(e.new_text, newline)
        first = text.find(old)
        if first < 0:
            raise SCodeError(
                ErrorKind.MATCH_NOT_FOUND,
                f"{field}: old_text does not occur in the file (it must match exactly, "
                "whitespace included; earlier edits of this call are already applied)",
                field=f"{field}.old_text",
            )
        second = text.find(old, first + 1)
        if second >= 0:
            lines: list[int] = []
            at = first
            while at >= 0 and len(lines) < 50:
                lines.append(_line_of(text, at))
                at = text.find(old, at + 1)
            raise SCodeError(
                ErrorKind.MATCH_AMBIGUOUS,
                f"{field}: old_text occurs {len(lines)} times (lines "
                f"{', '.join(map(str, lines))}); include more context to make it unique",
                field=f"{field}.old_text",
                lines=lines,
            )
        text = text[:first] + new + text[first + len(old) :]
    return text
