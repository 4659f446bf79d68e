"""Racing batches: two sidecars on one workspace and one state store, and two requests on one.

Each round both sides read the same revisions and send a batch over overlapping targets, each
file's content carrying the batch's marker. Whatever the timing, every batch is all or nothing:
the files end as exactly one batch's complete version set, the winner gets success, the loser
gets ``reservation_conflict`` or ``stale_revision`` (or ``partially_applied`` whose
``appliedPaths`` is empty and whose cause is ``stale_revision``: nothing written), never a mix.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from s_code.client import RpcError, StdioClient
from s_code.edits import engine, writing
from s_code.edits.engine import apply_patch
from s_code.edits.journal import Journal
from s_code.edits.request import ApplyPatchArgs
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.models import parse_params
from s_code.session.session import Session
from s_code.state.store import Store
from s_code.tools.builtin import default_registry
from s_code.workspace.folders import Folders
from s_code.workspace.writes import TEMP_MARK
from tests.polling import until_async

FILES = 8
SIZE = 32 * 1024
ROUNDS = 20
APPLY = "s-code/applyPatch"


def rev(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def name(i: int) -> str:
    return f"f{i}.txt"


def body(marker: str, i: int) -> str:
    line = f"{marker} {name(i)} " + "." * 40 + "\n"
    return f"{marker}\n" + line * (SIZE // len(line))


def marker_of(data: bytes) -> str:
    return data.split(b"\n", 1)[0].decode()


class Workspace:
    def __init__(self, base: Path) -> None:
        self.root = base / "ws"
        self.root.mkdir()
        self.state = base / "state"
        self.env = dict(os.environ, S_CODE_STATE_DIR=str(self.state))
        self.log = open(base / "servers-stderr.log", "wb")  # noqa: SIM115
        for i in range(FILES):
            (self.root / name(i)).write_text(body("initial", i))

    def start(self) -> StdioClient:
        client = StdioClient(
            [sys.executable, "-m", "s_code", "serve"], env=self.env, stderr=self.log
        )
        client.initialize(str(self.root), options={"permissionMode": "accept-edits"})
        return client

    def disk(self) -> dict[int, bytes]:
        return {i: (self.root / name(i)).read_bytes() for i in range(FILES)}

    def batch(self, marker: str, order: list[int], current: dict[int, bytes]) -> dict[str, Any]:
        return {
            "files": [
                {
                    "path": name(i),
                    "expected_revision": rev(current[i]),
                    "content": body(marker, i),
                }
                for i in order
            ]
        }

    def check_clean(self) -> None:
        assert sorted(os.listdir(self.root)) == sorted(name(i) for i in range(FILES))
        assert not any(TEMP_MARK in n for n in os.listdir(self.root))


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    w = Workspace(tmp_path)
    yield w
    w.log.close()


Outcome = tuple[str, Any]  # ("ok", result) or (kind, error data)


def send(client: StdioClient, raw: dict[str, Any], barrier: threading.Barrier) -> Outcome:
    barrier.wait(timeout=30)
    try:
        return "ok", client.request(APPLY, raw, timeout=60)
    except RpcError as err:
        return str(err.kind), err.data


def nothing_written(outcome: Outcome) -> bool:
    kind, data = outcome
    if kind in ("reservation_conflict", "stale_revision"):
        return True
    return (
        kind == "partially_applied"
        and data["appliedPaths"] == []
        and data["cause"]["kind"] == "stale_revision"
    )


def race(
    workspace: Workspace,
    clients: tuple[StdioClient, StdioClient],
    targets: tuple[list[int], list[int]],
) -> Counter[str]:
    """ROUNDS races of batch A (clients[0]) against batch B (clients[1]); checks every round."""
    seen: Counter[str] = Counter()
    with ThreadPoolExecutor(2) as pool:
        for r in range(ROUNDS):
            current = workspace.disk()
            markers = (f"A{r}", f"B{r}")
            raws = [workspace.batch(m, t, current) for m, t in zip(markers, targets, strict=True)]
            barrier = threading.Barrier(2)
            futures = [
                pool.submit(send, c, raw, barrier) for c, raw in zip(clients, raws, strict=True)
            ]
            outcomes = [f.result(timeout=90) for f in futures]
            after = workspace.disk()
            winners = [k for k, o in enumerate(outcomes) if o[0] == "ok"]
            assert len(winners) == 1, (r, outcomes)
            win = winners[0]
            lose = 1 - win
            assert nothing_written(outcomes[lose]), (r, outcomes[lose])
            assert [a["path"] for a in outcomes[win][1]["applied"]] == [
                name(i) for i in targets[win]
            ]
            for i in range(FILES):
                # The loser wrote nothing, not even the files only it named.
                expected = body(markers[win], i).encode() if i in targets[win] else current[i]
                assert after[i] == expected, (
                    f"round {r}: {name(i)} holds {marker_of(after[i])!r}, expected "
                    f"{marker_of(expected)!r}; outcomes {outcomes}"
                )
            seen[outcomes[lose][0]] += 1
    workspace.check_clean()
    return seen


def test_two_servers_identical_targets(workspace: Workspace) -> None:
    a, b = workspace.start(), workspace.start()
    try:
        everything = list(range(FILES))
        seen = race(workspace, (a, b), (everything, everything[::-1]))
    finally:
        a.close()
        b.close()
    assert sum(seen.values()) == ROUNDS


def test_two_servers_partly_overlapping_targets(workspace: Workspace) -> None:
    """B's own files come first: it must not write them once A won the shared ones."""
    a, b = workspace.start(), workspace.start()
    try:
        seen = race(workspace, (a, b), ([0, 1, 2, 3, 4, 5], [7, 6, 5, 4, 3, 2]))
    finally:
        a.close()
        b.close()
    assert sum(seen.values()) == ROUNDS


