"""Property tests of the edit engine against small independent reference models.

(a) line edits, (b) exact text edits, (c) strict patches (against a model of OpenAI Codex's
apply_patch), all through the real in-process engine on a real workspace folder; (d) invalid
batches, which must fail with the expected kind and leave the workspace byte-identical.
Line and text edits also run on any input (mixed line breaks, lone CRs, other line separators,
no final newline; ranges out of bounds or overlapping, text absent or ambiguous, numbered new
text) against references that say what each rule refuses. (The patch form's differential
against Codex itself is tests/oracle/.)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s_code.edits.text import (
    LineEdit,
    TextEdit,
    _lf_split,
    apply_line_edits,
    apply_plain_line_edits,
    apply_text_edits,
)
from s_code.protocol.errors import ErrorKind, SCodeError
from tests.unit.edit_references import (
    Edit,
    Refusal,
    done,
    lf_lines,
    ref_codex_update,
    ref_line_edits,
    ref_text_edits,
)
from tests.unit.test_edit_request import BEGIN, END, EngineWorkspace, rev

ENGINE = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
PURE = settings(max_examples=400, deadline=None)

# A small alphabet makes repeated lines (and so ambiguity) common. No tabs: nothing looks like
# read_file's "   12<TAB>" prefix.
LINE = st.sampled_from(["", "a", "b", "ab", "x y", "  z", "12", "-", "@@", "é"])

# --- strategies -----------------------------------------------------------------------------


@st.composite
def files(draw: st.DrawFn, crlf: bool | None = None) -> str:
    rows = draw(st.lists(LINE, max_size=8))
    newline = ("\r\n" if draw(st.booleans()) else "\n") if crlf is None else "\r\n"
    trailing = draw(st.booleans())
    return newline.join(rows) + (newline if rows and trailing else "")


def new_texts(allow_empty: bool = True) -> st.SearchStrategy[str]:
    body = st.builds(
        lambda rows, join, trailing: join.join(rows) + (join if trailing else ""),
        st.lists(LINE, min_size=1, max_size=3),
        st.sampled_from(["\n", "\n", "\r\n"]),
        st.booleans(),
    ).filter(bool)
    return st.one_of(st.just(""), body) if allow_empty else body


@st.composite
def line_edit_lists(draw: st.DrawFn, n: int, allow_empty: bool = True) -> list[Edit]:
    """Valid, non-overlapping edits for an n-line file, in a random order."""
    text = new_texts(allow_empty)
    edits: list[Edit] = []
    i = 1
    while i <= n + 1:
        if draw(st.integers(0, 3)) == 0:
            edits.append((i, i - 1, draw(text)))
        if i > n:
            break
        if draw(st.integers(0, 2)) == 0:
            end = draw(st.integers(i, min(n, i + 2)))
            edits.append((i, end, draw(text)))
            i = end + 1
        else:
            i += 1
    if not edits:
        edits.append((1, 0, draw(new_texts(False))))
    return draw(st.permutations(edits))


# Lines of any kind for the "any input" properties: a lone CR, characters other tools break lines
# at, Unicode, tabs, and read_file's numbered prefix (alone on a line: new text of such lines
# only is refused).
ODD_LINES = ["a\rb", "\x0b", "\u2028", "\x85", "t\tx", "  12\tn", "12", "名🎉"]
ANY_LINE = st.sampled_from(["", "a", "b", "ab", "x y", "é", *ODD_LINES])


@st.composite
def any_files(draw: st.DrawFn) -> str:
    """Each line with its own break (LF or CR LF, mixed), the last maybe without one."""
    rows = draw(st.lists(ANY_LINE, max_size=8))
    ends = [draw(st.sampled_from(["\n", "\n", "\r\n"])) for _ in rows]
    text = "".join(row + end for row, end in zip(rows, ends, strict=True))
    return text[: -len(ends[-1])] if rows and draw(st.booleans()) else text


@st.composite
def any_texts(draw: st.DrawFn) -> str:
    """New text: lines of any kind joined by LF or CR LF, ending with a break, a lone CR or
    none; now and then read_file's numbered lines (refused), or text that only looks so."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.sampled_from(["  7\ta\n\n  8\tb", "t\tx\n", "a\n 9\tb\n"]))
    rows = draw(st.lists(ANY_LINE.filter(lambda row: "\t" not in row), max_size=3))
    join = draw(st.sampled_from(["\n", "\r\n"]))
    return join.join(rows) + draw(st.sampled_from(["", "\n", "\r\n", "\r"]))


