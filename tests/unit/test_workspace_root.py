"""WorkspaceRoot, ordinary behaviour, under both resolution strategies (openat2 and the walk)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace import root as root_module
from s_code.workspace.paths import split_relative
from s_code.workspace.root import Entry, WorkspaceRoot

LIMIT = 1 << 20
C_TXT = b"c contents\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """ws/top.txt, ws/a/b/c.txt, ws/a/b/d/ (empty), ws/a/empty.txt"""
    ws = tmp_path / "ws"
    (ws / "a" / "b" / "d").mkdir(parents=True)
    (ws / "top.txt").write_bytes(b"top\n")
    (ws / "a" / "b" / "c.txt").write_bytes(C_TXT)
    (ws / "a" / "empty.txt").write_bytes(b"")
    return ws


@pytest.fixture
def root(ws: Path, strategy: str) -> Iterator[WorkspaceRoot]:
    r = WorkspaceRoot(str(ws))
    yield r
    r.close()


def kind_of(fn: Callable[[], object]) -> SCodeError:
    with pytest.raises(SCodeError) as info:
        result = fn()
        pytest.fail(f"expected an SCodeError, got {result!r}")
    return info.value


def read_fd(fd: int) -> bytes:
    try:
        return os.read(fd, LIMIT)
    finally:
        os.close(fd)


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


# -- construction -------------------------------------------------------------------------------


def test_root_must_be_absolute(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ws.parent)
    with pytest.raises(ValueError, match="absolute"):
        WorkspaceRoot("ws")


def test_name_path_and_fd(ws: Path) -> None:
    r = WorkspaceRoot(str(ws) + "/")
    try:
        assert r.path == str(ws)
        assert r.name == "ws"
        assert WorkspaceRoot(str(ws), "named").name == "named"
        assert os.path.samestat(os.fstat(r.fd), os.stat(ws))
        assert "ws" in repr(r)
    finally:
        r.close()
    r.close()  # closing twice is harmless


# -- open / lstat / read_bytes of nested files --------------------------------------------------


def test_open_nested(root: WorkspaceRoot, ws: Path) -> None:
    assert read_fd(root.open("a/b/c.txt")) == C_TXT
    assert read_fd(root.open("top.txt")) == b"top\n"
    with root.opened("a/b/c.txt") as fd:
        assert os.fstat(fd).st_ino == os.stat(ws / "a" / "b" / "c.txt").st_ino
    with root.opened(("a", "b", "c.txt")) as fd:
        assert os.read(fd, 100) == C_TXT


def test_open_directory_and_root(root: WorkspaceRoot, ws: Path) -> None:
    fd = root.open("a/b", os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert sorted(os.listdir(fd)) == ["c.txt", "d"]
    finally:
        os.close(fd)
    for spelling in (".", "./", "./."):
        fd = root.open(spelling, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert os.path.samestat(os.fstat(fd), os.stat(ws))
        finally:
            os.close(fd)


def test_open_for_writing_creates_inside(root: WorkspaceRoot, ws: Path) -> None:
    fd = root.open("a/b/new.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    try:
        os.write(fd, b"new\n")
    finally:
        os.close(fd)
    assert (ws / "a" / "b" / "new.txt").read_bytes() == b"new\n"
    assert stat.S_IMODE(os.stat(ws / "a" / "b" / "new.txt").st_mode) & 0o700 == 0o600


def test_lstat_nested(root: WorkspaceRoot, ws: Path) -> None:
    st = root.lstat("a/b/c.txt")
    assert stat.S_ISREG(st.st_mode)
    assert st.st_size == len(C_TXT)
    assert st.st_ino == os.stat(ws / "a" / "b" / "c.txt").st_ino
    assert stat.S_ISDIR(root.lstat("a/b").st_mode)
    assert os.path.samestat(root.lstat("."), os.stat(ws))
    assert root.lstat("top.txt").st_ino == os.stat(ws / "top.txt").st_ino


def test_lstat_does_not_follow_final_symlink(root: WorkspaceRoot, ws: Path) -> None:
    (ws / "link").symlink_to("top.txt")
    st = root.lstat("link")
    assert stat.S_ISLNK(st.st_mode)
    assert st.st_ino == os.lstat(ws / "link").st_ino != os.stat(ws / "top.txt").st_ino


def test_read_bytes_nested(root: WorkspaceRoot) -> None:
    assert root.read_bytes("a/b/c.txt", LIMIT) == C_TXT
    assert root.read_bytes("a/empty.txt", LIMIT) == b""
    assert root.read_bytes("top.txt", 4) == b"top\n"  # exactly at the limit


def test_read_bytes_large_file(root: WorkspaceRoot, ws: Path) -> None:
    data = os.urandom(3 << 20)  # several read chunks
    (ws / "big.bin").write_bytes(data)
    assert root.read_bytes("big.bin", len(data)) == data


@pytest.mark.parametrize(
    "spelling",
    ["a/b/c.txt", "a/./b/c.txt", "a//b/c.txt", "./a/b/c.txt", "a/b/./c.txt", "a///b//./c.txt"],
)
def test_normalisation(root: WorkspaceRoot, ws: Path, spelling: str) -> None:
    assert split_relative(spelling) == ("a", "b", "c.txt")
    assert root.read_bytes(spelling, LIMIT) == C_TXT
    assert root.lstat(spelling).st_ino == os.stat(ws / "a" / "b" / "c.txt").st_ino
    assert read_fd(root.open(spelling)) == C_TXT


@pytest.mark.parametrize("spelling", ["a/./b", "a//b", "./a/b/", "a/b/."])
def test_normalisation_list_dir(root: WorkspaceRoot, spelling: str) -> None:
    assert [e.name for e in root.list_dir(split_relative(spelling))] == ["c.txt", "d"]


# -- not found --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["missing.txt", "a/missing.txt", "missing/c.txt", "a/b/d/x"])
def test_missing_is_not_found(root: WorkspaceRoot, path: str) -> None:
    for fn in (
        lambda: root.read_bytes(path, LIMIT),
        lambda: root.open(path),
        lambda: root.lstat(path),
        lambda: root.list_dir(split_relative(path)),
    ):
        err = kind_of(fn)
        assert err.kind is ErrorKind.NOT_FOUND, repr(err)


@pytest.mark.parametrize("path", ["top.txt/x", "a/b/c.txt/x", "a/b/c.txt/x/y"])
def test_file_used_as_directory_is_not_found(root: WorkspaceRoot, path: str) -> None:
    for fn in (
        lambda: root.read_bytes(path, LIMIT),
        lambda: root.open(path),
        lambda: root.lstat(path),
        lambda: root.list_dir(split_relative(path)),
    ):
        err = kind_of(fn)
        assert err.kind is ErrorKind.NOT_FOUND, repr(err)


@pytest.mark.parametrize("parts", [("top.txt",), ("a", "b", "c.txt"), ("a", "empty.txt")])
def test_list_dir_of_a_file_is_not_found(root: WorkspaceRoot, parts: tuple[str, ...]) -> None:
    err = kind_of(lambda: root.list_dir(parts))
    assert err.kind is ErrorKind.NOT_FOUND, repr(err)


def test_not_found_carries_the_path(root: WorkspaceRoot) -> None:
    err = kind_of(lambda: root.read_bytes("a/./missing.txt", LIMIT))
    assert err.data["path"] == "a/missing.txt"


# -- list_dir ---------------------------------------------------------------------------------


def test_list_dir(root: WorkspaceRoot) -> None:
    assert root.list_dir(()) == [
        Entry("a", "dir", root.lstat("a").st_size),
        Entry("top.txt", "file", 4),
    ]
    assert root.list_dir(("a",)) == [
        Entry("b", "dir", root.lstat("a/b").st_size),
        Entry("empty.txt", "file", 0),
    ]
    assert root.list_dir(("a", "b", "d")) == []


def test_list_dir_does_not_follow_symlinks(root: WorkspaceRoot, ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big.txt").write_bytes(b"x" * 1000)
    (ws / "a" / "to_dir").symlink_to(outside)
    (ws / "a" / "to_file").symlink_to(outside / "big.txt")
    (ws / "a" / "dangling").symlink_to(tmp_path / "nowhere")
    (ws / "a" / "inner").symlink_to("b")
    os.mkfifo(ws / "a" / "pipe")

    entries = {e.name: e for e in root.list_dir(("a",))}
    assert sorted(entries) == ["b", "dangling", "empty.txt", "inner", "pipe", "to_dir", "to_file"]
    for name in ("to_dir", "to_file", "dangling", "inner"):
        assert entries[name].kind == "symlink", name
        assert entries[name].size == len(os.readlink(ws / "a" / name)), name
    assert entries["pipe"].kind == "other"
    assert entries["b"].kind == "dir"
    assert entries["empty.txt"].kind == "file"


def test_list_dir_is_sorted(root: WorkspaceRoot, ws: Path) -> None:
    for name in ("zeta", "Alpha", "beta", "_x", "10", "9"):
        (ws / "a" / "b" / "d" / name).write_bytes(b"")
    names = [e.name for e in root.list_dir(("a", "b", "d"))]
    assert names == sorted(["zeta", "Alpha", "beta", "_x", "10", "9"])


# -- read_bytes refusals ----------------------------------------------------------------------


def _run_with_timeout(fn: Callable[[], object], seconds: float) -> BaseException | object:
    outcome: list[object] = []

    def target() -> None:
        try:
            outcome.append(fn())
        except BaseException as exc:
            outcome.append(exc)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    return outcome[0] if outcome else TimeoutError(f"still blocked after {seconds}s")


def test_read_bytes_fifo_does_not_hang(root: WorkspaceRoot, ws: Path) -> None:
    fifo = ws / "a" / "pipe"
    os.mkfifo(fifo)
    try:
        result = _run_with_timeout(lambda: root.read_bytes("a/pipe", LIMIT), 5.0)
    finally:
        # Release a reader blocked in open(), should there be one.
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert isinstance(result, SCodeError), repr(result)
    assert result.kind is ErrorKind.INVALID_PARAMS, repr(result)
    assert result.data["path"] == "a/pipe"


def test_read_bytes_fifo_with_a_writer_is_refused(root: WorkspaceRoot, ws: Path) -> None:
    fifo = ws / "pipe"
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    wfd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(wfd, b"from the pipe\n")
        result = _run_with_timeout(lambda: root.read_bytes("pipe", LIMIT), 5.0)
    finally:
        os.close(wfd)
        os.close(rfd)
    assert isinstance(result, SCodeError), repr(result)
    assert result.kind is ErrorKind.INVALID_PARAMS


@pytest.mark.parametrize("path", ["a", "a/b", "a/b/d", ".", "./a/"])
def test_read_bytes_directory_refused(root: WorkspaceRoot, path: str) -> None:
    err = kind_of(lambda: root.read_bytes(path, LIMIT))
    assert err.kind is ErrorKind.INVALID_PARAMS, repr(err)
    assert err.data["field"] == "path"


def test_read_bytes_field_name_is_reported(root: WorkspaceRoot) -> None:
    err = kind_of(lambda: root.read_bytes("a", LIMIT, field="files.2.path"))
    assert err.data["field"] == "files.2.path"


def test_read_bytes_over_limit(root: WorkspaceRoot, ws: Path) -> None:
    (ws / "eleven.txt").write_bytes(b"0123456789\n")
    assert root.read_bytes("eleven.txt", 11) == b"0123456789\n"
    err = kind_of(lambda: root.read_bytes("eleven.txt", 10))
    assert err.kind is ErrorKind.LIMIT_EXCEEDED, repr(err)
    assert err.data["limit"] == "file_size"
    assert err.data["max"] == 10
    assert err.data["actual"] == 11
    assert err.data["path"] == "eleven.txt"


def test_read_bytes_zero_limit(root: WorkspaceRoot) -> None:
    assert root.read_bytes("a/empty.txt", 0) == b""
    err = kind_of(lambda: root.read_bytes("top.txt", 0))
    assert err.kind is ErrorKind.LIMIT_EXCEEDED
    assert err.data["limit"] == "file_size"


class _Os:
    """``os`` as root.py sees it, with reads cut at 1,000 bytes (as FUSE or a network file system
    may) and, optionally, the file rewritten between the fstat and the first read."""

    def __init__(self, rewrite: Callable[[], None] | None = None) -> None:
        self.rewrite = rewrite

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def fstat(self, fd: int) -> os.stat_result:
        st = os.fstat(fd)
        if self.rewrite is not None:
            self.rewrite()
        return st

    @staticmethod
    def read(fd: int, n: int) -> bytes:
        return os.read(fd, min(n, 1000))


def test_read_bytes_takes_the_whole_file_over_short_reads(
    root: WorkspaceRoot, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = bytes(range(256)) * 40
    (ws / "big.bin").write_bytes(data)
    monkeypatch.setattr(root_module, "os", _Os())
    assert root.read_bytes("big.bin", LIMIT) == data


@pytest.mark.parametrize("size", [0, 10, 3000])
def test_read_bytes_sees_a_file_that_changed_size_after_the_stat(
    root: WorkspaceRoot, ws: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    (ws / "f.txt").write_bytes(b"x" * 100)
    monkeypatch.setattr(root_module, "os", _Os(lambda: (ws / "f.txt").write_bytes(b"y" * size)))
    assert root.read_bytes("f.txt", 5000) == b"y" * size


def test_read_bytes_refuses_a_file_that_grew_past_the_limit_after_the_stat(
    root: WorkspaceRoot, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (ws / "f.txt").write_bytes(b"x" * 100)
    monkeypatch.setattr(root_module, "os", _Os(lambda: (ws / "f.txt").write_bytes(b"y" * 101)))
    err = kind_of(lambda: root.read_bytes("f.txt", 100))
    assert err.kind is ErrorKind.LIMIT_EXCEEDED and err.data["max"] == 100


@pytest.mark.parametrize("error", [BlockingIOError(11, "EAGAIN"), OSError(5, "Input/output error")])
def test_read_bytes_refuses_a_file_whose_read_fails(
    root: WorkspaceRoot, ws: Path, monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    """/proc/kmsg bound into a workspace is "regular", size 0, and its read would block (EAGAIN
    under O_NONBLOCK): a clear refusal, not an internal error (nor a hang)."""
    (ws / "kmsg").write_bytes(b"")

    class Failing(_Os):
        @staticmethod
        def read(fd: int, n: int) -> bytes:
            raise error

    monkeypatch.setattr(root_module, "os", Failing())
    err = kind_of(lambda: root.read_bytes("kmsg", LIMIT))
    assert err.kind is ErrorKind.NOT_FOUND and err.data["reason"] == "unreadable", repr(err)
    assert err.data["path"] == "kmsg"


# -- file descriptors -------------------------------------------------------------------------


def _churn(root: WorkspaceRoot, ws: Path) -> None:
    """Every operation once, the failing ones included."""
    ok: list[Callable[[], object]] = [
        lambda: read_fd(root.open("a/b/c.txt")),
        lambda: root.read_bytes("a/b/c.txt", LIMIT),
        lambda: root.lstat("a/b/c.txt"),
        lambda: root.lstat("."),
        lambda: root.list_dir(("a", "b")),
        lambda: root.list_dir(()),
        lambda: root.fd,
    ]
    failing: list[Callable[[], object]] = [
        lambda: root.read_bytes("missing", LIMIT),
        lambda: root.read_bytes("a/b/c.txt/x/y", LIMIT),
        lambda: root.read_bytes("a/b", LIMIT),
        lambda: root.read_bytes("a/pipe", LIMIT),
        lambda: root.read_bytes("a/b/c.txt", 1),
        lambda: root.read_bytes("a/link/c.txt", LIMIT),
        lambda: root.read_bytes("a/b/leaf", LIMIT),
        lambda: root.read_bytes("../ws/top.txt", LIMIT),
        lambda: root.read_bytes("", LIMIT),
        lambda: root.lstat("a/missing/x"),
        lambda: root.lstat("a/link/c.txt"),
        lambda: root.list_dir(("a", "link")),
        lambda: root.list_dir(("top.txt",)),
        lambda: root.list_dir(("a", "b", "missing")),
        lambda: root.open("a/b/c.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600),
        lambda: root.open("a/missing/deeper/x"),
    ]
    for fn in ok:
        fn()
    for fn in failing:
        with pytest.raises(SCodeError):
            fn()


def test_no_fd_leaks(root: WorkspaceRoot, ws: Path) -> None:
    os.mkfifo(ws / "a" / "pipe")
    (ws / "a" / "link").symlink_to("b")
    (ws / "a" / "b" / "leaf").symlink_to("c.txt")
    # Hold the FIFO open read-write: should read_bytes ever open it blocking, it cannot hang here
    # (test_read_bytes_fifo_does_not_hang is the test for that).
    holder = os.open(ws / "a" / "pipe", os.O_RDWR | os.O_NONBLOCK)
    try:
        _churn(root, ws)  # warm up anything cached lazily
        before = fd_count()
        for _ in range(50):
            _churn(root, ws)
        assert fd_count() == before
    finally:
        os.close(holder)


def test_no_fd_leaks_open_close_roots(ws: Path, strategy: str) -> None:
    before = fd_count()
    for _ in range(50):
        r = WorkspaceRoot(str(ws))
        r.read_bytes("a/b/c.txt", LIMIT)
        r.close()
    assert fd_count() == before


def test_opened_closes_on_error(root: WorkspaceRoot) -> None:
    before = fd_count()
    for _ in range(20):
        with pytest.raises(RuntimeError), root.opened("a/b/c.txt"):
            raise RuntimeError("boom")
    assert fd_count() == before


def test_fds_are_cloexec(root: WorkspaceRoot) -> None:
    fd = root.open("a/b/c.txt")
    try:
        assert not os.get_inheritable(fd)
    finally:
        os.close(fd)
    assert not os.get_inheritable(root.fd)


# -- never blocking (SECURITY.md T1) -----------------------------------------------------------


def test_every_open_is_non_blocking(root: WorkspaceRoot, ws: Path) -> None:
    """opened() with its default flags returns at once on a FIFO (before, it blocked there until
    a writer came: git_blame's pre-check froze the server so)."""
    os.mkfifo(ws / "a" / "pipe")
    try:

        def open_it() -> int:
            with root.opened("a/pipe") as fd:
                return os.fstat(fd).st_mode

        mode = _run_with_timeout(open_it, 5.0)
    finally:
        with contextlib.suppress(OSError):
            os.close(os.open(ws / "a" / "pipe", os.O_WRONLY | os.O_NONBLOCK))
    assert isinstance(mode, int) and stat.S_ISFIFO(mode), repr(mode)
    fd = root.open("a/b/c.txt")
    try:
        assert os.get_blocking(fd) is False
    finally:
        os.close(fd)


def _unix_socket(path: Path) -> None:
    import socket

    with contextlib.chdir(path.parent), socket.socket(socket.AF_UNIX) as s:
        s.bind(path.name)


def test_a_socket_is_not_a_regular_file(root: WorkspaceRoot, ws: Path) -> None:
    _unix_socket(ws / "a" / "sock")
    err = kind_of(lambda: root.read_bytes("a/sock", LIMIT))
    assert err.kind is ErrorKind.INVALID_PARAMS and err.data["path"] == "a/sock"
    assert "not a regular file" in err.message


def test_regular_file_never_opens(root: WorkspaceRoot, ws: Path) -> None:
    os.mkfifo(ws / "a" / "pipe")
    _unix_socket(ws / "a" / "sock")
    (ws / "a" / "link").symlink_to("b/c.txt")
    assert root.regular_file(("a", "b", "c.txt")).st_size == len(C_TXT)
    for parts in (("a", "pipe"), ("a", "sock"), ("a", "b")):
        err = kind_of(lambda p=parts: root.regular_file(p))  # type: ignore[misc]
        assert err.kind is ErrorKind.INVALID_PARAMS and err.data["path"] == "/".join(parts)
    assert kind_of(lambda: root.regular_file(("a", "link"))).kind is ErrorKind.PATH_ESCAPE
    assert kind_of(lambda: root.regular_file(("a", "none"))).kind is ErrorKind.NOT_FOUND


def test_read_head(ws: Path, tmp_path: Path) -> None:
    from s_code.workspace.root import read_head

    os.mkfifo(ws / "pipe")
    (ws / "link").symlink_to("top.txt")
    assert read_head(str(ws / "top.txt"), 2) == b"to"
    assert _run_with_timeout(lambda: read_head(str(ws / "pipe"), 10), 5.0) is None
    assert read_head(str(ws / "a"), 10) is None
    with pytest.raises(OSError) as err:
        read_head(str(ws / "link"), 10)
    assert err.value.errno == errno.ELOOP
    with pytest.raises(FileNotFoundError):
        read_head(str(ws / "none"), 10)
