"""No cut of a tool result leaves a piece of a known value (review 3 of issue 29: R1, R1b).

Every tool result passes the known-value redactor after its tool returns (the one dispatch), and it
hides a value only whole. A producer that bounds its text before that would leave the part of a
value that straddles its cut. Here a known value, raw or in one of its encodings, is placed at
random positions around each cut point: search_text's clip of a long line, git_diff's
``max_bytes``, run_command's head and tail, and a terminal read's cursor, ``max_bytes`` and the
buffer's drop; what the dispatch returns (or the domain, then the pass the dispatch makes) holds
no piece of it. Positive controls: the same placement cut the way it was before the fix (cut,
then the pass) does show the piece, as long as the cut says it is.

A piece is ``PIECE`` (4) characters or more. The cuts hide a straddling piece of any length; the
threshold only keeps out chance matches with what surrounds the piece: the filler (dots), the
marks and git's content lines hold no run of 4 characters of any placed form (checked below),
while a run of 3 hex digits of the hex form could turn up in a number. The review's own tests
count from 8.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from s_code.redaction import MARK, Redactor
from s_code.sandbox import process
from s_code.session.session import Session
from s_code.terminals.buffer import HeadTail
from s_code.tools.builtin import default_registry
from s_code.tools.dispatch import call
from s_code.workspace import search
from s_code.workspace.folders import Folders

PY = sys.executable
VALUE = "zq7Rk2mWv9XbT4nLp8HsYc3Fd6Jg"
FORMS = {
    "raw": VALUE,
    "hex": VALUE.encode().hex(),
    "base64": base64.b64encode(VALUE.encode()).decode().rstrip("="),
}
PIECE = 4
_MARKS = re.compile(
    r"\[REDACTED\]|\[… \d+ more characters\]|\n?\[\.\.\. \d+ characters omitted \.\.\.\]\n?"
)
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def piece(shown: str, form: str) -> int:
    """The length of the longest run of ``form`` (``PIECE`` or more) in ``shown`` without its
    marks; 0 when there is none."""
    text = _MARKS.sub(" ", shown)
    for n in range(len(form), PIECE - 1, -1):
        if any(form[i : i + n] in text for i in range(len(form) - n + 1)):
            return n
    return 0


def straddled(start: int, form: str, cut: int) -> int:
    """How much of ``form`` placed at ``start`` lies before ``cut`` when the cut falls in it."""
    return cut - start if start < cut < start + len(form) else 0


def test_the_surroundings_hold_no_piece_of_any_form() -> None:
    """The threshold's premise: what surrounds a placed value never looks like a piece."""
    around = f". {MARK} [… 1234567890 more characters]\n[... 9876543210 characters omitted ...]\n"
    for form in FORMS.values():
        assert piece(around + "+" + "." * 50, form) == 0
        assert piece(around + form[:PIECE], form) == PIECE  # and a piece is seen


def _session(ws: Path) -> Session:
    return Session(
        folders=Folders.open([(str(ws), None)]),
        registry=default_registry(),
        redactor=Redactor([VALUE]),
    )


def tool(ws: Path, name: str, args: dict[str, Any]) -> Any:
    """``name`` called through the one dispatch, in a session that knows VALUE."""

    async def go() -> Any:
        session = _session(ws)
        try:
            return await call(session, name, args)
        finally:
            session.close()

    return asyncio.run(go())


# -- search_text: a long line clipped at MAX_LINE_CHARS --------------------------------------------

CLIP = search.MAX_LINE_CHARS


@pytest.fixture(scope="module")
def search_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("search")


@given(
    form=st.sampled_from(sorted(FORMS)),
    shift=st.integers(-60, 4),
    after=st.integers(0, 40),
)
@example(form="raw", shift=-15, after=40)  # the review's R1: 15 characters before the clip
@example(form="hex", shift=-30, after=0)
@SETTINGS
def test_a_search_line_clipped_around_a_known_value_shows_none_of_it(
    search_ws: Path, form: str, shift: int, after: int
) -> None:
    placed = FORMS[form]
    start = CLIP + shift
    line = "." * start + placed + "." * after
    (search_ws / "min.js").write_text(line + "\n")
    found = tool(search_ws, "search_text", {"pattern": "^[.]"})
    (match,) = found["matches"]
    assert piece(match["text"], placed) == 0, match["text"]
    # positive control: clipped, then redacted (as before), it shows what lay before the clip
    redactor = Redactor([VALUE])
    before = redactor.redact_known(search._clip(line, str))
    leak = straddled(start, placed, CLIP)
    assert piece(before, placed) == (leak if leak >= PIECE else 0)