@st.composite
def any_line_cases(draw: st.DrawFn) -> tuple[str, list[Edit]]:
    """Any file; valid edits half the time, else ranges anywhere (before the start, past the
    end, backwards, overlapping, two insertions at one point)."""
    original = draw(any_files())
    n = line_count(original)
    if draw(st.booleans()):
        return original, [(s, e, draw(any_texts())) for s, e, _ in draw(line_edit_lists(n))]
    edits = []
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(1, n + 1) if draw(st.integers(0, 5)) else st.integers(0, n + 2))
        end = start - 1 + draw(st.integers(0, 1) if draw(st.integers(0, 7)) else st.just(-1))
        edits.append((start, end, draw(any_texts())))
    return original, edits


@st.composite
def any_text_cases(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    """Any file; each old_text a piece of the text so far (often not unique), in the file's
    breaks or as LF, or something absent; applied in order while they apply."""
    original = draw(any_files().filter(bool))
    current = original
    edits: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.integers(0, 4)) == 0 or not current:
            old = draw(st.sampled_from(["zz", "a\nb", "\r", "é\n", "12\t", "\n\n"]))
        else:
            start = draw(st.integers(0, len(current) - 1))
            old = current[start : start + draw(st.integers(1, 6))]
            if draw(st.booleans()):
                old = old.replace("\r\n", "\n")
        edits.append((old, draw(any_texts())))
        result = ref_text_edits(original, edits)
        if not isinstance(result, str):
            break
        current = result
    return original, edits


def line_count(text: str) -> int:
    return len(lf_lines(text))


@st.composite
def line_cases(draw: st.DrawFn, allow_empty: bool = True) -> tuple[str, list[Edit]]:
    original = draw(files())
    return original, draw(line_edit_lists(line_count(original), allow_empty))


def unique_from(text: str, start: int, size: int) -> str | None:
    for end in range(start + size, len(text) + 1):
        old = text[start:end]
        first = text.find(old)
        if old and text.find(old, first + 1) < 0:
            return old
    return None


@st.composite
def text_cases(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    original = draw(files().filter(bool))
    current = original.replace("\r\n", "\n")
    edits: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(current) - 1))
        old = unique_from(current, start, draw(st.integers(1, 6)))
        if old is None:
            continue
        new = draw(st.sampled_from(["", "Q", "\n", "new\nlines", "ab", "x y\n"]))
        edits.append((old, new))
        current = current.replace(old, new, 1)
        if not current:
            break
    if not edits:
        edits.append((original.replace("\r\n", "\n"), "whole\n"))
    return original, edits


def count_at(lines: list[str], old: list[str], start: int) -> int:
    return sum(lines[i : i + len(old)] == old for i in range(start, len(lines) - len(old) + 1))


@st.composite
def hunk_lists(
    draw: st.DrawFn, lines: list[str]
) -> list[tuple[list[str], list[str], list[str], list[str], list[str]]]:
    """Hunks as (before, removed, added, after, old): each old block unique after the last one."""
    n = len(lines)
    hunks = []
    floor = 0  # the end of the previous hunk's old lines
    pos = 0
    while pos <= n and len(hunks) < 4 and draw(st.integers(0, 3)) > 0:
        s = draw(st.integers(pos, n))
        removed_n = draw(st.integers(0, min(3, n - s)))
        added = draw(st.lists(LINE, max_size=3))
        if removed_n == 0 and not added:
            pos = s + 1
            continue
        lo = s - draw(st.integers(0, min(2, s - floor)))
        hi = s + removed_n + draw(st.integers(0, min(2, n - s - removed_n)))
        while True:
            old = lines[lo:hi]
            if old and count_at(lines, old, floor) == 1:
                break
            if hi < n:
                hi += 1
            elif lo > floor:
                lo -= 1
            else:
                old = []
                break
        if not old:
            pos = s + 1
            continue
        before, removed = lines[lo:s], lines[s : s + removed_n]
        after = lines[s + removed_n : hi]
        hunks.append((before, removed, added, after, old))
        floor = pos = hi
    if not hunks:
        hunks.append(([], lines, draw(st.lists(LINE, max_size=3)), [], lines))
    return hunks


