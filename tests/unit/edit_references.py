"""Small independent reference models of the edit formats, for the property tests
(tests/unit/test_edit_properties.py): line edits and exact text edits on any text, with the rule
each invalid edit breaks, and OpenAI Codex's apply_patch update on LF files ending with a
newline. Written from the documented rules, not from s_code.edits.
"""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

Edit = tuple[int, int, str]  # (start_line, end_line, new_text)


class Refusal(NamedTuple):
    kind: str  # the error kind
    field: str | None  # the field it names (None for overlapping edits, which name two)
    lines: tuple[int, ...] = ()  # match_ambiguous: the lines where old_text starts


def lf_lines(text: str) -> list[str]:
    """The lines as read_file numbers them, each with its own bytes: split after every LF (a CR,
    alone or before the LF, is part of its line); a final newline opens no new line."""
    pieces = text.split("\n")
    return [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def file_break(text: str) -> str:
    """The line break new text is written with: the file's first one (LF if it has none)."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def as_breaks(text: str, newline: str) -> str:
    """LF and CR LF in the agent's text become the file's line break (a lone CR stays)."""
    return text.replace("\r\n", "\n").replace("\n", newline)


def numbered(text: str) -> bool:
    """Every non-blank line carries read_file's display prefix ('  12<TAB>')."""
    rows = [row for row in text.split("\n") if row.strip()]
    return bool(rows) and all(re.match(r"\s*\d+\t", row) for row in rows)


def clash(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Two valid ranges overlap: replaced ranges share a line, an insertion point falls inside a
    replaced range (not before its first line), or two insertions share their point."""
    (s1, e1), (s2, e2) = a, b
    if e1 < s1 and e2 < s2:
        return s1 == s2
    if e1 < s1:
        return s2 < s1 <= e2
    if e2 < s2:
        return s1 < s2 <= e1
    return s1 <= e2 and s2 <= e1


def line_problems(count: int, edits: list[Edit]) -> frozenset[Refusal]:
    """Every rule the edits break; the engine reports one of them."""
    out: set[Refusal] = set()
    valid: list[tuple[int, int]] = []
    for k, (s, e, text) in enumerate(edits):
        field = f"edits.{k}"
        if s < 1:
            out.add(Refusal("invalid_params", f"{field}.start_line"))
        elif e < s - 1 or e > count:
            out.add(Refusal("invalid_params", f"{field}.end_line"))
        elif s > count + 1:
            out.add(Refusal("invalid_params", f"{field}.start_line"))
        else:
            valid.append((s, e))
        if numbered(text):
            out.add(Refusal("invalid_params", f"{field}.new_text"))
    if any(clash(a, b) for a, b in itertools.combinations(valid, 2)):
        out.add(Refusal("overlapping_edits", None))
    return frozenset(out)


def ref_line_edits(original: str, edits: list[Edit]) -> str | frozenset[Refusal]:
    """Walk the original lines once, copying each byte for byte unless an edit names it;
    insertions come before the line they name. New text is written with the file's line break
    and ends with one, except text replacing a last line that has none; appending after such a
    line gives it one first. Invalid edits: the set of rules they break."""
    problems = line_problems(len(lf_lines(original)), edits)
    if problems:
        return problems
    lines, newline = lf_lines(original), file_break(original)
    n = len(lines)
    open_last = n > 0 and not lines[-1].endswith("\n")
    inserts = {s: t for s, e, t in edits if e < s}
    replaces = {s: (e, t) for s, e, t in edits if e >= s}

    def closed(text: str) -> str:
        text = as_breaks(text, newline)
        return text + newline if text and not text.endswith("\n") else text

    out: list[str] = []
    i = 1
    while True:
        if inserts.get(i):
            so_far = "".join(out)
            if i > n and so_far and not so_far.endswith("\n"):
                out.append(newline)
            out.append(closed(inserts[i]))
        if i > n:
            break
        if i in replaces:
            end, text = replaces[i]
            out.append(as_breaks(text, newline) if open_last and end == n else closed(text))
            i = end + 1
        else:
            out.append(lines[i - 1])
            i += 1
    return "".join(out)


def ref_text_edits(original: str, edits: list[tuple[str, str]]) -> str | Refusal:
    """In array order, each old_text (with the file's line break) must start at exactly one
    offset of the text so far (overlapping occurrences count); it is replaced by new_text. The
    first edit that cannot apply is the refusal."""
    newline = file_break(original)
    text = original
    for k, (old, new) in enumerate(edits):
        field = f"edits.{k}"
        if numbered(new):
            return Refusal("invalid_params", f"{field}.new_text")
        old, new = as_breaks(old, newline), as_breaks(new, newline)
        starts = [i for i in range(len(text)) if text.startswith(old, i)]
        if not starts:
            return Refusal("match_not_found", f"{field}.old_text")
        if len(starts) > 1:
            lines = tuple(text.count("\n", 0, i) + 1 for i in starts[:50])
            return Refusal("match_ambiguous", f"{field}.old_text", lines)
        text = text[: starts[0]] + new + text[starts[0] + len(old) :]
    return text


def done(outcome: str | frozenset[Refusal] | Refusal) -> str:
    assert isinstance(outcome, str), outcome
    return outcome


def codex_lines(original: str, hunks: list[tuple[list[str], list[str]]]) -> list[str]:
    """Codex's derive_new_contents up to the join: split, drop the final '', find each hunk from
    the end of the previous one (first exact match), splice from the back."""
    lines = original.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    replacements = []
    index = 0
    for old, new in hunks:
        start = next(
            i for i in range(index, len(lines) - len(old) + 1) if lines[i : i + len(old)] == old
        )
        replacements.append((start, len(old), new))
        index = start + len(old)
    for start, size, new in reversed(replacements):
        lines[start : start + size] = new
    return lines


def ref_codex_update(original: str, hunks: list[tuple[list[str], list[str]]]) -> str:
    """... then end every line with LF (Codex 0.169: nothing outside the hunks changes)."""
    return "".join(line + "\n" for line in codex_lines(original, hunks))
