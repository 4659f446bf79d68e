"""The SQLite state store: migrations, namespaces, persistence, the state directory, threads."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from s_code.state import store as store_mod
from s_code.state.store import (
    DB_NAME,
    MIGRATIONS,
    STATE_DIR_ENV,
    Store,
    schema_version,
    state_dir,
)


@pytest.fixture
def open_store(tmp_path: Path) -> Iterator[Callable[..., Store]]:
    opened: list[Store] = []

    def open_(path: Path | None = None) -> Store:
        s = Store(str(path or tmp_path / "state" / DB_NAME))
        opened.append(s)
        return s

    yield open_
    for s in opened:
        with contextlib.suppress(sqlite3.ProgrammingError):
            s.close()


def user_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def tables(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def expected_tables() -> list[str]:
    """The tables that applying every migration by hand to an empty database creates."""
    conn = sqlite3.connect(":memory:")
    try:
        for script in MIGRATIONS:
            conn.executescript(script)
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


# -- migrations ---------------------------------------------------------------------------------


def test_new_file_gets_every_migration(tmp_path: Path, open_store) -> None:
    path = tmp_path / "nested" / "dirs" / DB_NAME
    s = open_store(path)
    assert path.is_file()
    assert s.version == len(MIGRATIONS)
    assert len(MIGRATIONS) >= 1
    assert schema_version(s._conn) == len(MIGRATIONS)
    s.close()
    assert user_version(path) == len(MIGRATIONS)
    assert tables(path) == expected_tables()
    assert {"workspaces", "workspace_state"} <= set(tables(path))


def test_state_directory_is_private(tmp_path: Path, open_store) -> None:
    path = tmp_path / "fresh" / DB_NAME
    open_store(path)
    assert (path.parent.stat().st_mode & 0o777) == 0o700


def test_reopening_is_idempotent(tmp_path: Path, open_store) -> None:
    path = tmp_path / DB_NAME
    first = open_store(path)
    first.workspace("/w").put("k", 1)
    first.close()
    for _ in range(3):
        again = open_store(path)
        assert again.version == len(MIGRATIONS)
        assert again.workspace("/w").get("k") == 1
        again.close()
    assert user_version(path) == len(MIGRATIONS)
    assert tables(path) == expected_tables()


def test_migrate_on_an_up_to_date_connection_is_a_no_op(tmp_path: Path, open_store) -> None:
    s = open_store(tmp_path / DB_NAME)
    assert store_mod.migrate(s._conn) == len(MIGRATIONS)
    assert store_mod.migrate(s._conn) == len(MIGRATIONS)


def test_newer_schema_is_refused(tmp_path: Path, open_store) -> None:
    path = tmp_path / DB_NAME
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(RuntimeError) as exc:
        Store(str(path))
    message = str(exc.value)
    assert f"schema {len(MIGRATIONS) + 5}" in message
    assert "newer" in message
    assert "upgrade s-code" in message
    # Refusing changes nothing.
    assert user_version(path) == len(MIGRATIONS) + 5
    assert tables(path) == []


def test_migrations_upgrade_an_older_schema(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / DB_NAME
    s = Store(str(path))
    s.workspace("/w").put("kept", [1, 2])
    s.close()
    extra = "CREATE TABLE extra (x INTEGER); INSERT INTO extra (x) VALUES (7);"
    monkeypatch.setattr(store_mod, "MIGRATIONS", (*MIGRATIONS, extra))
    upgraded = Store(str(path))
    try:
        assert upgraded.version == len(MIGRATIONS) + 1
        assert upgraded.execute("SELECT x FROM extra") == [(7,)]
        assert upgraded.workspace("/w").get("kept") == [1, 2]
    finally:
        upgraded.close()
    assert user_version(path) == len(MIGRATIONS) + 1


# -- workspace namespaces -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        {"plan": [{"step": "one", "status": "pending"}], "explanation": None},
        [1, 2.5, "three", True, None, {"nested": {"deep": []}}],
        'text with \u00e9 and \U0001f600 and "quotes"',
        0,
        -17,
        3.25,
        False,
        {},
        [],
    ],
)
def test_get_put_round_trip(tmp_path: Path, open_store, value: object) -> None:
    ws = open_store(tmp_path / DB_NAME).workspace("/work/project")
    ws.put("key", value)
    assert ws.get("key") == value
    assert type(ws.get("key")) is type(value)


def test_missing_key_is_none_and_put_overwrites(tmp_path: Path, open_store) -> None:
    ws = open_store(tmp_path / DB_NAME).workspace("/p")
    assert ws.get("absent") is None
    ws.put("k", {"v": 1})
    ws.put("k", {"v": 2})
    assert ws.get("k") == {"v": 2}
    assert ws.store.execute(
        "SELECT COUNT(*) FROM workspace_state WHERE workspace_id = ?", (ws.id,)
    ) == [(1,)]


def test_tuples_come_back_as_lists(tmp_path: Path, open_store) -> None:
    ws = open_store(tmp_path / DB_NAME).workspace("/p")
    ws.put("t", (1, (2, 3)))
    assert ws.get("t") == [1, [2, 3]]


def test_unserialisable_value_is_refused(tmp_path: Path, open_store) -> None:
    ws = open_store(tmp_path / DB_NAME).workspace("/p")
    with pytest.raises(TypeError):
        ws.put("k", object())
    assert ws.get("k") is None


def test_two_paths_are_separate_namespaces(tmp_path: Path, open_store) -> None:
    s = open_store(tmp_path / DB_NAME)
    a, b = s.workspace("/work/a"), s.workspace("/work/b")
    assert a.id != b.id
    a.put("plan", ["a's plan"])
    b.put("plan", ["b's plan"])
    a.put("only_a", 1)
    assert a.get("plan") == ["a's plan"]
    assert b.get("plan") == ["b's plan"]
    assert b.get("only_a") is None
    # Similar spellings are different canonical paths (the caller canonicalises).
    c = s.workspace("/work/a/")
    assert c.id not in (a.id, b.id)
    assert c.get("plan") is None


def test_same_path_same_id(tmp_path: Path, open_store) -> None:
    path = tmp_path / DB_NAME
    s = open_store(path)
    first = s.workspace("/repo")
    s.workspace("/other")
    second = s.workspace("/repo")
    assert first.id == second.id
    assert second.canonical_path == "/repo"
    first.put("k", "v")
    assert second.get("k") == "v"
    assert s.execute("SELECT COUNT(*) FROM workspaces") == [(2,)]
    s.close()
    assert open_store(path).workspace("/repo").id == first.id


def test_data_survives_closing_and_reopening(tmp_path: Path, open_store) -> None:
    path = tmp_path / "persist" / DB_NAME
    s = open_store(path)
    s.workspace("/x").put("plan", {"steps": ["a", "b"]})
    s.workspace("/y").put("plan", {"steps": ["c"]})
    s.close()
    again = open_store(path)
    assert again.workspace("/x").get("plan") == {"steps": ["a", "b"]}
    assert again.workspace("/y").get("plan") == {"steps": ["c"]}
    # And a plain sqlite3 reader sees the committed rows too.
    again.close()
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT w.canonical_path, s.key, s.value_json FROM workspace_state s "
            "JOIN workspaces w ON w.id = s.workspace_id ORDER BY w.canonical_path"
        ).fetchall()
    finally:
        conn.close()
    assert rows == [("/x", "plan", '{"steps": ["a", "b"]}'), ("/y", "plan", '{"steps": ["c"]}')]


# -- the state directory ------------------------------------------------------------------------


def test_state_dir_env_is_honoured(tmp_path: Path, monkeypatch, open_store) -> None:
    target = tmp_path / "custom-state"
    monkeypatch.setenv(STATE_DIR_ENV, str(target))
    assert state_dir() == str(target)
    s = Store.open_default()
    try:
        assert s.path == os.path.join(str(target), DB_NAME)
        assert (target / DB_NAME).is_file()
    finally:
        s.close()


def test_state_dir_defaults_to_xdg_state_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(STATE_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == str(tmp_path / "xdg" / "s-code")


def test_empty_state_dir_env_falls_back(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(STATE_DIR_ENV, "")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == str(tmp_path / "xdg" / "s-code")


# -- threads ------------------------------------------------------------------------------------


def run_threads(n: int, target: Callable[[int], None]) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def wrapped(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            target(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def test_one_store_shared_by_threads(tmp_path: Path, open_store) -> None:
    s = open_store(tmp_path / DB_NAME)

    def work(i: int) -> None:
        for j in range(50):
            ws = s.workspace(f"/ws{i % 4}")
            ws.put(f"k{i}", j)
            assert ws.get(f"k{i}") == j
            ws.put("shared", {"by": i, "j": j})
            assert ws.get("shared") is not None

    assert run_threads(8, work) == []
    assert s.execute("SELECT COUNT(*) FROM workspaces") == [(4,)]
    for i in range(8):
        assert s.workspace(f"/ws{i % 4}").get(f"k{i}") == 49


def test_separate_stores_on_one_file_from_threads(tmp_path: Path) -> None:
    path = tmp_path / "race" / DB_NAME
    stores: list[Store] = []
    lock = threading.Lock()

    def work(i: int) -> None:
        s = Store(str(path))  # every thread races to create and migrate the same new file
        with lock:
            stores.append(s)
        ws = s.workspace("/same")
        for j in range(20):
            ws.put(f"t{i}", j)

    try:
        assert run_threads(6, work) == []
        assert len(stores) == 6
        assert {s.version for s in stores} == {len(MIGRATIONS)}
        ids = {s.workspace("/same").id for s in stores}
        assert len(ids) == 1
        ws = stores[0].workspace("/same")
        assert [ws.get(f"t{i}") for i in range(6)] == [19] * 6
    finally:
        for s in stores:
            s.close()
    assert user_version(path) == len(MIGRATIONS)