# -- git_diff: output cut at max_bytes -------------------------------------------------------------

GIT_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
BOUND = 1000  # the smallest max_bytes git_diff takes


def _git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=ws,
        env=dict(os.environ, **GIT_ENV),
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("git")
    (ws / "log.txt").write_text("start\n")
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "init")
    return ws


def _added(result: dict[str, Any]) -> str:
    """The added lines of every file's patch (the headers aside: their hashes are hex)."""
    lines = "\n".join(f["patch"] for f in result["files"]).split("\n")
    return "\n".join(x for x in lines if x.startswith("+") and not x.startswith("+++"))


@given(form=st.sampled_from(sorted(FORMS)), shift=st.integers(-60, 4))
@example(form="raw", shift=-26)
@example(form="base64", shift=-5)
@example(form="hex", shift=-56)  # a whole value before the bound, its last character a hex start
@SETTINGS
def test_a_diff_cut_at_max_bytes_around_a_known_value_shows_none_of_it(
    repo: Path, form: str, shift: int
) -> None:
    placed = FORMS[form]
    (repo / "log.txt").write_text("start\n" + "." * 900 + "\n")
    header = tool(repo, "git_diff", {})["files"][0]["patch"].index("+" + "." * 900) + 1
    start = BOUND + shift
    (repo / "log.txt").write_text("start\n" + "." * (start - header) + placed + "." * 70 + "\n")
    whole = tool(repo, "git_diff", {})["files"][0]["patch"]
    assert whole.index(MARK) == start  # the value starts where it was placed
    cut = tool(repo, "git_diff", {"max_bytes": BOUND})
    assert cut["truncated"]
    assert piece(_added(cut), placed) == 0, _added(cut)
    # positive control: cut, then redacted (as before), it shows what lay before the bound
    raw = whole.replace(MARK, placed)
    before = Redactor([VALUE]).redact_known(raw[:BOUND])
    leak = straddled(start, placed, BOUND)
    assert piece(before, placed) == (leak if leak >= PIECE else 0)


# -- run_command: the head and the tail kept of a command's output ---------------------------------

HEAD, TAIL = process.HEAD_CHARS, process.TAIL_CHARS


def _run(text: str, redactor: Redactor) -> str:
    """``text`` printed by a real process, through the output path of a command (its stream
    redacted as it comes, its head and tail kept), then the dispatch's known-value pass."""
    code = "import sys; sys.stdout.write(sys.argv[1])"
    outcome = asyncio.run(
        process.run([PY, "-c", code, text], {}, "/", 30, lambda _n, _t: None, redactor)
    )
    assert outcome.truncated
    return redactor.redact_known(outcome.output)


def _layout(which: str, shift: int, placed: str) -> tuple[str, int, int]:
    """The text, where ``placed`` starts in it, and the cut near it."""
    if which == "head":
        start, rest = HEAD + shift, TAIL + 1000
    else:
        start, rest = HEAD + 1000, TAIL - shift - len(placed)
    text = "." * start + placed + "." * rest
    return text, start, HEAD if which == "head" else len(text) - TAIL


@given(
    which=st.sampled_from(["head", "tail"]),
    form=st.sampled_from(sorted(FORMS)),
    shift=st.integers(-60, 4),
)
@example(which="head", form="raw", shift=-10)
@example(which="tail", form="hex", shift=-30)
@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_command_output_cut_around_a_known_value_shows_none_of_it(
    which: str, form: str, shift: int
) -> None:
    placed = FORMS[form]
    text, start, cut = _layout(which, shift, placed)
    shown = _run(text, Redactor([VALUE]))
    assert piece(shown, placed) == 0
    # positive control: cut, then redacted (as before the stream was redacted first)
    before = Redactor([VALUE]).redact_known(f"{text[:HEAD]}\n[...]\n{text[-TAIL:]}")
    kept = straddled(start, placed, cut)
    leak = kept if which == "head" else len(placed) - kept
    assert piece(before, placed) == (leak if kept and leak >= PIECE else 0)


