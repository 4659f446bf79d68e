"""SECURITY.md checklist, edits: F6-F14, symlinks under the edit engine, writes never followed.

The engine is driven in-process (``apply_patch`` on a real :class:`Session` with a real state
store). Every attack first shows its positive control: the naive way (a path-based ``open``, an
in-place write, a plain ``rename``, a writer without the final check) really does the damage.
Then the engine must refuse with the exact error kind and leave every byte, every directory
listing and the journal as they were. The "outside" directory is a sibling of the workspace.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import hashlib
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.approvers import Recorder

from s_code.edits import writing
from s_code.edits.engine import apply_patch
from s_code.edits.journal import Journal
from s_code.edits.request import ApplyPatchArgs
from s_code.edits.undo import undo_turn
from s_code.protocol.errors import ErrorKind, SCodeError
from s_code.protocol.models import parse_params
from s_code.session.session import Approver, DenyAll, Session
from s_code.state.store import Store
from s_code.tools.builtin import default_registry
from s_code.workspace import writes
from s_code.workspace.folders import Folders
from s_code.workspace.protected import ProtectedPaths, fold
from s_code.workspace.writes import TEMP_MARK

SECRET = b"S-CODE-OUTSIDE-SECRET-7f3a\n"
OLD_A = b"alpha 1\nalpha 2\n"
OLD_B = b"bravo 1\nbravo 2\n"
OLD_C = b"charlie 1\ncharlie 2\n"
NEW_A = "ALPHA written by the agent\n"
NEW_B = "BRAVO written by the agent\n"
NEW_C = "CHARLIE written by the agent\n"
USER = b"the user's own text, typed after the preflight\n"
RIVAL = b"created by someone else in the race window\n"
MODES = ("manual", "accept-edits", "workspace")
REGISTRY = default_registry()


def rev(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- the environment ----------------------------------------------------------------------------


@dataclass
class Env:
    base: Path
    ws: Path
    outside: Path
    state: Path
    sessions: list[Session] = field(default_factory=list)

    def session(
        self,
        mode: str = "accept-edits",
        protected: tuple[str, ...] = (),
        approver: Approver | None = None,
    ) -> Session:
        s = Session(
            folders=Folders.open([(str(self.ws), None)]),
            registry=REGISTRY,
            store=Store(str(self.state)).workspace(os.path.realpath(self.ws)),
            mode=mode,
            protected=ProtectedPaths(protected),
            approver=approver or DenyAll(),
        )
        self.sessions.append(s)
        return s


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (ws / "a.txt").write_bytes(OLD_A)
    (ws / "b.txt").write_bytes(OLD_B)
    (ws / "c.txt").write_bytes(OLD_C)
    e = Env(tmp_path, ws, outside, tmp_path / "state" / "state.sqlite3")
    yield e
    for s in e.sessions:
        s.folders.close()
        if s.store is not None:
            s.store.store.close()


async def call(session: Session, raw: dict[str, Any]) -> dict[str, Any]:
    return await apply_patch(session, parse_params(ApplyPatchArgs, raw))


async def refuse(session: Session, raw: dict[str, Any]) -> SCodeError:
    with pytest.raises(SCodeError) as info:
        result = await call(session, raw)
        pytest.fail(f"expected a refusal, got {result!r}")
    err = info.value
    assert "Traceback" not in err.message
    return err


def put(path: str, content: str, expected: str | None) -> dict[str, Any]:
    return {"path": path, "expected_revision": expected, "content": content}


def tree(top: Path) -> dict[str, Any]:
    """Every entry below ``top``, never followed: bytes, ("link", target) or "dir"."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in [*dirnames, *filenames]:
            p = Path(dirpath, name)
            rel = str(p.relative_to(top))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = p.read_bytes()
    return out


