"""SECURITY.md checklist, files: F1-F5 and F15, against both resolution strategies.

Every attack first runs a positive control: the naive way (``open(os.path.join(root, path))`` or
``os.path.realpath`` then open) really reaches the outside file. Then WorkspaceRoot must refuse with
the right error kind and hand back no outside data. The "outside" directory is a sibling of the
workspace inside ``tmp_path`` and holds a secret marker file.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.workspace import openat2
from s_code.workspace.documents import no_overlay
from s_code.workspace.folders import Folders
from s_code.workspace.paths import split_relative
from s_code.workspace.read import read_file
from s_code.workspace.root import WorkspaceRoot

SECRET = b"S-CODE-OUTSIDE-SECRET-7f3a\n"
INSIDE = b"inside the workspace\n"
PLANTED = b"planted by whoever replaced the root\n"
LIMIT = 1 << 20
ESCAPE = ErrorKind.PATH_ESCAPE
INVALID = ErrorKind.INVALID_PARAMS

# -- strategies ---------------------------------------------------------------------------------


# -- layout -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    base: Path
    ws: Path
    outside: Path
    secret: Path


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    (ws / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (outside / "only-outside.txt").write_bytes(SECRET)
    (ws / "inside.txt").write_bytes(INSIDE)
    return Layout(tmp_path, ws, outside, outside / "secret.txt")


@pytest.fixture
def root(layout: Layout, strategy: str) -> Iterator[WorkspaceRoot]:
    r = WorkspaceRoot(str(layout.ws))
    yield r
    r.close()


# -- the naive ways (positive controls) ---------------------------------------------------------


def naive_read(ws: Path, rel: str) -> bytes | None:
    """``open(os.path.join(root, path))``: what a path-based implementation does."""
    try:
        with open(os.path.join(ws, rel), "rb") as f:
            return f.read()
    except OSError:
        return None


def realpath_read(ws: Path, rel: str) -> bytes | None:
    """``os.path.realpath`` then open (no containment check)."""
    try:
        with open(os.path.realpath(os.path.join(ws, rel)), "rb") as f:
            return f.read()
    except OSError:
        return None


def checked_realpath_read(ws: Path, rel: str) -> bytes | None:
    """realpath, check it is under the root, then open: the classic check-then-use race."""
    try:
        real_root = os.path.realpath(ws)
        resolved = os.path.realpath(os.path.join(ws, rel))
        if os.path.commonpath([resolved, real_root]) != real_root:
            return None
        with open(resolved, "rb") as f:
            return f.read()
    except OSError:
        return None


def libc_read(path: str) -> bytes | None:
    """open(2) through libc, which takes the path up to its first NUL byte."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(os.fsencode(path), os.O_RDONLY)
    if fd < 0:
        return None
    try:
        return os.read(fd, LIMIT)
    finally:
        os.close(fd)


def assert_naive_reaches(ws: Path, rel: str, expected: bytes) -> None:
    assert naive_read(ws, rel) == expected, f"positive control: naive open of {rel!r}"
    assert realpath_read(ws, rel) == expected, f"positive control: realpath open of {rel!r}"


# -- WorkspaceRoot operations -------------------------------------------------------------------


def _via_open(r: WorkspaceRoot, rel: str) -> bytes:
    fd = r.open(rel)
    try:
        return os.read(fd, LIMIT)
    finally:
        os.close(fd)


def _via_opened(r: WorkspaceRoot, rel: str) -> bytes:
    with r.opened(rel) as fd:
        return os.read(fd, LIMIT)


def _via_read_bytes(r: WorkspaceRoot, rel: str) -> bytes:
    return r.read_bytes(rel, LIMIT)


READS: dict[str, Callable[[WorkspaceRoot, str], bytes]] = {
    "read_bytes": _via_read_bytes,
    "open": _via_open,
    "opened": _via_opened,
}


