"""s_code.edits.text: line edits, exact text edits, line endings and numbered-prefix detection.

Every expected value here is written out by hand from the rules: line ranges are 1-based and
inclusive on the original numbered content (split on LF; a final newline opens no new line),
``end_line = start_line - 1`` inserts before ``start_line``, ``''`` deletes, ranges never overlap,
text edits match exactly once and apply in array order, and a CRLF file stays CRLF.
"""

from __future__ import annotations

import pytest

from s_code.edits.text import (
    LineEdit,
    TextEdit,
    apply_line_edits,
    apply_text_edits,
    check_not_numbered,
    newline_of,
    to_newline,
)
from s_code.protocol.errors import ErrorKind, SCodeError

ABC = "a\nb\nc\n"
ABC_CRLF = "a\r\nb\r\nc\r\n"


def lines(original: str, *edits: tuple[int, int, str]) -> str:
    return apply_line_edits(
        original, [LineEdit(s, e, t, i) for i, (s, e, t) in enumerate(edits)], "files.0."
    )


def texts(original: str, *edits: tuple[str, str]) -> str:
    return apply_text_edits(
        original, [TextEdit(o, n, i) for i, (o, n) in enumerate(edits)], "files.0."
    )


def line_error(original: str, *edits: tuple[int, int, str]) -> SCodeError:
    with pytest.raises(SCodeError) as info:
        lines(original, *edits)
    return info.value


def text_error(original: str, *edits: tuple[str, str]) -> SCodeError:
    with pytest.raises(SCodeError) as info:
        texts(original, *edits)
    return info.value


# --- line endings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "newline"),
    [
        ("", "\n"),
        ("one line", "\n"),
        ("a\nb\n", "\n"),
        ("a\r\nb\r\n", "\r\n"),
        ("a\r\nb\nc\n", "\r\n"),  # the first line break decides
        ("a\nb\r\n", "\n"),
        ("\r\n", "\r\n"),
        ("\nx\r\n", "\n"),
    ],
)
def test_newline_of(text: str, newline: str) -> None:
    assert newline_of(text) == newline


def test_to_newline_rewrites_lf_and_crlf_without_doubling() -> None:
    assert to_newline("a\nb\r\nc", "\r\n") == "a\r\nb\r\nc"
    assert to_newline("a\nb\r\nc", "\n") == "a\nb\nc"
    assert to_newline("", "\r\n") == ""


# --- line edits: replacement ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ((2, 2, "B"), "a\nB\nc\n"),
        ((2, 2, "B\n"), "a\nB\nc\n"),  # one trailing newline in new_text is the same line
        ((2, 2, "B\n\n"), "a\nB\n\nc\n"),  # a second one is an empty line
        ((2, 2, "\n"), "a\n\nc\n"),  # replace by one empty line
        ((1, 2, "x\ny\nz"), "x\ny\nz\nc\n"),
        ((1, 3, "only"), "only\n"),
        ((3, 3, "C\nD"), "a\nb\nC\nD\n"),  # at the end
        ((1, 1, "A"), "A\nb\nc\n"),  # at the start
    ],
)
def test_replace_ranges(edit: tuple[int, int, str], expected: str) -> None:
    assert lines(ABC, edit) == expected


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ((2, 2, ""), "a\nc\n"),
        ((1, 1, ""), "b\nc\n"),
        ((3, 3, ""), "a\nb\n"),
        ((1, 3, ""), ""),
        ((2, 3, ""), "a\n"),
    ],
)
def test_empty_new_text_deletes_the_range(edit: tuple[int, int, str], expected: str) -> None:
    assert lines(ABC, edit) == expected


def test_ranges_refer_to_the_original_numbering_whatever_the_order() -> None:
    # Edit 0 grows line 1 into three lines; edit 1 still names original line 3.
    assert lines(ABC, (1, 1, "x\ny\nz"), (3, 3, "C")) == "x\ny\nz\nb\nC\n"
    assert lines(ABC, (3, 3, "C"), (1, 1, "A")) == "A\nb\nC\n"
    assert lines(ABC, (3, 3, ""), (1, 1, "one\ntwo")) == "one\ntwo\nb\n"


def test_adjacent_ranges_are_not_overlapping() -> None:
    assert lines(ABC, (1, 1, "A"), (2, 2, "B"), (3, 3, "C")) == "A\nB\nC\n"
    assert lines(ABC, (2, 3, "BC"), (1, 1, "A")) == "A\nBC\n"


