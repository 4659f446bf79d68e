"""search_text over a real ripgrep: matching options, ignore rules, symlinks, bounds, errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace.folders import Folders
from s_code.workspace.search import Match, SearchResult, search_text
from tests.trees import make_tree


async def grep(
    folders: Folders,
    pattern: str,
    path: str = ".",
    *,
    fixed_strings: bool = False,
    ignore_case: bool = False,
    globs: list[str] | None = None,
    include_ignored: bool = False,
    max_results: int = 1000,
) -> SearchResult:
    return await search_text(
        folders,
        pattern,
        path,
        fixed_strings=fixed_strings,
        ignore_case=ignore_case,
        globs=globs or [],
        include_ignored=include_ignored,
        max_results=max_results,
        redact=str,
    )


def hits(result: SearchResult) -> list[tuple[str, int, str]]:
    return [(m.path, m.line_number, m.text) for m in result.matches]


def where(result: SearchResult) -> list[tuple[str, int]]:
    return [(m.path, m.line_number) for m in result.matches]


# -- matching -----------------------------------------------------------------------------------


async def test_regex_search(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {"a.py": "def foo():\n    return 1\ndef bar_2():\n", "b.txt": "no functions\n"},
    )
    result = await grep(folders_of((tmp_path, None)), r"^def \w+_?\d*\(")
    assert result == SearchResult(
        [Match("a.py", 1, "def foo():"), Match("a.py", 3, "def bar_2():")], False
    )


async def test_fixed_strings(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"f.txt": "a.b(c)\naxb(c)\n[x]\n"})
    folders = folders_of((tmp_path, None))
    assert hits(await grep(folders, "a.b(c)", fixed_strings=True)) == [("f.txt", 1, "a.b(c)")]
    assert hits(await grep(folders, r"a.b\(c\)")) == [
        ("f.txt", 1, "a.b(c)"),
        ("f.txt", 2, "axb(c)"),
    ]
    # Unbalanced metacharacters are fine as a literal.
    assert hits(await grep(folders, "[x", fixed_strings=True)) == [("f.txt", 3, "[x]")]


async def test_ignore_case(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"f.txt": "Hello\nhello\nHELLO\nhelp\n"})
    folders = folders_of((tmp_path, None))
    assert where(await grep(folders, "hello")) == [("f.txt", 2)]
    assert where(await grep(folders, "hello", ignore_case=True)) == [
        ("f.txt", 1),
        ("f.txt", 2),
        ("f.txt", 3),
    ]
    assert where(await grep(folders, "HELLO", ignore_case=True, fixed_strings=True)) == [
        ("f.txt", 1),
        ("f.txt", 2),
        ("f.txt", 3),
    ]


async def test_crlf_and_trailing_newline_are_stripped(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"w.txt": b"one marker\r\ntwo\r\n", "n.txt": b"marker no newline"})
    result = await grep(folders_of((tmp_path, None)), "marker")
    assert hits(result) == [("n.txt", 1, "marker no newline"), ("w.txt", 1, "one marker")]


async def test_no_match_is_empty(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"f.txt": "abc\n"})
    assert await grep(folders_of((tmp_path, None)), "zzz") == SearchResult([], False)


# -- globs --------------------------------------------------------------------------------------


@pytest.fixture
def glob_tree(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path,
        {
            "main.py": "needle\n",
            "readme.md": "needle\n",
            "src/lib.py": "needle\n",
            "src/notes.txt": "needle\n",
            "tests/test_x.py": "needle\n",
        },
    )


@pytest.mark.parametrize(
    ("globs", "expected"),
    [
        (["*.py"], ["main.py", "src/lib.py", "tests/test_x.py"]),
        (["!*.py"], ["readme.md", "src/notes.txt"]),
        (["!tests/**"], ["main.py", "readme.md", "src/lib.py", "src/notes.txt"]),
        (["*.py", "!tests/**"], ["main.py", "src/lib.py"]),
        (["src/**"], ["src/lib.py", "src/notes.txt"]),
        (["*.md", "*.txt"], ["readme.md", "src/notes.txt"]),
    ],
)
async def test_globs(glob_tree: Path, folders_of, globs: list[str], expected: list[str]) -> None:
    result = await grep(folders_of((glob_tree, None)), "needle", globs=globs)
    assert [m.path for m in result.matches] == expected


@pytest.mark.parametrize(
    ("globs", "index"),
    [
        (["../*.py"], 0),
        (["*.py", "a/../b"], 1),
        (["/etc/*"], 0),
        (["**/.."], 0),
        (["ok\x00"], 0),
        (["!../*.py"], 0),
        (["*.py", "!/etc/*"], 1),
    ],
)
async def test_bad_globs_are_invalid_params(
    glob_tree: Path, folders_of, globs: list[str], index: int
) -> None:
    with pytest.raises(SCodeError) as exc:
        await grep(folders_of((glob_tree, None)), "needle", globs=globs)
    assert exc.value.kind is ErrorKind.INVALID_PARAMS
    assert exc.value.data["field"] == f"globs.{index}"


# -- ignore rules, hidden files, .git -------------------------------------------------------------


@pytest.fixture
def ignore_tree(tmp_path: Path) -> Path:
    return make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\nbuild/\n",
            "app.py": "needle\n",
            "run.log": "needle\n",
            "build/out.txt": "needle\n",
            "sub/.gitignore": "!keep.log\n",
            "sub/keep.log": "needle\n",
            "sub/drop.log": "needle\n",
            ".hidden.txt": "needle\n",
            ".config/settings.ini": "needle\n",
            ".git/config": "needle\n",
            ".git/objects/aa/bb": "needle\n",
        },
    )


async def test_gitignore_honoured_without_a_git_repository(ignore_tree: Path, folders_of) -> None:
    # No `git init`: .git/ here is a plain directory with no HEAD.
    result = await grep(folders_of((ignore_tree, None)), "needle")
    assert [m.path for m in result.matches] == [
        ".config/settings.ini",
        ".hidden.txt",
        "app.py",
        "sub/keep.log",
    ]


async def test_include_ignored_overrides_but_never_searches_git(
    ignore_tree: Path, folders_of
) -> None:
    result = await grep(folders_of((ignore_tree, None)), "needle", include_ignored=True)
    assert [m.path for m in result.matches] == [
        ".config/settings.ini",
        ".hidden.txt",
        "app.py",
        "build/out.txt",
        "run.log",
        "sub/drop.log",
        "sub/keep.log",
    ]


async def test_git_dir_not_searched_even_when_named(ignore_tree: Path, folders_of) -> None:
    folders = folders_of((ignore_tree, None))
    result = await grep(folders, "needle", globs=[".git/**"], include_ignored=True)
    assert result.matches == []


async def test_git_info_exclude_is_honoured(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {".git/info/exclude": "secret.txt\n", "secret.txt": "needle\n", "pub.txt": "needle\n"},
    )
    folders = folders_of((tmp_path, None))
    assert where(await grep(folders, "needle")) == [("pub.txt", 1)]
    assert where(await grep(folders, "needle", include_ignored=True)) == [
        ("pub.txt", 1),
        ("secret.txt", 1),
    ]


async def test_subdirectory_search_honours_ancestor_gitignore(
    ignore_tree: Path, folders_of
) -> None:
    make_tree(ignore_tree, {"sub/inner/x.log": "needle\n", "sub/inner/y.py": "needle\n"})
    result = await grep(folders_of((ignore_tree, None)), "needle", "sub")
    assert [m.path for m in result.matches] == ["sub/inner/y.py", "sub/keep.log"]


# -- symlinks -----------------------------------------------------------------------------------


@pytest.fixture
def link_tree(tmp_path: Path) -> Path:
    outside = make_tree(tmp_path / "outside", {"secret.txt": "OUTSIDE_MARKER\n"})
    ws = make_tree(tmp_path / "ws", {"real.txt": "inside\n", "d/in.txt": "inside too\n"})
    os.symlink(outside, ws / "link_dir")
    os.symlink(outside / "secret.txt", ws / "link_file")
    os.symlink("d", ws / "inner_link")
    return ws


async def test_symlinks_are_not_followed(link_tree: Path, folders_of) -> None:
    folders = folders_of((link_tree, None))
    assert await grep(folders, "OUTSIDE_MARKER") == SearchResult([], False)
    assert await grep(folders, "OUTSIDE_MARKER", include_ignored=True) == SearchResult([], False)
    # A symlink to a directory inside the workspace is not followed either (no duplicates).
    assert where(await grep(folders, "inside")) == [("d/in.txt", 1), ("real.txt", 1)]


@pytest.mark.parametrize("path", ["link_dir", "inner_link", "link_file", "link_dir/"])
async def test_search_path_that_is_a_symlink_is_an_escape(
    link_tree: Path, folders_of, path: str
) -> None:
    with pytest.raises(SCodeError) as exc:
        await grep(folders_of((link_tree, None)), "x", path)
    assert exc.value.kind is ErrorKind.PATH_ESCAPE


@pytest.mark.parametrize(("path", "kind"), [("/tmp", "path_escape"), ("..", "path_escape")])
async def test_search_path_escapes(tmp_path: Path, folders_of, path: str, kind: str) -> None:
    with pytest.raises(SCodeError) as exc:
        await grep(folders_of((tmp_path, None)), "x", path)
    assert exc.value.kind == kind


async def test_search_missing_path_is_not_found(tmp_path: Path, folders_of) -> None:
    with pytest.raises(SCodeError) as exc:
        await grep(folders_of((tmp_path, None)), "x", "missing")
    assert exc.value.kind is ErrorKind.NOT_FOUND


# -- order and bounds ---------------------------------------------------------------------------


@pytest.fixture
def many(tmp_path: Path) -> Path:
    files: dict[str, str | bytes] = {}
    for i in range(12):
        files[f"d{i % 3}/f{i:02}.txt"] = "hit\nmiss\nhit\n"
    files["a/b.txt"] = "hit\n"
    files["a.txt"] = "hit\n"
    files["a-b.txt"] = "hit\n"
    return make_tree(tmp_path, files)


async def test_results_sorted_by_path_components_then_line(many: Path, folders_of) -> None:
    result = await grep(folders_of((many, None)), "hit")
    expected: list[tuple[str, int]] = [("a/b.txt", 1), ("a-b.txt", 1), ("a.txt", 1)]
    for d in range(3):
        for i in range(d, 12, 3):
            expected += [(f"d{d}/f{i:02}.txt", 1), (f"d{d}/f{i:02}.txt", 3)]
    assert where(result) == expected
    assert result.truncated is False
    # The same search twice gives the same answer.
    assert await grep(folders_of((many, None)), "hit") == result


@pytest.mark.parametrize("bound", [1, 2, 5, 26])
async def test_max_results_truncates(many: Path, folders_of, bound: int) -> None:
    folders = folders_of((many, None))
    everything = set(where(await grep(folders, "hit")))
    assert len(everything) == 27
    result = await grep(folders, "hit", max_results=bound)
    assert result.truncated is True
    assert len(result.matches) == bound
    got = where(result)
    assert set(got) <= everything
    assert got == sorted(got, key=lambda pl: (pl[0].split("/"), pl[1]))


async def test_exactly_max_results_is_not_truncated(many: Path, folders_of) -> None:
    result = await grep(folders_of((many, None)), "hit", max_results=27)
    assert len(result.matches) == 27
    assert result.truncated is False


# -- errors and odd content ---------------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["(", "a{2,1}", "[z-a]", "(?P<x"])
async def test_invalid_regex_is_invalid_params(tmp_path: Path, folders_of, pattern: str) -> None:
    make_tree(tmp_path, {"f.txt": "abc\n"})
    with pytest.raises(SCodeError) as exc:
        await grep(folders_of((tmp_path, None)), pattern)
    assert exc.value.kind is ErrorKind.INVALID_PARAMS
    assert exc.value.data["field"] == "pattern"
    assert "Traceback" not in exc.value.message


async def test_non_utf8_content_does_not_crash(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {
            "latin1.txt": b"caf\xe9 marker\n",
            "ok.txt": "marker \u00e9t\u00e9\n",
            "mixed.txt": b"first\n\xc3\x28 marker\nplain marker\n",
        },
    )
    result = await grep(folders_of((tmp_path, None)), "marker")
    assert where(result) == [
        ("latin1.txt", 1),
        ("mixed.txt", 2),
        ("mixed.txt", 3),
        ("ok.txt", 1),
    ]
    texts = {(m.path, m.line_number): m.text for m in result.matches}
    assert texts[("ok.txt", 1)] == "marker \u00e9t\u00e9"
    assert texts[("mixed.txt", 3)] == "plain marker"
    assert all(isinstance(m.text, str) for m in result.matches)


async def test_long_lines_are_bounded(tmp_path: Path, folders_of) -> None:
    # search.py passes --max-columns MAX_LINE_CHARS to bound each reported line.
    make_tree(tmp_path, {"long.txt": "marker " + "x" * 5000 + "\n"})
    result = await grep(folders_of((tmp_path, None)), "marker")
    assert where(result) == [("long.txt", 1)]
    assert len(result.matches[0].text) < 1000


# -- display paths ------------------------------------------------------------------------------


async def test_subdirectory_paths_are_relative_to_the_root(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path, {"src/pkg/mod.py": "needle\n", "src/top.py": "needle\n", "x.py": "needle\n"}
    )
    folders = folders_of((tmp_path, None))
    assert where(await grep(folders, "needle", "src")) == [("src/pkg/mod.py", 1), ("src/top.py", 1)]
    assert where(await grep(folders, "needle", "src/pkg")) == [("src/pkg/mod.py", 1)]
    assert where(await grep(folders, "needle", "./src//pkg/")) == [("src/pkg/mod.py", 1)]


async def test_multi_root_display_paths(tmp_path: Path, folders_of) -> None:
    a = make_tree(tmp_path / "first", {"one.txt": "needle\n", "sub/two.txt": "needle\n"})
    b = make_tree(tmp_path / "second", {"three.txt": "needle\n", "sub/four.txt": "needle\n"})
    folders = folders_of((a, "a"), (b, "b"))
    assert where(await grep(folders, "needle", "a")) == [("a/one.txt", 1), ("a/sub/two.txt", 1)]
    assert where(await grep(folders, "needle", "b")) == [("b/sub/four.txt", 1), ("b/three.txt", 1)]
    assert where(await grep(folders, "needle", "b/sub")) == [("b/sub/four.txt", 1)]
    with pytest.raises(SCodeError) as exc:
        await grep(folders, "needle", "c")
    assert exc.value.kind is ErrorKind.NOT_FOUND
