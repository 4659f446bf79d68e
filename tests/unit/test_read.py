"""s_code.workspace.read: numbered content, hashes, line ranges, encodings, overlay, multi-root."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace import read
from s_code.workspace.documents import Overlay, no_overlay
from s_code.workspace.folders import Folders
from s_code.workspace.read import ReadResult, read_file

SECRET = "S-CODE-OUTSIDE-SECRET-91c2\n"
TEN = "".join(f"line {i}\n" for i in range(1, 11))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def folders(ws: Path) -> Iterator[Folders]:
    f = Folders.open([(str(ws), None)])
    yield f
    f.close()


def put(ws: Path, rel: str, data: bytes | str) -> Path:
    p = ws / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


def rf(
    folders: Folders,
    path: str,
    start: int | None = None,
    end: int | None = None,
    overlay: Overlay = no_overlay,
) -> ReadResult:
    return read_file(folders, overlay, path, start, end)


def error_of(fn: Callable[[], object]) -> SCodeError:
    with pytest.raises(SCodeError) as info:
        result = fn()
        pytest.fail(f"expected an SCodeError, got {result!r}")
    return info.value


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- numbered content -------------------------------------------------------------------------


def test_numbered_content_format(ws: Path, folders: Folders) -> None:
    put(ws, "f.txt", "alpha\n\tindented\n\nlast\n")
    r = rf(folders, "f.txt")
    assert r.numbered_content == "     1\talpha\n     2\t\tindented\n     3\t\n     4\tlast\n"
    assert r.line_count == 4
    assert (r.start_line, r.end_line) == (1, 4)
    assert r.file.path == "f.txt"
    assert r.file.source == "disk"
    assert r.file.text == "alpha\n\tindented\n\nlast\n"


@pytest.mark.skipif(shutil.which("cat") is None, reason="needs cat")
def test_numbered_content_matches_cat_n(ws: Path, folders: Folders) -> None:
    p = put(ws, "f.txt", "".join(f"row {i} é\n" for i in range(1, 1200)))
    expected = subprocess.run(["cat", "-n", str(p)], capture_output=True, check=True).stdout
    assert rf(folders, "f.txt").numbered_content == expected.decode()


def test_crlf_shown_without_the_cr(ws: Path, folders: Folders) -> None:
    raw = b"one\r\ntwo\r\nthree\n"
    put(ws, "crlf.txt", raw)
    r = rf(folders, "crlf.txt")
    assert r.numbered_content == "     1\tone\n     2\ttwo\n     3\tthree\n"
    assert "\r" not in r.numbered_content
    assert r.file.text == raw.decode()  # the text itself keeps its CRs
    assert r.file.sha256 == sha(raw)
    assert r.file.sha256 != sha(raw.replace(b"\r\n", b"\n"))
    assert r.line_count == 3


def test_lone_cr_in_the_middle_is_kept(ws: Path, folders: Folders) -> None:
    put(ws, "cr.txt", "a\rb\n")
    assert rf(folders, "cr.txt").numbered_content == "     1\ta\rb\n"


def test_sha256_and_revision(ws: Path, folders: Folders) -> None:
    raw = "héllo\nwörld\n".encode()
    put(ws, "u.txt", raw)
    r = rf(folders, "u.txt")
    assert r.file.sha256 == sha(raw)
    assert len(r.file.sha256) == 64
    assert r.file.revision == sha(raw)[:16]
    assert len(r.file.revision) == 16


def test_revision_changes_with_any_byte(ws: Path, folders: Folders) -> None:
    put(ws, "f.txt", "same\n")
    first = rf(folders, "f.txt").file.revision
    put(ws, "f.txt", "same \n")
    assert rf(folders, "f.txt").file.revision != first


def test_empty_file(ws: Path, folders: Folders) -> None:
    put(ws, "empty.txt", b"")
    r = rf(folders, "empty.txt")
    assert r.numbered_content == ""
    assert r.line_count == 0
    assert (r.start_line, r.end_line) == (0, 0)
    assert r.file.sha256 == sha(b"")
    assert r.file.revision == "e3b0c44298fc1c14"


def test_no_trailing_newline(ws: Path, folders: Folders) -> None:
    put(ws, "f.txt", "one\ntwo")
    r = rf(folders, "f.txt")
    assert r.numbered_content == "     1\tone\n     2\ttwo\n"
    assert r.line_count == 2
    assert r.file.text == "one\ntwo"
    assert r.file.sha256 == sha(b"one\ntwo")
    assert r.file.sha256 != sha(b"one\ntwo\n")


def test_single_newline_is_one_empty_line(ws: Path, folders: Folders) -> None:
    put(ws, "nl.txt", "\n")
    r = rf(folders, "nl.txt")
    assert r.line_count == 1
    assert r.numbered_content == "     1\t\n"


# -- line ranges ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "first", "last"),
    [
        (3, 5, 3, 5),
        (1, 1, 1, 1),
        (10, 10, 10, 10),
        (4, None, 4, 10),
        (None, 2, 1, 2),
        (7, 50, 7, 10),  # end clamped to line_count
        (None, 11, 1, 10),
        (None, None, 1, 10),
    ],
)
def test_line_ranges(
    ws: Path, folders: Folders, start: int | None, end: int | None, first: int, last: int
) -> None:
    put(ws, "ten.txt", TEN)
    r = rf(folders, "ten.txt", start, end)
    expected = "".join(f"{i:>6}\tline {i}\n" for i in range(first, last + 1))
    assert r.numbered_content == expected
    assert (r.start_line, r.end_line) == (first, last)
    assert r.line_count == 10
    assert r.file.sha256 == sha(TEN.encode())  # always of the whole file


@pytest.mark.parametrize("start", [11, 12, 1000])
def test_start_past_the_end(ws: Path, folders: Folders, start: int) -> None:
    put(ws, "ten.txt", TEN)
    err = error_of(lambda: rf(folders, "ten.txt", start, None))
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "start_line"
    err = error_of(lambda: rf(folders, "ten.txt", start, start + 5))
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "start_line"


@pytest.mark.parametrize(("start", "end"), [(5, 4), (10, 1), (2, 1)])
def test_end_before_start(ws: Path, folders: Folders, start: int, end: int) -> None:
    put(ws, "ten.txt", TEN)
    err = error_of(lambda: rf(folders, "ten.txt", start, end))
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == "end_line"


@pytest.mark.parametrize(
    ("start", "end", "field"),
    [(0, None, "start_line"), (-1, 3, "start_line"), (None, 0, "end_line"), (1, -2, "end_line")],
)
def test_non_positive_line_numbers(
    ws: Path, folders: Folders, start: int | None, end: int | None, field: str
) -> None:
    put(ws, "ten.txt", TEN)
    err = error_of(lambda: rf(folders, "ten.txt", start, end))
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert err.data["field"] == field


def test_numbers_wider_than_six_digits(ws: Path, folders: Folders) -> None:
    put(ws, "f.txt", "x\n" * 1_000_000)
    r = rf(folders, "f.txt", 999_999, None)
    assert r.numbered_content == " 999999\tx\n1000000\tx\n"
    assert (r.start_line, r.end_line, r.line_count) == (999_999, 1_000_000, 1_000_000)


# -- encodings ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "offset"),
    [(b"ok\n\xff\xfe\n", 3), (b"\xc3(", 0), (b"caf\xe9\n", 3), (b"abc\xed\xa0\x80", 3)],
)
def test_invalid_utf8(ws: Path, folders: Folders, raw: bytes, offset: int) -> None:
    put(ws, "bad.txt", raw)
    err = error_of(lambda: rf(folders, "bad.txt"))
    assert err.kind is ErrorKind.UNSUPPORTED_ENCODING, repr(err)
    assert err.data["path"] == "bad.txt"
    assert err.data["offset"] == offset


@pytest.mark.parametrize("raw", [b"a\x00b\n", b"\x00", b"text\n" * 10 + b"\x00"])
def test_nul_byte(ws: Path, folders: Folders, raw: bytes) -> None:
    put(ws, "bin.dat", raw)
    err = error_of(lambda: rf(folders, "bin.dat"))
    assert err.kind is ErrorKind.UNSUPPORTED_ENCODING, repr(err)
    assert err.data["path"] == "bin.dat"


def test_utf8_bom_and_non_ascii(ws: Path, folders: Folders) -> None:
    raw = "\ufeffπ = 3.14 — ok\n".encode()
    put(ws, "u.txt", raw)
    r = rf(folders, "u.txt")
    assert r.numbered_content == "     1\t\ufeffπ = 3.14 — ok\n"
    assert r.file.sha256 == sha(raw)


def test_file_over_the_limit(ws: Path, folders: Folders, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "MAX_FILE_BYTES", 8)
    put(ws, "small.txt", "12345678")
    put(ws, "big.txt", "123456789")
    assert rf(folders, "small.txt").file.text == "12345678"
    err = error_of(lambda: rf(folders, "big.txt"))
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "file_size"


# -- not found and refusals -----------------------------------------------------------------


def test_missing_file(ws: Path, folders: Folders) -> None:
    err = error_of(lambda: rf(folders, "nope.txt"))
    assert err.kind is ErrorKind.NOT_FOUND


def test_directory_refused(ws: Path, folders: Folders) -> None:
    (ws / "dir").mkdir()
    err = error_of(lambda: rf(folders, "dir"))
    assert err.kind is ErrorKind.INVALID_PARAMS


# -- the overlay ----------------------------------------------------------------------------


class RecordingOverlay:
    """An editor with some buffers open, keyed by absolute path; records every question."""

    def __init__(self, buffers: dict[str, str] | None = None, default: str | None = None) -> None:
        self.buffers = buffers or {}
        self.default = default
        self.asked: list[tuple[str, ...]] = []

    def __call__(self, paths: tuple[str, ...]) -> str | None:
        self.asked.append(paths)
        for p in paths:
            if p in self.buffers:
                return self.buffers[p]
        return self.default


def test_overlay_wins_over_disk(ws: Path, folders: Folders) -> None:
    put(ws, "src/f.txt", "on disk\n")
    buffer = "in the buffer\r\nsecond line\n"
    overlay = RecordingOverlay({str(ws / "src" / "f.txt"): buffer})
    r = rf(folders, "src/f.txt", overlay=overlay)
    assert r.file.source == "buffer"
    assert r.file.text == buffer
    assert r.file.sha256 == sha(buffer.encode())
    assert r.file.revision == sha(buffer.encode())[:16]
    assert r.numbered_content == "     1\tin the buffer\n     2\tsecond line\n"
    assert r.line_count == 2
    assert overlay.asked == [(str(ws / "src" / "f.txt"),)]


def test_overlay_without_a_buffer_reads_disk(ws: Path, folders: Folders) -> None:
    put(ws, "f.txt", "on disk\n")
    overlay = RecordingOverlay({str(ws / "other.txt"): "other\n"})
    r = rf(folders, "f.txt", overlay=overlay)
    assert r.file.source == "disk"
    assert r.file.text == "on disk\n"


def test_overlay_for_a_file_not_yet_on_disk(ws: Path, folders: Folders) -> None:
    overlay = RecordingOverlay({str(ws / "unsaved.txt"): "new\n"})
    r = rf(folders, "unsaved.txt", overlay=overlay)
    assert r.file.source == "buffer"
    assert r.numbered_content == "     1\tnew\n"


def test_overlay_asked_with_both_spellings(tmp_path: Path) -> None:
    real = tmp_path / "real-ws"
    real.mkdir()
    put(real, "f.txt", "disk\n")
    (tmp_path / "alias").symlink_to(real)
    f = Folders.open([(str(tmp_path / "alias"), None)])
    try:
        # The editor knows the file by its real path; the workspace was opened through the alias.
        overlay = RecordingOverlay({str(real / "f.txt"): "buffer\n"})
        r = rf(f, "f.txt", overlay=overlay)
        assert r.file.source == "buffer"
        assert r.file.text == "buffer\n"
        assert overlay.asked == [(str(tmp_path / "alias" / "f.txt"), str(real / "f.txt"))]
    finally:
        f.close()


def test_overlay_buffer_with_nul_is_unsupported(ws: Path, folders: Folders) -> None:
    put(ws, "f.txt", "disk\n")
    overlay = RecordingOverlay({str(ws / "f.txt"): "a\x00b"})
    err = error_of(lambda: rf(folders, "f.txt", overlay=overlay))
    assert err.kind is ErrorKind.UNSUPPORTED_ENCODING


def test_overlay_ranges_apply_to_the_buffer(ws: Path, folders: Folders) -> None:
    put(ws, "f.txt", "disk\n")
    overlay = RecordingOverlay({str(ws / "f.txt"): TEN})
    r = rf(folders, "f.txt", 9, 20, overlay=overlay)
    assert r.numbered_content == "     9\tline 9\n    10\tline 10\n"
    assert (r.start_line, r.end_line, r.line_count) == (9, 10, 10)


@pytest.mark.parametrize(
    "path",
    ["leaf.txt", "up/secret.txt", "up/unsaved.txt", "sub/out/secret.txt", "dangling.txt"],
)
def test_overlay_does_not_bypass_path_checks(tmp_path: Path, strategy: str, path: str) -> None:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    put(outside, "secret.txt", SECRET)
    (ws / "leaf.txt").symlink_to(outside / "secret.txt")
    (ws / "up").symlink_to("../outside")
    (ws / "sub").mkdir()
    (ws / "sub" / "out").symlink_to(outside)
    (ws / "dangling.txt").symlink_to(outside / "not-yet.txt")
    # An editor with the outside file open, answering for every spelling it is asked about.
    overlay = RecordingOverlay(default=SECRET)
    f = Folders.open([(str(ws), None)])
    try:
        # Positive controls: the overlay would answer, and the naive path reaches outside.
        assert overlay((os.path.join(ws, path),)) == SECRET
        if os.path.exists(ws / path):
            assert (ws / path).read_text() == SECRET
        else:
            assert os.path.realpath(ws / path).startswith(str(outside) + os.sep)
        err = error_of(lambda: rf(f, path, overlay=overlay))
        assert err.kind is ErrorKind.PATH_ESCAPE, repr(err)
        assert SECRET.strip() not in str(err)
    finally:
        f.close()


@pytest.mark.parametrize("path", ["../outside/secret.txt", "/etc/passwd", "a/../../x"])
def test_overlay_does_not_bypass_escape_checks(ws: Path, folders: Folders, path: str) -> None:
    overlay = RecordingOverlay(default=SECRET)
    err = error_of(lambda: rf(folders, path, overlay=overlay))
    assert err.kind is ErrorKind.PATH_ESCAPE
    assert overlay.asked == []


@pytest.mark.parametrize("path", ["", "a\x00b", "a\\b"])
def test_overlay_does_not_bypass_validation(ws: Path, folders: Folders, path: str) -> None:
    overlay = RecordingOverlay(default=SECRET)
    err = error_of(lambda: rf(folders, path, overlay=overlay))
    assert err.kind is ErrorKind.INVALID_PARAMS
    assert overlay.asked == []


# -- multi-root -----------------------------------------------------------------------------


@pytest.fixture
def two_roots(tmp_path: Path) -> Iterator[tuple[Folders, Path, Path]]:
    pa = tmp_path / "first"
    pb = tmp_path / "second"
    put(pa, "file.txt", "from a\n")
    put(pb, "file.txt", "from b\n")
    put(pb, "nested/deep.txt", "deep b\n")
    f = Folders.open([(str(pa), "a"), (str(pb), "b")])
    yield f, pa, pb
    f.close()


def test_multi_root_addressing(two_roots: tuple[Folders, Path, Path]) -> None:
    f, _pa, pb = two_roots
    ra = rf(f, "a/file.txt")
    rb = rf(f, "b/file.txt")
    assert ra.file.text == "from a\n"
    assert ra.file.path == "a/file.txt"
    assert rb.file.text == "from b\n"
    assert rb.file.path == "b/file.txt"
    assert rf(f, "b/./nested//deep.txt").file.path == "b/nested/deep.txt"
    overlay = RecordingOverlay({str(pb / "file.txt"): "b buffer\n"})
    assert rf(f, "b/file.txt", overlay=overlay).file.text == "b buffer\n"
    assert rf(f, "a/file.txt", overlay=overlay).file.text == "from a\n"


@pytest.mark.parametrize("path", ["c/file.txt", "file.txt", "first/file.txt", "A/file.txt"])
def test_multi_root_unknown_folder(two_roots: tuple[Folders, Path, Path], path: str) -> None:
    f = two_roots[0]
    err = error_of(lambda: rf(f, path))
    assert err.kind is ErrorKind.NOT_FOUND, repr(err)


@pytest.mark.parametrize("path", [".", "./"])
def test_multi_root_needs_a_folder_name(two_roots: tuple[Folders, Path, Path], path: str) -> None:
    err = error_of(lambda: rf(two_roots[0], path))
    assert err.kind is ErrorKind.NOT_FOUND


def test_multi_root_cannot_cross_roots(two_roots: tuple[Folders, Path, Path]) -> None:
    err = error_of(lambda: rf(two_roots[0], "a/../b/file.txt"))
    assert err.kind is ErrorKind.PATH_ESCAPE


def test_multi_root_names_are_made_unique(tmp_path: Path) -> None:
    one = tmp_path / "x" / "proj"
    two = tmp_path / "y" / "proj"
    put(one, "f.txt", "one\n")
    put(two, "f.txt", "two\n")
    f = Folders.open([(str(one), None), (str(two), None)])
    try:
        assert [r.name for r in f.roots] == ["proj", "proj-2"]
        assert rf(f, "proj/f.txt").file.text == "one\n"
        assert rf(f, "proj-2/f.txt").file.text == "two\n"
    finally:
        f.close()


def test_read_file_result_wire_form_is_the_pydantic_dump() -> None:
    """read_file's hot path skips pydantic's dump; it must give exactly what the dump gives."""
    from s_code.tools.files import ReadFileResult

    result = ReadFileResult.model_construct(
        path="a.txt",
        numbered_content="1\tx\n",
        sha256="0" * 64,
        revision="0" * 16,
        line_count=1,
        start_line=1,
        end_line=1,
        source="disk",
    )
    assert result.to_wire() == result.model_dump(mode="json", by_alias=True, exclude_none=True)