def refused(kind: ErrorKind, fn: Callable[[], object], *, leak: bytes = SECRET) -> SCodeError:
    """``fn`` raises an SCodeError of ``kind``, and nothing of ``leak`` shows in the error."""
    with pytest.raises(SCodeError) as info:
        result = fn()
        pytest.fail(f"expected {kind.value}, got a result: {result!r}")
    err = info.value
    assert err.kind is kind, repr(err)
    marker = leak.strip().decode()
    assert marker not in str(err)
    assert marker not in repr(err.data)
    return err


def create_via_root(r: WorkspaceRoot, rel: str) -> None:
    fd = r.open(rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)


# -- F1: a symlinked directory to /etc ----------------------------------------------------------


def _etc_file() -> str:
    for name in ("passwd", "group", "hostname"):
        p = os.path.join("/etc", name)
        if os.path.isfile(p) and not os.path.islink(p) and os.access(p, os.R_OK):
            return name
    pytest.skip("no readable regular file in /etc")


@pytest.mark.parametrize("op", sorted(READS))
def test_f1_symlink_dir_to_etc_read(layout: Layout, root: WorkspaceRoot, op: str) -> None:
    name = _etc_file()
    (layout.ws / "etc").symlink_to("/etc")
    etc_bytes = Path("/etc", name).read_bytes()
    assert_naive_reaches(layout.ws, f"etc/{name}", etc_bytes)

    refused(ESCAPE, lambda: READS[op](root, f"etc/{name}"), leak=etc_bytes[:40])


def test_f1_the_link_itself_is_described_not_followed(layout: Layout, root: WorkspaceRoot) -> None:
    (layout.ws / "etc").symlink_to("/etc")
    assert os.path.samefile(layout.ws / "etc", "/etc"), "positive control: stat follows"

    st = root.lstat("etc")
    assert stat.S_ISLNK(st.st_mode)
    assert st.st_ino != os.stat("/etc").st_ino
    entries = {e.name: e.kind for e in root.list_dir(())}
    assert entries["etc"] == "symlink"


def test_f1_absolute_symlink_dir_to_outside(layout: Layout, root: WorkspaceRoot) -> None:
    (layout.ws / "a" / "out").symlink_to(layout.outside)
    assert_naive_reaches(layout.ws, "a/out/secret.txt", SECRET)

    for op in READS.values():
        refused(ESCAPE, lambda op=op: op(root, "a/out/secret.txt"))


# -- F2: up -> ../ ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("link", "target", "rel"),
    [
        ("up", "../", "up/outside/secret.txt"),
        ("up", "..", "up/outside/secret.txt"),
        ("a/b/up", "../../../", "a/b/up/outside/secret.txt"),
    ],
)
@pytest.mark.parametrize("op", sorted(READS))
def test_f2_up_link_read(
    layout: Layout, root: WorkspaceRoot, link: str, target: str, rel: str, op: str
) -> None:
    (layout.ws / link).symlink_to(target)
    assert_naive_reaches(layout.ws, rel, SECRET)

    refused(ESCAPE, lambda: READS[op](root, rel))


def test_f2_up_link_create(layout: Layout, root: WorkspaceRoot) -> None:
    (layout.ws / "up").symlink_to("../")
    with open(layout.ws / "up" / "outside" / "naive.txt", "x") as f:
        f.write("naive")
    assert (layout.outside / "naive.txt").exists(), "positive control: naive create escapes"

    refused(ESCAPE, lambda: create_via_root(root, "up/outside/sidecar.txt"))
    assert not (layout.outside / "sidecar.txt").exists()
    assert not (layout.ws / "sidecar.txt").exists()


# -- F1/F2: listing and stat through a symlinked directory ---------------------------------------