# --- line edits: insertion ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ((1, 0, "top"), "top\na\nb\nc\n"),
        ((2, 1, "x"), "a\nx\nb\nc\n"),
        ((3, 2, "x\ny"), "a\nb\nx\ny\nc\n"),
        ((4, 3, "d"), "a\nb\nc\nd\n"),  # after the last line
        ((4, 3, "d\n"), "a\nb\nc\nd\n"),
        ((2, 1, "\n"), "a\n\nb\nc\n"),  # insert one empty line
        ((2, 1, ""), ABC),  # inserting nothing changes nothing
    ],
)
def test_insert_before_start_line(edit: tuple[int, int, str], expected: str) -> None:
    assert lines(ABC, edit) == expected


def test_insertion_and_replacement_at_one_line() -> None:
    # Inserting before line 2 and replacing line 2 are disjoint: the insertion comes first.
    assert lines(ABC, (2, 2, "B"), (2, 1, "ins")) == "a\nins\nB\nc\n"
    # Inserting right after a replaced range is also disjoint.
    assert lines(ABC, (1, 2, "X"), (3, 2, "i")) == "X\ni\nc\n"
    assert lines(ABC, (4, 3, "d"), (3, 3, "C")) == "a\nb\nC\nd\n"


def test_insertions_at_several_points() -> None:
    assert lines(ABC, (4, 3, "end"), (1, 0, "start"), (3, 2, "mid")) == (
        "start\na\nb\nmid\nc\nend\n"
    )


# --- line edits: a deletion next to another edit ----------------------------------------------
# A deleted range contributes no line at all, so an edit that starts right after it must not see
# a phantom empty line there.


def test_deletion_followed_by_replacement_of_the_next_line() -> None:
    assert lines(ABC, (2, 2, ""), (3, 3, "C")) == "a\nC\n"


def test_two_adjacent_deletions() -> None:
    assert lines(ABC, (1, 1, ""), (2, 2, "")) == "c\n"


def test_deletion_followed_by_insertion_after_it() -> None:
    assert lines(ABC, (2, 2, ""), (3, 2, "x")) == "a\nx\nc\n"


def test_empty_insertion_before_a_replacement_is_a_no_op() -> None:
    assert lines(ABC, (2, 1, ""), (2, 2, "B")) == "a\nB\nc\n"


def test_deletion_of_last_lines_then_append() -> None:
    assert lines(ABC, (3, 3, ""), (4, 3, "d")) == "a\nb\nd\n"


# --- line edits: files without a trailing newline, empty files ------------------------------


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ((2, 2, "B"), "a\nB"),  # the last line is replaced: still no final newline
        ((2, 2, "B\nC"), "a\nB\nC"),
        ((2, 2, "B\n"), "a\nB\n"),  # ... unless new_text brings one
        ((1, 1, "A"), "A\nb"),
        ((1, 2, "x"), "x"),
        ((2, 2, ""), "a\n"),
        ((1, 2, ""), ""),
        ((2, 1, "x"), "a\nx\nb"),
        ((3, 2, "c"), "a\nb\nc\n"),  # appending after the unterminated line terminates it
    ],
)
def test_file_without_trailing_newline(edit: tuple[int, int, str], expected: str) -> None:
    assert lines("a\nb", edit) == expected


def test_empty_file() -> None:
    assert lines("", (1, 0, "x")) == "x\n"
    assert lines("", (1, 0, "x\ny")) == "x\ny\n"
    assert lines("", (1, 0, "")) == ""
    err = line_error("", (1, 1, "x"))
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "files.0.edits.0.end_line"


def test_file_of_one_empty_line_has_one_line() -> None:
    assert lines("\n", (1, 1, "x")) == "x\n"
    assert lines("\n", (2, 1, "x")) == "\nx\n"
    assert line_error("\n", (2, 2, "x")).data["field"] == "files.0.edits.0.end_line"


def test_single_line_without_newline() -> None:
    assert lines("solo", (1, 1, "SOLO")) == "SOLO"
    assert lines("solo", (1, 0, "top")) == "top\nsolo"