@given(
    which=st.sampled_from(["head", "tail"]),
    form=st.sampled_from(sorted(FORMS)),
    shift=st.integers(-60, 4),
)
@example(which="head", form="raw", shift=-10)
@example(which="tail", form="raw", shift=-10)
@example(which="head", form="hex", shift=-56)  # whole in the head, its last character a hex start
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_value_learned_after_it_was_shown_is_not_cut_into_pieces(
    which: str, form: str, shift: int
) -> None:
    """A value the redactor learns while a command runs (a credential resolved meanwhile) was
    kept raw; the head and tail rendered at the end leave no piece of it at their cuts."""
    placed = FORMS[form]
    text, start, cut = _layout(which, shift, placed)
    kept = process.Kept()
    for i in range(0, len(text), 4096):
        kept.add(text[i : i + 4096])
    redactor = Redactor()
    before, _ = kept.render(redactor)  # positive control: nothing known at the cut yet
    redactor.add_known([VALUE])
    shown, truncated = kept.render(redactor)
    assert truncated and piece(redactor.redact_known(shown), placed) == 0
    at = straddled(start, placed, cut)
    leak = at if which == "head" else len(placed) - at
    assert piece(redactor.redact_known(before), placed) == (leak if at and leak >= PIECE else 0)


# -- terminal_read: any cursor, any max_bytes, and the buffer's drop ------------------------------


def _terminal(layout: list[int], placed: str, head: int, tail: int) -> tuple[HeadTail, bytes]:
    data = b"".join(b"." * gap + placed.encode() for gap in layout) + b"." * 7
    buf = HeadTail(head=head, tail=tail)
    for i in range(0, len(data), 13):
        buf.append(data[i : i + 13])
    return buf, data


def _reads(buf: HeadTail, known: tuple[bytes, ...], steps: list[tuple[int, int]]) -> Iterator[str]:
    redactor = Redactor([VALUE])
    for cursor, size in steps:
        yield redactor.redact_known(buf.read(cursor, size, known).output)


@given(
    form=st.sampled_from(sorted(FORMS)),
    layout=st.lists(st.integers(0, 90), min_size=1, max_size=4),
    head=st.integers(20, 120),
    tail=st.integers(40, 160),
    steps=st.lists(st.tuples(st.integers(0, 600), st.integers(1, 80)), min_size=1, max_size=12),
)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_terminal_read_from_anywhere_shows_no_piece_of_a_known_value(
    form: str, layout: list[int], head: int, tail: int, steps: list[tuple[int, int]]
) -> None:
    """Output kept raw (the value was learned after it was printed), read from any cursor with
    any max_bytes: no read shows a piece; and reading on from 0 ends, showing every value that
    was kept whole as the mark."""
    placed = FORMS[form]
    buf, data = _terminal(layout, placed, head, tail)
    known = Redactor([VALUE]).known_bytes
    for shown in _reads(buf, known, steps):
        assert piece(shown, placed) == 0, shown
    cursor, size, parts = 0, steps[0][1], []
    while cursor < buf.total:
        part = buf.read(cursor, size, known)
        assert part.cursor > cursor, "a read that makes no progress"
        cursor = part.cursor
        parts.append(Redactor([VALUE]).redact_known(part.output))
    if buf.dropped == 0:  # all kept: every value shows as the mark, the filler in full
        assert "".join(parts) == data.decode().replace(placed, MARK)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_terminal_reads_cut_inside_a_value_would_show_pieces(form: str) -> None:
    """Positive control of the property above: the same reads without the known values (as
    before) show pieces of it, at a read's end, a read's start, and the drop."""
    placed = FORMS[form]
    tail = 7 + len(placed) // 2  # the drop cuts the second value in half
    buf, _ = _terminal([30, 200], placed, head=40, tail=tail)
    reads = [(0, 35), (35, 100), (buf.total - tail, 100)]
    bare = list(_reads(buf, (), reads))
    assert [piece(s, placed) >= PIECE for s in bare] == [True, True, True], bare
    known = Redactor([VALUE]).known_bytes
    for shown in _reads(buf, known, reads):
        assert piece(shown, placed) == 0