@pytest.mark.parametrize(
    ("link", "target", "listed", "through"),
    [
        ("etc", "/etc", "etc", "etc/{etc}"),
        ("a/out", "{outside}", "a/out", "a/out/secret.txt"),
        ("up", "../", "up", "up/outside/secret.txt"),
        ("up", "../", "up/outside", "up/outside/secret.txt"),
        ("a/b/up", "../../../", "a/b/up/outside", "a/b/up/outside/secret.txt"),
    ],
    ids=["etc", "absolute", "up", "up-outside", "nested-up"],
)
def test_f1_f2_list_and_stat_through_symlinked_dir(
    layout: Layout, root: WorkspaceRoot, link: str, target: str, listed: str, through: str
) -> None:
    names = {"etc": _etc_file() if target == "/etc" else "", "outside": str(layout.outside)}
    through = through.format(**names)
    (layout.ws / link).symlink_to(target.format(**names))
    # Positive control: the naive listing shows the outside directory, stat reaches its file.
    outside_dir = os.path.dirname(os.path.realpath(layout.ws / through))
    assert os.listdir(layout.ws / listed) == os.listdir(os.path.realpath(layout.ws / listed))
    assert sorted(os.listdir(os.path.dirname(layout.ws / through))) == sorted(
        os.listdir(outside_dir)
    )
    assert not outside_dir.startswith(str(layout.ws) + os.sep)
    real = os.stat(os.path.realpath(layout.ws / through))
    assert os.stat(layout.ws / through).st_ino == real.st_ino

    refused(ESCAPE, lambda: root.list_dir(split_relative(listed)))
    refused(ESCAPE, lambda: root.lstat(through))
    refused(ESCAPE, lambda: root.open(listed, os.O_RDONLY | os.O_DIRECTORY))


# -- F3: the symlink-swap race ------------------------------------------------------------------

SWAPS = 3000
SWAP_PAUSE = 0.0004  # seconds between swaps: ~3000 swaps take ~2 s, overlapping ~1000 rounds
RACE_DEADLINE = 3.5

# The attacker is another process (as an agent's command would be): it swaps ``d`` (a directory)
# with ``spare`` (a symlink to the outside directory) atomically with renameat2(RENAME_EXCHANGE),
# or by rename + symlink where the kernel lacks it, and always leaves ``d`` a directory.
SWAPPER = r"""
import ctypes, os, signal, sys, time
d, spare, parked, outside, swaps, pause = sys.argv[1:7]
swaps, pause = int(swaps), float(pause)
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
libc = ctypes.CDLL(None, use_errno=True)
fn = getattr(libc, "renameat2", None)
def exchange():
    if fn(-100, os.fsencode(d), -100, os.fsencode(spare), 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
mode = "exchange"
try:
    exchange(); exchange()
except (OSError, TypeError):
    mode = "rename"
def swap(to_link):
    if mode == "exchange":
        exchange()
    elif to_link:
        os.rename(d, parked); os.symlink(outside, d)
    else:
        os.unlink(d); os.rename(parked, d)
done = 0
print("ready", flush=True)
while done < swaps and not stop:
    swap(done % 2 == 0)
    done += 1
    time.sleep(pause)
if done % 2:
    swap(False)
print(f"swaps={done} mode={mode}", flush=True)
"""


class Swapper:
    """The attacker process; ``swaps`` and ``mode`` are known once it has exited."""

    def __init__(self, ws: Path, outside: Path) -> None:
        os.symlink(outside, ws / "d-spare")
        args = [str(ws / "d"), str(ws / "d-spare"), str(ws / "d-parked"), str(outside)]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SWAPPER, *args, str(SWAPS), str(SWAP_PAUSE)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"
        self.swaps = 0
        self.mode = ""

    def running(self) -> bool:
        return self.proc.poll() is None

    def finish(self) -> None:
        if self.running():
            self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=10)
        assert self.proc.returncode == 0, err
        fields = dict(f.split("=") for f in out.split())
        self.swaps, self.mode = int(fields["swaps"]), fields["mode"]


@dataclass
class RaceCounts:
    naive_reads_outside: int = 0
    realpath_reads_outside: int = 0
    root_reads_outside: int = 0
    root_reads_inside: int = 0
    root_refusals: int = 0
    iterations: int = 0