def hunk_text(hunks: list[tuple[list[str], list[str], list[str], list[str], list[str]]]) -> str:
    out = []
    for before, removed, added, after, _ in hunks:
        out.append("@@\n")
        out += [f" {x}\n" for x in before] + [f"-{x}\n" for x in removed]
        out += [f"+{x}\n" for x in added] + [f" {x}\n" for x in after]
    return "".join(out)


@st.composite
def patch_cases(draw: st.DrawFn) -> tuple[dict[str, str], str, dict[str, str]]:
    """(input files, patch text, expected files) for 1-2 updates and maybe one added file."""
    inputs: dict[str, str] = {"untouched.txt": "stay\n"}
    expected = dict(inputs)
    sections = []
    for path in ["u0.txt", "sub/u1.txt"][: draw(st.integers(1, 2))]:
        lines = draw(st.lists(LINE, min_size=1, max_size=10))
        original = "".join(x + "\n" for x in lines)
        hunks = draw(hunk_lists(lines))
        pairs = [(h[4], h[0] + h[2] + h[3]) for h in hunks]
        result = ref_codex_update(original, pairs)
        inputs[path] = original
        expected[path] = result
        sections.append(f"*** Update File: {path}\n" + hunk_text(hunks))
    if draw(st.booleans()):
        added = draw(st.lists(LINE, max_size=4))
        expected["new/dir/added.txt"] = "".join(x + "\n" for x in added)
        sections.insert(
            draw(st.integers(0, len(sections))),
            "*** Add File: new/dir/added.txt\n" + "".join(f"+{x}\n" for x in added),
        )
    return inputs, BEGIN + "".join(sections) + END, expected


# --- (a) line edits -------------------------------------------------------------------------


@PURE
@given(line_cases())
def test_line_edits_match_the_reference(case: tuple[str, list[Edit]]) -> None:
    original, edits = case
    got = apply_line_edits(original, [LineEdit(s, e, t, i) for i, (s, e, t) in enumerate(edits)])
    assert got == ref_line_edits(original, edits)


@PURE
@given(line_cases(allow_empty=False))
def test_line_edits_without_empty_new_text_match_the_reference(
    case: tuple[str, list[Edit]],
) -> None:
    original, edits = case
    got = apply_line_edits(original, [LineEdit(s, e, t, i) for i, (s, e, t) in enumerate(edits)])
    assert got == ref_line_edits(original, edits)


def columns(edits: list[Edit]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[str, ...]]:
    starts, ends, texts = zip(*edits, strict=True) if edits else ((), (), ())
    return tuple(starts), tuple(ends), tuple(texts)


@PURE
@given(line_cases())
def test_the_plain_line_edit_path_declines_or_matches_the_reference(
    case: tuple[str, list[Edit]],
) -> None:
    """Any edits on any file (CRLF, no final newline, insertions, unsorted): the C-level path
    either declines (None) or gives the reference result."""
    original, edits = case
    plain = apply_plain_line_edits(original, columns(edits))
    assert plain is None or plain == ref_line_edits(original, edits)


@st.composite
def plain_cases(draw: st.DrawFn) -> tuple[str, list[Edit]]:
    """LF files ending with a line break, sorted replacements of one or more lines."""
    rows = draw(st.lists(LINE, min_size=1, max_size=30))
    original = "".join(r + "\n" for r in rows)
    bounds = sorted(draw(st.sets(st.integers(1, len(rows)), min_size=1, max_size=len(rows))))
    edits: list[Edit] = []
    for i in range(0, len(bounds), 2):  # pairs of bounds (or one) make disjoint ranges
        start, end = bounds[i], bounds[min(i + 1, len(bounds) - 1)]
        new = draw(st.lists(LINE, max_size=3).map("\n".join))
        edits.append((start, end, new + draw(st.sampled_from(["", "\n"]))))
    return original, edits