def temp_files(top: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        found += [os.path.join(dirpath, n) for n in [*dirnames, *filenames] if TEMP_MARK in n]
    return found


def journal_rows(session: Session) -> list[tuple[Any, ...]]:
    assert session.store is not None
    return session.store.store.execute(
        "SELECT display, status, created, original, sha_after FROM undo_records ORDER BY id"
    )


@dataclass
class Before:
    ws: dict[str, Any]
    outside: dict[str, Any]
    rows: list[tuple[Any, ...]]


def before(env: Env, session: Session) -> Before:
    return Before(tree(env.ws), tree(env.outside), journal_rows(session))


def assert_untouched(env: Env, session: Session, was: Before) -> None:
    assert tree(env.ws) == was.ws
    assert tree(env.outside) == was.outside
    assert temp_files(env.ws) == []
    assert temp_files(env.outside) == []
    assert journal_rows(session) == was.rows


# -- F6: a hard-linked pair in one batch --------------------------------------------------------


async def test_f6_hard_linked_pair_in_one_batch(env: Env) -> None:
    os.link(env.ws / "a.txt", env.ws / "a-link.txt")
    # Positive control: the two names are one file; an in-place write through one changes both.
    os.link(env.ws / "b.txt", env.ws / "b-link.txt")
    with open(env.ws / "b-link.txt", "r+b") as f:
        f.write(b"BRAVO")
    assert (env.ws / "b.txt").read_bytes().startswith(b"BRAVO")
    os.unlink(env.ws / "b-link.txt")
    (env.ws / "b.txt").write_bytes(OLD_B)

    s = env.session()
    was = before(env, s)
    err = await refuse(
        s,
        {
            "files": [
                put("a.txt", NEW_A, rev(OLD_A)),
                put("a-link.txt", "something else\n", rev(OLD_A)),
            ]
        },
    )
    assert err.kind is ErrorKind.ALIAS_CONFLICT
    assert "a.txt" in err.data["paths"]
    assert_untouched(env, s, was)
    assert os.stat(env.ws / "a.txt").st_ino == os.stat(env.ws / "a-link.txt").st_ino


@pytest.mark.parametrize(
    ("first", "second"),
    [("a.txt", "./a.txt"), ("d/x.txt", "d//x.txt"), ("d/x.txt", "./d/./x.txt")],
)
async def test_f6_one_inode_two_spellings(env: Env, first: str, second: str) -> None:
    """Grouping by (st_dev, st_ino) catches one file named twice without any hard link."""
    (env.ws / "d").mkdir()
    (env.ws / "d" / "x.txt").write_bytes(OLD_C)
    old = (env.ws / first).read_bytes()
    assert os.path.samefile(env.ws / first, env.ws / second), "positive control: one file"
    assert os.stat(env.ws / first).st_nlink == 1
    s = env.session()
    was = before(env, s)
    err = await refuse(
        s, {"files": [put(first, "one\n", rev(old)), put(second, "two\n", rev(old))]}
    )
    assert err.kind is ErrorKind.ALIAS_CONFLICT
    assert err.data["paths"] == [os.path.normpath(first)] * 2
    assert_untouched(env, s, was)


async def test_f6_new_file_named_twice(env: Env) -> None:
    s = env.session()
    was = before(env, s)
    err = await refuse(
        s, {"files": [put("n/new.txt", "1\n", None), put("n//new.txt", "2\n", None)]}
    )
    assert err.kind is ErrorKind.ALIAS_CONFLICT
    assert_untouched(env, s, was)


# -- F7: one edit of a file with nlink > 1 ------------------------------------------------------


@pytest.mark.parametrize("how", ["content", "line_edit", "text_edit", "legacy", "patch"])
async def test_f7_hard_link_to_outside_file(env: Env, how: str) -> None:
    victim = env.outside / "victim.txt"
    victim.write_bytes(OLD_A)
    os.link(victim, env.ws / "inner.txt")
    # Positive control: an in-place write of the workspace name rewrites the outside file.
    os.link(victim, env.ws / "naive.txt")
    with open(env.ws / "naive.txt", "r+b") as f:
        f.write(b"ALPHA")
    assert victim.read_bytes().startswith(b"ALPHA")
    os.unlink(env.ws / "naive.txt")
    victim.write_bytes(OLD_A)
    assert os.stat(env.ws / "inner.txt").st_nlink == 2

    raw: dict[str, Any] = {
        "content": {"files": [put("inner.txt", NEW_A, rev(OLD_A))]},
        "line_edit": {
            "files": [
                {
                    "path": "inner.txt",
                    "expected_revision": rev(OLD_A),
                    "edits": [{"start_line": 1, "end_line": 1, "new_text": "X\n"}],
                }
            ]
        },
        "text_edit": {
            "files": [
                {
                    "path": "inner.txt",
                    "expected_revision": rev(OLD_A),
                    "edits": [{"old_text": "alpha 1", "new_text": "X"}],
                }
            ]
        },
        "legacy": {"path": "inner.txt", "expected_sha256": sha(OLD_A), "content": NEW_A},
        "patch": {
            "patch": "*** Begin Patch\n*** Update File: inner.txt\n@@\n-alpha 1\n+X\n*** End Patch",
            "revisions": {"inner.txt": rev(OLD_A)},
        },
    }[how]
    s = env.session()
    was = before(env, s)
    err = await refuse(s, raw)
    assert err.kind is ErrorKind.ALIAS_CONFLICT
    assert err.data["paths"] == ["inner.txt"]
    assert_untouched(env, s, was)
    assert victim.read_bytes() == OLD_A
    assert os.stat(env.ws / "inner.txt").st_nlink == 2


async def test_f7_hard_link_inside_workspace(env: Env) -> None:
    (env.ws / "other").mkdir()
    os.link(env.ws / "b.txt", env.ws / "other" / "b.txt")
    s = env.session()
    was = before(env, s)
    err = await refuse(
        s, {"files": [put("a.txt", NEW_A, rev(OLD_A)), put("b.txt", NEW_B, rev(OLD_B))]}
    )
    assert err.kind is ErrorKind.ALIAS_CONFLICT
    assert err.data["paths"] == ["b.txt"]
    assert_untouched(env, s, was)
    # Positive control: once the second name is gone, the same batch goes through.
    os.unlink(env.ws / "other" / "b.txt")
    await call(s, {"files": [put("a.txt", NEW_A, rev(OLD_A)), put("b.txt", NEW_B, rev(OLD_B))]})
    assert (env.ws / "b.txt").read_text() == NEW_B


# -- F8: case aliases ---------------------------------------------------------------------------

# This file system is case-sensitive and the kernel cannot casefold here, so each pair below names
# two different files. On a case-insensitive volume (macOS, Windows, ext4 +F) they would be one
# file: the casefold + NFC rule must refuse them on every file system.
NEW_PAIRS = [
    ("Readme.md", "README.md"),
    ("caf\u00e9.txt", "cafe\u0301.txt"),  # NFC vs NFD
    ("stra\u00dfe.txt", "STRASSE.txt"),  # full case folding: ß → ss
    ("\u212aelvin.txt", "kelvin.txt"),  # KELVIN SIGN folds to k
    ("Docs/a.md", "docs/a.md"),  # case alias in a parent directory
    ("src/Main.py", "SRC/main.PY"),
]


def _simulate_case_insensitive(names: tuple[str, str]) -> None:
    """Positive control: the kernel keeps both names apart, a casefolding volume would not."""
    a, b = names
    assert a != b
    assert os.fsencode(a) != os.fsencode(b)
    assert fold(a) == fold(b)
    assert unicodedata.normalize("NFC", a).casefold() == unicodedata.normalize("NFC", b).casefold()


@pytest.mark.parametrize("names", NEW_PAIRS, ids=[f"{a}|{b}" for a, b in NEW_PAIRS])
async def test_f8_two_new_names_differing_in_case(env: Env, names: tuple[str, str]) -> None:
    _simulate_case_insensitive(names)
    probe = env.base / "probe"
    for n in names:
        (probe / n).parent.mkdir(parents=True, exist_ok=True)
        (probe / n).write_text(n)
    assert (probe / names[0]).read_text() == names[0], "the kernel does not casefold here"
    assert (probe / names[1]).read_text() == names[1]

    s = env.session()
    was = before(env, s)
    err = await refuse(
        s, {"files": [put(names[0], "first\n", None), put(names[1], "second\n", None)]}
    )
    assert err.kind is ErrorKind.ALIAS_CONFLICT
    assert err.data["paths"] == list(names)
    assert_untouched(env, s, was)

    # Positive control: each name alone is accepted.
    await call(s, {"files": [put(names[0], "first\n", None)]})
    assert (env.ws / names[0]).read_text() == "first\n"


async def test_f8_patch_form_adds_case_aliases(env: Env) -> None:
    s = env.session()
    was = before(env, s)
    patch = (
        "*** Begin Patch\n*** Add File: Notes.txt\n+x\n*** Add File: NOTES.txt\n+y\n*** End Patch"
    )
    err = await refuse(s, {"patch": patch, "revisions": {"Notes.txt": None, "NOTES.txt": None}})
    assert err.kind is ErrorKind.ALIAS_CONFLICT
    assert err.data["paths"] == ["Notes.txt", "NOTES.txt"]
    assert_untouched(env, s, was)


@pytest.mark.parametrize("existing_first", [True, False])
@pytest.mark.parametrize(
    ("existing", "new"),
    [("Makefile", "makefile"), ("caf\u00e9.txt", "CAFE\u0301.TXT"), ("Dir/x.txt", "dir/x.txt")],
)
async def test_f8_existing_and_new_case_alias(
    env: Env, existing: str, new: str, existing_first: bool
) -> None:
    (env.ws / existing).parent.mkdir(parents=True, exist_ok=True)
    (env.ws / existing).write_bytes(OLD_A)
    assert not (env.ws / new).exists(), "case-sensitive here: the other spelling is a new file"
    assert fold(existing) == fold(new)
    entries = [put(existing, NEW_A, rev(OLD_A)), put(new, "the new spelling\n", None)]
    if not existing_first:
        entries.reverse()
    s = env.session()
    was = before(env, s)
    err = await refuse(s, {"files": entries})
    assert err.kind is ErrorKind.ALIAS_CONFLICT
    assert sorted(err.data["paths"]) == sorted([existing, new])
    assert_untouched(env, s, was)


async def test_f8_distinct_names_are_not_aliases(env: Env) -> None:
    """Control: the rule refuses only case variants, not every pair of new names."""
    s = env.session()
    await call(s, {"files": [put("x.txt", "x\n", None), put("x.txt.bak", "y\n", None)]})
    assert (env.ws / "x.txt").read_text() == "x\n"
    assert (env.ws / "x.txt.bak").read_text() == "y\n"


# -- F9: a stale revision in the third file → nothing written ------------------------------------


@pytest.mark.parametrize("staleness", ["changed", "exists", "missing"])
@pytest.mark.parametrize("form", ["files", "patch"])
async def test_f9_stale_third_file_writes_nothing(env: Env, staleness: str, form: str) -> None:
    if staleness == "missing":
        os.unlink(env.ws / "c.txt")
    third_rev = {"changed": rev(b"what the agent read long ago\n"), "exists": None}.get(
        staleness, rev(OLD_C)
    )
    s = env.session()
    if form == "files":
        third = put("c.txt", NEW_C, third_rev)
        raw: dict[str, Any] = {
            "files": [put("a.txt", NEW_A, rev(OLD_A)), put("b.txt", NEW_B, rev(OLD_B)), third]
        }
    else:
        third_op = (
            "*** Add File: c.txt\n+CHARLIE\n"
            if third_rev is None
            else "*** Update File: c.txt\n@@\n-charlie 1\n+CHARLIE\n"
        )
        raw = {
            "patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha 1\n+ALPHA\n"
            "*** Update File: b.txt\n@@\n-bravo 1\n+BRAVO\n" + third_op + "*** End Patch",
            "revisions": {"a.txt": rev(OLD_A), "b.txt": rev(OLD_B), "c.txt": third_rev},
        }
    was = before(env, s)
    err = await refuse(s, raw)
    assert err.kind is ErrorKind.STALE_REVISION, err
    assert err.data["path"] == "c.txt"
    assert err.data["expected"] == third_rev
    assert err.data["actual"] == (None if staleness == "missing" else rev(OLD_C))
    assert_untouched(env, s, was)
    assert (env.ws / "a.txt").read_bytes() == OLD_A
    assert (env.ws / "b.txt").read_bytes() == OLD_B

    # Positive control: with the third revision right, the very same batch writes all three.
    if staleness == "changed":
        if form == "files":
            raw["files"][2]["expected_revision"] = rev(OLD_C)
        else:
            raw["revisions"]["c.txt"] = rev(OLD_C)
        result = await call(s, raw)
        assert [a["path"] for a in result["applied"]] == ["a.txt", "b.txt", "c.txt"]
        assert (env.ws / "a.txt").read_bytes() != OLD_A
        assert (env.ws / "c.txt").read_bytes() != OLD_C


# -- F10: an external change between preflight and write ----------------------------------------


def _change_before_write(monkeypatch: pytest.MonkeyPatch, path: str, action: Any) -> list[str]:
    """Wrap writing.commit_disk: run ``action`` just before ``path`` is committed (its new
    content is staged by then); log the calls."""
    original = writing.commit_disk
    calls: list[str] = []

    def hooked(t: Any, staged: Any) -> bool:
        calls.append(t.loc.display)
        if t.loc.display == path:
            action()
        return original(t, staged)

    monkeypatch.setattr(writing, "commit_disk", hooked)
    return calls


BATCH_ABC = {
    "files": [
        put("a.txt", NEW_A, rev(OLD_A)),
        put("b.txt", NEW_B, rev(OLD_B)),
        put("c.txt", NEW_C, rev(OLD_C)),
    ]
}


async def test_f10_positive_control_without_final_check(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the re-check before the rename, the user's change to b.txt is silently lost."""
    _change_before_write(monkeypatch, "b.txt", lambda: (env.ws / "b.txt").write_bytes(USER))
    monkeypatch.setattr(writing, "final_check", lambda _before, _path: lambda _current: None)
    s = env.session()
    await call(s, BATCH_ABC)
    assert (env.ws / "b.txt").read_text() == NEW_B  # the user's text is gone


async def test_f10_external_change_between_preflight_and_write(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _change_before_write(monkeypatch, "b.txt", lambda: (env.ws / "b.txt").write_bytes(USER))
    s = env.session()
    err = await refuse(s, BATCH_ABC)
    assert err.kind is ErrorKind.PARTIALLY_APPLIED, err
    assert err.data["appliedPaths"] == ["a.txt"]
    assert err.data["failedPath"] == "b.txt"
    assert err.data["cause"]["kind"] == "stale_revision"
    assert err.data["cause"]["expected"] == rev(OLD_B)
    assert err.data["cause"]["actual"] == rev(USER)
    assert calls == ["a.txt", "b.txt"], "later paths are not attempted"
    assert (env.ws / "a.txt").read_text() == NEW_A
    assert (env.ws / "b.txt").read_bytes() == USER
    assert (env.ws / "c.txt").read_bytes() == OLD_C
    assert sorted(os.listdir(env.ws)) == ["a.txt", "b.txt", "c.txt"]
    # Only a.txt keeps its undo record; the refused b.txt's record was removed.
    assert journal_rows(s) == [("a.txt", "applied", 0, OLD_A, sha(NEW_A.encode()))]
    # The written part can be undone.
    undone = await undo_turn(s, Journal(s.store), err.data["turn_id"])  # type: ignore[arg-type]
    assert undone == {"restored": ["a.txt"], "refused": []}
    assert (env.ws / "a.txt").read_bytes() == OLD_A
    assert (env.ws / "b.txt").read_bytes() == USER


async def test_f10_file_deleted_between_preflight_and_write(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    _change_before_write(monkeypatch, "c.txt", lambda: os.unlink(env.ws / "c.txt"))
    s = env.session()
    err = await refuse(s, BATCH_ABC)
    assert err.kind is ErrorKind.PARTIALLY_APPLIED
    assert err.data["appliedPaths"] == ["a.txt", "b.txt"]
    assert err.data["failedPath"] == "c.txt"
    assert not (env.ws / "c.txt").exists(), "a deleted file is not resurrected"
    assert temp_files(env.ws) == []
    assert [r[0] for r in journal_rows(s)] == ["a.txt", "b.txt"]


# -- F11: concurrent create → no clobber --------------------------------------------------------


def test_f11_positive_control_plain_rename_clobbers(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(RIVAL)
    (tmp_path / "tmp").write_bytes(b"ours\n")
    os.rename(tmp_path / "tmp", tmp_path / "target")
    assert (tmp_path / "target").read_bytes() == b"ours\n"  # the rival's file is gone
    # ... while renameat2(RENAME_NOREPLACE) refuses.
    (tmp_path / "target").write_bytes(RIVAL)
    (tmp_path / "tmp").write_bytes(b"ours\n")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(FileExistsError):
            writes.renameat2_noreplace(fd, "tmp", "target")
    finally:
        os.close(fd)
    assert (tmp_path / "target").read_bytes() == RIVAL


def _rival_appears_after_final_check(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Wrap writes.read_current: once the final check saw ``name`` absent, create it."""
    original = writes.read_current
    planted: list[int] = []

    def hooked(dir_fd: int, n: str) -> bytes | None:
        current = original(dir_fd, n)
        if n == name and current is None and not planted:
            fd = os.open(n, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dir_fd)
            os.write(fd, RIVAL)
            os.close(fd)
            planted.append(1)
        return current

    monkeypatch.setattr(writes, "read_current", hooked)
    return planted


def _plain_rename(dir_fd: int, src: str, dst: str) -> None:
    os.rename(src, dst, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


async def test_f11_positive_control_engine_with_plain_rename(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seam hits the window: with a plain rename the rival's new file is clobbered."""
    planted = _rival_appears_after_final_check(monkeypatch, "new.txt")
    monkeypatch.setattr(writes, "renameat2_noreplace", _plain_rename)
    s = env.session()
    await call(s, {"files": [put("new.txt", "ours\n", None)]})
    assert planted == [1]
    assert (env.ws / "new.txt").read_bytes() == b"ours\n"


@pytest.mark.parametrize("first", [False, True])
async def test_f11_concurrent_create_is_not_clobbered(
    env: Env, monkeypatch: pytest.MonkeyPatch, first: bool
) -> None:
    planted = _rival_appears_after_final_check(monkeypatch, "new.txt")
    files = [put("a.txt", NEW_A, rev(OLD_A)), put("new.txt", "ours\n", None)]
    if first:
        files.reverse()
    s = env.session()
    err = await refuse(s, {"files": files})
    assert planted == [1]
    assert err.kind is ErrorKind.PARTIALLY_APPLIED, err
    assert err.data["appliedPaths"] == ([] if first else ["a.txt"])
    assert err.data["failedPath"] == "new.txt"
    assert err.data["cause"]["kind"] == "stale_revision"
    assert (env.ws / "new.txt").read_bytes() == RIVAL
    assert (env.ws / "a.txt").read_bytes() == (OLD_A if first else NEW_A.encode())
    assert temp_files(env.ws) == []
    assert [r[0] for r in journal_rows(s)] == ([] if first else ["a.txt"])


async def test_f11_file_created_between_preflight_and_write(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    _change_before_write(monkeypatch, "new.txt", lambda: (env.ws / "new.txt").write_bytes(RIVAL))
    s = env.session()
    err = await refuse(s, {"files": [put("new.txt", "ours\n", None)]})
    assert err.kind is ErrorKind.PARTIALLY_APPLIED
    assert err.data["appliedPaths"] == []
    assert (env.ws / "new.txt").read_bytes() == RIVAL
    assert journal_rows(s) == []


# -- F12: undo -----------------------------------------------------------------------------------


async def test_f12_undo_after_user_edit_is_refused(env: Env) -> None:
    s = env.session()
    result = await call(
        s, {"files": [put("a.txt", NEW_A, rev(OLD_A)), put("created.txt", "fresh\n", None)]}
    )
    turn = result["turn_id"]
    # Positive control: the turn holds the undo record that could overwrite the user's text.
    records = Journal(s.store).records(turn)  # type: ignore[arg-type]
    assert [(r.display, r.original) for r in records] == [("a.txt", OLD_A), ("created.txt", None)]
    (env.ws / "a.txt").write_bytes(USER)  # the user edits after the turn
    (env.ws / "created.txt").write_bytes(USER + b"kept\n")  # and the file the turn created

    undone = await undo_turn(s, Journal(s.store), turn)  # type: ignore[arg-type]
    assert undone == {
        "restored": [],
        "refused": [
            {"path": "created.txt", "reason": "changed_since"},
            {"path": "a.txt", "reason": "changed_since"},
        ],
    }
    assert (env.ws / "a.txt").read_bytes() == USER
    assert (env.ws / "created.txt").read_bytes() == USER + b"kept\n"
    assert temp_files(env.ws) == []


async def test_f12_undo_refuses_only_the_changed_file(env: Env) -> None:
    s = env.session()
    result = await call(
        s,
        {
            "files": [
                put("a.txt", NEW_A, rev(OLD_A)),
                put("b.txt", NEW_B, rev(OLD_B)),
                put("created.txt", "fresh\n", None),
            ]
        },
    )
    (env.ws / "b.txt").write_bytes(USER)
    undone = await undo_turn(s, Journal(s.store), result["turn_id"])  # type: ignore[arg-type]
    assert undone == {
        "restored": ["created.txt", "a.txt"],
        "refused": [{"path": "b.txt", "reason": "changed_since"}],
    }
    assert (env.ws / "a.txt").read_bytes() == OLD_A
    assert (env.ws / "b.txt").read_bytes() == USER
    assert not (env.ws / "created.txt").exists()


@pytest.mark.parametrize(
    ("before", "after"),
    [(0o4755, 0o755), (0o2755, 0o755), (0o6750, 0o750), (0o2644, 0o2644), (0o1755, 0o1755)],
    ids=["setuid", "setgid-exec", "both", "setgid-no-group-exec", "sticky"],
)
async def test_rewritten_content_loses_set_id_bits(env: Env, before: int, after: int) -> None:
    """Modes are kept, but not set-user-ID (nor set-group-ID on a group-executable file): the
    kernel's own rule for a write by anyone without CAP_FSETID. Positive control: the bits are
    there before the edit."""
    os.chmod(env.ws / "a.txt", before)
    assert stat.S_IMODE(os.stat(env.ws / "a.txt").st_mode) == before
    await call(env.session(), {"files": [put("a.txt", NEW_A, rev(OLD_A))]})
    assert stat.S_IMODE(os.stat(env.ws / "a.txt").st_mode) == after


async def test_f12_undo_of_untouched_turn_restores_exactly(env: Env) -> None:
    os.chmod(env.ws / "a.txt", 0o640)
    (env.ws / "sub").mkdir()
    (env.ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    was = tree(env.ws)
    s = env.session()
    result = await call(
        s,
        {
            "files": [
                put("a.txt", NEW_A, rev(OLD_A)),
                {
                    "path": "crlf.txt",
                    "expected_revision": rev(b"one\r\ntwo\r\n"),
                    "edits": [{"old_text": "two", "new_text": "TWO"}],
                },
                put("sub/created.txt", "fresh\n", None),
                put("top-created.txt", "fresh too\n", None),
            ]
        },
    )
    assert (env.ws / "crlf.txt").read_bytes() == b"one\r\nTWO\r\n"
    assert stat.S_IMODE(os.stat(env.ws / "a.txt").st_mode) == 0o640
    # Undo from a fresh session on the same state store: records survive a restart.
    s2 = env.session()
    undone = await undo_turn(s2, Journal(s2.store), result["turn_id"])  # type: ignore[arg-type]
    assert undone == {
        "restored": ["top-created.txt", "sub/created.txt", "crlf.txt", "a.txt"],
        "refused": [],
    }
    assert tree(env.ws) == was
    assert stat.S_IMODE(os.stat(env.ws / "a.txt").st_mode) == 0o640
    # A second undo of the same turn does nothing.
    again = await undo_turn(s2, Journal(s2.store), result["turn_id"])  # type: ignore[arg-type]
    assert again == {"restored": [], "refused": []}
    assert tree(env.ws) == was


async def test_f12_undo_after_user_reverted_to_the_turns_text(env: Env) -> None:
    """The rule is the revision: touched-but-identical bytes still undo."""
    s = env.session()
    result = await call(s, {"files": [put("a.txt", NEW_A, rev(OLD_A))]})
    (env.ws / "a.txt").write_bytes(USER)
    (env.ws / "a.txt").write_text(NEW_A)
    undone = await undo_turn(s, Journal(s.store), result["turn_id"])  # type: ignore[arg-type]
    assert undone == {"restored": ["a.txt"], "refused": []}
    assert (env.ws / "a.txt").read_bytes() == OLD_A


# -- F13: a failing directory fsync -------------------------------------------------------------


@pytest.mark.parametrize("batch", [1, 2])
async def test_f13_failing_directory_fsync(
    env: Env, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    calls: list[int] = []

    def broken_fsync_dir(fd: int) -> None:
        calls.append(fd)
        raise OSError(errno.EIO, "Input/output error (injected)")

    monkeypatch.setattr(writes, "fsync_dir", broken_fsync_dir)
    files = [put("a.txt", NEW_A, rev(OLD_A)), put("b.txt", NEW_B, rev(OLD_B))][:batch]
    s = env.session()
    err = await refuse(s, {"files": files})
    assert len(calls) == 1, "positive control: the failing fsync was reached once"
    assert err.kind is ErrorKind.DURABILITY_UNCONFIRMED, err
    assert err.data["appliedPaths"] == ["a.txt"]
    assert (env.ws / "a.txt").read_text() == NEW_A, "the file IS written"
    assert (env.ws / "b.txt").read_bytes() == OLD_B, "later paths are not attempted"
    assert temp_files(env.ws) == []
    assert journal_rows(s) == [("a.txt", "applied", 0, OLD_A, sha(NEW_A.encode()))]

    monkeypatch.setattr(writes, "fsync_dir", lambda fd: os.fsync(fd))
    undone = await undo_turn(s, Journal(s.store), err.data["turn_id"])  # type: ignore[arg-type]
    assert undone == {"restored": ["a.txt"], "refused": []}
    assert (env.ws / "a.txt").read_bytes() == OLD_A


# -- F14: protected paths -----------------------------------------------------------------------

EXISTING_PROTECTED = {
    ".git/config": b"[core]\n\trepositoryformatversion = 0\n",
    ".vscode/settings.json": b"{}\n",
    ".s-code/config.toml": b"# sidecar config\n",
    ".envrc": b"export A=1\n",
    ".mcp.json": b"{}\n",
    ".gitmodules": b"",
    "sub/.git/config": b"[core]\n",
    ".idea/workspace.xml": b"<x/>\n",
    ".nvim.lua": b"-- lua\n",
    ".exrc": b"set x\n",
}
NEW_PROTECTED = [
    ".GIT/hooks/x",
    ".git/hooks/pre-commit",
    ".Git/info/attributes",
    ".VSCode/tasks.json",
    "sub/.Envrc",
    "deep/er/.MCP.json",
    ".s-code/new.toml",
]


def _plant_protected(ws: Path) -> None:
    for rel, data in EXISTING_PROTECTED.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_bytes(data)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", [*EXISTING_PROTECTED, *NEW_PROTECTED])
async def test_f14_protected_paths(env: Env, mode: str, path: str) -> None:
    _plant_protected(env.ws)
    # Positive control: nothing in the file system stops a plain write there.
    probe = env.base / "probe" / path
    probe.parent.mkdir(parents=True, exist_ok=True)
    probe.write_text("[core]\n\tfsmonitor = /tmp/pwn\n")
    assert probe.read_text().endswith("pwn\n")

    approver = Recorder()
    s = env.session(mode=mode, approver=approver)
    existing = EXISTING_PROTECTED.get(path)
    expected = None if existing is None else rev(existing)
    was = before(env, s)
    for raw in (
        {"files": [put(path, "[core]\n\tfsmonitor = /tmp/pwn\n", expected)]},
        {"path": path, "expected_revision": expected, "content": "[alias]\n\tx = !pwn\n"},
        {"files": [put("ok.txt", "fine\n", None), put(path, "pwn\n", expected)]},
    ):
        err = await refuse(s, raw)
        assert err.kind is ErrorKind.PROTECTED_PATH, (raw, err)
        assert err.data["path"] == path
        assert_untouched(env, s, was)
    if existing is None:
        patch = f"*** Begin Patch\n*** Add File: {path}\n+pwn\n*** End Patch"
        err = await refuse(s, {"patch": patch, "revisions": {path: None}})
        assert err.kind is ErrorKind.PROTECTED_PATH
        assert_untouched(env, s, was)
    assert approver.cards == [], "a protected path is refused before anyone is asked"

    # Positive control: the same mode and approver do write an ordinary path.
    await call(s, {"files": [put("ordinary/config", "fine\n", None)]})
    assert (env.ws / "ordinary" / "config").read_text() == "fine\n"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "path", ["sub/../.git/config", "sub/../.git/hooks/pre-commit", "./.git/../.git/config"]
)
async def test_f14_dotdot_into_git_is_refused(env: Env, mode: str, path: str) -> None:
    _plant_protected(env.ws)
    (env.ws / "sub").mkdir(exist_ok=True)
    target = os.path.normpath(path)
    assert os.path.exists(env.ws / path) == os.path.exists(env.ws / target)
    existing = EXISTING_PROTECTED.get(target)
    s = env.session(mode=mode, approver=Recorder())
    was = before(env, s)
    err = await refuse(
        s, {"files": [put(path, "pwn\n", None if existing is None else rev(existing))]}
    )
    assert err.kind in (ErrorKind.PATH_ESCAPE, ErrorKind.PROTECTED_PATH)
    assert_untouched(env, s, was)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("secrets/", "secrets/token.txt"),
        ("*.pem", "keys/server.pem"),
        ("*.pem", "keys/SERVER.PEM"),
        ("/deploy.sh", "deploy.sh"),
        ("ci/**/*.yml", "ci/a/b/build.yml"),
    ],
)
async def test_f14_user_protected_paths(env: Env, mode: str, pattern: str, path: str) -> None:
    approver = Recorder()
    s = env.session(mode=mode, protected=(pattern,), approver=approver)
    was = before(env, s)
    err = await refuse(s, {"files": [put(path, "pwn\n", None)]})
    assert err.kind is ErrorKind.PROTECTED_PATH
    assert err.data["path"] == path
    assert_untouched(env, s, was)
    assert approver.cards == []
    # Positive control: without the user's pattern the same write goes through.
    plain = env.session(mode=mode, approver=Recorder())
    await call(plain, {"files": [put(path, "pwn\n", None)]})
    assert (env.ws / path).read_text() == "pwn\n"


# -- symlinks: target file and parent directory pointing outside ---------------------------------


def _naive_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


async def test_symlinked_target_file_to_outside(env: Env) -> None:
    (env.ws / "link.txt").symlink_to(env.outside / "secret.txt")
    # Positive control: a naive open of a second such link writes the outside file.
    (env.outside / "victim.txt").write_bytes(SECRET)
    (env.ws / "naive.txt").symlink_to(env.outside / "victim.txt")
    _naive_write(env.ws / "naive.txt", b"pwned\n")
    assert (env.outside / "victim.txt").read_bytes() == b"pwned\n"
    os.unlink(env.ws / "naive.txt")

    s = env.session()
    was = before(env, s)
    for raw in (
        {"files": [put("link.txt", "pwned\n", rev(SECRET))]},
        {"path": "link.txt", "expected_sha256": sha(SECRET), "content": "pwned\n"},
        {"files": [put("a.txt", NEW_A, rev(OLD_A)), put("link.txt", "pwned\n", rev(SECRET))]},
        {
            "files": [
                {
                    "path": "link.txt",
                    "expected_revision": rev(SECRET),
                    "edits": [{"old_text": "SECRET", "new_text": "PWNED"}],
                }
            ]
        },
    ):
        err = await refuse(s, raw)
        assert err.kind is ErrorKind.PATH_ESCAPE, err
        assert "S-CODE-OUTSIDE-SECRET" not in err.message
        assert_untouched(env, s, was)
    assert (env.outside / "secret.txt").read_bytes() == SECRET


async def test_dangling_symlink_leaf_is_not_created_through(env: Env) -> None:
    (env.ws / "dangling.txt").symlink_to(env.outside / "planted.txt")
    # Positive control: a naive write creates the outside file through the dangling link.
    (env.ws / "naive.txt").symlink_to(env.outside / "naive-planted.txt")
    _naive_write(env.ws / "naive.txt", b"pwned\n")
    assert (env.outside / "naive-planted.txt").exists()
    os.unlink(env.ws / "naive.txt")
    os.unlink(env.outside / "naive-planted.txt")

    s = env.session()
    was = before(env, s)
    err = await refuse(s, {"files": [put("dangling.txt", "pwned\n", None)]})
    assert err.kind is ErrorKind.PATH_ESCAPE
    assert_untouched(env, s, was)
    assert not (env.outside / "planted.txt").exists()


@pytest.mark.parametrize(
    ("link", "target", "rel"),
    [
        ("out", "{outside}", "out/secret.txt"),
        ("out", "{outside}", "out/new.txt"),
        ("out", "{outside}", "out/deeper/new.txt"),
        ("up", "..", "up/outside/secret.txt"),
        ("up", "..", "up/outside/new.txt"),
        ("a/b/up", "../../..", "a/b/up/outside/new.txt"),
    ],
)
async def test_symlinked_parent_directory_to_outside(
    env: Env, link: str, target: str, rel: str
) -> None:
    (env.ws / link).parent.mkdir(parents=True, exist_ok=True)
    (env.ws / link).symlink_to(target.format(outside=env.outside))
    real = Path(os.path.realpath(env.ws / rel))
    assert not str(real).startswith(str(env.ws) + os.sep)
    exists = real.exists()
    # Positive control: a naive write of a sibling name lands outside.
    naive = real.parent / "naive.txt"
    if real.parent.is_dir():
        _naive_write(env.ws / Path(rel).parent / "naive.txt", b"pwned\n")
        assert naive.read_bytes() == b"pwned\n"
        naive.unlink()
    s = env.session()
    was = before(env, s)
    err = await refuse(s, {"files": [put(rel, "pwned\n", rev(SECRET) if exists else None)]})
    assert err.kind is ErrorKind.PATH_ESCAPE, err
    assert_untouched(env, s, was)
    assert (env.outside / "secret.txt").read_bytes() == SECRET


# -- writing never follows a symlink planted after preflight --------------------------------------


def _swap_dir_for_link(env: Env, name: str) -> None:
    os.rename(env.ws / name, env.ws / f"{name}-real")
    os.symlink(env.outside, env.ws / name)


@pytest.mark.parametrize("create", [False, True])
@pytest.mark.parametrize("position", [0, 1])
async def test_parent_swapped_for_symlink_after_preflight(
    env: Env, monkeypatch: pytest.MonkeyPatch, create: bool, position: int
) -> None:
    (env.ws / "d").mkdir()
    (env.ws / "d" / "f.txt").write_bytes(OLD_B)
    # Positive control: after the swap a path-based write of d/f.txt lands outside.
    (env.ws / "n").mkdir()
    _swap_dir_for_link(env, "n")
    _naive_write(env.ws / "n" / "f.txt", b"pwned\n")
    assert (env.outside / "f.txt").read_bytes() == b"pwned\n"
    (env.outside / "f.txt").unlink()

    name = "d/new.txt" if create else "d/f.txt"
    target = put(name, "pwned\n", None if create else rev(OLD_B))
    files = [target] if position == 0 else [put("a.txt", NEW_A, rev(OLD_A)), target]
    _change_before_write(monkeypatch, name, lambda: _swap_dir_for_link(env, "d"))
    outside_was = tree(env.outside)
    s = env.session()
    err = await refuse(s, {"files": files})
    assert err.kind is ErrorKind.PARTIALLY_APPLIED, err
    assert err.data["cause"]["kind"] == "path_escape"
    assert err.data["appliedPaths"] == ([] if position == 0 else ["a.txt"])
    assert tree(env.outside) == outside_was
    assert (env.ws / "d-real" / "f.txt").read_bytes() == OLD_B
    assert sorted(os.listdir(env.ws / "d-real")) == ["f.txt"]
    assert temp_files(env.ws) == [] and temp_files(env.outside) == []


async def test_leaf_swapped_for_symlink_after_preflight(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    (env.ws / "d").mkdir()
    (env.ws / "d" / "f.txt").write_bytes(OLD_B)

    def plant() -> None:
        os.unlink(env.ws / "d" / "f.txt")
        os.symlink(env.outside / "secret.txt", env.ws / "d" / "f.txt")

    _change_before_write(monkeypatch, "d/f.txt", plant)
    s = env.session()
    err = await refuse(
        s, {"files": [put("a.txt", NEW_A, rev(OLD_A)), put("d/f.txt", "x\n", rev(OLD_B))]}
    )
    assert err.kind is ErrorKind.PARTIALLY_APPLIED
    assert err.data["appliedPaths"] == ["a.txt"]
    assert err.data["cause"]["kind"] == "path_escape"
    assert (env.outside / "secret.txt").read_bytes() == SECRET
    assert os.readlink(env.ws / "d" / "f.txt") == str(env.outside / "secret.txt")
    assert temp_files(env.ws) == []
    # Positive control: a naive write to the planted name rewrites the outside secret.
    _naive_write(env.ws / "d" / "f.txt", b"pwned\n")
    assert (env.outside / "secret.txt").read_bytes() == b"pwned\n"


# The attacker process swaps ``d`` (a directory) with ``d-spare`` (a symlink to the outside
# directory) with renameat2(RENAME_EXCHANGE), and always leaves ``d`` a directory at the end.
SWAPPER = r"""
import ctypes, os, signal, sys, time
d, spare, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
libc = ctypes.CDLL(None, use_errno=True)
def exchange():
    if libc.renameat2(-100, os.fsencode(d), -100, os.fsencode(spare), 2) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
done = 0
print("ready", flush=True)
end = time.monotonic() + seconds
while not stop and time.monotonic() < end:
    exchange()
    done += 1
    time.sleep(0.0002)
if done % 2:
    exchange()
print(done, flush=True)
"""


class Swapper:
    def __init__(self, ws: Path, outside: Path, seconds: float) -> None:
        os.symlink(outside, ws / "d-spare")
        self.ws = ws
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SWAPPER, str(ws / "d"), str(ws / "d-spare"), str(seconds)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"

    def running(self) -> bool:
        return self.proc.poll() is None

    def finish(self) -> int:
        if self.running():
            self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=10)
        assert self.proc.returncode == 0, err
        os.unlink(self.ws / "d-spare")
        return int(out.strip())


def _has_rename_exchange(tmp: Path) -> bool:
    (tmp / "x1").mkdir()
    (tmp / "x2").symlink_to("x1")
    libc = ctypes.CDLL(None, use_errno=True)
    ok = libc.renameat2(-100, os.fsencode(tmp / "x1"), -100, os.fsencode(tmp / "x2"), 2) == 0
    for n in ("x1", "x2"):
        p = tmp / n
        p.unlink() if p.is_symlink() else p.rmdir()
    return ok


async def test_symlink_swap_race_while_writing(env: Env) -> None:
    if not _has_rename_exchange(env.base):
        pytest.skip("renameat2(RENAME_EXCHANGE) unavailable")
    (env.ws / "d").mkdir()
    outside_was = tree(env.outside)

    # Positive control: naive writes during the race land outside.
    swapper = Swapper(env.ws, env.outside, 0.8)
    i = 0
    while swapper.running():
        with contextlib.suppress(OSError):
            _naive_write(env.ws / "d" / f"naive{i}.txt", b"pwned\n")
        i += 1
    swapper.finish()
    escaped = [n for n in os.listdir(env.outside) if n.startswith("naive")]
    assert escaped, f"positive control: none of {i} naive writes escaped"
    for n in escaped:
        os.unlink(env.outside / n)
    for n in os.listdir(env.ws / "d"):
        os.unlink(env.ws / "d" / n)
    assert tree(env.outside) == outside_was

    s = env.session()
    written: list[str] = []
    refusals = 0
    swapper = Swapper(env.ws, env.outside, 1.5)
    i = 0
    while swapper.running():
        name = f"d/f{i}.txt"
        i += 1
        try:
            await call(s, {"files": [put(name, f"{name}\n", None)]})
            written.append(name)
        except SCodeError as err:
            kind = err.data.get("cause", {}).get("kind", err.kind.value)
            assert kind == "path_escape", err
            refusals += 1
    swaps = swapper.finish()
    assert swaps > 100
    assert tree(env.outside) == outside_was, "a write landed outside"
    assert temp_files(env.ws) == []
    inside = sorted(os.listdir(env.ws / "d"))
    assert inside == sorted(os.path.basename(n) for n in written)
    for n in written:
        assert (env.ws / n).read_text() == f"{n}\n"
    assert written and refusals, (len(written), refusals)


# -- the journal on disk after a refusal ----------------------------------------------------------


async def test_refused_batches_leave_no_pending_records(env: Env) -> None:
    s = env.session()
    await refuse(s, {"files": [put("a.txt", NEW_A, rev(b"stale"))]})
    await refuse(s, {"files": [put(".git/x", "x\n", None)]})
    conn = sqlite3.connect(f"file:{env.state}?mode=ro", uri=True)
    try:
        pending = conn.execute(
            "SELECT count(*) FROM undo_records WHERE status = 'pending'"
        ).fetchone()[0]
        held = conn.execute("SELECT count(*) FROM reservations").fetchone()[0]
    finally:
        conn.close()
    assert (pending, held) == (0, 0)


# -- the write phase: staging all first, directory identity, I/O failures, cancellation ----------


async def test_staging_failure_writes_nothing(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every disk target is staged before the first commit: a failed staging (here ENOSPC on
    the second file) leaves every file as it was, no temp file and no journal record."""
    original = writes.stage

    def full_disk(root: Any, parts: tuple[str, ...], data: bytes, **kw: Any) -> Any:
        if parts[-1] == "b.txt":
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(root, parts, data, **kw)

    monkeypatch.setattr(writing, "stage", full_disk)
    s = env.session()
    was = before(env, s)
    err = await refuse(s, BATCH_ABC)
    assert err.kind is ErrorKind.PARTIALLY_APPLIED, err
    assert err.data["appliedPaths"] == []
    assert err.data["failedPath"] == "b.txt"
    assert err.data["cause"]["errno"] == "ENOSPC"
    assert "nothing was written" in err.message
    assert_untouched(env, s, was)


async def test_commit_io_error_stops_with_what_was_written(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An I/O error at a commit (here the rename of b.txt) is partially_applied naming the
    errno, with the files already written listed and undoable; c.txt is not attempted."""
    original = os.rename

    def failing_rename(src: Any, dst: Any, **kw: Any) -> None:
        if dst == "b.txt":
            raise OSError(errno.EIO, "Input/output error (injected)")
        original(src, dst, **kw)

    monkeypatch.setattr(writes.os, "rename", failing_rename)
    s = env.session()
    err = await refuse(s, BATCH_ABC)
    monkeypatch.setattr(writes.os, "rename", original)
    assert err.kind is ErrorKind.PARTIALLY_APPLIED, err
    assert err.data["appliedPaths"] == ["a.txt"]
    assert err.data["failedPath"] == "b.txt"
    assert (err.data["cause"]["kind"], err.data["cause"]["errno"]) == ("internal", "EIO")
    assert "Input/output error" in err.message
    assert (env.ws / "a.txt").read_text() == NEW_A
    assert (env.ws / "b.txt").read_bytes() == OLD_B
    assert (env.ws / "c.txt").read_bytes() == OLD_C
    assert temp_files(env.ws) == []
    assert journal_rows(s) == [("a.txt", "applied", 0, OLD_A, sha(NEW_A.encode()))]
    undone = await undo_turn(s, Journal(s.store), err.data["turn_id"])  # type: ignore[arg-type]
    assert undone == {"restored": ["a.txt"], "refused": []}


def _replace_dir(env: Env) -> None:
    """The user moves d/ away and puts a fresh d/ with the same file in its place."""
    os.rename(env.ws / "d", env.ws / "d-old")
    (env.ws / "d").mkdir()
    (env.ws / "d" / "f.txt").write_bytes(OLD_B)


async def test_positive_control_directory_replaced_after_staging(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the directory check at commit, the edit lands in the moved-away directory and
    the file now at d/f.txt silently keeps its old text."""
    (env.ws / "d").mkdir()
    (env.ws / "d" / "f.txt").write_bytes(OLD_B)
    _change_before_write(monkeypatch, "d/f.txt", lambda: _replace_dir(env))
    monkeypatch.setattr(writes, "_same_parent", lambda staged: None)
    s = env.session()
    await call(s, {"files": [put("d/f.txt", NEW_B, rev(OLD_B))]})
    assert (env.ws / "d-old" / "f.txt").read_text() == NEW_B
    assert (env.ws / "d" / "f.txt").read_bytes() == OLD_B


async def test_directory_replaced_after_staging_is_stale(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    (env.ws / "d").mkdir()
    (env.ws / "d" / "f.txt").write_bytes(OLD_B)
    _change_before_write(monkeypatch, "d/f.txt", lambda: _replace_dir(env))
    s = env.session()
    err = await refuse(
        s, {"files": [put("a.txt", NEW_A, rev(OLD_A)), put("d/f.txt", NEW_B, rev(OLD_B))]}
    )
    assert err.kind is ErrorKind.PARTIALLY_APPLIED, err
    assert err.data["appliedPaths"] == ["a.txt"]
    assert err.data["cause"]["kind"] == "stale_revision"
    assert "moved or replaced" in err.message
    assert (env.ws / "d-old" / "f.txt").read_bytes() == OLD_B
    assert (env.ws / "d" / "f.txt").read_bytes() == OLD_B
    assert temp_files(env.ws) == []


async def test_cancellation_stops_between_commits_and_keeps_the_journal_true(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel while b.txt is being committed lets b.txt finish, stops before c.txt, and
    leaves undo records for exactly the written files and no temp file; the reply is
    ``cancelled`` and still names what was written."""
    loop = asyncio.get_running_loop()
    task: asyncio.Task[Any] | None = None

    def cancel_now() -> None:
        assert task is not None
        reached = threading.Event()

        def cancel() -> None:
            task.cancel()
            reached.set()

        loop.call_soon_threadsafe(cancel)
        # the cancellation reaches the loop while b.txt is still in hand
        assert reached.wait(60), "the loop never ran the cancel"

    calls = _change_before_write(monkeypatch, "b.txt", cancel_now)
    s = env.session()
    task = asyncio.ensure_future(call(s, BATCH_ABC))
    with pytest.raises(SCodeError) as cancelled:
        await task
    assert cancelled.value.kind is ErrorKind.CANCELLED
    assert cancelled.value.data["appliedPaths"] == ["a.txt", "b.txt"]
    assert isinstance(cancelled.value.data["turn_id"], str)
    assert calls == ["a.txt", "b.txt"], "c.txt is not attempted after the cancellation"
    assert (env.ws / "a.txt").read_text() == NEW_A
    assert (env.ws / "b.txt").read_text() == NEW_B
    assert (env.ws / "c.txt").read_bytes() == OLD_C
    assert temp_files(env.ws) == []
    assert [r[:2] for r in journal_rows(s)] == [("a.txt", "applied"), ("b.txt", "applied")]