def _is_outside(got: object, outside_ino: int) -> bool:
    """Outside data: the secret's bytes, its inode, or a listing of the outside directory."""
    if isinstance(got, os.stat_result):
        return got.st_ino == outside_ino
    if isinstance(got, list):
        return any(e.name == "only-outside.txt" for e in got)
    return got == SECRET


def _root_attempts(r: WorkspaceRoot, outside_ino: int, i: int) -> tuple[int, int, int]:
    """(outside, inside, refused) for one round of reads, a listing, a stat and a create."""
    outside = inside = refusals = 0
    attempts: list[Callable[[], object]] = [
        lambda: r.read_bytes("d/secret.txt", LIMIT),
        lambda: _via_open(r, "d/secret.txt"),
        lambda: r.list_dir(("d", "sub")),  # "sub": no creates there, the listing stays small
        lambda: r.lstat("d/secret.txt"),
        lambda: create_via_root(r, f"d/root-{i}.txt"),
    ]
    for attempt in attempts:
        try:
            got = attempt()
        except SCodeError as exc:
            assert exc.kind in (ErrorKind.PATH_ESCAPE, ErrorKind.NOT_FOUND), repr(exc)
            refusals += 1
            continue
        if _is_outside(got, outside_ino):
            outside += 1
        elif got == INSIDE:
            inside += 1
    return outside, inside, refusals


def _naive_create(ws: Path, i: int) -> None:
    try:
        with open(os.path.join(ws, f"d/naive-{i}.txt"), "x"):
            pass
    except OSError:
        pass


def test_f3_symlink_swap_race(layout: Layout, root: WorkspaceRoot) -> None:
    (layout.ws / "d" / "sub").mkdir(parents=True)
    (layout.ws / "d" / "secret.txt").write_bytes(INSIDE)
    (layout.outside / "sub").mkdir()
    (layout.outside / "sub" / "only-outside.txt").write_bytes(SECRET)
    outside_ino = os.stat(layout.secret).st_ino
    counts = RaceCounts()
    swapper = Swapper(layout.ws, layout.outside)
    started = time.monotonic()
    try:
        while swapper.running() and time.monotonic() - started < RACE_DEADLINE:
            i = counts.iterations
            counts.naive_reads_outside += naive_read(layout.ws, "d/secret.txt") == SECRET
            counts.realpath_reads_outside += (
                checked_realpath_read(layout.ws, "d/secret.txt") == SECRET
            )
            _naive_create(layout.ws, i)
            outside, inside, refusals = _root_attempts(root, outside_ino, i)
            counts.root_reads_outside += outside
            counts.root_reads_inside += inside
            counts.root_refusals += refusals
            counts.iterations += 1
    finally:
        swapper.finish()
    assert swapper.swaps >= 1000, f"the race barely ran: {swapper.swaps} swaps, {counts}"
    assert counts.iterations >= 200, f"the race barely ran: {swapper.swaps} swaps, {counts}"

    naive_created = [n for n in os.listdir(layout.outside) if n.startswith("naive-")]
    root_created = [n for n in os.listdir(layout.outside) if n.startswith("root-")]
    # Positive control: the naive way does escape under this race.
    assert counts.naive_reads_outside > 0, counts
    assert naive_created, counts
    # WorkspaceRoot: zero reads, listings, stats or creates outside, yet it did work inside.
    assert counts.root_reads_outside == 0, counts
    assert root_created == [], root_created
    assert counts.root_reads_inside > 0, counts
    assert counts.root_refusals > 0, counts
    assert (layout.outside / "secret.txt").read_bytes() == SECRET
    assert root.read_bytes("d/secret.txt", LIMIT) == INSIDE


# -- F4: escaping and malformed path strings ----------------------------------------------------


@pytest.mark.parametrize(
    "rel",
    [
        "../outside/secret.txt",
        "a/../../outside/secret.txt",
        "./../outside/secret.txt",
        "a/b/../../../outside/secret.txt",
        "a//..//..//outside/secret.txt",
    ],
)
@pytest.mark.parametrize("op", sorted(READS))
def test_f4_dotdot(layout: Layout, root: WorkspaceRoot, rel: str, op: str) -> None:
    assert_naive_reaches(layout.ws, rel, SECRET)

    refused(ESCAPE, lambda: READS[op](root, rel))
    refused(ESCAPE, lambda: root.lstat(rel))