# --- line edits: CRLF -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ((2, 2, "x\ny"), "a\r\nx\r\ny\r\nc\r\n"),
        ((2, 2, "x\r\ny"), "a\r\nx\r\ny\r\nc\r\n"),  # CRLF in new_text is not doubled
        ((2, 2, "x\ny\n"), "a\r\nx\r\ny\r\nc\r\n"),
        ((1, 0, "top"), "top\r\na\r\nb\r\nc\r\n"),
        ((4, 3, "d"), "a\r\nb\r\nc\r\nd\r\n"),
        ((2, 2, ""), "a\r\nc\r\n"),
        ((3, 3, "C"), "a\r\nb\r\nC\r\n"),
    ],
)
def test_crlf_file_stays_crlf(edit: tuple[int, int, str], expected: str) -> None:
    assert lines(ABC_CRLF, edit) == expected


def test_crlf_file_without_trailing_newline() -> None:
    assert lines("a\r\nb", (2, 2, "B")) == "a\r\nB"
    assert lines("a\r\nb", (2, 2, "B\nC")) == "a\r\nB\r\nC"
    assert lines("a\r\nb", (3, 2, "c")) == "a\r\nb\r\nc\r\n"


def test_lf_file_gets_lf_even_from_crlf_new_text() -> None:
    assert lines(ABC, (2, 2, "x\r\ny")) == "a\nx\ny\nc\n"


# --- line edits: range validation and overlap -----------------------------------------------


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ((0, 0, "x"), "files.0.edits.0.start_line"),
        ((0, -1, "x"), "files.0.edits.0.start_line"),
        ((-3, 1, "x"), "files.0.edits.0.start_line"),
        ((3, 1, "x"), "files.0.edits.0.end_line"),  # end more than one before start
        ((2, 4, "x"), "files.0.edits.0.end_line"),  # past the end (3 lines)
        ((4, 4, "x"), "files.0.edits.0.end_line"),
        ((5, 4, "x"), "files.0.edits.0.end_line"),  # insertion past the end
    ],
)
def test_invalid_ranges(edit: tuple[int, int, str], field: str) -> None:
    err = line_error(ABC, edit)
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == field


@pytest.mark.parametrize(
    ("edits", "pair"),
    [
        ([(1, 1, "x"), (1, 1, "y")], [0, 1]),  # the same line twice
        ([(1, 2, "x"), (2, 3, "y")], [0, 1]),  # sharing line 2
        ([(2, 3, "x"), (1, 2, "y")], [0, 1]),  # the same, given in the other order
        ([(1, 3, "x"), (2, 2, "y")], [0, 1]),  # nested
        ([(2, 2, "y"), (1, 3, "x")], [0, 1]),
        ([(2, 1, "x"), (2, 1, "y")], [0, 1]),  # two insertions at one point
        ([(1, 3, "x"), (2, 1, "y")], [0, 1]),  # an insertion inside a replaced range
        ([(1, 3, "x"), (3, 2, "y")], [0, 1]),
        ([(1, 1, "x"), (3, 3, "y"), (2, 3, "z")], [1, 2]),  # not next to each other in the array
        ([(4, 3, "x"), (1, 1, "y"), (4, 3, "z")], [0, 2]),
    ],
)
def test_overlapping_edits(edits: list[tuple[int, int, str]], pair: list[int]) -> None:
    err = line_error(ABC, *edits)
    assert err.kind is ErrorKind.OVERLAPPING_EDITS
    assert sorted(err.data["edits"]) == [f"files.0.edits.{i}" for i in pair]


def test_overlap_names_exactly_the_two_edits() -> None:
    err = line_error(ABC, (3, 3, "ok"), (1, 2, "x"), (2, 2, "y"))
    assert err.kind is ErrorKind.OVERLAPPING_EDITS
    assert sorted(err.data["edits"]) == ["files.0.edits.1", "files.0.edits.2"]


def test_nothing_is_numbered_in_line_edit_text() -> None:
    err = line_error(ABC, (1, 1, "     1\tx\n     2\ty"))
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "files.0.edits.0.new_text"


# --- text edits -----------------------------------------------------------------------------


def test_text_edit_replaces_the_unique_occurrence() -> None:
    assert texts("alpha\nbeta\ngamma\n", ("beta", "BETA")) == "alpha\nBETA\ngamma\n"
    assert texts("alpha\nbeta\ngamma\n", ("a\nbeta\ng", "A\ng")) == "alphA\ngamma\n"
    assert texts("alpha\nbeta\n", ("beta\n", "")) == "alpha\n"
    assert texts("a\nb", ("b", "c")) == "a\nc"  # no newline is added


def test_text_edits_apply_in_array_order() -> None:
    assert texts("a\nb\n", ("a", "c"), ("c\nb", "d")) == "d\n"
    assert texts("one two three", ("one", "1"), ("1 two", "12"), ("12 three", "123")) == "123"


