"""An independent reference of the strict patch subset (docs/patch-format.md), for the differential.

Written from the rule, not from s_code.edits.patch, and kept as plain as possible:

- the patch is ``*** Begin Patch``, sections, ``*** End Patch`` (one final LF allowed; no CR at
  the end of any line);
- a section is ``*** Add File: <path>`` with ``+`` lines, or ``*** Update File: <path>`` with
  hunks, each a bare ``@@`` line then lines prefixed by space, ``-`` or ``+``, at least one of
  them space or ``-``; a path is not empty, not padded, and has one section; any other line that
  starts with ``***`` is outside the subset;
- an updated file contains no CR and is empty or ends with LF; its lines are its LF-separated
  pieces; each hunk's old lines (space and ``-``) occur exactly once, as whole consecutive lines,
  after the previous hunk's; the hunk's new lines (space and ``+``) replace them;
- the result is each line followed by LF. Nothing else in the file changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

HEADER = re.compile(r"\*\*\* (Add|Update) File: (.*)")


@dataclass(frozen=True)
class Applied:
    files: dict[str, str]  # every file the patch writes, with its new text


@dataclass(frozen=True)
class Refused:
    reason: str  # "syntax" | "target" | "not_found" | "ambiguous"
    lines: tuple[int, ...] = ()  # ambiguous: the 1-based lines of the file where the hunk matches


Outcome = Applied | Refused
Section = tuple[str, str, list[str]]  # (Add | Update, path, the lines after the header)


def sections(patch: str) -> list[Section] | None:
    """The patch's sections, or None when it is outside the subset."""
    rows = patch.split("\n")
    if rows[-1] == "":
        rows.pop()
    if len(rows) < 2 or rows[0] != "*** Begin Patch" or rows[-1] != "*** End Patch":
        return None
    if any(row.endswith("\r") for row in rows):
        return None
    found: list[Section] = []
    for row in rows[1:-1]:
        header = HEADER.fullmatch(row)
        if header:
            found.append((header[1], header[2], []))
        elif row.startswith("***") or not found:
            return None
        else:
            found[-1][2].append(row)
    paths = [path for _, path, _ in found]
    if not found or len(set(paths)) < len(paths):
        return None
    if any(path == "" or path != path.strip() for path in paths):
        return None
    for op, _, body in found:
        if op == "Add" and not all(row.startswith("+") for row in body):
            return None
        if op == "Update" and hunks(body) is None:
            return None
    return found


def hunks(body: list[str]) -> list[tuple[list[str], list[str]]] | None:
    """(old lines, new lines) of each hunk of an update section, or None if it is malformed."""
    if not body or body[0] != "@@":
        return None
    out: list[tuple[list[str], list[str]]] = []
    for row in body:
        if row == "@@":
            out.append(([], []))
            continue
        if row[:1] not in (" ", "-", "+"):
            return None
        old, new = out[-1]
        if row[0] in " -":
            old.append(row[1:])
        if row[0] in " +":
            new.append(row[1:])
    if any(not old for old, _ in out):
        return None
    return out


def updated(text: str, changes: list[tuple[list[str], list[str]]]) -> str | Refused:
    if "\r" in text or (text and not text.endswith("\n")):
        return Refused("target")
    lines = text.split("\n")[:-1]
    out: list[str] = []
    cursor = 0
    for old, new in changes:
        size = len(old)
        starts = [i for i in range(cursor, len(lines) - size + 1) if lines[i : i + size] == old]
        if not starts:
            return Refused("not_found")
        if len(starts) > 1:
            return Refused("ambiguous", tuple(i + 1 for i in starts[:50]))
        out += lines[cursor : starts[0]] + new
        cursor = starts[0] + size
    out += lines[cursor:]
    return "".join(line + "\n" for line in out)


def reference(files: Mapping[str, str], patch: str) -> Outcome:
    """What the strict subset does to ``files`` (path → text): the files it writes, or why not."""
    found = sections(patch)
    if found is None:
        return Refused("syntax")
    written: dict[str, str] = {}
    for op, path, body in found:
        if op == "Add":
            written[path] = "".join(row[1:] + "\n" for row in body)
            continue
        changes = hunks(body)
        assert changes is not None and path in files  # the generator updates existing files
        result = updated(files[path], changes)
        if isinstance(result, Refused):
            return result
        written[path] = result
    return Applied(written)
