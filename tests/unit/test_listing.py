"""list_files: order, .gitignore semantics, symlinks, paging and argument errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace.folders import Folders
from s_code.workspace.listing import Listed, Listing, list_files
from tests.trees import make_tree


def ls(
    folders: Folders,
    path: str = ".",
    *,
    recursive: bool = True,
    include_ignored: bool = False,
    max_results: int = 10_000,
    cursor: str | None = None,
) -> Listing:
    return list_files(
        folders,
        path,
        recursive=recursive,
        include_ignored=include_ignored,
        max_results=max_results,
        cursor=cursor,
    )


def paths(listing: Listing) -> list[str]:
    return [e.path for e in listing.entries]


def kinds(listing: Listing) -> list[tuple[str, str]]:
    return [(e.path, e.kind) for e in listing.entries]


# -- order --------------------------------------------------------------------------------------


def test_depth_first_sorted_order(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {
            "a.txt": "x",
            "a/b": "yy",
            "a/c/d.txt": "",
            "a-b.txt": "",
            "B.txt": "",
            "z/": "",
        },
    )
    listing = ls(folders_of((tmp_path, None)))
    assert kinds(listing) == [
        ("B.txt", "file"),
        ("a", "dir"),
        ("a/b", "file"),
        ("a/c", "dir"),
        ("a/c/d.txt", "file"),
        ("a-b.txt", "file"),
        ("a.txt", "file"),
        ("z", "dir"),
    ]
    assert listing.truncated is False
    assert listing.next_cursor is None


def test_sizes_are_reported_for_files_only(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"f.bin": b"\x00" * 1234, "d/": ""})
    listing = ls(folders_of((tmp_path, None)))
    assert listing.entries == [Listed("d", "dir", None), Listed("f.bin", "file", 1234)]


def test_non_recursive_lists_one_level(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"a/b.txt": "", "a/c/d.txt": "", "top.txt": "", "e/": ""})
    folders = folders_of((tmp_path, None))
    assert kinds(ls(folders, recursive=False)) == [
        ("a", "dir"),
        ("e", "dir"),
        ("top.txt", "file"),
    ]
    assert kinds(ls(folders, "a", recursive=False)) == [("a/b.txt", "file"), ("a/c", "dir")]


def test_empty_directory(tmp_path: Path, folders_of) -> None:
    (tmp_path / "empty").mkdir()
    folders = folders_of((tmp_path, None))
    assert ls(folders, "empty") == Listing([], False, None)


# -- ignore rules -------------------------------------------------------------------------------


def test_root_gitignore_patterns(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\nbuild/\n/only_root.txt\n",
            "app.log": "",
            "keep.txt": "",
            "only_root.txt": "",
            "build/out.o": "",
            "src/build/gen.o": "",
            "src/only_root.txt": "",
            "src/deep/x.log": "",
            "src/main.py": "",
            "other/build": "a file named build is not a directory",
        },
    )
    assert paths(ls(folders_of((tmp_path, None)))) == [
        ".gitignore",
        "keep.txt",
        "other",
        "other/build",
        "src",
        "src/deep",
        "src/main.py",
        "src/only_root.txt",
    ]


def test_nested_gitignore_overrides_and_negation(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\n*.tmp\n",
            "top.log": "",
            "sub/.gitignore": "!keep.log\n/anchored.txt\n",
            "sub/keep.log": "",
            "sub/other.log": "",
            "sub/anchored.txt": "",
            "sub/inner/anchored.txt": "",
            "sub/inner/keep.log": "",
            "sub/inner/x.tmp": "",
            "sibling/keep.log": "",
        },
    )
    assert paths(ls(folders_of((tmp_path, None)))) == [
        ".gitignore",
        "sibling",
        "sub",
        "sub/.gitignore",
        "sub/inner",
        "sub/inner/anchored.txt",
        "sub/inner/keep.log",
        "sub/keep.log",
    ]


def test_negation_within_one_file(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {".gitignore": "*.log\n!important.log\n", "a.log": "", "important.log": ""},
    )
    assert paths(ls(folders_of((tmp_path, None)))) == [".gitignore", "important.log"]


def test_deeper_gitignore_can_ignore_what_root_allows(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "!*.dat\n",
            "a.dat": "",
            "sub/.gitignore": "*.dat\n",
            "sub/b.dat": "",
        },
    )
    assert paths(ls(folders_of((tmp_path, None)))) == [
        ".gitignore",
        "a.dat",
        "sub",
        "sub/.gitignore",
    ]


def test_git_info_exclude(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {
            ".git/info/exclude": "secret.txt\n",
            ".git/HEAD": "ref: refs/heads/main\n",
            "secret.txt": "",
            "sub/secret.txt": "",
            "public.txt": "",
        },
    )
    folders = folders_of((tmp_path, None))
    assert paths(ls(folders)) == ["public.txt", "sub"]
    assert paths(ls(folders, include_ignored=True)) == [
        "public.txt",
        "secret.txt",
        "sub",
        "sub/secret.txt",
    ]


def test_dot_git_is_never_listed(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {
            ".git/HEAD": "",
            ".git/objects/ab/cdef": "",
            "sub/.git": "gitdir: ../.git/worktrees/sub\n",  # a worktree's .git file
            "sub/f.txt": "",
            ".gitignore": "",
        },
    )
    folders = folders_of((tmp_path, None))
    expected = [".gitignore", "sub", "sub/f.txt"]
    assert paths(ls(folders)) == expected
    assert paths(ls(folders, include_ignored=True)) == expected
    assert paths(ls(folders, recursive=False, include_ignored=True)) == [".gitignore", "sub"]


def test_include_ignored_lists_ignored_entries(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\nbuild/\n",
            "a.log": "",
            "build/out.o": "",
            "sub/.gitignore": "*\n",
            "sub/hidden.txt": "",
            "src.py": "",
        },
    )
    folders = folders_of((tmp_path, None))
    assert paths(ls(folders)) == [".gitignore", "src.py", "sub"]
    assert paths(ls(folders, include_ignored=True)) == [
        ".gitignore",
        "a.log",
        "build",
        "build/out.o",
        "src.py",
        "sub",
        "sub/.gitignore",
        "sub/hidden.txt",
    ]


def test_subdirectory_listing_applies_ancestor_rules(tmp_path: Path, folders_of) -> None:
    make_tree(
        tmp_path,
        {
            ".gitignore": "*.log\n/pkg/generated.py\n",
            "pkg/.gitignore": "cache/\n",
            "pkg/generated.py": "",
            "pkg/mod.py": "",
            "pkg/run.log": "",
            "pkg/inner/.gitignore": "!*.log\n",
            "pkg/inner/kept.log": "",
            "pkg/inner/cache/x": "",
            "pkg/inner/deeper/d.log": "",
        },
    )
    folders = folders_of((tmp_path, None))
    assert paths(ls(folders, "pkg")) == [
        "pkg/.gitignore",
        "pkg/inner",
        "pkg/inner/.gitignore",
        "pkg/inner/deeper",
        "pkg/inner/deeper/d.log",
        "pkg/inner/kept.log",
        "pkg/mod.py",
    ]
    # Starting two levels down, both ancestors' rules still apply.
    assert paths(ls(folders, "pkg/inner")) == [
        "pkg/inner/.gitignore",
        "pkg/inner/deeper",
        "pkg/inner/deeper/d.log",
        "pkg/inner/kept.log",
    ]
    # The same as the matching slice of the whole-tree listing.
    whole = paths(ls(folders))
    assert [p for p in whole if p.startswith("pkg/")] == paths(ls(folders, "pkg"))


def test_listing_an_ignored_directory(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {".gitignore": "build/\n", "build/a.o": "", "build/sub/b.o": ""})
    folders = folders_of((tmp_path, None))
    assert ls(folders, "build") == Listing([], False, None)
    assert ls(folders, "build/sub") == Listing([], False, None)
    assert paths(ls(folders, "build", include_ignored=True)) == [
        "build/a.o",
        "build/sub",
        "build/sub/b.o",
    ]


def test_rules_inside_an_ignored_directory_cannot_reinclude(tmp_path: Path, folders_of) -> None:
    # As in git, a file cannot be re-included once a parent directory is excluded: the
    # .gitignore inside build/ is never consulted, wherever the listing starts.
    make_tree(tmp_path, {".gitignore": "build/\n", "build/.gitignore": "!*\n", "build/sub/x": ""})
    folders = folders_of((tmp_path, None))
    assert paths(ls(folders)) == [".gitignore"]
    assert ls(folders, "build") == Listing([], False, None)
    assert ls(folders, "build/sub") == Listing([], False, None)


# -- symlinks -----------------------------------------------------------------------------------


@pytest.fixture
def with_links(tmp_path: Path) -> Path:
    outside = make_tree(tmp_path / "outside", {"secret.txt": "s", "nested/deep.txt": "d"})
    ws = make_tree(tmp_path / "ws", {"a.txt": "a", "d/inner.txt": "i"})
    os.symlink(outside, ws / "link_out")
    os.symlink("a.txt", ws / "link_file")
    os.symlink("d", ws / "link_dir")
    os.symlink("missing", ws / "dangling")
    os.symlink(outside / "secret.txt", ws / "d" / "link_secret")
    return ws


def test_symlinks_are_listed_and_never_followed(with_links: Path, folders_of) -> None:
    folders = folders_of((with_links, None))
    expected = [
        ("a.txt", "file"),
        ("d", "dir"),
        ("d/inner.txt", "file"),
        ("d/link_secret", "symlink"),
        ("dangling", "symlink"),
        ("link_dir", "symlink"),
        ("link_file", "symlink"),
        ("link_out", "symlink"),
    ]
    for include_ignored in (False, True):
        listing = ls(folders, include_ignored=include_ignored)
        assert kinds(listing) == expected
        assert all(e.size is None for e in listing.entries if e.kind == "symlink")
        names = [p.rsplit("/", 1)[-1] for p in paths(listing)]
        assert "secret.txt" not in names
        assert "deep.txt" not in names
        assert "nested" not in names


def test_listing_through_a_symlink_is_an_escape(with_links: Path, folders_of) -> None:
    folders = folders_of((with_links, None))
    with pytest.raises(SCodeError) as exc:
        ls(folders, "link_out/nested")
    assert exc.value.kind is ErrorKind.PATH_ESCAPE


@pytest.mark.parametrize("target", ["link_out", "link_dir"])
def test_listing_a_symlink_to_a_directory_is_an_escape(
    with_links: Path, folders_of, target: str
) -> None:
    # PROTOCOL.md: path_escape covers a symlink component; the final component is one.
    folders = folders_of((with_links, None))
    with pytest.raises(SCodeError) as exc:
        ls(folders, target)
    assert exc.value.kind is ErrorKind.PATH_ESCAPE


# -- errors -------------------------------------------------------------------------------------


def test_listing_a_file_is_not_found(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"f.txt": "", "d/g.txt": ""})
    folders = folders_of((tmp_path, None))
    for path in ("f.txt", "d/g.txt", "missing", "d/missing"):
        with pytest.raises(SCodeError) as exc:
            ls(folders, path)
        assert exc.value.kind is ErrorKind.NOT_FOUND, path


@pytest.mark.parametrize("path", ["/etc", "..", "d/../.."])
def test_escaping_paths_are_refused(tmp_path: Path, folders_of, path: str) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(SCodeError) as exc:
        ls(folders_of((tmp_path, None)), path)
    assert exc.value.kind is ErrorKind.PATH_ESCAPE


@pytest.mark.parametrize("cursor", ["other/x.txt", "other", "x.txt", "subway/a"])
def test_cursor_outside_path_is_invalid(tmp_path: Path, folders_of, cursor: str) -> None:
    make_tree(tmp_path, {"sub/a.txt": "", "other/x.txt": "", "x.txt": "", "subway/a": ""})
    folders = folders_of((tmp_path, None))
    with pytest.raises(SCodeError) as exc:
        ls(folders, "sub", cursor=cursor)
    assert exc.value.kind is ErrorKind.INVALID_PARAMS
    assert exc.value.data["field"] == "cursor"


def test_cursor_with_dot_dot_is_refused(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"sub/a.txt": ""})
    with pytest.raises(SCodeError) as exc:
        ls(folders_of((tmp_path, None)), "sub", cursor="sub/../x")
    assert exc.value.kind is ErrorKind.PATH_ESCAPE
    assert exc.value.data["field"] == "cursor"


# -- paging -------------------------------------------------------------------------------------

PAGING_TREE: dict[str, str | bytes] = {
    ".gitignore": "*.log\nignored/\n",
    "a.txt": "",
    "a/b": "",
    "a/c/d.txt": "",
    "a/c/e.log": "",
    "a/c/f/": "",
    "a/z.txt": "",
    "a-b/x": "",
    "ignored/q.txt": "",
    "m/n/o/p.txt": "",
    "m/n/o/q/": "",
    "m/n/r.txt": "",
    "zz.txt": "",
}


def walk_pages(folders: Folders, path: str, k: int, **kw: bool) -> list[str]:
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(1000):
        page = ls(folders, path, max_results=k, cursor=cursor, **kw)
        assert len(page.entries) <= k
        seen += paths(page)
        if not page.truncated:
            assert page.next_cursor is None
            return seen
        assert len(page.entries) == k
        assert page.next_cursor == page.entries[-1].path
        cursor = page.next_cursor
    raise AssertionError("paging did not terminate")


@pytest.mark.parametrize("k", [1, 2, 3, 5, 7, 100])
@pytest.mark.parametrize(
    ("path", "recursive", "include_ignored"),
    [
        (".", True, False),
        (".", True, True),
        (".", False, False),
        ("a", True, False),
        ("m", True, True),
    ],
)
def test_paging_concatenates_to_the_unpaged_listing(
    tmp_path: Path, folders_of, k: int, path: str, recursive: bool, include_ignored: bool
) -> None:
    make_tree(tmp_path, PAGING_TREE)
    folders = folders_of((tmp_path, None))
    kw = {"recursive": recursive, "include_ignored": include_ignored}
    whole = paths(ls(folders, path, **kw))
    assert len(whole) > 3
    paged = walk_pages(folders, path, k, **kw)
    assert paged == whole
    assert len(set(paged)) == len(paged)


def test_unpaged_listing_of_paging_tree(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, PAGING_TREE)
    assert paths(ls(folders_of((tmp_path, None)))) == [
        ".gitignore",
        "a",
        "a/b",
        "a/c",
        "a/c/d.txt",
        "a/c/f",
        "a/z.txt",
        "a-b",
        "a-b/x",
        "a.txt",
        "m",
        "m/n",
        "m/n/o",
        "m/n/o/p.txt",
        "m/n/o/q",
        "m/n/r.txt",
        "zz.txt",
    ]


def test_exactly_max_results_entries_is_not_truncated(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"a": "", "b": "", "c": ""})
    folders = folders_of((tmp_path, None))
    assert ls(folders, max_results=3) == Listing(
        [Listed("a", "file", 0), Listed("b", "file", 0), Listed("c", "file", 0)], False, None
    )
    page = ls(folders, max_results=2)
    assert (paths(page), page.truncated, page.next_cursor) == (["a", "b"], True, "b")
    last = ls(folders, max_results=2, cursor="b")
    assert (paths(last), last.truncated, last.next_cursor) == (["c"], False, None)


def test_cursor_at_a_directory_continues_inside_it(tmp_path: Path, folders_of) -> None:
    make_tree(tmp_path, {"a/b": "", "a/c": "", "a.txt": ""})
    folders = folders_of((tmp_path, None))
    assert paths(ls(folders, cursor="a")) == ["a/b", "a/c", "a.txt"]
    assert paths(ls(folders, cursor="a/c")) == ["a.txt"]
    assert paths(ls(folders, cursor="a.txt")) == []


def test_paging_a_multi_root_workspace(tmp_path: Path, folders_of) -> None:
    one = make_tree(tmp_path / "one", {"x/y.txt": "", "z.txt": "", ".gitignore": "*.log\n"})
    two = make_tree(tmp_path / "two", {"q.txt": ""})
    folders = folders_of((one, "one"), (two, "two"))
    whole = paths(ls(folders, "one"))
    assert whole == ["one/.gitignore", "one/x", "one/x/y.txt", "one/z.txt"]
    assert walk_pages(folders, "one", 1) == whole
    assert paths(ls(folders, "two")) == ["two/q.txt"]
    with pytest.raises(SCodeError) as exc:
        ls(folders, "one", cursor="two/q.txt")
    assert exc.value.kind is ErrorKind.INVALID_PARAMS
    assert exc.value.data["field"] == "cursor"