@PURE
@given(plain_cases())
def test_the_plain_line_edit_path_takes_its_case_and_matches_the_reference(
    case: tuple[str, list[Edit]],
) -> None:
    original, edits = case
    plain = apply_plain_line_edits(original, columns(edits))
    assert plain is not None
    assert plain == ref_line_edits(original, edits)
    general = [LineEdit(s, e, t, i) for i, (s, e, t) in enumerate(edits)]
    assert plain == apply_line_edits(original, general)


def outcome_of(apply: Callable[[], str]) -> str | Refusal:
    """The text, or the error as a Refusal (overlaps name two fields: None)."""
    try:
        return apply()
    except SCodeError as err:
        field = None if err.kind is ErrorKind.OVERLAPPING_EDITS else err.data.get("field")
        return Refusal(err.kind.value, field, tuple(err.data.get("lines", ())))


def agrees(got: str | Refusal, expected: str | frozenset[Refusal] | Refusal) -> bool:
    """The same text, or a refusal the reference names (one of the rules broken)."""
    if isinstance(expected, frozenset):
        return got in expected
    return got == expected


@PURE
@given(any_line_cases())
def test_line_edits_on_any_input_match_the_reference(case: tuple[str, list[Edit]]) -> None:
    """Mixed line breaks, lone CRs, other line separators, no final newline; invalid ranges,
    overlaps, numbered text: the result or the refusal is the reference's, and the C-level
    path never takes what the rules refuse."""
    original, edits = case
    expected = ref_line_edits(original, edits)
    line_edits = [LineEdit(s, e, t, i) for i, (s, e, t) in enumerate(edits)]
    got = outcome_of(lambda: apply_line_edits(original, line_edits))
    assert agrees(got, expected), (got, expected)
    plain = apply_plain_line_edits(original, columns(edits))
    assert plain is None or plain == expected


@PURE
@given(any_text_cases())
def test_text_edits_on_any_input_match_the_reference(
    case: tuple[str, list[tuple[str, str]]],
) -> None:
    """Ambiguous (overlapping occurrences too, with their lines), absent, CR LF given as LF,
    later edits seeing earlier ones, numbered text: the result or the first refusal."""
    original, edits = case
    text_edits = [TextEdit(o, n, i) for i, (o, n) in enumerate(edits)]
    got = outcome_of(lambda: apply_text_edits(original, text_edits))
    assert got == ref_text_edits(original, edits)


def test_any_edits_through_the_engine(tmp_path: Path) -> None:
    """Both formats on any input through the real tool path: the file the reference says, or
    its refusal with the field in the request, and then not a byte written anywhere."""
    ws = EngineWorkspace(tmp_path)
    counter = itertools.count()

    @ENGINE
    @given(st.one_of(any_line_cases(), any_text_cases()))
    def check(case: tuple[str, list[Any]]) -> None:
        original, edits = case
        path = f"case{next(counter)}/f.txt"
        r = ws.put(path, original.encode())
        if isinstance(edits[0][0], int):
            raw: list[dict[str, Any]] = [
                {"start_line": s, "end_line": e, "new_text": t} for s, e, t in edits
            ]
            expected: Any = ref_line_edits(original, edits)
        else:
            raw = [{"old_text": o, "new_text": n} for o, n in edits]
            expected = ref_text_edits(original, edits)
        before = ws.tree()
        got = outcome_of(
            lambda: (
                ws.run({"files": [{"path": path, "expected_revision": r, "edits": raw}]})
                and ws.read(path).decode()
            )
        )
        if isinstance(got, Refusal):
            assert ws.tree() == before
            if got.field is not None:
                assert got.field.startswith("files.0.")
                got = got._replace(field=got.field.removeprefix("files.0."))
        assert agrees(got, expected), (got, expected)

    try:
        check()
    finally:
        ws.close()