@pytest.mark.parametrize("prefix", ["", "/proc/self/root", "/proc/thread-self/root", "/.."])
@pytest.mark.parametrize("op", sorted(READS))
def test_f4_absolute(layout: Layout, root: WorkspaceRoot, prefix: str, op: str) -> None:
    rel = prefix + str(layout.secret)
    assert_naive_reaches(layout.ws, rel, SECRET)

    refused(ESCAPE, lambda: READS[op](root, rel))
    refused(ESCAPE, lambda: root.lstat(rel))


@pytest.mark.parametrize(
    ("target", "via"),
    [("/proc", "self/root"), ("/proc/self", "root"), ("/proc/self/root", ""), ("/", "")],
)
@pytest.mark.parametrize("op", sorted(READS))
def test_f4_proc_links_inside_workspace(
    layout: Layout, root: WorkspaceRoot, target: str, via: str, op: str
) -> None:
    (layout.ws / "p").symlink_to(target)
    rel = "/".join(x for x in ("p", via, str(layout.secret).lstrip("/")) if x)
    assert_naive_reaches(layout.ws, rel, SECRET)

    refused(ESCAPE, lambda: READS[op](root, rel))
    refused(ESCAPE, lambda: root.lstat(rel))


def test_f4_proc_self_fd_magic_link(layout: Layout, root: WorkspaceRoot) -> None:
    """A symlink to /proc/self/fd/N (a magic link to some held directory fd) is refused."""
    out_fd = os.open(layout.outside, os.O_RDONLY | os.O_DIRECTORY)
    try:
        (layout.ws / "m").symlink_to(f"/proc/self/fd/{out_fd}")
        assert_naive_reaches(layout.ws, "m/secret.txt", SECRET)
        for op in READS.values():
            refused(ESCAPE, lambda op=op: op(root, "m/secret.txt"))
    finally:
        os.close(out_fd)


def test_f4_empty(layout: Layout, root: WorkspaceRoot) -> None:
    # Positive control: joined naively, "" names the workspace directory itself.
    joined = os.path.join(layout.ws, "")
    assert os.path.isdir(joined)
    assert os.path.samefile(joined, layout.ws)

    for op in READS.values():
        err = refused(INVALID, lambda op=op: op(root, ""))
        assert err.data.get("field") == "path"
    refused(INVALID, lambda: root.lstat(""))
    refused(INVALID, lambda: root.open("", os.O_RDONLY | os.O_DIRECTORY))


@pytest.mark.parametrize(
    "rel", ["../outside/secret.txt\x00.md", "inside.txt\x00/../../outside/secret.txt"]
)
def test_f4_nul(layout: Layout, root: WorkspaceRoot, rel: str) -> None:
    # Positive control: C's open() reads the path up to the NUL, not what the string says.
    prefix = rel.split("\x00")[0]
    expected = SECRET if prefix.startswith("..") else INSIDE
    assert libc_read(os.path.join(layout.ws, rel)) == expected

    for op in READS.values():
        err = refused(INVALID, lambda op=op: op(root, rel), leak=expected)
        assert err.data.get("field") == "path"
    refused(INVALID, lambda: root.lstat(rel), leak=expected)


@pytest.mark.parametrize(
    "rel", ["..\\outside\\secret.txt", "a\\..\\..\\outside\\secret.txt", "a\\b\\..\\..\\inside.txt"]
)
def test_f4_backslash(layout: Layout, root: WorkspaceRoot, rel: str) -> None:
    # Positive control: a tool that converts Windows separators reaches what the string names.
    converted = rel.replace("\\", "/")
    expected = SECRET if "outside" in converted else INSIDE
    assert naive_read(layout.ws, converted) == expected

    for op in READS.values():
        err = refused(INVALID, lambda op=op: op(root, rel), leak=expected)
        assert err.data.get("field") == "path"
    refused(INVALID, lambda: root.lstat(rel), leak=expected)