def test_a_later_edit_sees_an_earlier_replacement_ambiguous() -> None:
    err = text_error("x\ny\n", ("y", "x"), ("x", "z"))
    assert err.kind is ErrorKind.MATCH_AMBIGUOUS
    assert err.data["field"] == "files.0.edits.1.old_text"
    assert err.data["lines"] == [1, 2]


def test_a_later_edit_sees_an_earlier_replacement_gone() -> None:
    err = text_error("a\nb\n", ("a", "b"), ("a", "c"))
    assert err.kind is ErrorKind.MATCH_NOT_FOUND
    assert err.data["field"] == "files.0.edits.1.old_text"


def test_match_not_found_is_exact_whitespace_included() -> None:
    for old in ("foo bar", "Foo  bar", "foo  bar\n\n", "  foo"):
        err = text_error("foo  bar\n", (old, "x"))
        assert err.kind is ErrorKind.MATCH_NOT_FOUND, old
        assert err.data["field"] == "files.0.edits.0.old_text"


def test_match_ambiguous_lists_the_line_of_every_match() -> None:
    err = text_error("foo\nbar\nfoo\nbaz foo\n", ("foo", "x"))
    assert err.kind is ErrorKind.MATCH_AMBIGUOUS
    assert err.data["lines"] == [1, 3, 4]
    assert err.data["field"] == "files.0.edits.0.old_text"


def test_match_ambiguous_multi_line_block() -> None:
    text = "if x:\n    pass\nelse:\n    y()\nif x:\n    pass\n"
    err = text_error(text, ("if x:\n    pass", "z"))
    assert err.kind is ErrorKind.MATCH_AMBIGUOUS
    assert err.data["lines"] == [1, 5]


def test_empty_old_text_is_invalid() -> None:
    err = text_error("abc", ("", "x"))
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "files.0.edits.0.old_text"


def test_text_edits_in_a_crlf_file() -> None:
    assert texts(ABC_CRLF, ("a\nb", "x\ny")) == "x\r\ny\r\nc\r\n"
    assert texts(ABC_CRLF, ("a\r\nb", "x\ny")) == "x\r\ny\r\nc\r\n"
    assert texts(ABC_CRLF, ("b\n", "")) == "a\r\nc\r\n"
    assert texts(ABC_CRLF, ("c", "c\nd")) == "a\r\nb\r\nc\r\nd\r\n"
    err = text_error("x\r\ny\r\nx\r\n", ("x\n", "z"))
    assert err.kind is ErrorKind.MATCH_AMBIGUOUS
    assert err.data["lines"] == [1, 3]


def test_text_edit_in_an_lf_file_keeps_lf() -> None:
    assert texts(ABC, ("b", "x\ny")) == "a\nx\ny\nc\n"
    # Line edits turn CRLF in new_text into the file's LF; text edits must do the same.
    assert texts(ABC, ("b", "x\r\ny")) == "a\nx\ny\nc\n"


def test_text_edit_with_mixed_new_text_keeps_a_crlf_file_crlf() -> None:
    assert texts(ABC_CRLF, ("b", "x\r\ny\nz")) == "a\r\nx\r\ny\r\nz\r\nc\r\n"


def test_text_edit_new_text_is_checked_for_numbers() -> None:
    err = text_error(ABC, ("b", "     2\tb"))
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "files.0.edits.0.new_text"


# --- numbered-prefix detection --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "     1\tfoo\n     2\tbar",
        "     1\tfoo\n     2\tbar\n",
        "  12\tx",
        "1\tx",
        "    10\tfirst\n\n    12\tthird",  # blank lines are ignored
        "     7\t",
        "     1\tfoo\r\n     2\tbar\r\n",
    ],
)
def test_numbered_text_is_refused(text: str) -> None:
    with pytest.raises(SCodeError) as info:
        check_not_numbered(text, "files.3.edits.2.new_text")
    assert info.value.kind is ErrorKind.INVALID_PARAMS
    assert info.value.data["field"] == "files.3.edits.2.new_text"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "plain",
        "     1\tfoo\nbar",  # not every line carries a prefix
        "1 foo",  # no tab
        "a\tb",
        "x 1\tb",
        "1.\tfoo",
        "\t1\tfoo\nplain",
    ],
)
def test_unnumbered_text_is_accepted(text: str) -> None:
    check_not_numbered(text, "f")