# Every character str.splitlines breaks at, CR alone and in CRLF, and two that it does not.
BREAKY = st.sampled_from(
    [
        *("a", "\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85"),
        *("\u2028", "\u2029", "é", "\t"),
    ]
)


@PURE
@given(st.lists(BREAKY, max_size=12).map("".join))
def test_lines_split_on_lf_only(text: str) -> None:
    """The fast split (str.splitlines when nothing else would break) equals splitting on LF."""
    rows = text.split("\n")
    expected = [row + "\n" for row in rows[:-1]] + ([rows[-1]] if rows[-1] else [])
    assert _lf_split(text) == expected


def test_line_edits_through_the_engine(tmp_path: Path) -> None:
    ws = EngineWorkspace(tmp_path)
    counter = itertools.count()

    @ENGINE
    @given(line_cases())
    def check(case: tuple[str, list[Edit]]) -> None:
        original, edits = case
        path = f"case{next(counter)}/f.txt"
        r = ws.put(path, original.encode())
        raw = [{"start_line": s, "end_line": e, "new_text": t} for s, e, t in edits]
        ws.run({"files": [{"path": path, "expected_revision": r, "edits": raw}]})
        assert ws.read(path) == done(ref_line_edits(original, edits)).encode()

    try:
        check()
    finally:
        ws.close()


# --- (b) text edits -------------------------------------------------------------------------


def test_text_edits_through_the_engine(tmp_path: Path) -> None:
    ws = EngineWorkspace(tmp_path)
    counter = itertools.count()

    @ENGINE
    @given(text_cases())
    def check(case: tuple[str, list[tuple[str, str]]]) -> None:
        original, edits = case
        path = f"case{next(counter)}/f.txt"
        r = ws.put(path, original.encode())
        raw = [{"old_text": o, "new_text": n} for o, n in edits]
        ws.run({"files": [{"path": path, "expected_revision": r, "edits": raw}]})
        assert ws.read(path) == done(ref_text_edits(original, edits)).encode()

    try:
        check()
    finally:
        ws.close()


# --- (c) patches ----------------------------------------------------------------------------


def run_patch_case(
    ws: EngineWorkspace, n: int, case: tuple[dict[str, str], str, dict[str, str]]
) -> None:
    inputs, patch, expected = case
    base = f"case{n}"
    for rel, text in inputs.items():
        ws.put(f"{base}/{rel}", text)
    prefixed = patch.replace("File: ", f"File: {base}/")
    revisions: dict[str, str | None] = {
        f"{base}/{rel}": (rev(inputs[rel]) if rel in inputs else None)
        for rel in expected
        if rel != "untouched.txt"
    }
    ws.run({"patch": prefixed, "revisions": revisions})
    tree = {k: v for k, v in ws.tree().items() if k.startswith(base + "/") and v is not None}
    assert tree == {f"{base}/{rel}": text.encode() for rel, text in expected.items()}


def test_patches_through_the_engine_match_codex(tmp_path: Path) -> None:
    ws = EngineWorkspace(tmp_path)
    counter = itertools.count()

    @ENGINE
    @given(patch_cases())
    def check(case: tuple[dict[str, str], str, dict[str, str]]) -> None:
        run_patch_case(ws, next(counter), case)

    try:
        check()
    finally:
        ws.close()


def test_patch_result_ending_in_a_blank_line_matches_codex(tmp_path: Path) -> None:
    ws = EngineWorkspace(tmp_path)
    try:
        for n, (original, body) in enumerate(
            [("a\n\n", "@@\n-a\n+b\n"), ("a\n", "@@\n a\n+\n"), ("a\nb\n", "@@\n-b\n+\n")]
        ):
            hunks = []
            for chunk in body.split("@@\n")[1:]:
                rows = chunk.splitlines()
                hunks.append(
                    ([r[1:] for r in rows if r[0] in " -"], [r[1:] for r in rows if r[0] in " +"])
                )
            path = f"blank{n}.txt"
            r = ws.put(path, original)
            ws.run(
                {"patch": BEGIN + f"*** Update File: {path}\n" + body + END, "revisions": {path: r}}
            )
            assert ws.read(path) == ref_codex_update(original, hunks).encode(), (original, body)
    finally:
        ws.close()


