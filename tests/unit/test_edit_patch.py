"""s_code.edits.patch: the strict ``*** Begin Patch`` subset, every refusal rule, and its results.

Expected results follow OpenAI Codex's apply_patch inside the subset: an added file is each ``+``
line plus ``\\n``; an update replaces the hunk's old lines by its new lines at the unique match,
searching after the previous hunk; the result ends with a newline.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from s_code.edits import patch as P
from s_code.protocol.errors import ErrorKind, SCodeError
from tests.unit.test_edit_request import BEGIN, END, EngineWorkspace, rev


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[EngineWorkspace]:
    w = EngineWorkspace(tmp_path)
    yield w
    w.close()


def parse_error(text: str) -> SCodeError:
    with pytest.raises(SCodeError) as info:
        P.parse(text)
    return info.value


def update(original: str, body: str) -> str:
    (section,) = P.parse(BEGIN + "*** Update File: f.txt\n" + body + END)
    return P.apply_update(original, section)


def update_error(original: str, body: str) -> SCodeError:
    (section,) = P.parse(BEGIN + "*** Update File: f.txt\n" + body + END)
    with pytest.raises(SCodeError) as info:
        P.apply_update(original, section)
    return info.value


# --- patch_syntax: every rule with its patch line number ------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "rule"),
    [
        ("", 1, "begin"),
        ("*** Begin Patch", 1, "end"),
        ("*** Begin Patch \n*** Add File: a\n+x\n" + END, 1, "begin"),
        (" *** Begin Patch\n*** Add File: a\n+x\n" + END, 1, "begin"),
        ("*** begin patch\n*** Add File: a\n+x\n" + END, 1, "begin"),
        ("\n" + BEGIN + "*** Add File: a\n+x\n" + END, 1, "begin"),
        (BEGIN + "*** Add File: a\n+x\n", 3, "end"),
        (BEGIN + "*** Add File: a\n+x\n*** End Patch ", 4, "end"),
        (BEGIN + "*** Add File: a\n+x\n" + END + "\n", 5, "end"),
        (BEGIN + END, 1, "empty"),
        (BEGIN + "*** Add File: a\r\n+x\n" + END, 2, "line_endings"),
        (BEGIN + "*** Add File: a\n+x\n" + END.replace("\n", "\r\n"), 4, "line_endings"),
        (BEGIN + "+x\n" + END, 2, "header"),
        (BEGIN + "*** Frobnicate File: a\n" + END, 2, "header"),
        (BEGIN + "*** Add File: a\n+x\n*** End Patch\n" + END, 4, "header"),
        (BEGIN + "*** Add File: \n+x\n" + END, 2, "path"),
        (BEGIN + "*** Add File:  a\n+x\n" + END, 2, "path"),
        (BEGIN + "*** Update File: a \n@@\n-x\n" + END, 2, "path"),
        (BEGIN + "*** Add File: a\n+x\n*** Add File: a\n+y\n" + END, 4, "duplicate_path"),
        (BEGIN + "*** Add File: a\n+x\n*** Update File: a\n@@\n-x\n" + END, 4, "duplicate_path"),
        (BEGIN + "*** Add File: a\n+x\n x\n" + END, 4, "add_line"),
        (BEGIN + "*** Add File: a\n\n" + END, 3, "add_line"),
        (BEGIN + "*** Add File: a\n@@\n+x\n" + END, 3, "add_line"),
        (BEGIN + "*** Update File: a\n-x\n+y\n" + END, 3, "missing_hunk_header"),
        (BEGIN + "*** Update File: a\n x\n@@\n-x\n" + END, 3, "missing_hunk_header"),
        (BEGIN + "*** Update File: a\n" + END, 2, "missing_hunk_header"),
        (BEGIN + "*** Update File: a\n*** Add File: b\n+x\n" + END, 2, "missing_hunk_header"),
        (BEGIN + "*** Update File: a\n@@ -1,2 +1,2 @@\n-x\n" + END, 3, "hunk_header"),
        (BEGIN + "*** Update File: a\n@@ def f():\n-x\n" + END, 3, "hunk_header"),
        (BEGIN + "*** Update File: a\n@@ \n-x\n" + END, 3, "hunk_header"),
        (BEGIN + "*** Update File: a\n@@@\n-x\n" + END, 3, "hunk_header"),
        (BEGIN + "*** Update File: a\n@@\n-x\n@@ class A\n-y\n" + END, 5, "hunk_header"),
        (BEGIN + "*** Update File: a\n@@\n@@\n-x\n" + END, 3, "empty_hunk"),
        (BEGIN + "*** Update File: a\n@@\n-x\n@@\n" + END, 5, "empty_hunk"),
        (BEGIN + "*** Update File: a\n@@\n+x\n" + END, 3, "unanchored_hunk"),
        (BEGIN + "*** Update File: a\n@@\n-x\n@@\n+y\n+z\n" + END, 5, "unanchored_hunk"),
        (BEGIN + "*** Update File: a\n@@\n x\n\n y\n" + END, 5, "line_prefix"),
        (BEGIN + "*** Update File: a\n@@\n x\nplain\n" + END, 5, "line_prefix"),
        (BEGIN + "*** Update File: a\n@@\n x\n\tindented\n" + END, 5, "line_prefix"),
        (BEGIN + "*** Update File: a\n@@\n x\n*x\n" + END, 5, "line_prefix"),
    ],
)
def test_patch_syntax_rules(text: str, line: int, rule: str) -> None:
    err = parse_error(text)
    assert err.kind is ErrorKind.PATCH_SYNTAX
    assert (err.data["line"], err.data["rule"]) == (line, rule)
    assert err.data["field"] == "patch"
    assert f"patch line {line}" in err.message


@pytest.mark.parametrize(
    ("text", "line", "op"),
    [
        (BEGIN + "*** Delete File: a\n" + END, 2, "delete"),
        (BEGIN + "*** Add File: b\n+x\n*** Delete File: a\n" + END, 4, "delete"),
        (BEGIN + "*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n" + END, 3, "move"),
        (BEGIN + "*** Update File: a\n@@\n-x\n+y\n*** Move to: b\n" + END, 6, "move"),
        (BEGIN + "*** Update File: a\n@@\n x\n+y\n*** End of File\n" + END, 6, "end_of_file"),
    ],
)
def test_unsupported_operations(text: str, line: int, op: str) -> None:
    err = parse_error(text)
    assert err.kind is ErrorKind.UNSUPPORTED_PATCH_OP
    assert (err.data["line"], err.data["op"]) == (line, op)


# --- parsing results ------------------------------------------------------------------------


def test_add_file_content_is_each_plus_line_with_a_newline() -> None:
    (f,) = P.parse(BEGIN + "*** Add File: dir/new.txt\n+first\n+\n+  third  \n+-x\n+@@\n" + END)
    assert (f.path, f.op, f.line) == ("dir/new.txt", "add", 2)
    assert f.content == "first\n\n  third  \n-x\n@@\n"


def test_add_file_without_lines_is_empty() -> None:
    (f,) = P.parse(BEGIN + "*** Add File: empty.txt\n" + END)
    assert f.content == ""


def test_patch_without_final_newline_parses() -> None:
    (f,) = P.parse(BEGIN + "*** Add File: a\n+x\n*** End Patch")
    assert f.content == "x\n"


def test_hunks_are_parsed_in_order_with_their_lines() -> None:
    text = (
        BEGIN
        + "*** Update File: a.py\n@@\n def f():\n-    return 1\n+    return 2\n@@\n-x = 1\n+x = 2\n"
        "+y = 3\n" + "*** Add File: b.py\n+b\n" + END
    )
    a, b = P.parse(text)
    assert (a.path, a.op, b.path, b.op) == ("a.py", "update", "b.py", "add")
    assert [(h.line, h.old, h.new) for h in a.hunks] == [
        (3, ["def f():", "    return 1"], ["def f():", "    return 2"]),
        (7, ["x = 1"], ["x = 2", "y = 3"]),
    ]
    assert b.content == "b\n"


def test_context_line_of_one_space_is_an_empty_line() -> None:
    (f,) = P.parse(BEGIN + "*** Update File: a\n@@\n x\n \n-y\n" + END)
    assert f.hunks[0].old == ["x", "", "y"]
    assert f.hunks[0].new == ["x", ""]


# --- applying updates -----------------------------------------------------------------------

SRC = "one\ntwo\nthree\nfour\nfive\n"


def test_single_hunk() -> None:
    assert update(SRC, "@@\n two\n-three\n+THREE\n four\n") == "one\ntwo\nTHREE\nfour\nfive\n"


def test_hunk_at_file_start_and_end() -> None:
    assert update(SRC, "@@\n-one\n+ONE\n two\n") == "ONE\ntwo\nthree\nfour\nfive\n"
    assert update(SRC, "@@\n four\n-five\n+FIVE\n+six\n") == "one\ntwo\nthree\nfour\nFIVE\nsix\n"


def test_deletion_only_hunk() -> None:
    assert update(SRC, "@@\n one\n-two\n-three\n four\n") == "one\nfour\nfive\n"
    assert update("only\n", "@@\n-only\n") == ""


def test_insertion_between_context_lines() -> None:
    assert update(SRC, "@@\n two\n+2.5\n three\n") == "one\ntwo\n2.5\nthree\nfour\nfive\n"


def test_several_hunks_apply_in_order() -> None:
    body = "@@\n-one\n+1\n@@\n three\n-four\n+4\n@@\n-five\n+5\n"
    assert update(SRC, body) == "1\ntwo\nthree\n4\n5\n"


def test_hunks_out_of_order_do_not_match() -> None:
    err = update_error(SRC, "@@\n-four\n+4\n@@\n-two\n+2\n")
    assert err.kind is ErrorKind.MATCH_NOT_FOUND
    assert (err.data["line"], err.data["path"]) == (6, "f.txt")


def test_uniqueness_counts_only_after_the_previous_hunk() -> None:
    text = "def a():\n    pass\n\ndef b():\n    pass\n"
    body = "@@\n def a():\n-    pass\n+    return 1\n@@\n-    pass\n+    return 2\n"
    assert update(text, body) == "def a():\n    return 1\n\ndef b():\n    return 2\n"


def test_first_hunk_is_ambiguous_in_the_whole_file() -> None:
    err = update_error("a\nb\nc\nb\n", "@@\n-b\n+B\n")
    assert err.kind is ErrorKind.MATCH_AMBIGUOUS
    assert (err.data["line"], err.data["lines"]) == (3, [2, 4])


def test_a_hunk_does_not_match_the_previous_hunks_new_lines() -> None:
    # Hunk 1 turns 'a' into 'b'; hunk 2's 'b' is the original line 2 only.
    assert update("a\nb\n", "@@\n-a\n+b\n@@\n-b\n+c\n") == "b\nc\n"


def test_ambiguity_after_the_previous_hunk_reports_the_files_line_numbers() -> None:
    # The model numbers lines as read_file showed them: 'b' is at lines 3 and 4 of the file,
    # whatever hunk 1 inserted above them.
    err = update_error("x\na\nb\nb\n", "@@\n x\n+new1\n+new2\n@@\n-b\n+B\n")
    assert err.kind is ErrorKind.MATCH_AMBIGUOUS
    assert (err.data["line"], err.data["lines"]) == (7, [3, 4])


def test_matching_is_exact_no_whitespace_tolerance() -> None:
    for body in ("@@\n-two \n+2\n", "@@\n- two\n+2\n", "@@\n-Two\n+2\n", "@@\n-tw\n+2\n"):
        err = update_error(SRC, body)
        assert err.kind is ErrorKind.MATCH_NOT_FOUND, body
        assert err.data["line"] == 3


def test_hunks_match_complete_lines_only() -> None:
    err = update_error("prefix two suffix\n", "@@\n-two\n+2\n")
    assert err.kind is ErrorKind.MATCH_NOT_FOUND


def test_unicode_lines() -> None:
    text = "größe = 1\n名前 = 'x'\nemoji = '🎉'\n"
    body = "@@\n größe = 1\n-名前 = 'x'\n+名前 = 'ÿ'\n"
    assert update(text, body) == "größe = 1\n名前 = 'ÿ'\nemoji = '🎉'\n"


def test_lines_outside_the_hunks_stay_as_they_were() -> None:
    # Codex 0.169 (tests/oracle/): an update changes the lines its hunks name and nothing else;
    # blank lines at the end of the file are lines like the others (issue 22).
    assert update("a\n\n", "@@\n-a\n+b\n") == "b\n\n"
    assert update("x\ny\n\n", "@@\n-x\n+X\n") == "X\ny\n\n"
    assert update("a\n\n\n", "@@\n a\n-\n") == "a\n\n"
    assert update("\n\na\n\n", "@@\n-a\n") == "\n\n\n"


def test_a_hunk_adds_and_removes_blank_lines_at_the_end() -> None:
    assert update("a\n", "@@\n a\n+\n") == "a\n\n"
    assert update("a\nb\n", "@@\n-b\n+\n") == "a\n\n"
    assert update("a\n\n", "@@\n a\n-\n") == "a\n"


def test_a_cr_inside_a_patch_line_is_an_ordinary_character() -> None:
    # Codex does not end patch lines at a lone CR either: the new line holds it, byte for byte
    # (and the file it makes is one the patch form then refuses to update).
    assert update("a\n", "@@\n a\n+b\rc\n") == "a\nb\rc\n"
    (f,) = P.parse(BEGIN + "*** Add File: n\n+x\ry\n" + END)
    assert f.content == "x\ry\n"
    err = update_error("a\n", "@@\n-a\rb\n+c\n")
    assert err.kind is ErrorKind.MATCH_NOT_FOUND


def test_update_of_an_empty_file_cannot_match() -> None:
    err = update_error("", "@@\n-x\n")
    assert err.kind is ErrorKind.MATCH_NOT_FOUND


@pytest.mark.parametrize(
    ("original", "op"),
    [
        ("a\r\nb\r\n", "crlf_target"),
        ("a\nb\r\nc\n", "crlf_target"),  # one CRLF is enough
        ("a\nb", "no_trailing_newline"),
        ("a", "no_trailing_newline"),
        ("a\rb\nc\n", "lone_cr_target"),  # Codex would end a line at the CR
        ("a\nb\rc\n", "lone_cr_target"),  # wherever it is: Codex rewrites the endings after it
        ("a\n\r", "lone_cr_target"),
        ("a\rb\r\n", "crlf_target"),
    ],
)
def test_targets_the_subset_cannot_express(original: str, op: str) -> None:
    err = update_error(original, "@@\n-a\n+A\n")
    assert err.kind is ErrorKind.UNSUPPORTED_PATCH_OP
    assert (err.data["op"], err.data["path"]) == (op, "f.txt")
    assert "content" in err.message  # points to whole-file replacement


# --- through the engine ---------------------------------------------------------------------


async def test_patch_updates_and_adds(ws: EngineWorkspace) -> None:
    r = ws.put("src/a.txt", SRC)
    patch = (
        BEGIN
        + "*** Update File: src/a.txt\n@@\n one\n-two\n+TWO\n"
        + "*** Add File: new/dir/b.txt\n+hello\n+world\n"
        + END
    )
    result = await ws.apply({"patch": patch, "revisions": {"src/a.txt": r, "new/dir/b.txt": None}})
    assert ws.read("src/a.txt") == b"one\nTWO\nthree\nfour\nfive\n"
    assert ws.read("new/dir/b.txt") == b"hello\nworld\n"
    assert [(a["path"], a["created"]) for a in result["applied"]] == [
        ("src/a.txt", False),
        ("new/dir/b.txt", True),
    ]


@pytest.mark.parametrize(
    ("data", "op"),
    [
        (b"a\r\nb\r\n", "crlf_target"),
        (b"a\nb", "no_trailing_newline"),
        (b"a\nb\rc\n", "lone_cr_target"),
    ],
)
async def test_engine_refuses_unexpressible_targets(
    ws: EngineWorkspace, data: bytes, op: str
) -> None:
    r = ws.put("t.txt", data)
    before = ws.tree()
    err = await ws.fail(
        {"patch": BEGIN + "*** Update File: t.txt\n@@\n-a\n+A\n" + END, "revisions": {"t.txt": r}}
    )
    assert err.kind is ErrorKind.UNSUPPORTED_PATCH_OP
    assert err.data["op"] == op
    assert ws.tree() == before


async def test_add_over_an_existing_file_is_stale(ws: EngineWorkspace) -> None:
    ws.put("a.txt", "old\n")
    err = await ws.fail(
        {"patch": BEGIN + "*** Add File: a.txt\n+new\n" + END, "revisions": {"a.txt": None}}
    )
    assert err.kind is ErrorKind.STALE_REVISION
    assert (err.data["expected"], err.data["actual"]) == (None, rev("old\n"))
    assert ws.read("a.txt") == b"old\n"


async def test_update_with_a_stale_revision(ws: EngineWorkspace) -> None:
    ws.put("a.txt", "a\n")
    err = await ws.fail(
        {
            "patch": BEGIN + "*** Update File: a.txt\n@@\n-a\n+b\n" + END,
            "revisions": {"a.txt": rev("something else\n")},
        }
    )
    assert err.kind is ErrorKind.STALE_REVISION
    assert err.data["actual"] == rev("a\n")
    assert ws.read("a.txt") == b"a\n"


async def test_a_failing_second_file_writes_nothing(ws: EngineWorkspace) -> None:
    ra = ws.put("a.txt", "a\n")
    rb = ws.put("b.txt", "b\n")
    before = ws.tree()
    patch = (
        BEGIN
        + "*** Update File: a.txt\n@@\n-a\n+A\n"
        + "*** Add File: c.txt\n+c\n"
        + "*** Update File: b.txt\n@@\n-nope\n+B\n"
        + END
    )
    err = await ws.fail({"patch": patch, "revisions": {"a.txt": ra, "b.txt": rb, "c.txt": None}})
    assert err.kind is ErrorKind.MATCH_NOT_FOUND
    assert (err.data["path"], err.data["line"]) == ("b.txt", 9)
    assert ws.tree() == before
