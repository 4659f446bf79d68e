"""Parsers of git's machine formats: porcelain v2 status, NUL-framed commits, patches, blame."""

from __future__ import annotations

from s_code.git.blame import parse_blame
from s_code.git.commits import FIELDS, parse_log, split_show
from s_code.git.patches import split_patch, unquote
from s_code.git.porcelain import parse_status

H = "1" * 40
H2 = "2" * 40


def test_status_porcelain_v2() -> None:
    raw = (
        f"# branch.oid {H}\0# branch.head main\0# branch.upstream origin/main\0"
        "# branch.ab +2 -3\0"
        f"1 .M N... 100644 100644 100644 {H} {H} a b.txt\0"
        f"2 R. N... 100644 100644 100644 {H} {H} R87 new name.txt\0old.txt\0"
        f"u UU N... 100644 100644 100644 100644 {H} {H} {H} conflict.txt\0"
        f"1 .M SC.. 160000 160000 160000 {H} {H} sub\0"
        "? untracked dir/\0! ignored.log\0"
    ).encode()
    s = parse_status(raw)
    assert (s.head, s.branch, s.upstream, s.ahead, s.behind) == (H, "main", "origin/main", 2, 3)
    assert [(e.path, e.kind, e.index, e.worktree) for e in s.entries] == [
        ("a b.txt", "changed", ".", "M"),
        ("new name.txt", "renamed", "R", "."),
        ("conflict.txt", "unmerged", "U", "U"),
        ("sub", "changed", ".", "M"),
        ("untracked dir/", "untracked", "?", "?"),
        ("ignored.log", "ignored", "!", "!"),
    ]
    assert s.entries[1].orig_path == "old.txt" and s.entries[1].score == 87
    assert s.entries[3].submodule and not s.entries[0].submodule


def test_status_initial_and_detached() -> None:
    s = parse_status(b"# branch.oid (initial)\0# branch.head (detached)\0")
    assert s.head is None and s.branch is None and s.entries == []


def _record(sha: str, subject: str, body: str = "") -> str:
    values = [
        sha,
        H2,
        "Ann",
        "ann@x",
        "2024-01-02T03:04:05+00:00",
        "Bob",
        "bob@x",
        "2024-01-02T03:04:06+00:00",
        subject,
        body,
    ]
    assert len(values) == len(FIELDS)
    return "\0".join(values) + "\0"


def test_log_is_nul_framed_and_a_cut_record_is_dropped() -> None:
    raw = (_record(H, "one", "body\x1e\x1fwith separators\n") + _record(H2, "two")).encode()
    commits = parse_log(raw)
    assert [(c.commit, c.subject) for c in commits] == [(H, "one"), (H2, "two")]
    assert commits[0].body == "body\x1e\x1fwith separators" and commits[0].parents == (H2,)
    assert [c.subject for c in parse_log(raw[:-5])] == ["one"]
    assert parse_log(b"") == []


def test_show_splits_commit_and_patch() -> None:
    raw = (_record(H, "s") + "\ndiff --git a/x b/x\n").encode()
    commit, patch = split_show(raw)
    assert commit.subject == "s" and patch == b"diff --git a/x b/x\n"


PATCH = b"""diff --git a/mod.txt b/mod.txt
index 1..2 100644
--- a/mod.txt
+++ b/mod.txt
@@ -1,2 +1,2 @@
 keep
--- not a header
+new
diff --git a/added.txt b/added.txt
new file mode 100644
--- /dev/null
+++ b/added.txt
@@ -0,0 +1 @@
+x
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-x
diff --git a/old name.txt b/new name.txt
similarity index 100%
rename from old name.txt
rename to new name.txt
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/img.png b/img.png
index 1..2 100644
Binary files a/img.png and b/img.png differ
diff --git "a/t\\303\\251st" "b/t\\303\\251st"
--- "a/t\\303\\251st"
+++ "b/t\\303\\251st"
@@ -1 +1 @@
-a
+b
"""


def test_patch_sections() -> None:
    files = split_patch(PATCH)
    got = [(f.path, f.old_path, f.change, f.binary, f.additions, f.deletions) for f in files]
    assert got == [
        ("mod.txt", None, "modified", False, 1, 1),
        ("added.txt", None, "added", False, 1, 0),
        ("gone.txt", None, "deleted", False, 0, 1),
        ("new name.txt", "old name.txt", "renamed", False, 0, 0),
        ("run.sh", None, "mode_changed", False, 0, 0),
        ("img.png", None, "modified", True, 0, 0),
        ("tést", None, "modified", False, 1, 1),
    ]
    assert files[0].patch.startswith("diff --git a/mod.txt") and files[0].patch.endswith("+new\n")


def test_unquote() -> None:
    assert unquote('"a\\tb\\"c\\\\"') == 'a\tb"c\\'
    assert unquote('"\\303\\251"') == "é"
    assert unquote("plain") == "plain"


def test_blame_porcelain() -> None:
    raw = (
        f"{H} 1 1 2\nauthor Ann\nauthor-mail <ann@x>\nauthor-time 1700000000\n"
        "author-tz +0000\nsummary first\nboundary\nfilename a.txt\n\tline one\n"
        f"{H} 2 2\n\tline two\n"
        f"{H2} 5 3 1\nauthor Bob\nauthor-mail <bob@x>\nauthor-time 1700000001\n"
        "summary second\nprevious 1 a.txt\nfilename a.txt\n\t\tindented\n"
    ).encode()
    blame, cut = parse_blame(raw, 100)
    assert not cut
    assert [(ln.line_number, ln.commit, ln.original_line, ln.text) for ln in blame.lines] == [
        (1, H, 1, "line one"),
        (2, H, 2, "line two"),
        (3, H2, 5, "\tindented"),
    ]
    a = blame.commits[H]
    assert (a.author_name, a.author_email, a.author_time, a.summary, a.boundary) == (
        "Ann",
        "ann@x",
        1700000000,
        "first",
        True,
    )
    assert not blame.commits[H2].boundary
    short, cut = parse_blame(raw, 2)
    assert cut and len(short.lines) == 2