def test_the_reference_models_themselves() -> None:
    # Hand-checked values of the references, so a wrong model cannot hide an engine bug.
    assert ref_codex_update("a\nb\nc\n", [(["b"], ["B"])]) == "a\nB\nc\n"
    assert ref_codex_update("a\nb\n", [(["a"], ["b"]), (["b"], ["c"])]) == "b\nc\n"
    assert ref_codex_update("only\n", [(["only"], [])]) == ""
    assert ref_codex_update("a\n\n", [(["a"], ["b"])]) == "b\n\n"
    assert ref_line_edits("a\nb", [(3, 2, "c")]) == "a\nb\nc\n"
    assert ref_line_edits("a\nb", [(2, 2, "B")]) == "a\nB"
    assert ref_line_edits("a\r\nb\r\n", [(2, 2, "")]) == "a\r\n"
    assert ref_line_edits("a\nb\nc\n", [(2, 2, ""), (3, 3, "C")]) == "a\nC\n"
    assert ref_text_edits("a\r\nb\r\n", [("a\nb", "x")]) == "x\r\n"
    # Any input: each line keeps its bytes; new text takes the file's first line break.
    assert ref_line_edits("a\r\nb\nc", [(2, 2, "B\n")]) == "a\r\nB\r\nc"
    assert ref_line_edits("a\rb\nc\n", [(2, 2, "x")]) == "a\rb\nx\n"
    assert ref_line_edits("a\nb\n", [(1, 1, "x"), (1, 0, "y")]) == "y\nx\nb\n"
    assert ref_line_edits("a\nb", [(2, 2, ""), (3, 2, "c")]) == "a\nc\n"
    assert ref_line_edits("a\n", [(2, 2, "x")]) == {Refusal("invalid_params", "edits.0.end_line")}
    overlap = {Refusal("overlapping_edits", None)}
    assert ref_line_edits("a\nb\n", [(1, 2, "x"), (2, 1, "y")]) == overlap
    assert ref_line_edits("a\n", [(1, 0, "x"), (1, 0, "y")]) == overlap
    assert ref_line_edits("a\n", [(1, 1, "  1\tx")]) == {
        Refusal("invalid_params", "edits.0.new_text")
    }
    assert ref_text_edits("aaa\n", [("aa", "b")]) == Refusal(
        "match_ambiguous", "edits.0.old_text", (1, 1)
    )
    assert ref_text_edits("a\r\nb\nc\n", [("b\nc", "x")]) == Refusal(
        "match_not_found", "edits.0.old_text"
    )
    assert ref_text_edits("a\n", [("a", "b"), ("b", "c")]) == "c\n"


# --- (d) invalid batches change nothing -----------------------------------------------------

FAULTS = [
    "stale_revision",
    "overlapping_edits",
    "match_not_found",
    "match_ambiguous",
    "mixed_edit_kinds",
    "unknown_field",
    "unknown_edit_field",
    "protected_path",
]
EXPECTED_KIND = {
    "unknown_field": "invalid_params",
    "unknown_edit_field": "invalid_params",
}


def valid_entry(ws: EngineWorkspace, path: str, style: int) -> dict[str, Any]:
    r = ws.rev(path)
    if style == 0:
        edits: list[dict[str, Any]] = [{"start_line": 1, "end_line": 1, "new_text": "changed"}]
        return {"path": path, "expected_revision": r, "edits": edits}
    if style == 1:
        edits = [{"old_text": "MARK", "new_text": "mark"}]
        return {"path": path, "expected_revision": r, "edits": edits}
    return {"path": path, "expected_revision": r, "content": "replaced\n"}