def test_one_server_two_concurrent_requests_identical_targets(workspace: Workspace) -> None:
    client = workspace.start()
    try:
        everything = list(range(FILES))
        seen = race(workspace, (client, client), (everything, everything[::-1]))
    finally:
        client.close()
    assert sum(seen.values()) == ROUNDS


def test_one_server_two_concurrent_requests_partly_overlapping(workspace: Workspace) -> None:
    client = workspace.start()
    try:
        seen = race(workspace, (client, client), ([0, 1, 2, 3, 4, 5], [7, 6, 5, 4, 3, 2]))
    finally:
        client.close()
    assert sum(seen.values()) == ROUNDS


# -- in-process, deterministic: both batches pass preflight before either reserves ---------------


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[tuple[Path, Session]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(FILES):
        (ws / name(i)).write_text(body("initial", i))
    session = Session(
        folders=Folders.open([(str(ws), None)]),
        registry=default_registry(),
        store=Store(str(tmp_path / "state" / "state.sqlite3")).workspace(os.path.realpath(ws)),
        mode="accept-edits",
    )
    yield ws, session
    session.folders.close()
    assert session.store is not None
    session.store.store.close()


@pytest.mark.parametrize(
    "targets",
    [([0, 1, 2, 3], [3, 2, 1, 0]), ([0, 1, 2, 3, 4, 5], [7, 6, 5, 4, 3, 2])],
    ids=["identical", "partly-overlapping"],
)
async def test_one_session_batches_preflighted_together(
    sessions: tuple[Path, Session],
    monkeypatch: pytest.MonkeyPatch,
    targets: tuple[list[int], list[int]],
) -> None:
    ws, session = sessions
    both_preflighted = asyncio.Event()
    arrived: list[int] = []
    original = engine._write  # reserves, then writes

    async def write_after_both(batch: Any, *args: Any) -> None:
        arrived.append(1)
        if len(arrived) == 2:
            both_preflighted.set()
        await both_preflighted.wait()
        await original(batch, *args)

    monkeypatch.setattr(engine, "_write", write_after_both)
    current = {i: (ws / name(i)).read_bytes() for i in range(FILES)}

    async def run(marker: str, order: list[int]) -> Outcome:
        raw = {
            "files": [
                {"path": name(i), "expected_revision": rev(current[i]), "content": body(marker, i)}
                for i in order
            ]
        }
        try:
            return "ok", await apply_patch(session, parse_params(ApplyPatchArgs, raw))
        except SCodeError as err:
            return err.kind.value, err.data

    outcomes = await asyncio.gather(run("A", targets[0]), run("B", targets[1]))
    assert len(arrived) == 2
    winners = [k for k, o in enumerate(outcomes) if o[0] == "ok"]
    assert len(winners) == 1, outcomes
    win = winners[0]
    assert nothing_written(outcomes[1 - win]), outcomes[1 - win]
    for i in range(FILES):
        expected = body("AB"[win], i).encode() if i in targets[win] else current[i]
        got = (ws / name(i)).read_bytes()
        assert got == expected, f"{name(i)} holds {marker_of(got)!r}: {outcomes}"


def _reservations(session: Session) -> list[tuple[str, str]]:
    assert session.store is not None
    rows = session.store.store.execute("SELECT owner, target FROM reservations")
    return [(str(o), str(t)) for o, t in rows]


async def test_a_batch_waiting_for_a_reservation_gives_up_in_time_or_on_cancel(
    sessions: tuple[Path, Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another owner holds a target: the batch waits, then gets reservation_conflict; cancelled
    while waiting, it ends cancelled. Either way nothing is written and the batch leaves no
    reservation of its own behind."""
    ws, session = sessions
    journal = engine.journal_of(session)
    key = os.path.realpath(ws) + "\x00" + name(0)
    assert journal.reserve([key], "other") == []
    before = {i: (ws / name(i)).read_bytes() for i in range(FILES)}
    raw = {
        "files": [
            {"path": name(i), "expected_revision": rev(before[i]), "content": body("X", i)}
            for i in (1, 0)
        ]
    }
    monkeypatch.setattr(engine, "RESERVATION_WAIT", 0.2)
    with pytest.raises(SCodeError) as refused:
        await apply_patch(session, parse_params(ApplyPatchArgs, raw))
    assert refused.value.kind.value == "reservation_conflict"
    assert refused.value.data["paths"] == [name(0)]

    monkeypatch.setattr(engine, "RESERVATION_WAIT", 30.0)
    calls = _before_each_attempt(monkeypatch, lambda n: None)
    task = asyncio.ensure_future(apply_patch(session, parse_params(ApplyPatchArgs, raw)))
    # it is waiting for "other" now: a second attempt came after the first was refused
    await until_async(lambda: len(calls) >= 2 or task.done(), what="a second attempt")
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert {i: (ws / name(i)).read_bytes() for i in range(FILES)} == before
    assert _reservations(session) == [("other", key)]
    # Positive control: with the target free, the same batch goes through.
    journal.release("other")
    await apply_patch(session, parse_params(ApplyPatchArgs, raw))
    assert (ws / name(0)).read_text() == body("X", 0)
    assert _reservations(session) == []


async def _until(event: threading.Event) -> None:
    """Until a worker thread reached the point the test cancels at (not a guessed delay)."""
    for _ in range(2000):
        if event.is_set():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the worker never got there")


def _held_by_other(ws: Path, session: Session) -> tuple[Journal, str, bytes, dict[str, Any]]:
    """name(0) reserved by another owner: the journal, its key, its bytes, a batch rewriting it."""
    journal = engine.journal_of(session)
    key = os.path.realpath(ws) + "\x00" + name(0)
    assert journal.reserve([key], "other") == []
    before = (ws / name(0)).read_bytes()
    raw = {"files": [{"path": name(0), "expected_revision": rev(before), "content": "new\n"}]}
    return journal, key, before, raw


def _before_each_attempt(monkeypatch: pytest.MonkeyPatch, hook: Callable[[int], None]) -> list[int]:
    """``hook(n)`` runs before the n-th reservation attempt (from 1); returns the attempts."""
    original = engine.try_reserve
    calls: list[int] = []

    def attempt(*args: Any) -> None:
        calls.append(1)
        hook(len(calls))
        original(*args)

    monkeypatch.setattr(engine, "try_reserve", attempt)
    return calls


async def test_a_cancel_during_the_first_reservation_attempt_wins(
    sessions: tuple[Path, Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first attempt runs on the write thread; a cancel that arrives while it finds the
    target held ends the batch, instead of starting to wait."""
    ws, session = sessions
    _, key, before, raw = _held_by_other(ws, session)

    in_first = threading.Event()

    def slow_first(n: int) -> None:
        if n == 1:
            in_first.set()
            threading.Event().wait(0.3)  # the cancel arrives meanwhile

    calls = _before_each_attempt(monkeypatch, slow_first)
    monkeypatch.setattr(engine, "RESERVATION_WAIT", 2.0)
    task = asyncio.ensure_future(apply_patch(session, parse_params(ApplyPatchArgs, raw)))
    await _until(in_first)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert calls == [1], "no second attempt after the cancel"
    assert (ws / name(0)).read_bytes() == before
    assert _reservations(session) == [("other", key)]


async def test_a_cancel_during_a_later_reservation_attempt_wins(
    sessions: tuple[Path, Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel that arrives while an attempt inside the wait finds the target still held ends
    the batch: when the other batch then finishes, this one does not go on and write."""
    ws, session = sessions
    journal, _, before, raw = _held_by_other(ws, session)
    in_second = threading.Event()

    cancelled = threading.Event()

    def slow_second(n: int) -> None:
        if n == 2:  # the first attempt of the wait loop
            in_second.set()
            cancelled.wait(60)  # the cancel arrives meanwhile; the target is held

    calls = _before_each_attempt(monkeypatch, slow_second)
    monkeypatch.setattr(engine, "RESERVATION_WAIT", 5.0)
    task = asyncio.ensure_future(apply_patch(session, parse_params(ApplyPatchArgs, raw)))
    await _until(in_second)
    task.cancel()
    cancelled.set()
    # the attempt under way ends (refused: "other" still holds the file), and the cancel wins
    await until_async(task.done, what="the cancelled batch's end")
    journal.release("other")  # the other batch finishes
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(calls) == 2, "no attempt after the cancel"
    assert (ws / name(0)).read_bytes() == before, "a cancelled batch wrote the file"
    assert _reservations(session) == []


async def test_a_store_failure_after_a_wait_leaves_no_reservation(
    sessions: tuple[Path, Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wait reserved the targets; the write thread's own attempt then fails in the store:
    the batch fails without holding its targets (a later batch is not refused for 60 s)."""
    ws, session = sessions
    journal, _, _, raw = _held_by_other(ws, session)

    def fail_third(n: int) -> None:
        if n == 2:  # the wait's attempt: the other batch has finished meanwhile
            journal.release("other")
        if n == 3:  # on the write thread, after the wait reserved everything
            raise sqlite3.OperationalError("database is locked")

    calls = _before_each_attempt(monkeypatch, fail_third)
    with pytest.raises(sqlite3.OperationalError):
        await apply_patch(session, parse_params(ApplyPatchArgs, raw))
    assert len(calls) == 3
    assert _reservations(session) == []
    monkeypatch.undo()
    await apply_patch(session, parse_params(ApplyPatchArgs, raw))  # not reservation_conflict
    assert (ws / name(0)).read_text() == "new\n"


def _files(ws: Path, indexes: list[int]) -> dict[str, Any]:
    return {
        "files": [
            {
                "path": name(i),
                "expected_revision": rev((ws / name(i)).read_bytes()),
                "content": f"new {i}\n",
            }
            for i in indexes
        ]
    }


def _stale(t: Any, staged: Any, commit: Any) -> bool:
    writing.discard(staged)
    raise writing.WriteFailed(
        t, SCodeError(ErrorKind.STALE_REVISION, "changed", path=t.loc.display)
    )


LATE_CANCELS = {
    # the second (last) commit is in hand when the cancel arrives, and completes
    "all written": (2, lambda t, staged, commit: commit(t, staged), ("ok", [0, 1])),
    # the first commit's directory fsync fails while the cancel arrives
    "not durable": (
        1,
        lambda t, staged, commit: commit(t, staged) and False,
        ("durability_unconfirmed", [0]),
    ),
    # the second commit's final check fails while the cancel arrives
    "commit failed": (2, _stale, ("partially_applied", [0])),
}


@pytest.mark.parametrize("case", LATE_CANCELS)
async def test_a_cancel_arriving_too_late_to_stop_the_batch_leaves_it_its_answer(
    sessions: tuple[Path, Session], monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """A cancel that lands while the worker thread finishes the batch's last step: the reply is
    what the batch came to (the revisions, durability_unconfirmed, or partially_applied with its
    cause), not a bare ``cancelled`` that hides it."""
    at, then, (kind, written) = LATE_CANCELS[case]
    ws, session = sessions
    real = writing.commit_disk
    commits: list[int] = []
    in_hand = threading.Event()

    def commit(t: Any, staged: Any) -> bool:
        commits.append(1)
        if len(commits) == at:
            in_hand.set()
            threading.Event().wait(0.3)  # the cancel arrives meanwhile
            return bool(then(t, staged, real))
        return bool(real(t, staged))

    monkeypatch.setattr(writing, "commit_disk", commit)
    task = asyncio.ensure_future(
        apply_patch(session, parse_params(ApplyPatchArgs, _files(ws, [0, 1])))
    )
    await _until(in_hand)
    task.cancel()
    try:
        done = await task
        outcome, data = "ok", done
    except SCodeError as err:
        outcome, data = err.kind.value, err.data
    assert outcome == kind, data
    if outcome == "ok":
        assert [a["revision"] for a in data["applied"]] == [
            rev(f"new {i}\n".encode()) for i in written
        ]
    else:
        assert data["appliedPaths"] == [name(i) for i in written]
    if outcome == "partially_applied":
        assert data["failedPath"] == name(1) and data["cause"]["kind"] == "stale_revision"
    assert [(ws / name(i)).read_text() for i in written] == [f"new {i}\n" for i in written]
