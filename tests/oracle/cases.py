"""Hypothesis strategies for the patch differential: a small workspace and a patch against it.

Workspaces have repeated and near-repeated lines (a few lines per case, reused, and variants of
them that differ by white space, case or a Unicode look-alike), blank lines at the start and the
end, Unicode, characters other tools break lines at, and lines that look like patch syntax; some
files have CR LF endings, a lone CR, or no final newline. Patches update and add several files
with several hunks of 0-3 context lines, taken from the file so that they are often ambiguous,
sometimes edited so that they no longer match, sometimes out of order; one patch in five is
pushed out of the strict subset by one mutation (named or numbered hunk headers, a missing
``@@``, ``*** End of File``, delete, move, padded markers, CR LF patch lines, ...).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from hypothesis import strategies as st

PLAIN = ["a", "b", "ab", "x = 1", "    return x", "}", "", " ", "end"]
UNICODE = ["größe = 1", "名前 = 'x'", "🎉", "\ufeffbom", "a\u00a0b", "\u201cq\u201d", "a \u2013 b"]
PATCHY = ["*** End Patch", "*** Begin Patch", "*** Update File: f.txt", "*** Add File: n", "@@"]
PATCHY += ["@@ def f():", "+a", "-a", " a", "*** End of File"]
ODD = ["tab\tx", "a\x0bb", "a\x0cb", "a\x85b", "a\u2028b", "a\x1cb", "cr\rmid", "two  "]
ALL = PLAIN + UNICODE + PATCHY + ODD
PATHS = ["f.txt", "d/g.txt", "sp ace/ü.txt"]
ENDINGS = ["lf"] * 20 + ["no_final_lf", "crlf", "lone_cr"]
T = TypeVar("T")
LOOKALIKE = str.maketrans({"-": "\u2013", "'": "\u2019", " ": "\u00a0", '"': "\u201c"})


@dataclass(frozen=True)
class Case:
    files: dict[str, str]  # the workspace before the patch: path → text
    patch: str


def variants(line: str) -> list[str]:
    """Lines that are almost ``line``: what a fuzzy matcher would take for it."""
    out = [line + " ", " " + line, line.upper(), line.translate(LOOKALIKE), line + "\t"]
    out += [line.strip(), "x" + line, line[:-1]]
    return [v for v in out if v != line and not v.endswith("\r")] or ["zz"]


VARIANTS = {line: variants(line) for line in ALL}


@functools.cache
def _below(n: int) -> st.SearchStrategy[int]:
    return st.integers(0, n - 1)


def pick(draw: st.DrawFn, items: Sequence[T]) -> T:
    """One of ``items`` (shrinking towards the first). Strategies are built once per length:
    building one per draw would cost more than the rest of the generation."""
    return items[draw(_below(len(items)))]


def upto(draw: st.DrawFn, n: int) -> int:
    return draw(_below(n + 1)) if n > 0 else 0


def lines_of(pool: list[str]) -> list[str]:
    """The lines a case draws from: mostly its pool, then near variants, then anything."""
    return pool * 12 + [v for line in pool for v in VARIANTS[line]] + ALL


def render(rows: list[str], ending: str) -> str:
    if ending == "no_final_lf":
        return "\n".join(rows)
    if ending == "crlf":
        return "".join(row + "\r\n" for row in rows)
    return "".join(row + "\n" for row in rows)


def file_rows(draw: st.DrawFn, table: list[str]) -> tuple[list[str], str]:
    """(the file's lines, its ending style)."""
    lead, trail = upto(draw, 2), upto(draw, 2)
    body = [pick(draw, table) for _ in range(upto(draw, 10))]
    rows = [""] * lead + body + [""] * trail
    ending = pick(draw, ENDINGS)
    if ending == "lone_cr" and rows:
        rows[upto(draw, len(rows) - 1)] += "\rcr"
    return rows, ending


def hunk(draw: st.DrawFn, rows: list[str], cursor: int, table: list[str]) -> tuple[list[str], int]:
    """One hunk's patch lines, for a change at or after ``cursor``; and the next cursor."""
    n = len(rows)
    at = cursor + upto(draw, n - cursor)
    removed = upto(draw, min(3, n - at))
    before = upto(draw, min(3, at - cursor))
    after = upto(draw, min(3, n - at - removed))
    added = [pick(draw, table) for _ in range(upto(draw, 3))]
    head, gone, tail = rows[at - before : at], rows[at : at + removed], rows[at + removed :][:after]
    if not (head or gone or tail) and upto(draw, 9):  # anchor it, mostly
        head, tail = rows[max(cursor, at - 1) : at], rows[at : at + 1]
        if not (head or tail):
            tail = [pick(draw, table)]  # nothing left to anchor it to
    old = [" " + x for x in head] + ["-" + x for x in gone]
    if old and upto(draw, 7) == 0:  # no longer matches (exactly)
        i = upto(draw, len(old) - 1)
        old[i] = old[i][0] + pick(draw, variants(old[i][1:]))
    plus = ["+" + x for x in added]
    middle = old[len(head) :] + plus if upto(draw, 1) else plus + old[len(head) :]
    body = ["@@", *old[: len(head)], *middle, *(" " + x for x in tail)]
    return body, at + removed + len(tail)


def update_body(draw: st.DrawFn, rows: list[str], table: list[str]) -> list[str]:
    chunks: list[list[str]] = []
    cursor = 0
    for _ in range(1 + upto(draw, 3)):
        if cursor >= len(rows) and chunks:
            break
        body, cursor = hunk(draw, rows, cursor, table)
        chunks.append(body)
    if len(chunks) > 1 and upto(draw, 9) == 0:
        chunks.reverse()  # out of order
    return [row for chunk in chunks for row in chunk]


MUTATIONS = [
    "named_header",
    "numbered_header",
    "missing_first_header",
    "end_of_file",
    "delete_file",
    "move_to",
    "bare_blank_line",
    "padded_begin",
    "leading_blank",
    "trailing_blanks",
    "crlf_patch",
    "pure_addition",
    "duplicate_section",
    "padded_path",
    "unknown_header",
    "empty_hunk",
    "tab_prefix",
    "no_hunks",
]


def mutate(draw: st.DrawFn, rows: list[str], paths: list[str]) -> tuple[list[str], str]:
    """Push the patch (its lines, Begin and End included) out of the subset; and the newline."""
    kind = pick(draw, MUTATIONS)
    heads = [i for i, r in enumerate(rows) if r == "@@"]
    updates = [i for i, r in enumerate(rows) if r.startswith("*** Update File: ")]
    rows = list(rows)
    newline = "\n"
    if kind == "named_header" and heads:
        rows[pick(draw, heads)] = "@@ " + pick(draw, ALL)
    elif kind == "numbered_header" and heads:
        rows[pick(draw, heads)] = "@@ -1,2 +1,2 @@"
    elif kind == "missing_first_header" and updates:
        del rows[pick(draw, updates) + 1]
    elif kind == "end_of_file" and updates:
        nxt = next(i for i, r in enumerate(rows) if r.startswith("***") and i > updates[-1])
        rows.insert(nxt, "*** End of File")
    elif kind == "delete_file":
        rows.insert(-1, "*** Delete File: " + pick(draw, paths))
    elif kind == "move_to" and updates:
        rows.insert(pick(draw, updates) + 1, "*** Move to: moved.txt")
    elif kind == "bare_blank_line" and heads:
        rows.insert(pick(draw, heads) + 1, "")
    elif kind == "padded_begin":
        rows[0] += " "
    elif kind == "leading_blank":
        rows.insert(0, "")
    elif kind == "trailing_blanks":
        rows += ["", ""]
    elif kind == "crlf_patch":
        newline = "\r\n"
    elif kind == "pure_addition" and updates:
        rows[updates[0] + 1 : updates[0] + 1] = ["@@", "+added"]
    elif kind == "duplicate_section" and updates:
        rows[-1:-1] = [rows[updates[0]], "@@", "-" + pick(draw, ALL)]
    elif kind == "padded_path" and updates:
        rows[updates[0]] = rows[updates[0]].replace(": ", ":  ", 1)
    elif kind == "unknown_header":
        rows.insert(1, "*** Frobnicate File: f.txt")
    elif kind == "empty_hunk" and heads:
        rows.insert(pick(draw, heads), "@@")
    elif kind == "tab_prefix" and heads:
        rows.insert(pick(draw, heads) + 1, "\tindented")
    elif kind == "no_hunks":
        rows.insert(1, "*** Update File: " + pick(draw, paths))
    return rows, newline


@st.composite
def cases(draw: st.DrawFn) -> Case:
    pool = draw(st.lists(st.sampled_from(ALL), min_size=1, max_size=5, unique=True))
    table = lines_of(pool)
    paths = PATHS[: 1 + upto(draw, 2)]
    files: dict[str, str] = {}
    sections: list[list[str]] = []
    for path in paths:
        rows, ending = file_rows(draw, table)
        files[path] = render(rows, ending)
        if upto(draw, 3):
            sections.append([f"*** Update File: {path}", *update_body(draw, rows, table)])
    for k in range(upto(draw, 1) if sections else 1):
        added = [pick(draw, table) for _ in range(upto(draw, 4))]
        sections.append([f"*** Add File: new/n{k}.txt", *("+" + x for x in added)])
    order = draw(st.permutations(range(len(sections))))
    rows = ["*** Begin Patch", *(r for i in order for r in sections[i]), "*** End Patch"]
    newline = "\n"
    if upto(draw, 4) == 0:
        rows, newline = mutate(draw, rows, paths)
    final = newline if upto(draw, 3) else ""
    return Case(files, newline.join(rows) + final)