def faulty_entry(ws: EngineWorkspace, base: str, path: str, fault: str) -> dict[str, Any]:
    r = ws.rev(path)
    if fault == "stale_revision":
        return {"path": path, "expected_revision": rev(b"another text\n"), "content": "x\n"}
    if fault == "overlapping_edits":
        edits: list[dict[str, Any]] = [
            {"start_line": 2, "end_line": 2, "new_text": "x"},
            {"start_line": 1, "end_line": 2, "new_text": "y"},
        ]
        return {"path": path, "expected_revision": r, "edits": edits}
    if fault == "match_not_found":
        edits = [{"old_text": "MARK", "new_text": "m"}, {"old_text": "NOT THERE", "new_text": ""}]
        return {"path": path, "expected_revision": r, "edits": edits}
    if fault == "match_ambiguous":
        return {
            "path": path,
            "expected_revision": r,
            "edits": [{"old_text": "twice", "new_text": ""}],
        }
    if fault == "mixed_edit_kinds":
        edits = [
            {"old_text": "MARK", "new_text": "m"},
            {"start_line": 1, "end_line": 1, "new_text": "x"},
        ]
        return {"path": path, "expected_revision": r, "edits": edits}
    if fault == "unknown_field":
        return {"path": path, "expected_revision": r, "content": "x\n", "zz": 1}
    if fault == "unknown_edit_field":
        edits = [{"old_text": "MARK", "new_text": "m"}, {"old_text": "a", "new_text": "", "zz": 0}]
        return {"path": path, "expected_revision": r, "edits": edits}
    assert fault == "protected_path"
    return {
        "path": f"{base}/.git/config",
        "expected_revision": ws.rev(f"{base}/.git/config"),
        "content": "[core]\n",
    }


def test_invalid_batches_change_nothing(tmp_path: Path) -> None:
    ws = EngineWorkspace(tmp_path)
    counter = itertools.count()

    @ENGINE
    @given(
        bodies=st.lists(st.lists(LINE, max_size=4), min_size=3, max_size=3),
        styles=st.lists(st.integers(0, 2), min_size=3, max_size=3),
        new_file=st.booleans(),
        victim=st.integers(0, 2),
        fault=st.sampled_from(FAULTS),
        crlf=st.booleans(),
        order=st.permutations(range(3)),
    )
    def check(
        bodies: list[list[str]],
        styles: list[int],
        new_file: bool,
        victim: int,
        fault: str,
        crlf: bool,
        order: list[int],
    ) -> None:
        base = f"case{next(counter)}"
        newline = "\r\n" if crlf else "\n"
        paths = [f"{base}/f0.txt", f"{base}/d/f1.txt", f"{base}/f2.txt"]
        for path, rows in zip(paths, bodies, strict=True):
            text = ["head", *rows, "MARK", "twice", "twice", "tail"]
            ws.put(path, newline.join(text) + newline)
        ws.put(f"{base}/.git/config", "[core]\n\tbare = false\n")
        entries = [
            faulty_entry(ws, base, paths[i], fault)
            if i == victim
            else valid_entry(ws, paths[i], styles[i])
            for i in order
        ]
        if new_file:
            entries.append(
                {"path": f"{base}/new/created.txt", "expected_revision": None, "content": "n\n"}
            )
        before = ws.tree()
        err = ws.run_error({"files": entries})
        assert err.kind.value == EXPECTED_KIND.get(fault, fault), err.message
        position = order.index(victim)
        if fault == "stale_revision":
            assert err.data["path"] == paths[victim]
            assert err.data["expected"] == rev(b"another text\n")
            assert err.data["actual"] == ws.rev(paths[victim])
        elif fault == "unknown_field":
            assert err.data["field"] == f"files.{position}.zz"
        elif fault == "unknown_edit_field":
            assert err.data["field"] == f"files.{position}.edits.1.zz"
        elif fault == "match_not_found":
            assert err.data["field"] == f"files.{position}.edits.1.old_text"
        elif fault == "match_ambiguous":
            n = len(bodies[victim])
            assert err.data["lines"] == [n + 3, n + 4]
        elif fault == "protected_path":
            assert err.data["path"] == f"{base}/.git/config"
        assert ws.tree() == before

    try:
        check()
    finally:
        ws.close()