def test_f4_literal_backslash_name_is_refused(layout: Layout, root: WorkspaceRoot) -> None:
    """On Linux ``a\\b`` is a legal name; the sidecar refuses it so clients cannot disagree."""
    (layout.ws / "a\\b").write_bytes(INSIDE)
    assert naive_read(layout.ws, "a\\b") == INSIDE
    refused(INVALID, lambda: root.read_bytes("a\\b", LIMIT), leak=INSIDE)


def test_f4_validation_precedes_any_syscall(
    layout: Layout, root: WorkspaceRoot, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[object] = []
    monkeypatch.setattr(openat2, "_openat2", lambda *a: calls.append(a) or -1)
    monkeypatch.setattr(openat2, "_walk_open", lambda *a: calls.append(a) or -1)
    for rel in ("", "a\x00", "a\\b", "/etc/passwd", "../x", "a/../../x"):
        with pytest.raises(SCodeError):
            root.open(rel)
        with pytest.raises(SCodeError):
            split_relative(rel)
    assert calls == []


# -- F5: a symlinked leaf file ------------------------------------------------------------------


@pytest.mark.parametrize("absolute", [True, False], ids=["absolute", "relative"])
@pytest.mark.parametrize("where", ["leaf.txt", "a/b/leaf.txt"])
@pytest.mark.parametrize("op", sorted(READS))
def test_f5_symlinked_leaf_read(
    layout: Layout, root: WorkspaceRoot, absolute: bool, where: str, op: str
) -> None:
    link = layout.ws / where
    target = layout.secret if absolute else Path(os.path.relpath(layout.secret, link.parent))
    link.symlink_to(target)
    assert_naive_reaches(layout.ws, where, SECRET)

    refused(ESCAPE, lambda: READS[op](root, where))


def test_f5_symlinked_leaf_write_and_metadata(layout: Layout, root: WorkspaceRoot) -> None:
    (layout.ws / "leaf.txt").symlink_to(layout.secret)
    with open(os.path.join(layout.ws, "leaf.txt"), "rb+") as f:  # positive control
        assert f.read() == SECRET

    refused(ESCAPE, lambda: root.open("leaf.txt", os.O_WRONLY | os.O_TRUNC))
    refused(ESCAPE, lambda: root.open("leaf.txt", os.O_RDWR | os.O_APPEND))
    assert layout.secret.read_bytes() == SECRET
    # lstat and list_dir describe the link itself, not the outside file.
    st = root.lstat("leaf.txt")
    assert stat.S_ISLNK(st.st_mode)
    assert st.st_ino != os.stat(layout.secret).st_ino
    entry = next(e for e in root.list_dir(()) if e.name == "leaf.txt")
    assert entry.kind == "symlink"
    assert entry.size == len(str(layout.secret))


def test_f5_list_dir_on_symlinked_leaf(layout: Layout, root: WorkspaceRoot) -> None:
    (layout.ws / "leaf").symlink_to(layout.outside)
    assert "secret.txt" in os.listdir(layout.ws / "leaf")  # positive control
    (layout.ws / "leaf.txt").symlink_to(layout.secret)
    assert os.path.samefile(layout.ws / "leaf.txt", layout.secret)  # positive control

    refused(ESCAPE, lambda: root.list_dir(("leaf",)))
    refused(ESCAPE, lambda: root.list_dir(("leaf.txt",)))


def test_f5_dangling_leaf_create(layout: Layout, root: WorkspaceRoot) -> None:
    (layout.ws / "naive.txt").symlink_to(layout.outside / "naive-created.txt")
    (layout.ws / "new.txt").symlink_to(layout.outside / "created.txt")
    with open(os.path.join(layout.ws, "naive.txt"), "w") as f:  # positive control
        f.write("x")
    assert (layout.outside / "naive-created.txt").exists()

    refused(ESCAPE, lambda: root.open("new.txt", os.O_WRONLY | os.O_CREAT, 0o600))
    refused(ESCAPE, lambda: root.open("new.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    # With O_EXCL the kernel answers EEXIST for any existing name, a symlink included: refused,
    # whatever the kind.
    with pytest.raises(SCodeError):
        root.open("new.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    assert not (layout.outside / "created.txt").exists()


# -- F15: the workspace root replaced mid-session -----------------------------------------------


def _all_ops(r: WorkspaceRoot) -> dict[str, Callable[[], object]]:
    return {
        "read_bytes": lambda: r.read_bytes("inside.txt", LIMIT),
        "read_bytes_secret": lambda: r.read_bytes("secret.txt", LIMIT),
        "open": lambda: _via_open(r, "inside.txt"),
        "opened": lambda: _via_opened(r, "inside.txt"),
        "open_root": lambda: r.open("."),
        "lstat": lambda: r.lstat("inside.txt"),
        "lstat_root": lambda: r.lstat("."),
        "list_dir": lambda: r.list_dir(()),
        "list_dir_sub": lambda: r.list_dir(("a",)),
        "create": lambda: create_via_root(r, "new.txt"),
        "fd": lambda: r.fd,
        "ensure_intact": r.ensure_intact,
    }


def _replace_root(layout: Layout, how: str) -> bytes | None:
    """Do ``how`` to the root; return what a naive ``inside.txt``/``secret.txt`` read should see."""
    moved = layout.base / "ws-moved"
    if how == "deleted":
        shutil.rmtree(layout.ws)
        return None
    os.rename(layout.ws, moved)
    if how == "moved":
        return None
    if how == "new_dir":
        layout.ws.mkdir()
        (layout.ws / "a").mkdir()
        (layout.ws / "inside.txt").write_bytes(PLANTED)
        (layout.ws / "secret.txt").write_bytes(PLANTED)
        return PLANTED
    assert how == "symlink_to_outside"
    layout.ws.symlink_to(layout.outside)
    return SECRET


@pytest.mark.parametrize("how", ["new_dir", "symlink_to_outside", "moved", "deleted"])
def test_f15_root_replaced(layout: Layout, strategy: str, how: str) -> None:
    r = WorkspaceRoot(str(layout.ws))
    held = os.open(layout.ws, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert r.read_bytes("inside.txt", LIMIT) == INSIDE
        naive_sees = _replace_root(layout, how)
        if naive_sees is not None:
            # Positive control: path-based code now reads the replacement.
            rel = "secret.txt" if naive_sees == SECRET else "inside.txt"
            assert naive_read(layout.ws, rel) == naive_sees
        else:
            # Positive control: a held fd alone does not notice; it still works on the old dir.
            assert stat.S_ISDIR(os.fstat(held).st_mode)
            assert not os.path.lexists(layout.ws)
            if how == "moved":
                fd = os.open("inside.txt", os.O_RDONLY, dir_fd=held)
                with os.fdopen(fd, "rb") as f:
                    assert f.read() == INSIDE
        for name, op in _all_ops(r).items():
            err = refused(ESCAPE, op, leak=naive_sees or SECRET)
            assert err.data.get("path") == ".", name
        assert not (layout.outside / "new.txt").exists()
    finally:
        os.close(held)
        r.close()


def test_f15_root_replaced_through_read_file(layout: Layout, strategy: str) -> None:
    folders = Folders.open([(str(layout.ws), None)])
    try:
        before = read_file(folders, no_overlay, "inside.txt", None, None)
        assert before.file.text == INSIDE.decode()
        os.rename(layout.ws, layout.base / "ws-moved")
        layout.ws.mkdir()
        (layout.ws / "inside.txt").write_bytes(PLANTED)
        assert naive_read(layout.ws, "inside.txt") == PLANTED
        refused(
            ESCAPE, lambda: read_file(folders, no_overlay, "inside.txt", None, None), leak=PLANTED
        )
    finally:
        folders.close()
