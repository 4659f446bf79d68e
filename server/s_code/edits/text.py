"""Pure text operations of the edit engine: line edits, exact text edits, line endings.

Lines are counted as ``read_file`` counts them (split on LF; a final newline opens no new line).
Every function here is pure: it takes the original text and returns the new text or raises an
:class:`SCodeError` naming the edit at fault.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from s_code.protocol.errors import ErrorKind, SCodeError, invalid_params

# read_file's display prefix: right-aligned number, then a tab.
_NUMBERED = re.compile(r"^\s*\d+\t")


@dataclass(frozen=True)
class LineEdit:
    start_line: int
    end_line: int  # start_line - 1 means "insert before start_line"
    new_text: str
    field: str


@dataclass(frozen=True)
class TextEdit:
    old_text: str
    new_text: str
    field: str


def newline_of(text: str) -> str:
    """The file's line ending: CRLF when its first line break is CRLF, else LF."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def to_newline(text: str, newline: str) -> str:
    """Rewrite the line breaks of ``text`` (LF or CRLF) as ``newline``."""
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


def _lf_split(text: str) -> list[str]:
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def apply_line_edits(original: str, edits: list[LineEdit]) -> str:
    """Replace 1-based inclusive line ranges of the original; ranges must not overlap."""
    lines = _lf_split(original)
    count = len(lines)
    newline = newline_of(original)
    ordered = sorted(edits, key=lambda e: (e.start_line, e.end_line))
    for e in ordered:
        if e.start_line < 1:
            raise invalid_params("start_line must be 1 or more", f"{e.field}.start_line")
        if e.end_line < e.start_line - 1:
            raise invalid_params(
                "end_line is before start_line (use end_line = start_line - 1 to insert)",
                f"{e.field}.end_line",
            )
        if e.end_line > count or e.start_line > count + 1:
            raise invalid_params(
                f"lines {e.start_line}-{e.end_line} are past the end of the file ({count} lines)",
                f"{e.field}.end_line" if e.end_line > count else f"{e.field}.start_line",
            )
        check_not_numbered(e.new_text, f"{e.field}.new_text")
    for a, b in itertools.pairwise(ordered):
        # A range reaching into the next one, or two insertions at one point, overlap.
        both_insert = a.end_line < a.start_line and b.end_line < b.start_line
        if b.start_line <= a.end_line or (both_insert and a.start_line == b.start_line):
            raise SCodeError(
                ErrorKind.OVERLAPPING_EDITS,
                f"{a.field} (lines {a.start_line}-{a.end_line}) and {b.field} "
                f"(lines {b.start_line}-{b.end_line}) overlap",
                edits=[a.field, b.field],
            )
    out: list[str] = []
    cursor = 0  # index into lines of the next original line to copy
    for e in ordered:
        out.extend(lines[cursor : e.start_line - 1])
        last = next((chunk for chunk in reversed(out) if chunk), None)
        if last is not None and not last.endswith("\n") and e.new_text:
            # Appending after an unterminated last line: terminate it first.
            idx = max(i for i, chunk in enumerate(out) if chunk)
            out[idx] += newline
        replaced_last = e.end_line == count and count > 0 and e.end_line >= e.start_line
        text = to_newline(e.new_text, newline)
        if text and not text.endswith(newline):
            keep_open = replaced_last and not lines[-1].endswith("\n")
            if not keep_open:
                text += newline
        out.append(text)
        cursor = max(cursor, e.end_line)
    out.extend(lines[cursor:])
    return "".join(out)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def apply_text_edits(original: str, edits: list[TextEdit]) -> str:
    """Replace each ``old_text`` (exactly one occurrence) in array order."""
    text = original
    newline = newline_of(original)
    for e in edits:
        if not e.old_text:
            raise invalid_params("old_text is empty", f"{e.field}.old_text")
        check_not_numbered(e.new_text, f"{e.field}.new_text")
        old = to_newline(e.old_text, newline)
        new = to_newline(e.new_text, newline)
        first = text.find(old)
        if first < 0:
            raise SCodeError(
                ErrorKind.MATCH_NOT_FOUND,
                f"{e.field}: old_text does not occur in the file (it must match exactly, "
                "whitespace included; earlier edits of this call are already applied)",
                field=f"{e.field}.old_text",
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
                f"{e.field}: old_text occurs {len(lines)} times (lines "
                f"{', '.join(map(str, lines))}); include more context to make it unique",
                field=f"{e.field}.old_text",
                lines=lines,
            )
        text = text[:first] + new + text[first + len(old) :]
    return text
