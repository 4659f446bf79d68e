"""SECURITY.md F16: SIGKILL of the sidecar mid-batch → old or new content, never partial.

The real server runs as a child (``python -m s_code serve``) in accept-edits mode with its state
store in ``tmp_path``. A batch of 32 files of 256 KiB each is sent and the server is killed with
SIGKILL at different points of the batch: after a delay (spread over the batch's measured
duration), as soon as the first temp file appears, and after 1, 16 or 31 files were renamed into
place. After every kill each file must be byte for byte either its content before the batch or
the batch's content. A new server on the same workspace and state directory must then leave no
temp file (``.s-code-tmp-``) anywhere and no ``pending`` journal record, keep the undo record of
every file the killed batch did write, and be able to undo that batch.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from s_code.client import StdioClient, frame
from s_code.protocol import methods
from s_code.workspace.writes import TEMP_MARK

FILES = 32
SIZE = 256 * 1024
# (trigger, argument): "time" kills after that fraction of the calibrated batch duration;
# "changed" after that many files were renamed into place (or rewritten); "temp" at the first
# temp file.
KILLS = [
    ("changed", 1),
    ("temp", 0),
    ("time", 0.5),
    ("changed", 16),
    ("changed", 31),
]


def rev(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def name(i: int) -> str:
    return f"f{i:02d}.txt"


def content(tag: str, i: int) -> bytes:
    head = f"{tag} file {i} begins\n".encode()
    tail = f"{tag} file {i} ends\n".encode()
    filler = (f"{tag}:{i}:" + "x" * 50 + "\n").encode()
    body = (filler * (SIZE // len(filler) + 1))[: SIZE - len(head) - len(tail)]
    return head + body + tail


@dataclass
class Killed:
    tag: str
    before: dict[str, bytes]
    after: dict[str, bytes]  # the batch's content
    renamed: set[str]  # files holding the batch's content after the kill
    temps_left: int


class Lab:
    def __init__(self, base: Path) -> None:
        self.ws = base / "ws"
        self.dir = self.ws / "files"
        self.state = base / "state"
        self.dir.mkdir(parents=True)
        self.env = dict(os.environ, S_CODE_STATE_DIR=str(self.state))
        self.stderr = open(base / "server-stderr.log", "wb")  # noqa: SIM115

    @property
    def db(self) -> Path:
        return self.state / "state.sqlite3"

    def start(self) -> StdioClient:
        client = StdioClient(
            [sys.executable, "-m", "s_code", "serve"], env=self.env, stderr=self.stderr
        )
        client.initialize(str(self.ws), options={"permissionMode": "accept-edits"})
        # The session (and its crash recovery) opens on `initialized`, after the initialize
        # reply; a request answered after it means the recovery has run.
        client.request(methods.PERMISSION_MODE_GET, {})
        return client

    def disk(self) -> dict[str, bytes]:
        return {name(i): (self.dir / name(i)).read_bytes() for i in range(FILES)}

    def identities(self) -> dict[str, tuple[int, int, int]]:
        return {e.name: identity(e) for e in os.scandir(self.dir)}

    def temps(self) -> list[str]:
        found = []
        for dirpath, dirnames, filenames in os.walk(self.ws):
            found += [os.path.join(dirpath, n) for n in [*dirnames, *filenames] if TEMP_MARK in n]
        return found

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
        try:
            return conn.execute(sql, args).fetchall()
        finally:
            conn.close()

    def batch(self, current: dict[str, bytes], tag: str) -> tuple[dict[str, Any], dict[str, bytes]]:
        after = {name(i): content(tag, i) for i in range(FILES)}
        files = [
            {
                "path": f"files/{n}",
                "expected_revision": rev(current[n]),
                "content": after[n].decode(),
            }
            for n, _ in sorted(after.items())
        ]
        return {"files": files}, after


def identity(entry: os.DirEntry[str]) -> tuple[int, int, int]:
    """Changes when a file is renamed into place (inode) or rewritten in place (mtime, size)."""
    st = entry.stat(follow_symlinks=False)
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def assert_old_or_new(disk: dict[str, bytes], killed: Killed) -> set[str]:
    """Every file is wholly its old or wholly its new content; returns the new ones."""
    new = set()
    for n, data in disk.items():
        if data == killed.after[n]:
            new.add(n)
        else:
            assert data == killed.before[n], (
                f"{n} after killing batch {killed.tag}: {len(data)} bytes, neither old "
                f"({len(killed.before[n])}) nor new ({len(killed.after[n])}) content; "
                f"head {data[:40]!r}"
            )
    return new


def assert_recovered(lab: Lab, killed: Killed) -> None:
    """What a restarted server must have settled after ``killed``."""
    assert lab.temps() == [], f"temp files left after restart (batch {killed.tag})"
    assert sorted(os.listdir(lab.dir)) == [name(i) for i in range(FILES)]
    pending = lab.query("SELECT display, temp_name FROM undo_records WHERE status = 'pending'")
    assert pending == [], pending
    assert lab.query("SELECT count(*) FROM undo_records WHERE status NOT IN ('applied', 'undone')")[
        0
    ] == (0,)
    # The files recovery found renamed keep an undo record: exactly the batch's written files.
    shas = {sha(data): n for n, data in killed.after.items()}
    rows = lab.query("SELECT display, sha_after, status FROM undo_records")
    kept = {display for display, sha_after, status in rows if sha_after in shas}
    assert kept == {f"files/{n}" for n in killed.renamed}
    assert all(status == "applied" for _d, s, status in rows if s in shas)
    # Recovery did not touch the files themselves.
    assert assert_old_or_new(lab.disk(), killed) == killed.renamed


def kill_mid_batch(
    lab: Lab, client: StdioClient, raw: dict[str, Any], trigger: str, arg: float, span: float
) -> float:
    """Send the batch, SIGKILL the server at the trigger; returns when it was killed."""
    start = lab.identities()
    body = frame({"jsonrpc": "2.0", "id": 9999, "method": "s-code/applyPatch", "params": raw})

    def send() -> None:
        with contextlib.suppress(OSError, ValueError):
            client.send_raw(body)

    sender = threading.Thread(target=send, daemon=True)
    t0 = time.monotonic()
    sender.start()
    deadline = t0 + max(span * 3, 5.0)
    while time.monotonic() < deadline and client.proc.poll() is None:
        if trigger == "time":
            if time.monotonic() - t0 >= arg * span:
                break
            time.sleep(0.001)
            continue
        entries = list(os.scandir(lab.dir))
        if trigger == "temp" and any(TEMP_MARK in e.name for e in entries):
            # Freeze the server, and kill it only if the temp file is still there: a stopped
            # process dies by SIGKILL without running another instruction.
            client.proc.send_signal(signal.SIGSTOP)
            if lab.temps():
                break
            client.proc.send_signal(signal.SIGCONT)
        if trigger == "changed":
            changed = sum(1 for e in entries if e.name in start and identity(e) != start[e.name])
            if changed >= arg:
                break
    client.proc.send_signal(signal.SIGKILL)
    at = time.monotonic() - t0
    client.proc.wait(timeout=10)
    sender.join(timeout=10)
    for stream in (client.proc.stdin, client.proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return at


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    lab = Lab(tmp_path)
    yield lab
    lab.stderr.close()


def test_f16_sigkill_mid_batch_old_or_new_never_partial(lab: Lab) -> None:
    current = {name(i): content("original", i) for i in range(FILES)}
    for n, data in current.items():
        (lab.dir / n).write_bytes(data)

    # Calibration, and the positive control that the batch does complete when left alone.
    client = lab.start()
    raw, after = lab.batch(current, "calibration")
    t0 = time.monotonic()
    result = client.request("s-code/applyPatch", raw, timeout=60)
    span = time.monotonic() - t0
    assert [a["path"] for a in result["applied"]] == [f"files/{name(i)}" for i in range(FILES)]
    assert lab.disk() == after
    current = after
    client.close()

    log: list[tuple[str, float, float, int, int]] = []
    kills: list[Killed] = []
    previous: Killed | None = None
    for k, (trigger, arg) in enumerate(KILLS):  # every kill, however long it takes
        client = lab.start()  # its initialize runs crash recovery
        if previous is not None:
            assert_recovered(lab, previous)
        assert lab.disk() == current
        tag = f"round{k}"
        raw, after = lab.batch(current, tag)
        at = kill_mid_batch(lab, client, raw, trigger, arg, span)
        temps = len(lab.temps())
        killed = Killed(tag, current, after, set(), temps)
        killed.renamed = assert_old_or_new(lab.disk(), killed)
        log.append((trigger, arg, round(at, 3), len(killed.renamed), temps))
        kills.append(killed)
        current = lab.disk()
        previous = killed

    # The last restart: recovery, then the killed batch's written files can be undone.
    assert previous is not None
    client = lab.start()
    try:
        assert_recovered(lab, previous)
        turns = lab.query(
            "SELECT DISTINCT turn_id FROM undo_records WHERE status = 'applied' AND sha_after IN "
            f"({','.join('?' * FILES)})",
            tuple(sha(d) for d in previous.after.values()),
        )
        if previous.renamed:
            assert len(turns) == 1
            undone = client.request("s-code/turn/undo", {"turnId": turns[0][0]})
            assert undone["refused"] == []
            assert sorted(undone["restored"]) == sorted(f"files/{n}" for n in previous.renamed)
            assert lab.disk() == previous.before
        assert lab.temps() == []
    finally:
        client.close()

    assert len(kills) == len(KILLS), log
    # The kills really landed mid-batch: some batch was cut with files on both sides, and some
    # kill left a temp file behind for the restart to clean.
    assert any(0 < len(k.renamed) < FILES for k in kills), log
    assert any(k.temps_left for k in kills), log
