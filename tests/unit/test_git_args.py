"""Validation of agent-supplied revisions, ranges, options and values (s_code.git.args)."""

from __future__ import annotations

import pytest

from s_code.git import args
from s_code.protocol.errors import ErrorKind, SCodeError

GOOD_REVISIONS = ["HEAD", "HEAD~3", "HEAD^2", "main", "feature/x-1", "v1.2.3", "a" * 40, "HEAD~"]
BAD_REVISIONS = [
    "-p",
    "--all",
    "HEAD:file",
    "@{-1}",
    "main@{upstream}",
    "a b",
    "a..b..c",
    "x.lock",
    "a//b",
    ".hidden",
    "a/.b",
    "",
    "x" * 300,
    "HEAD\n",
    "--output=/tmp/x",
]


@pytest.mark.parametrize("value", GOOD_REVISIONS)
def test_good_revisions(value: str) -> None:
    assert args.revision(value, "revision") == value


@pytest.mark.parametrize("value", BAD_REVISIONS)
def test_bad_revisions(value: str) -> None:
    with pytest.raises(SCodeError) as info:
        args.revision(value, "revision", allow_range=True)
    assert info.value.kind == ErrorKind.GIT_ARGUMENT_REJECTED
    assert info.value.data == {"argument": value, "field": "revision"}


@pytest.mark.parametrize("value", ["main..feature", "HEAD~3..", "..HEAD", "a...b"])
def test_ranges_only_where_allowed(value: str) -> None:
    assert args.revision(value, "base", allow_range=True) == value
    with pytest.raises(SCodeError):
        args.revision(value, "base")


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("-c", "sets configuration"),
        ("-ccore.pager=x", "sets configuration"),
        ("--config-env=a=B", "sets configuration"),
        ("--exec-path=/x", "moves git's helper programs"),
        ("-C/tmp", "changes git's directory"),
        ("--git-dir=/x", "another repository"),
        ("--work-tree=/x", "another work tree"),
        ("-Ofile", "runs a program"),
        ("--open-files-in-pager", "runs a program"),
        ("--ext-diff", "external diff"),
        ("--ext", "external diff"),
        ("--textconv", "text converters"),
        ("--show-signature", "gpg"),
        ("--output=x", "writes a file"),
        ("--out=x", "writes a file"),
        ("--no-index", "outside the repository"),
        ("--upload-pack=x", "transport"),
        ("--format=%G?", "%G placeholders"),
        ("--pretty=tformat:%GS", "%G placeholders"),
    ],
)
def test_refused_options_name_their_reason(value: str, reason: str) -> None:
    with pytest.raises(SCodeError) as info:
        args.options([value], "diff")
    assert info.value.kind == ErrorKind.GIT_ARGUMENT_REJECTED
    assert reason in info.value.message
    assert info.value.data == {"argument": value, "field": "options.0"}


def test_allow_list_per_tool() -> None:
    assert args.options(["-w", "--find-renames=50%", "--diff-filter=AM", "--text"], "diff") == [
        "-w",
        "--find-renames=50%",
        "--diff-filter=AM",
        "--text",
    ]
    assert args.options(["--first-parent", "--no-merges"], "log") == [
        "--first-parent",
        "--no-merges",
    ]
    with pytest.raises(SCodeError) as info:
        args.options(["--stat"], "log")
    assert "not allowed for log" in info.value.message
    with pytest.raises(SCodeError):
        args.options(["-R"], "show")
    with pytest.raises(SCodeError):
        args.options(["-w", "--all"], "blame")


def test_text_and_date_values() -> None:
    assert args.text_value("Jane Doe", "author") == "Jane Doe"
    assert args.date_value("2 weeks ago", "since") == "2 weeks ago"
    assert args.date_value("2024-01-31", "until") == "2024-01-31"
    for bad in ("", "a\nb", "x" * 201, "-c"):
        with pytest.raises(SCodeError):
            args.text_value(bad, "grep")
    for bad in ("-1", "$(touch x)", "a;b"):
        with pytest.raises(SCodeError):
            args.date_value(bad, "since")
